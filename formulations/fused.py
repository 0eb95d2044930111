"""Fused-lasso hinge ILP: integer points for ordered one-hot bins (a DiaRem-style points table).

Source: ``feature-selection-fused-lasso-scores.txt``, part 2, "The Linear Formulation". With
``x̄_i`` the ordered one-hot encoding of sample ``i`` (``p`` variables, variable ``j`` owning
the ``d_j`` contiguous columns ``B_j``; ``d̄ = sum_j d_j``), the builder encodes eq. (1)

.. math::

    \\min_{\\theta, b}\\; \\sum_{i=1}^N w_i\\, \\ell(y_i, \\theta\\cdot\\bar x_i + b)
        + \\lambda \\sum_{j=1}^{p} \\sum_{k, k+1 \\in B_j} |\\theta_k - \\theta_{k+1}|

as the linear program of eqs. (2)-(5): hinge slacks ``xi_i >= 0`` with
``y_i (theta . x̄_i + b) >= margin - xi_i`` (eq. 3, written by
:func:`formulations.encodings.add_hinge`), and one ``eta`` per pair of *adjacent bins of the same
variable* with ``-eta_k <= theta_k - theta_{k+1} <= eta_k`` at objective cost ``lambda``
(eqs. 2 and 4). Two deliberate departures from the slides' print: eq. (4) there reads
``-lambda eta <= ... <= lambda eta`` with ``eta`` at cost 1, which weighs the fused term by
``1/lambda``; we follow eq. (1), the stated objective. And the slides sum ``|theta_j -
theta_{j+1}|`` over all ``d̄ - 1`` neighbours; differences across two variables' blocks have no
meaning (the slides' algorithm bins one variable at a time), so only within-block pairs are fused,
as in the binarsity penalty (``binarsity-weighted-tv.txt``, "bina(theta)").

``theta`` is integer in a per-variable range ``[lb_j, ub_j]`` (eq. 5 uses the natural numbers:
the default range is ``0..U``; signed ranges are allowed); ``b`` is real. One-hot blocks make
``theta`` unique only up to a shift of each block absorbed by ``b``; a **reference level**
removes it:

* ``"min"`` (default): the smallest points of each variable are 0 (``theta >= 0`` and one
  binary ``z_k`` per bin with ``theta_k <= ub_j (1 - z_k)``, ``sum_{k in B_j} z_k = 1``). This
  loses nothing when ``lb_j = 0``: shifting a block down to its minimum keeps it in range;
* ``"first"``: the first bin has 0 points (``theta_{first} = 0`` by its bounds);
* ``"sum_to_zero"``: ``sum_{k in B_j} theta_k = 0``, the binarsity centring ``delta_1``.

Options: monotone blocks (``theta_k <= theta_{k+1}`` or ``>=`` along a variable), a maximum
number of variables used (L0 over blocks: binary ``u_j`` with ``lb_j u_j <= theta_k <= ub_j u_j``,
the big-M taken from the points bounds, ``sum_j u_j <= max_variables``), must-include
variables (``u_j = 1``), sample weights ``w_i``. Every row block is built from whole sparse
matrices; nothing loops over samples.

Variable blocks of the program: ``theta`` (d̄), ``b`` (1), ``xi`` (N), ``eta`` (d̄ - p), then
``z`` (reference ``"min"``, bins of non-monotone blocks) and ``u`` (p, with ``max_variables``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from formulations.encodings import add_hinge
from formulations.intercept import hinge_intercept
from formulations.program import Program, ProgramBuilder

REFERENCES = ("min", "first", "sum_to_zero")


@dataclass(frozen=True)
class FusedPoints:
    """Decoded model: points per bin, intercept, and the merged ranges of each variable.

    Attributes
    ----------
    theta : (d̄,) points of each one-hot bin (integers for the ILP, rounded within 1e-6).
    intercept : b.
    blocks : the column slice of each variable.
    """

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
        return np.array([np.ptp(self.block_points(j)) > 1e-7 if self.blocks[j].stop > self.blocks[j].start
                         else False for j in range(len(self.blocks))])

    def n_ranges(self, tol: float = 1e-7) -> int:
        """Total number of merged ranges over the used variables (the rows of the card)."""
        return int(sum(len(self.ranges(j, tol)) for j in np.flatnonzero(self.used)))

    def scores(self, X_onehot) -> np.ndarray:
        """``theta . x̄_i + b`` for each row of a one-hot matrix."""
        return np.asarray(sp.csr_matrix(X_onehot) @ self.theta).ravel() + self.intercept


def merge_runs(points: np.ndarray, tol: float = 1e-7) -> list[tuple[int, int, float]]:
    """Split a block of per-bin points into maximal runs of equal adjacent values.

    Returns ``[(first_bin, last_bin, points), ...]``; the step of the slides' algorithm "build a
    binning of the values of X^j, such that two contiguous values associated with equal weights
    are in the same bin".
    """
    points = np.asarray(points, dtype=float)
    if points.size == 0:
        return []
    breaks = np.flatnonzero(np.abs(np.diff(points)) > tol) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [points.size]]) - 1
    return [(int(a), int(b), float(points[a])) for a, b in zip(starts, stops)]


def _as_blocks(blocks, d: int) -> tuple[slice, ...]:
    """Sizes or slices -> contiguous slices covering ``0..d`` exactly."""
    items = list(blocks)
    if not items:
        raise ValueError("blocks is empty; give the number of bins of each variable, e.g. [4, 3]")
    if all(isinstance(b, slice) for b in items):
        out = tuple(slice(int(b.start or 0), int(b.stop)) for b in items)
    elif all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in items):
        if any(b < 1 for b in items):
            raise ValueError(f"block sizes must be >= 1, got {items}")
        ends = np.cumsum(items)
        out = tuple(slice(int(e - s), int(e)) for s, e in zip(items, ends))
    else:
        raise TypeError("blocks must be a sequence of block sizes (ints) or of column slices")
    pos = 0
    for k, s in enumerate(out):
        if s.start != pos or s.stop <= s.start:
            raise ValueError(f"blocks must be contiguous, non-empty and in order; block {k} is {s}, "
                             f"expected start {pos}")
        pos = s.stop
    if pos != d:
        raise ValueError(f"blocks cover {pos} columns but X_onehot has {d}; one block per variable, all columns")
    return out


@dataclass
class FusedLassoHinge:
    """Builder of the fused-lasso hinge ILP (eqs. 1-5, see the module docstring).

    Parameters
    ----------
    penalty : lambda >= 0 of eq. (1), in hinge units (one unit of fused variation costs as much
        as one unit of hinge slack of a weight-1 sample).
    points_lb, points_ub : points range, scalar or one value per variable (``lb <= 0 <= ub``).
    reference : ``"min"``, ``"first"`` or ``"sum_to_zero"`` (see module docstring).
    monotone : None or per-variable ``+1`` (non-decreasing), ``-1`` (non-increasing), ``0``.
    max_variables : None or the maximum number of variables with non-zero points (L0 over blocks).
    must_include : indices of variables whose L0 indicator is fixed to 1 (they take one of the
        ``max_variables`` places and may be non-constant whatever the limit).
    margin : hinge margin (1 in eq. 3).

    ``exact(X_onehot, y, blocks)`` builds the ILP and remembers the instance; ``relaxed()``,
    ``decode(x)`` and ``lift(theta)`` refer to the last instance built.
    """

    penalty: float = 1.0
    points_lb: float | Sequence[float] = 0.0
    points_ub: float | Sequence[float] = 5.0
    reference: str = "min"
    monotone: Sequence[int] | None = None
    max_variables: int | None = None
    must_include: Sequence[int] = ()
    margin: float = 1.0
    _instance: dict | None = field(default=None, init=False, repr=False)

    # ------------------------------------------------------------ validation
    def _check(self, X, y, blocks, sample_weight):
        if not np.isfinite(self.penalty) or self.penalty < 0:
            raise ValueError(f"penalty (lambda) must be finite and >= 0, got {self.penalty}")
        if not np.isfinite(self.margin) or self.margin <= 0:
            raise ValueError(f"margin must be finite and > 0, got {self.margin}")
        if self.reference not in REFERENCES:
            raise ValueError(f"reference must be one of {REFERENCES}, got {self.reference!r}")
        Xs = sp.csr_matrix(X, dtype=float)
        if Xs.ndim != 2 or Xs.shape[0] == 0 or Xs.shape[1] == 0:
            raise ValueError(f"X_onehot must be a non-empty 2-D matrix, got shape {Xs.shape}")
        n, d = Xs.shape
        if not np.isfinite(Xs.data).all() or not np.isin(Xs.data, (0.0, 1.0)).all():
            raise ValueError("X_onehot must contain only 0 and 1 (ordered one-hot bins); "
                             "bin the raw data first, e.g. milpscore.binning.OrderedBinner")
        slices = _as_blocks(blocks, d)
        p = len(slices)
        member = self._membership(slices, d)
        per_block = np.asarray((Xs @ member).todense())
        if not np.all(per_block == 1):
            i, j = np.argwhere(per_block != 1)[0]
            raise ValueError(f"row {i} of X_onehot has {per_block[i, j]:g} ones in block {j}; each row needs "
                             "exactly one 1 per variable (one-hot)")
        yv = np.asarray(y, dtype=float)
        if yv.shape != (n,):
            raise ValueError(f"y has shape {yv.shape}, expected ({n},) to match X_onehot")
        if not np.isin(yv, (-1.0, 1.0)).all():
            raise ValueError("y must hold labels in {-1, +1}; map the classes first")
        if np.unique(yv).size < 2:
            raise ValueError("y has a single class; the hinge ILP needs samples of both classes")
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any():
            raise ValueError(f"sample_weight must be {n} finite non-negative numbers")
        lb = self._per_block(self.points_lb, p, "points_lb")
        ub = self._per_block(self.points_ub, p, "points_ub")
        if np.any(lb > 0) or np.any(ub < 0) or np.any(lb > ub):
            raise ValueError(f"each points range must contain 0 (lb <= 0 <= ub); got lb={lb.tolist()}, "
                             f"ub={ub.tolist()}")
        if self.reference == "min" and np.any(lb != 0):
            raise ValueError("reference='min' sets the smallest points of each variable to 0, so points_lb must "
                             "be 0; for signed points use reference='first' or 'sum_to_zero'")
        mono = np.zeros(p, int) if self.monotone is None else np.asarray(self.monotone)
        if mono.shape != (p,) or not np.isin(mono, (-1, 0, 1)).all():
            raise ValueError(f"monotone must hold one of -1, 0, +1 for each of the {p} variables")
        must = np.asarray(self.must_include, dtype=int).reshape(-1)
        if must.size and (must.min() < 0 or must.max() >= p):
            raise ValueError(f"must_include indices must lie in 0..{p - 1}, got {must.tolist()}")
        if self.max_variables is not None:
            if int(self.max_variables) < 0:
                raise ValueError(f"max_variables must be >= 0, got {self.max_variables}")
            if np.unique(must).size > int(self.max_variables):
                raise ValueError(f"{np.unique(must).size} must-include variables exceed max_variables="
                                 f"{self.max_variables}; raise max_variables")
        return Xs, yv, slices, member, w, lb, ub, mono.astype(int), np.unique(must)

    @staticmethod
    def _per_block(value, p: int, name: str) -> np.ndarray:
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            arr = np.full(p, float(arr))
        if arr.shape != (p,) or not np.isfinite(arr).all():
            raise ValueError(f"{name} must be a finite scalar or {p} finite values (one per variable)")
        return arr

    @staticmethod
    def _membership(slices: tuple[slice, ...], d: int) -> sp.csr_matrix:
        """(d̄, p) 0/1 matrix: column k belongs to block j."""
        owner = np.repeat(np.arange(len(slices)), [s.stop - s.start for s in slices])
        return sp.csr_matrix((np.ones(d), (np.arange(d), owner)), shape=(d, len(slices)))

    @staticmethod
    def _differences(slices: tuple[slice, ...], d: int) -> sp.csr_matrix:
        """(d̄ - p, d̄) matrix ``D`` with rows ``theta_{k+1} - theta_k`` for adjacent bins of one block."""
        last = np.array([s.stop - 1 for s in slices])
        left = np.setdiff1d(np.arange(d), last)
        m = left.size
        rows = np.repeat(np.arange(m), 2)
        cols = np.column_stack([left, left + 1]).ravel()
        vals = np.tile([-1.0, 1.0], m)
        return sp.csr_matrix((vals, (rows, cols)), shape=(m, d))

    # ---------------------------------------------------------------- build
    def exact(self, X_onehot, y, blocks, sample_weight=None) -> Program:
        """The ILP of eqs. (2)-(5) with the options of the builder.

        Parameters
        ----------
        X_onehot : (N, d̄) 0/1 dense or sparse matrix, exactly one 1 per variable block per row.
        y : (N,) labels in {-1, +1}.
        blocks : block sizes ``[d_1, ..., d_p]`` or contiguous column slices.
        sample_weight : (N,) non-negative weights ``w_i`` (default 1).
        """
        Xs, yv, slices, member, w, lb, ub, mono, must = self._check(X_onehot, y, blocks, sample_weight)
        d, p = Xs.shape[1], len(slices)
        owner_lb, owner_ub = member @ lb, member @ ub
        col_lb, col_ub = owner_lb.copy(), owner_ub.copy()
        pinned, free = self._reference_split(slices, mono)
        col_lb[pinned] = col_ub[pinned] = 0.0
        builder = ProgramBuilder()
        builder.add_variables("theta", d, col_lb, col_ub, integer=True)
        b_lo, b_hi = -ub.sum() - self.margin, -lb.sum() + self.margin
        builder.add_variables("b", 1, b_lo, b_hi)
        add_hinge(builder, Xs, yv, weights="theta", intercept="b", margin=self.margin,
                  sample_weight=w, name="xi")
        D = self._differences(slices, d)
        eye = sp.identity(D.shape[0], format="csr")
        builder.add_variables("eta", D.shape[0], lb=0.0, cost=float(self.penalty))
        builder.add_rows("fused_pos", {"eta": eye, "theta": -D}, lb=0.0)   # eta >= theta_{k+1} - theta_k
        builder.add_rows("fused_neg", {"eta": eye, "theta": D}, lb=0.0)    # eta >= theta_k - theta_{k+1}
        owner_of_row = np.repeat(np.arange(p), [s.stop - s.start - 1 for s in slices])
        sign = mono[owner_of_row].astype(float)
        if np.any(sign != 0):
            keep = np.flatnonzero(sign != 0)
            builder.add_rows("monotone", {"theta": sp.diags(sign[keep]) @ D[keep]}, lb=0.0)
        self._add_reference_rows(builder, slices, member, ub, free, d)
        if self.max_variables is not None:
            u_lb = np.zeros(p)
            u_lb[must] = 1.0
            builder.add_variables("u", p, u_lb, 1.0, integer=True)
            builder.add_rows("l0_upper", {"theta": sp.identity(d), "u": -sp.diags(owner_ub) @ member}, ub=0.0)
            builder.add_rows("l0_lower", {"theta": sp.identity(d), "u": -sp.diags(owner_lb) @ member}, lb=0.0)
            builder.add_rows("l0_count", {"u": np.ones((1, p))}, ub=float(self.max_variables))
        program = builder.build()
        self._instance = {"X": Xs, "y": yv, "w": w, "blocks": slices, "member": member, "D": D,
                          "lb": lb, "ub": ub, "mono": mono, "free": free, "program": program}
        return program

    def _reference_split(self, slices, mono) -> tuple[np.ndarray, np.ndarray]:
        """Bins pinned to 0 points by their bounds, and blocks that need the ``z`` binaries.

        ``"first"`` pins each block's first bin. ``"min"`` pins the end bin where a monotone block
        takes its minimum (the first bin if non-decreasing, the last if non-increasing) and the
        only bin of a one-bin block; the other blocks get binaries ``z``.
        """
        firsts = np.array([s.start for s in slices])
        lasts = np.array([s.stop - 1 for s in slices])
        if self.reference == "first":
            return firsts, np.zeros(0, int)
        if self.reference != "min":
            return np.zeros(0, int), np.zeros(0, int)
        sizes = lasts - firsts + 1
        by_bounds = (mono != 0) | (sizes == 1)
        return np.where(mono >= 0, firsts, lasts)[by_bounds], np.flatnonzero(~by_bounds)

    def _add_reference_rows(self, builder: ProgramBuilder, slices, member, ub, free, d: int) -> None:
        """Rows of the reference level: binarsity centring, or the ``z`` rows of ``"min"``."""
        if self.reference == "sum_to_zero":
            builder.add_rows("sum_to_zero", {"theta": member.T}, lb=0.0, ub=0.0)
            return
        if self.reference != "min" or free.size == 0:
            return
        cols = np.concatenate([np.arange(slices[j].start, slices[j].stop) for j in free])
        nz = cols.size
        builder.add_variables("z", nz, 0.0, 1.0, integer=True)
        pick = sp.csr_matrix((np.ones(nz), (np.arange(nz), cols)), shape=(nz, d))
        big_m = (member @ ub)[cols]
        # theta_k <= ub_j (1 - z_k): a bin marked as the minimiser has 0 points
        builder.add_rows("reference_min", {"theta": pick, "z": sp.diags(big_m)}, ub=big_m)
        group = sp.csr_matrix(member[cols][:, free].T)
        builder.add_rows("reference_one", {"z": group}, lb=1.0, ub=1.0)  # one minimiser per block

    def relaxed(self, X_onehot=None, y=None, blocks=None, sample_weight=None) -> Program:
        """LP relaxation of :meth:`exact` (integrality dropped); without data, of the last instance."""
        if X_onehot is None:
            return self._require()["program"].relax()
        return self.exact(X_onehot, y, blocks, sample_weight).relax()

    def _require(self) -> dict:
        if self._instance is None:
            raise RuntimeError("no instance built yet; call exact(X_onehot, y, blocks) first")
        return self._instance

    # ---------------------------------------------------------------- decode
    def decode(self, x: np.ndarray) -> FusedPoints:
        """Points and intercept from a solution vector of the last program built."""
        inst = self._require()
        program = inst["program"]
        x = np.asarray(x, dtype=float)
        if x.shape != (program.n_variables,):
            raise ValueError(f"x has shape {x.shape}; the program has {program.n_variables} variables")
        theta = program.block(x, "theta").copy()
        rounded = np.round(theta)
        if np.all(np.abs(theta - rounded) <= 1e-6):
            theta = rounded + 0.0
        return FusedPoints(theta, float(program.block(x, "b")[0]), inst["blocks"])

    def normalise(self, theta: np.ndarray, intercept: float) -> FusedPoints:
        """The same score function with each block shifted to the builder's reference level.

        Block ``j`` is shifted by its minimum (``"min"``), its first bin (``"first"``) or its mean
        (``"sum_to_zero"``), and the shifts are added to the intercept: every score
        ``theta . x̄_i + b`` is unchanged because each row has exactly one 1 per block.
        """
        inst = self._require()
        slices, member = inst["blocks"], inst["member"]
        theta = np.asarray(theta, dtype=float).copy()
        if theta.shape != (member.shape[0],):
            raise ValueError(f"theta has shape {theta.shape}, expected ({member.shape[0]},)")
        if self.reference == "min":
            shift = np.minimum.reduceat(theta, [s.start for s in slices])
        elif self.reference == "first":
            shift = theta[[s.start for s in slices]]
        else:
            shift = (member.T @ theta) / np.array([s.stop - s.start for s in slices])
        return FusedPoints(theta - member @ shift, float(intercept) + float(shift.sum()), slices)

    def lift(self, theta: np.ndarray, intercept: float | None = None) -> np.ndarray:
        """Full variable vector of the last program from points ``theta`` (for warm starts).

        Each block is first shifted to the reference level (the shift goes into the
        intercept, so every score is unchanged); with ``intercept=None`` the intercept minimising
        the weighted hinge for these points is used. Slacks ``xi``, ``eta``, ``z``, ``u`` take their
        smallest feasible values. Check the result with ``Program.violations``: points outside
        the range or breaking monotonicity stay infeasible.
        """
        inst = self._require()
        program, slices = inst["program"], inst["blocks"]
        sizes = np.array([s.stop - s.start for s in slices])
        normal = self.normalise(theta, 0.0 if intercept is None else intercept)
        theta = normal.theta
        scores = np.asarray(inst["X"] @ theta).ravel()
        if intercept is None:
            b = best_intercept(scores, inst["y"], inst["w"], self.margin)
            b = float(np.clip(b, program.col_lb[program.blocks["b"]][0], program.col_ub[program.blocks["b"]][0]))
        else:
            b = normal.intercept
        x = np.zeros(program.n_variables)
        x[program.blocks["theta"]] = theta
        x[program.blocks["b"]] = b
        x[program.blocks["xi"]] = np.maximum(0.0, self.margin - inst["y"] * (scores + b))
        x[program.blocks["eta"]] = np.abs(inst["D"] @ theta)
        if "z" in program.blocks:
            z = np.concatenate([(np.arange(sizes[j]) == np.argmin(theta[slices[j]])).astype(float)
                                for j in inst["free"]])
            x[program.blocks["z"]] = z
        if "u" in program.blocks:
            used = np.abs(theta) @ inst["member"] > 1e-9
            x[program.blocks["u"]] = np.maximum(used, program.col_lb[program.blocks["u"]])
        return x


#: the exact hinge intercept search shared with the other hinge formulations
best_intercept = hinge_intercept
