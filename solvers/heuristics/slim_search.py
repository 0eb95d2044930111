"""SLIM incumbents by exact integer moves: beam search over supports, descent and swaps.

The SLIM objective (Ustun & Rudin 2016, eq. 2 with the tiny L1 tie-breaker)

.. math::

    F(\\lambda) = \\min_{\\lambda_0} \\sum_i v_i [y_i (x_i \\cdot \\lambda + \\lambda_0) < m]
    + C_0 \\sum_j c_{0,j} [\\lambda_j \\ne 0] + \\epsilon \\|\\lambda\\|_1

is searched with *exact* moves: one coordinate set to an integer value in its range, the intercept
re-chosen optimally. With integer features and integer points every score is an integer, so the
rows are a histogram over score levels, and a move ``lambda_j += delta`` shifts only the rows with
``x_ij != 0``: the error of every move with its best intercept costs ``O(nnz(x_j) + R)`` (``R``
the number of score levels; :func:`move_errors`, numba), every move of every feature a few
milliseconds on 2000 rows and 171 features. On that:

* :meth:`MoveSearch.descend` takes the best improving move (add, change or drop a feature) until none
  improves, then the best *swap* (drop one feature of the support, add the best new value of
  another), FasterRisk's swap step (Liu et al., NeurIPS 2022, Alg. 3) on the 0-1 objective;
* :meth:`MoveSearch.beam_search` grows supports one feature at a time from the empty model (or
  a start), ranks additions by a guide (the SLIM objective, or the hinge loss, which is not flat
  where no single feature flips a row), keeps the ``width`` best supports of each size, each
  refitted over its own features, and stops when ``patience`` sizes in a row bring no
  improvement (the L0 cost outweighs the error gained), at ``max_size`` or at the deadline:
  FasterRisk's sparse beam search (Alg. 2) with exact integer moves;
* the best model is finally tried at twice and three times its scale and descended: the scaled
  card makes the same errors, and single moves from it reach points in between.

Every model stays inside the coefficient set and ``max_size``; instances with operational
constraints keep the moves whose model obeys them (the search starts from a model that does).
Only integer-valued data and integer points are searched this way (:func:`applies`).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from formulations.base import Model
from formulations.constraints import binding
from formulations.slim import SLIMInstance
from solvers.exact.loops import copy_into
from solvers.limits import Limits

#: multipliers of :meth:`MoveSearch.shrink`
SHRINK = (0.75, 2 / 3, 0.5, 1 / 3, 0.25)
#: scores within this of a margin count as on it (round-off of the intercept candidates)
TOLERANCE = 1e-9


#: most score levels a histogram may span (beyond, the coordinate search of solvers.heuristics.slim is used)
MAX_LEVELS = 500_000


def applies(instance: SLIMInstance) -> bool:
    """True when every score is an integer (integer-valued features and integer points) and the
    scores, with any move, span at most :data:`MAX_LEVELS` levels."""
    X, cs = instance.X, instance.coefficients
    if not (cs.integer.all() and np.all(X == np.round(X))):
        return False
    reach = np.abs(X).max(axis=0, initial=0) * np.maximum(np.abs(cs.lb), np.abs(cs.ub))
    return bool(2 * reach.sum() + 4 * reach.max(initial=0) + 1 <= MAX_LEVELS)


@njit(cache=True, nogil=True)
def _value_at(b, cp, cn, mp, mn, base, margin, hinge):
    """Margin error (or hinge loss) of the histogram at intercept ``b``: positive rows at levels
    below ``m - b`` and negative rows above ``-m - b`` are wrong (the hinge weighs each by its
    shortfall ``m - y (L + b)``)."""
    R = cp.size - 1
    p = min(max(math.ceil(margin - b - TOLERANCE) - base, 0), R)        # levels below p: positives wrong
    q = min(max(math.floor(-margin - b + TOLERANCE) - base + 1, 0), R)  # levels from q: negatives wrong
    if hinge:
        return (margin - b) * cp[p] - mp[p] + (margin + b) * (cn[R] - cn[q]) + (mn[R] - mn[q])
    return cp[p] + cn[R] - cn[q]


@njit(cache=True, nogil=True)
def _best_error(hp, hn, base, margin, blo, bhi, integer_b, hinge):
    """Least margin error (or hinge loss, :func:`_value_at`) of the histogram ``hp`` / ``hn`` of
    positive / negative weight per score level ``L = base + k`` over intercepts ``b`` in
    ``[blo, bhi]`` (integer when ``integer_b``). Both are piecewise linear in ``b`` with
    breakpoints ``m - L`` and ``-m - L`` at occupied levels: those (their floor and ceiling for
    an integer intercept) and the bounds are the candidates."""
    R = hp.size
    cp = np.zeros(R + 1)
    cn = np.zeros(R + 1)
    mp = np.zeros(R + 1)
    mn = np.zeros(R + 1)
    for k in range(R):
        cp[k + 1] = cp[k] + hp[k]
        cn[k + 1] = cn[k] + hn[k]
        mp[k + 1] = mp[k] + hp[k] * (base + k)
        mn[k + 1] = mn[k] + hn[k] * (base + k)
    best = min(_value_at(blo, cp, cn, mp, mn, base, margin, hinge),
               _value_at(bhi, cp, cn, mp, mn, base, margin, hinge))
    for k in range(2 * R):
        if k < R:
            if hp[k] <= 0.0:
                continue
            b = margin - (base + k)
        else:
            if hn[k - R] <= 0.0:
                continue
            b = -margin - (base + k - R)
        if integer_b:
            for c in (math.floor(b + TOLERANCE), math.ceil(b - TOLERANCE)):
                best = min(best, _value_at(min(max(c, blo), bhi), cp, cn, mp, mn, base, margin, hinge))
        else:
            best = min(best, _value_at(min(max(b, blo), bhi), cp, cn, mp, mn, base, margin, hinge))
    return best


@njit(cache=True, nogil=True)
def _scores(n, indptr, indices, values, coef):
    """``X @ coef`` (int64) from the CSC arrays of ``X``, over the non-zero points only."""
    out = np.zeros(n, np.int64)
    for j in range(coef.size):
        if coef[j] != 0:
            for p in range(indptr[j], indptr[j + 1]):
                out[indices[p]] += coef[j] * values[p]
    return out


#: a column with more distinct non-zero values than this shifts its rows one by one in
#: :func:`move_errors` (else its rows are histogrammed once per value)
MAX_COLUMN_VALUES = 16
#: most cells of those per-value histograms, per label (so fewer values for wide score ranges)
HISTOGRAM_CELLS = 2**20


@njit(cache=True, nogil=True)
def move_errors(scores, positive, weights, indptr, indices, values, coef, vlo, vhi, cols,
                margin, blo, bhi, integer_b, shift, hinge):
    """Weighted margin error, with the best intercept, of every move ``lambda_j = v`` for ``j`` in
    ``cols`` and ``v`` in ``vlo[j]..vhi[j]``: ``out[c, v - vlo[j]]`` (inf beyond the range).

    ``scores`` (int64) are ``X @ coef``; ``X`` is given by its CSC arrays (integer values);
    ``shift`` bounds ``|delta * x_ij|`` over every move, so every new score lies within the
    histogram. The rows of column ``j`` with ``x_ij = x`` all move by ``delta * x`` levels: they are
    histogrammed once per distinct ``x`` (at most :data:`MAX_COLUMN_VALUES`, fewer when ``R`` is
large: :data:`HISTOGRAM_CELLS`), and each move adds
    those histograms shifted, ``O(nnz(x_j) + values * R)`` per column instead of
    ``O(values * nnz(x_j))``."""
    n = scores.size
    lo_level = scores.min() - shift
    R = scores.max() + shift - lo_level + 1
    hp0 = np.zeros(R)
    hn0 = np.zeros(R)
    for i in range(n):
        if positive[i]:
            hp0[scores[i] - lo_level] += weights[i]
        else:
            hn0[scores[i] - lo_level] += weights[i]
    width = 0
    for c in range(cols.size):
        width = max(width, vhi[cols[c]] - vlo[cols[c]] + 1)
    out = np.full((cols.size, width), np.inf)
    hp = np.empty(R)
    hn = np.empty(R)
    rest_p = np.empty(R)
    rest_n = np.empty(R)
    cap = min(MAX_COLUMN_VALUES, max(1, HISTOGRAM_CELLS // R))
    xs = np.zeros(cap, np.int64)
    ap = np.zeros((cap, R))
    an = np.zeros((cap, R))
    current = _best_error(hp0, hn0, lo_level, margin, blo, bhi, integer_b, hinge)
    for c in range(cols.size):
        j = cols[c]
        nx = 0  # the distinct non-zero values of column j, and its rows' histogram per value
        for p in range(indptr[j], indptr[j + 1]):
            found = False
            for t in range(nx):
                if xs[t] == values[p]:
                    found = True
                    break
            if not found:
                if nx == cap:
                    nx = -1
                    break
                xs[nx] = values[p]
                nx += 1
        if nx >= 0:
            ap[:nx] = 0.0
            an[:nx] = 0.0
            copy_into(rest_p, hp0)
            copy_into(rest_n, hn0)
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                t = 0
                while xs[t] != values[p]:
                    t += 1
                k0 = scores[i] - lo_level
                if positive[i]:
                    ap[t, k0] += weights[i]
                    rest_p[k0] -= weights[i]
                else:
                    an[t, k0] += weights[i]
                    rest_n[k0] -= weights[i]
        for v in range(vlo[j], vhi[j] + 1):
            delta = v - coef[j]
            if delta == 0:
                out[c, v - vlo[j]] = current
                continue
            if nx >= 0:
                copy_into(hp, rest_p)
                copy_into(hn, rest_n)
                for t in range(nx):
                    move = delta * xs[t]
                    for k in range(max(0, -move), min(R, R - move)):
                        hp[k + move] += ap[t, k]
                        hn[k + move] += an[t, k]
            else:
                copy_into(hp, hp0)
                copy_into(hn, hn0)
                for p in range(indptr[j], indptr[j + 1]):
                    i = indices[p]
                    k0 = scores[i] - lo_level
                    k1 = k0 + delta * values[p]
                    if positive[i]:
                        hp[k0] -= weights[i]
                        hp[k1] += weights[i]
                    else:
                        hn[k0] -= weights[i]
                        hn[k1] += weights[i]
            out[c, v - vlo[j]] = _best_error(hp, hn, lo_level, margin, blo, bhi, integer_b, hinge)
    return out


class MoveSearch:
    """The exact-move neighbourhood of one SLIM instance (module docstring)."""

    def __init__(self, instance: SLIMInstance) -> None:
        self.instance = instance
        cs = instance.coefficients
        X = sp.csc_matrix(instance.X)
        self.indptr, self.indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
        self.values = np.round(X.data).astype(np.int64)
        self.positive = instance.y > 0
        self.weights = instance.weights.astype(float)
        self.vlo = np.ceil(cs.lb - 1e-9).astype(np.int64)
        self.vhi = np.floor(cs.ub + 1e-9).astype(np.int64)
        self.forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
        self.cost = instance.spec.c0 * cs.c0
        self.max_size = instance.spec.max_size
        self.constrained = binding(instance.constraints)
        span = np.maximum(np.abs(self.vlo), np.abs(self.vhi)) * 2
        self.n = X.shape[0]
        self.xmax = np.zeros(X.shape[1], np.int64)
        np.maximum.at(self.xmax, np.repeat(np.arange(X.shape[1]), np.diff(self.indptr)), np.abs(self.values))
        self.shift_all = int((span * self.xmax).max(initial=0))
        lo, hi = instance.intercept_bounds
        self.blo, self.bhi = float(lo), float(hi)
        if instance.integer_intercept:
            self.blo, self.bhi = float(math.ceil(lo - 1e-9)), float(math.floor(hi + 1e-9))

    @property
    def d(self) -> int:
        return self.vlo.size

    def empty(self) -> np.ndarray:
        """The sparsest model of the set: every point at its value nearest 0 (0 unless the
        feature's range excludes it)."""
        return np.clip(0, self.vlo, self.vhi).astype(np.int64)

    def penalty(self, coef: np.ndarray) -> float:
        return float(self.cost @ ((coef != 0) | self.forced) + self.instance.epsilon * np.abs(coef).sum())

    def moves(self, coef: np.ndarray, cols: np.ndarray, hinge: bool = False) -> np.ndarray:
        """Objective of every move ``coef[j] = v`` (``j`` in ``cols``), inf where not allowed; with
        ``hinge`` the loss term is the hinge loss ``sum_i v_i max(0, m - y_i (s_i + b))`` at its
        best intercept (the beam's guide) instead of the margin error."""
        err = move_errors(self.scores(coef), self.positive, self.weights, self.indptr, self.indices, self.values,
                          coef.astype(np.int64), self.vlo, self.vhi, cols.astype(np.int64),
                          float(self.instance.spec.margin), self.blo, self.bhi, bool(self.instance.integer_intercept),
                          self.shift_all, hinge)
        v = self.vlo[cols][:, None] + np.arange(err.shape[1])[None, :]
        used = (coef != 0) | self.forced
        cj, uj = coef[cols][:, None], used[cols][:, None]
        now = (v != 0) | self.forced[cols][:, None]
        obj = (err + self.penalty(coef) + self.cost[cols][:, None] * (now.astype(float) - uj)
               + self.instance.epsilon * (np.abs(v) - np.abs(cj)))
        if self.max_size is not None and used.sum() >= self.max_size:
            grow = ~uj[:, 0]
            obj[grow] = np.where(v[grow] == 0, obj[grow], np.inf)
        return obj

    def scores(self, coef: np.ndarray) -> np.ndarray:
        """``X @ coef`` (int64) from the support's columns only."""
        return _scores(self.n, self.indptr, self.indices, self.values, np.asarray(coef, np.int64))

    def value(self, coef: np.ndarray, hinge: bool = False) -> float:
        """The objective of ``coef`` itself (margin error or hinge, as :meth:`moves`)."""
        return float(self.moves(coef, np.zeros(1, np.int64), hinge)[0, coef[0] - self.vlo[0]])

    def shrink(self, coef: np.ndarray) -> np.ndarray:
        """The best by the SLIM objective of ``coef`` and its roundings ``round(t * coef)`` for
        :data:`SHRINK` (support kept): the hinge favours the largest points, the 0-1 loss only
        their ratios (the star-ray idea of FasterRisk, Liu et al. 2022, Alg. 3, towards 0)."""
        best, value = coef, self.value(coef)
        for t in SHRINK:
            scaled = np.round(t * coef).astype(np.int64)
            if np.array_equal(scaled != 0, coef != 0) and self.feasible(scaled):
                v = self.value(scaled)
                if v < value - 1e-12:
                    best, value = scaled, v
        return best

    def feasible(self, coef: np.ndarray) -> bool:
        if not self.constrained:
            return True
        return self.instance.constraint_violation(self.instance.with_best_intercept(coef.astype(float))) <= 1e-9

    def _take(self, coef: np.ndarray, obj: np.ndarray, cols: np.ndarray, value: float, tries: int = 8):
        """The best move below ``value`` whose model is feasible: ``(coef, objective)`` or None."""
        flat = np.argsort(obj, axis=None, kind="stable")[:tries if self.constrained else 1]
        for f in flat:
            c, k = np.unravel_index(f, obj.shape)
            if not obj[c, k] < value - 1e-12:
                return None
            trial = coef.copy()
            trial[cols[c]] = self.vlo[cols[c]] + k
            if self.feasible(trial):
                return trial, float(obj[c, k])
        return None

    def descend(self, coef: np.ndarray, limits: Limits | None = None, support_only: bool = False,
                hinge: bool = False) -> tuple[np.ndarray, float]:
        """Best-improvement descent over single moves, then swaps, until neither improves or the
        budget runs out; with ``support_only`` only the values of the support change (no feature
        enters or leaves, no swaps: the beam's refit of a grown support)."""
        coef = np.asarray(coef, dtype=np.int64).copy()
        cols = np.flatnonzero(coef != 0) if support_only else np.arange(self.d)
        value = self.value(coef, hinge)
        while cols.size and (limits is None or not limits.expired()):
            obj = self.moves(coef, cols, hinge)
            if support_only:
                obj[self.vlo[cols][:, None] + np.arange(obj.shape[1])[None, :] == 0] = np.inf
            step = self._take(coef, obj, cols, value)
            if step is not None:
                coef, value = step
                continue
            if support_only:
                break
            step = self.best_swap(coef, value, limits)
            if step is None:
                break
            coef, value = step
        return coef, value

    def best_swap(self, coef: np.ndarray, value: float, limits: Limits | None = None):
        """Drop one free feature of the support and set the best new value of another: the best
        such pair below ``value`` (feasible), or None."""
        support = np.flatnonzero((coef != 0) & ~self.forced)
        outside = np.flatnonzero((coef == 0) & ~self.forced)
        best = None
        for j in support:
            if limits is not None and limits.expired():
                break
            dropped = coef.copy()
            dropped[j] = 0
            step = self._take(dropped, self.moves(dropped, outside), outside, value if best is None else best[1])
            if step is not None:
                best = step
        return best

    def beam_search(self, start: np.ndarray | None = None, width: int = 5, children: int = 5, patience: int = 2,
                    hinge: bool = False, limits: Limits | None = None) -> tuple[np.ndarray, float]:
        """Grow supports one feature at a time (module docstring): each member of the beam proposes
        its ``children`` best additions by the guide, each child's values are refitted on its
        support by descent on the guide, and the ``width`` best children form the next beam. The
        guide is the SLIM objective itself, or with ``hinge`` the hinge loss (the 0-1 loss is flat
        where one feature alone cannot flip a row; neither guide dominates on real data), and then
        every child is also descended on the SLIM objective over its support. The search stops
        after ``patience`` sizes in a row that improve neither the guide nor the SLIM objective;
        the best model by the SLIM objective is returned."""
        coef0 = self.empty() if start is None else np.asarray(start, np.int64)
        best = (coef0, self.value(coef0))
        best_guide = self.value(coef0, hinge)
        beam = [coef0]
        seen = {tuple(np.flatnonzero(coef0))}
        stale = 0
        limit = self.d if self.max_size is None else self.max_size
        while beam and stale < patience and (limits is None or not limits.expired()):
            grown = []
            for coef in beam:
                outside = np.flatnonzero((coef == 0) & ~self.forced)
                if int(((coef != 0) | self.forced).sum()) >= limit or outside.size == 0:
                    continue
                obj = self.moves(coef, outside, hinge=hinge)
                obj[self.vlo[outside][:, None] + np.arange(obj.shape[1])[None, :] == 0] = np.inf
                for f in np.argsort(obj, axis=None, kind="stable")[:children]:
                    c, k = np.unravel_index(f, obj.shape)
                    if not np.isfinite(obj[c, k]):
                        break
                    child = coef.copy()
                    child[outside[c]] = self.vlo[outside[c]] + k
                    key = tuple(np.flatnonzero(child))
                    if key in seen or not self.feasible(child):
                        continue
                    seen.add(key)
                    guided, guide = self.descend(child, limits, support_only=True, hinge=hinge)
                    grown.append((guide, guided, self.descend(self.shrink(guided), limits, support_only=True) if hinge
                                  else (guided, guide)))
                if limits is not None and limits.expired():
                    break
            if not grown:
                break
            grown.sort(key=lambda t: t[0])
            beam = [g[1] for g in grown[:width]]
            top = min((g[2] for g in grown), key=lambda t: t[1])
            stale += 1
            if top[1] < best[1] - 1e-12:
                best, stale = top, 0
            if grown[0][0] < best_guide - 1e-12:
                best_guide, stale = grown[0][0], 0
        return best


#: multipliers of the best model tried last, each followed by descent: the scaled model has the
#: same 0-1 errors, and single moves from it reach points in between (e.g. 4, 4, 5 from 1, 1, 1)
REFINE = (2, 3)
#: beams tried in turn while the budget allows: (width = children per member, hinge guide)
BEAMS = ((5, False), (5, True), (10, False), (10, True))


def search(instance: SLIMInstance, starts: list[Model], limits: Limits | None = None) -> Model:
    """Descent with swaps from each start (starts that break an operational constraint are
    skipped), then the beam searches of :data:`BEAMS` from the empty model while the budget
    allows, each descended with swaps; the best model found, refined at the scales
    :data:`REFINE`."""
    ms = MoveSearch(instance)
    found = []
    for start in starts:
        coef = np.round(start.coef).astype(np.int64)
        if ms.feasible(coef):
            found.append(ms.descend(coef, limits))
    if ms.d == 0:
        return instance.with_best_intercept(np.zeros(0))
    if not ms.constrained or ms.feasible(ms.empty()):
        for width, hinge in BEAMS:
            if limits is not None and limits.expired():
                break
            grown = ms.beam_search(width=width, children=width, hinge=hinge, limits=limits)
            found.append(ms.descend(grown[0], limits))
    if not found:
        return min(starts, key=lambda m: (instance.constraint_violation(m) > 1e-9, instance.objective(m)))
    coef, value = min(found, key=lambda t: t[1])
    for k in REFINE:  # finer points: the same rule at k times the scale, then single moves
        scaled = coef * k
        if (limits is not None and limits.expired()) or np.any(scaled < ms.vlo) or np.any(scaled > ms.vhi):
            break
        if ms.feasible(scaled):
            finer, v = ms.descend(scaled, limits)
            if v < value - 1e-12:
                coef, value = finer, v
    return instance.with_best_intercept(coef.astype(float))
