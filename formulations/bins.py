"""Ordered one-hot bins of numeric columns: cut points, block structure, a numpy-only binner.

A points table over bins sees each variable ``j`` as a block ``B_j`` of ``d_j`` contiguous
indicator columns, one per bin, exactly one of them 1 in every row (the ordered one-hot encoding
of the binarsity setup, Alaya 2018, "Features binarization: setup"). This module holds
what the formulations need of it:

* :func:`cut_points` -- the thresholds of a numeric column (every distinct value when few, else
  quantiles; values that occur in the data), also from distinct values and counts
  (:func:`cut_points_of_counts`). :mod:`milpscore.data.binning` bins with the same rule;
  :func:`supervised_cut_points` chooses them among the label's boundary points instead;
* :func:`as_blocks` / :func:`infer_blocks` -- block sizes or slices, given or read off a one-hot
  matrix;
* :class:`FusedPoints`, :func:`merge_runs`, :func:`round_points` -- a points table over the bins,
  its merged ranges, and the nearest integer table under the fused ILP's constraints;
* :class:`OrderedBins` -- fit / transform of numeric columns to that encoding (the ``design``
  hook of :class:`formulations.fused.FusedLassoHinge` for raw numeric columns; the estimator
  :class:`milpscore.estimators.fused.FusedScoreClassifier` also bins categorical columns).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp


def cut_points(values: np.ndarray, max_cuts: int) -> np.ndarray:
    """Increasing thresholds ``t`` splitting ``values`` into at most ``max_cuts + 1`` groups.

    When the column has at most ``max_cuts + 1`` distinct values, every distinct value but the
    smallest is a threshold. Otherwise the ``k / (max_cuts + 1)`` quantiles (k = 1..max_cuts)
    of the values, deduplicated and above the minimum (a threshold at the minimum selects every
    row); when the minimum holds most of the rows (zero-inflated columns, e.g. word frequencies)
    these collapse, and the missing cuts are taken as quantiles of the values above the minimum.
    Thresholds are values that occur in the data, so ``x >= t`` reads naturally. Non-finite
    values are ignored. The quantiles are numpy's ``method="higher"`` order statistics, so the
    cuts depend on the column only through its distinct values and their counts
    (:func:`cut_points_of_counts`, which a distributed table uses).
    """
    v = np.asarray(values, dtype=float)
    uniq, counts = np.unique(v[np.isfinite(v)], return_counts=True)
    return cut_points_of_counts(uniq, counts, max_cuts)


def cut_points_of_counts(uniq: np.ndarray, counts: np.ndarray, max_cuts: int) -> np.ndarray:
    """:func:`cut_points` of a column given as its increasing distinct finite values ``uniq`` and
    how often each occurs (``counts``, positive integers): the same thresholds, bit for bit.

    The ``q``-quantile with ``method="higher"`` of ``n`` sorted values is the value at position
    ``ceil((n - 1) q)`` (0-based), i.e. ``uniq[m]`` for the first ``m`` whose cumulative count
    exceeds that position."""
    if max_cuts < 1:
        raise ValueError(f"max_cuts must be >= 1, got {max_cuts}")
    uniq = np.asarray(uniq, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    if uniq.size <= 1:
        return np.zeros(0)
    if uniq.size <= max_cuts + 1:
        return uniq[1:]
    q = _higher_quantiles(uniq, counts, np.arange(1, max_cuts + 1) / (max_cuts + 1))
    cuts = np.unique(q[q > uniq[0]])
    if cuts.size < max_cuts:
        extra = _higher_quantiles(uniq[1:], counts[1:], np.arange(max_cuts) / max_cuts)
        extra = np.setdiff1d(extra, cuts)
        cuts = np.unique(np.r_[cuts, extra[: max_cuts - cuts.size]])
    return cuts


def _higher_quantiles(uniq: np.ndarray, counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(np.repeat(uniq, counts), q, method="higher")`` without repeating."""
    cumulative = np.cumsum(counts)
    position = np.ceil((cumulative[-1] - 1) * q).astype(np.intp)
    return uniq[np.searchsorted(cumulative, position, side="right")]


def boundary_points(values: np.ndarray, positive: np.ndarray, weights: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The thresholds ``x >= u_k`` worth considering for a label: ``(uniq, P, N, boundary)``.

    ``uniq`` are the sorted distinct values, ``P`` / ``N`` the positive / negative weight at each,
    and ``boundary`` the indices ``k >= 1`` whose threshold ``u_k`` separates two values that are
    not pure in the same class. A threshold between two values pure in one class only moves rows
    of that class across, so for the 0-1 error and every concave impurity (Gini, entropy) some
    boundary point is at least as good (Fayyad & Irani 1992, "On the handling of continuous-valued
    attributes in decision tree generation", Theorem 1 for entropy; the same argument holds for
    any criterion that is concave in the class proportions).
    """
    v = np.asarray(values, dtype=float)
    w = np.ones(v.size) if weights is None else np.asarray(weights, dtype=float)
    uniq, inverse = np.unique(v, return_inverse=True)
    P = np.bincount(inverse, w * positive, minlength=uniq.size)
    N = np.bincount(inverse, w * ~positive, minlength=uniq.size)
    pure_pos, pure_neg = N == 0, P == 0
    same = (pure_pos[1:] & pure_pos[:-1]) | (pure_neg[1:] & pure_neg[:-1])
    return uniq, P, N, np.flatnonzero(~same) + 1


def supervised_cut_points(values: np.ndarray, positive: np.ndarray, max_cuts: int,
                          weights: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Up to ``max_cuts`` increasing thresholds chosen by the label; and the number of boundary
    points they were chosen from.

    Greedy top-down splitting as in CART: the value range starts as one segment; each step adds
    the boundary point (:func:`boundary_points`) whose split of its segment lowers the weighted
    Gini impurity ``sum_segments 2 P N / (P + N)`` the most, until ``max_cuts`` are chosen or no
    split lowers it. Thresholds are values that occur in the data (``x >= t``).
    """
    if max_cuts < 1:
        raise ValueError(f"max_cuts must be >= 1, got {max_cuts}")
    uniq, P, N, candidates = boundary_points(values, np.asarray(positive, bool), weights)
    cp, cn = np.r_[0.0, np.cumsum(P)], np.r_[0.0, np.cumsum(N)]

    def gini(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # segments [a, b) of value indices
        p, n = cp[b] - cp[a], cn[b] - cn[a]
        return np.divide(2 * p * n, p + n, out=np.zeros_like(p), where=p + n > 0)

    chosen: list[int] = []
    left = candidates
    while len(chosen) < max_cuts and left.size:
        ends = np.array([0, *sorted(chosen), uniq.size], dtype=int)
        seg = np.searchsorted(ends, left, side="right") - 1
        a, b = ends[seg], ends[seg + 1]
        gain = gini(a, b) - gini(a, left) - gini(left, b)
        k = int(np.argmax(gain))
        if gain[k] <= 1e-12 * max(float(cp[-1] + cn[-1]), 1.0):
            break
        chosen.append(int(left[k]))
        left = np.delete(left, k)
    return uniq[np.sort(np.array(chosen, dtype=int))], int(candidates.size)


def as_blocks(blocks: Sequence[Any], d: int | None = None) -> tuple[slice, ...]:
    """Block sizes or contiguous slices -> slices covering ``0..d`` in order (``d`` checked if given)."""
    items = list(blocks)
    if not items:
        raise ValueError("blocks is empty; give the number of bins of each variable, e.g. (4, 3)")
    if all(isinstance(b, slice) for b in items):
        out = tuple(slice(int(b.start or 0), int(b.stop)) for b in items)
    elif all(isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_)) for b in items):
        if any(b < 1 for b in items):
            raise ValueError(f"block sizes must be >= 1, got {[int(b) for b in items]}")
        ends = np.cumsum(items)
        out = tuple(slice(int(e - s), int(e)) for s, e in zip(items, ends))
    else:
        raise TypeError("blocks must be a sequence of block sizes (ints) or of column slices")
    pos = 0
    for k, s in enumerate(out):
        if s.start != pos or s.stop <= s.start:
            raise ValueError(f"blocks must be contiguous, non-empty and in order; block {k} is {s}, expected start {pos}")
        pos = s.stop
    if d is not None and pos != d:
        raise ValueError(f"blocks cover {pos} columns but X_onehot has {d}; one block per variable, all columns")
    return out


def infer_blocks(X: sp.csr_matrix) -> tuple[slice, ...]:
    """The blocks of an ordered one-hot matrix without empty columns, read off the matrix.

    Column ``k`` closes a block iff every row has the same number of ones in columns ``0..k``.
    When no column is empty this recovers the blocks exactly: inside a true block ``[s, e]`` a
    prefix ``[s, k]``, ``k < e``, with one 1 in every row would leave the columns ``k+1..e``
    empty. An empty column (a bin no training row falls in) makes the split ambiguous, so it is
    refused with a request for explicit blocks.
    """
    counts = np.asarray(X.sum(axis=0)).ravel()
    if np.any(counts == 0):
        k = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"column {k} of X_onehot is empty (no row in that bin), so the variables' blocks cannot be "
                         "read off the matrix; pass blocks=(bins of each variable, ...) to the formulation")
    prefix = np.cumsum(X.toarray(), axis=1)
    ends = np.flatnonzero(prefix.min(axis=0) == prefix.max(axis=0))
    if ends.size == 0 or ends[-1] != X.shape[1] - 1:
        raise ValueError("X_onehot is not an ordered one-hot matrix: its rows do not all have the same number of "
                         "ones; bin the raw data first (milpscore.data.binning.OrderedBinner) or pass blocks")
    starts = np.r_[0, ends[:-1] + 1]
    return tuple(slice(int(a), int(b) + 1) for a, b in zip(starts, ends))


def membership_matrix(slices: tuple[slice, ...], d: int) -> sp.csr_matrix:
    """(d̄, p) 0/1 matrix: column k belongs to block j."""
    owner = np.repeat(np.arange(len(slices)), [s.stop - s.start for s in slices])
    return sp.csr_matrix((np.ones(d), (np.arange(d), owner)), shape=(d, len(slices)))


def difference_matrix(slices: tuple[slice, ...], d: int) -> sp.csr_matrix:
    """(d̄ - p, d̄) matrix ``D`` with rows ``theta_{k+1} - theta_k`` for adjacent bins of one block."""
    left = np.setdiff1d(np.arange(d), [s.stop - 1 for s in slices])
    m = left.size
    return sp.csr_matrix((np.tile([-1.0, 1.0], m), (np.repeat(np.arange(m), 2), np.column_stack([left, left + 1]).ravel())),
                         shape=(m, d))


def per_variable_values(value: Any, p: int, name: str, dtype=float) -> np.ndarray:
    """A scalar broadcast to ``p`` values, or exactly ``p`` values (one per variable)."""
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 0:
        arr = np.full(p, arr)
    if arr.shape != (p,):
        raise ValueError(f"{name} must be a scalar or {p} values (one per variable), got {np.shape(value)}")
    return arr


def as_tuple(value: Any) -> Any:
    """Arrays and lists as tuples (hashable fields of a frozen spec); scalars and None unchanged."""
    return value if value is None or np.ndim(value) == 0 else tuple(np.asarray(value).tolist())


class OrderedBins:
    """Ordered one-hot bins of numeric columns at :func:`cut_points` (``n_bins`` per column at most).

    ``fit(X)`` chooses the cut points of each column; ``transform(X)`` returns the CSR one-hot
    matrix (bin ``m`` of a column is ``[t_m, t_{m+1})``, end bins open; values outside the
    training range fall in an end bin). ``blocks_`` holds each column's slice.
    """

    def __init__(self, n_bins: int = 5):
        if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
            raise ValueError(f"n_bins must be an integer >= 2, got {n_bins!r}")
        self.n_bins = int(n_bins)

    @staticmethod
    def _numeric(X: Any) -> Any:
        """``X`` as a 2-D float array, or as a CSC matrix when sparse (binned one column at a time,
        never densified as a whole)."""
        if sp.issparse(X):
            arr = sp.csc_matrix(X, dtype=np.float64)
            finite = np.isfinite(arr.data).all()
        else:
            try:
                arr = np.asarray(X, dtype=float)
            except (TypeError, ValueError):
                raise TypeError("OrderedBins bins numeric columns only; bin categorical columns with "
                                "milpscore.data.binning.OrderedBinner (FusedScoreClassifier does)") from None
            finite = arr.ndim != 2 or np.isfinite(arr).all()
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise ValueError(f"X must be a 2-D matrix with at least one column, got shape {arr.shape}")
        if not finite:
            raise ValueError("X contains NaN or inf; impute or drop those entries before binning")
        return arr

    @staticmethod
    def _column(arr: Any, j: int) -> np.ndarray:
        return arr[:, [j]].toarray().ravel() if sp.issparse(arr) else arr[:, j]

    def fit(self, X: Any, y: Any = None) -> "OrderedBins":
        arr = self._numeric(X)
        self.cuts_ = tuple(cut_points(self._column(arr, j), self.n_bins - 1) for j in range(arr.shape[1]))
        self.blocks_ = as_blocks([c.size + 1 for c in self.cuts_])
        return self

    def codes(self, X: Any) -> np.ndarray:
        """``(n, p)`` bin index of every value."""
        arr = self._numeric(X)
        if arr.shape[1] != len(self.cuts_):
            raise ValueError(f"X has {arr.shape[1]} columns, the bins were fitted on {len(self.cuts_)}")
        return np.column_stack([np.searchsorted(c, self._column(arr, j), side="right")
                                for j, c in enumerate(self.cuts_)])

    def transform(self, X: Any) -> sp.csr_matrix:
        codes = self.codes(X)
        n, p = codes.shape
        cols = (codes + np.array([b.start for b in self.blocks_])[None, :]).reshape(-1)
        return sp.csr_matrix((np.ones(n * p), cols, np.arange(0, n * p + 1, p)), shape=(n, self.blocks_[-1].stop))


@dataclass(frozen=True)
class FusedPoints:
    """A points table: points per bin, intercept and the column slice of each variable."""

    theta: np.ndarray
    intercept: float
    blocks: tuple[slice, ...]

    def block_points(self, j: int) -> np.ndarray:
        return self.theta[self.blocks[j]]

    def ranges(self, j: int, tol: float = 1e-7) -> list[tuple[int, int, float]]:
        """Maximal runs ``(first_bin, last_bin, points)`` of adjacent bins with equal points."""
        return merge_runs(self.block_points(j), tol)

    @property
    def used(self) -> np.ndarray:
        """(p,) bool: the variable's points are not constant (so it changes some score)."""
        return np.array([np.ptp(self.block_points(j)) > 1e-7 for j in range(len(self.blocks))])

    def n_ranges(self, tol: float = 1e-7) -> int:
        """Total number of merged ranges over the used variables (the rows of the card)."""
        return int(sum(len(self.ranges(j, tol)) for j in np.flatnonzero(self.used)))

    def scores(self, X_onehot: Any) -> np.ndarray:
        """``theta . x̄_i + b`` for each row of a one-hot matrix."""
        return np.asarray(sp.csr_matrix(X_onehot) @ self.theta).ravel() + self.intercept


def merge_runs(points: np.ndarray, tol: float = 1e-7) -> list[tuple[int, int, float]]:
    """Split a block of per-bin points into maximal runs ``[(first_bin, last_bin, points), ...]`` of
    equal adjacent values (the slides' "two contiguous values with equal weights are in the same bin")."""
    points = np.asarray(points, dtype=float)
    if points.size == 0:
        return []
    breaks = np.flatnonzero(np.abs(np.diff(points)) > tol) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [points.size]]) - 1
    return [(int(a), int(b), float(points[a])) for a, b in zip(starts, stops)]


def isotonic(values: np.ndarray, increasing: bool = True) -> np.ndarray:
    """Least-squares projection onto non-decreasing (or non-increasing) vectors (pool adjacent violators)."""
    v = np.asarray(values, dtype=float)
    if not increasing:
        return -isotonic(-v, True)
    means: list[float] = []
    counts: list[int] = []
    for value in v:
        means.append(float(value))
        counts.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            c = counts[-2] + counts[-1]
            means[-2] = (means[-2] * counts[-2] + means[-1] * counts[-1]) / c
            counts[-2] = c
            means.pop()
            counts.pop()
    return np.repeat(means, counts)


def _restore_zero_sum(q: np.ndarray, target: np.ndarray, lo: float, hi: float, mono: int) -> np.ndarray:
    """Move single points of an integer block until it sums to 0, each step on the bin whose
    rounding went furthest in the wrong direction among the bins that can move (bounds, monotone)."""
    q = q.copy()
    while q.sum() != 0:
        step = -1.0 if q.sum() > 0 else 1.0
        moved = q + step
        ok = (moved >= lo) & (moved <= hi)
        if mono != 0:  # the moved bin stays between its neighbours along the monotone direction
            ok &= np.r_[True, mono * (moved[1:] - q[:-1]) >= 0] & np.r_[mono * (q[1:] - moved[:-1]) >= 0, True]
        if not ok.any():
            return np.zeros_like(q)
        gain = np.where(ok, -step * (q - target), -np.inf)
        k = int(np.argmax(gain))
        q[k] = moved[k]
    return q


def round_points(theta: np.ndarray, blocks: Sequence[slice], lb: np.ndarray, ub: np.ndarray, monotone: np.ndarray,
                 reference: str, max_size: int | None, must_include: np.ndarray) -> np.ndarray:
    """The integer points table nearest ``theta`` (already at its reference level) that the fused
    ILP admits: monotone blocks projected (:func:`isotonic`), rounded, clipped to ``[lb_j, ub_j]``,
    shifted back to the reference (``"min"``: the block minimum is 0; ``"sum_to_zero"``: single
    points moved by :func:`_restore_zero_sum`), then beyond ``max_size`` used variables (must-include
    counted first) the free blocks of smallest total variation set to 0. Rounding, clipping and
    integer shifts are monotone maps, so monotone blocks stay monotone."""
    out = np.zeros(np.shape(theta))
    for j, s in enumerate(blocks):
        v = np.asarray(theta[s], dtype=float)
        if monotone[j] != 0:
            v = isotonic(v, monotone[j] > 0)
        q = np.clip(np.round(v), lb[j], ub[j])
        if reference == "min":
            q = q - q.min()
        elif reference == "first":
            q = np.clip(q - q[0], lb[j], ub[j])
        else:
            q = _restore_zero_sum(q, v, lb[j], ub[j], int(monotone[j]))
        out[s] = q
    if max_size is not None:
        used = np.array([np.any(out[s] != 0) for s in blocks])
        must = np.zeros(len(blocks), bool)
        must[np.asarray(must_include, dtype=int)] = True
        excess = int((used | must).sum()) - int(max_size)
        if excess > 0:
            free = np.flatnonzero(used & ~must)
            tv = np.array([np.abs(np.diff(out[blocks[j]])).sum() for j in free])
            for j in free[np.argsort(tv, kind="stable")[:excess]]:
                out[blocks[j]] = 0.0
    return out
