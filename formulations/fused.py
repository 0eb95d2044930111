"""Fused-lasso hinge ILP: integer points for ordered one-hot bins (a DiaRem-style points table).

Sokolovska, "Feature selection, interpretable models" (lecture slides), "The Linear Formulation".
With ``x̄_i`` the ordered one-hot encoding of row ``i`` (``p`` variables, variable ``j`` owning
the ``d_j`` contiguous columns ``B_j``; ``d̄ = sum_j d_j``), the instance encodes eq. (1)

.. math::

    \\min_{\\theta, b}\\; \\sum_{i=1}^N w_i \\max(0, m - y_i(\\theta\\cdot\\bar x_i + b))
        + \\lambda \\sum_{j=1}^{p} \\sum_{k, k+1 \\in B_j} |\\theta_k - \\theta_{k+1}|

(``m`` the ``margin``) as the program of eqs. (2)-(5): hinge slacks (block ``"loss"``) with
``y_i (theta . x̄_i + b) >= m - loss_i`` (eq. 3) and one ``diff_k >= |theta_k - theta_{k+1}|``
per pair of *adjacent bins of the same variable* at cost ``lam`` (eqs. 2 and 4). Two deliberate
departures from the slides' print: eq. (4) there reads ``-lambda eta <= ... <= lambda eta`` with
``eta`` at cost 1, which weighs the fused term by ``1/lambda``; we follow eq. (1), the stated
objective. And the slides sum over all ``d̄ - 1`` neighbours; differences across two variables'
blocks mean nothing, so only within-block pairs are fused, as in binarsity (Alaya 2018).

``theta`` (block ``"coef"``) is integer in a per-variable range ``[lb_j, ub_j]`` (eq. 5: the
natural numbers, default ``0..5``); the intercept is real. One-hot blocks make ``theta`` unique
only up to a shift of each block absorbed by the intercept; a **reference level** removes it:

* ``"min"`` (default): the smallest points of each variable are 0 (``theta >= 0`` and one
  binary per bin, block ``"minimum"``, with ``theta_k <= ub_j (1 - z_k)``, ``sum_{k in B_j} z_k
  = 1``); loses nothing when ``lb_j = 0``;
* ``"first"``: the first bin has 0 points (by its bounds);
* ``"sum_to_zero"``: ``sum_{k in B_j} theta_k = 0``, the binarsity centring.

Options: monotone blocks, a maximum number of variables used (``max_size``; binary ``size_j``
with ``lb_j size_j <= theta_k <= ub_j size_j``), must-include variables, sample weights.
Identical rows are merged into one weighted row (exact for the hinge). Blocks of the program:
``coef`` (d̄), ``intercept`` (1), ``loss`` (rows), ``diff`` (d̄ - p), then ``minimum`` and ``size``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from formulations.base import CachedPrograms, Model
from formulations.bins import (FusedPoints, OrderedBins, as_blocks, as_tuple, difference_matrix, infer_blocks,
                            membership_matrix, merge_runs, per_variable_values, round_points)
from formulations.constraints import (CompiledConstraints, binding, check_constraints, compile_constraints,
                                      fold_level_monotone)
from formulations.errors import NotRepresentableError
from formulations.intercept import hinge_intercept
from formulations.program import Program, ProgramBuilder
from formulations.rows import merge_rows
from formulations.validation import check_number, check_training_set

REFERENCES = ("min", "first", "sum_to_zero")


@dataclass(frozen=True)
class FusedLassoHinge:
    """Modelling choices of the fused-lasso hinge ILP (Sokolovska, eqs. 1-5; module docstring).

    Parameters
    ----------
    lam : lambda >= 0 of eq. (1), in hinge units (one point of difference between adjacent bins
        costs as much as one unit of hinge slack of a weight-1 row).
    margin : hinge margin (1 in eq. 3).
    points_lb, points_ub : integer points range, a scalar or one value per variable (lb <= 0 <= ub).
    reference : ``"min"``, ``"first"`` or ``"sum_to_zero"`` (module docstring).
    monotone : None or per variable ``+1`` (non-decreasing), ``-1`` (non-increasing) or ``0``.
    max_size : None or the maximum number of variables with non-zero points.
    must_include : indices of variables always given a place (counted in ``max_size``).
    blocks : the number of bins of each variable, in column order (the binning); None reads them
        off the one-hot matrix (:func:`formulations.bins.infer_blocks`; no empty bin allowed).
    n_bins : bins per numeric column of :meth:`design` (raw columns in ``compare``) only.
    smoothing : width of the Huberised hinge of the proximal path (:meth:`FusedInstance.composite`).
    merge_duplicates : merge identical ``(x̄, y)`` rows into one weighted row (exact), when that
        removes at least :data:`formulations.rows.MERGE_MIN_SHARE` of the rows.
    constraints : operational constraints over the *variables* (:mod:`formulations.constraints`):
        ``Monotone(vars, direction, kind="levels")`` (the same rows as ``monotone``), and groups /
        implications / ``Linear`` rows over ``used`` (a variable is used when its points are not
        constant; requiring use needs ``reference="min"``).
    variable_names : names the constraints use (default ``x0 .. x{p-1}``).
    """

    lam: float = 1.0
    margin: float = 1.0
    points_lb: float | Sequence[float] = 0.0
    points_ub: float | Sequence[float] = 5.0
    reference: str = "min"
    monotone: Sequence[int] | None = None
    max_size: int | None = None
    must_include: Sequence[int] = ()
    blocks: Sequence[int] | None = None
    n_bins: int = 5
    smoothing: float = 0.1
    merge_duplicates: bool = True
    constraints: tuple = ()
    variable_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "constraints", check_constraints(self.constraints))
        if self.variable_names is not None:
            object.__setattr__(self, "variable_names", tuple(str(n) for n in self.variable_names))
        check_number("lam", self.lam, strict=False)
        check_number("margin", self.margin)
        check_number("smoothing", self.smoothing)
        check_number("n_bins", self.n_bins, minimum=2, strict=False, integer=True)
        check_number("max_size", self.max_size, strict=False, integer=True, allow_none=True)
        if self.reference not in REFERENCES:
            raise ValueError(f"reference must be one of {REFERENCES}, got {self.reference!r}")
        for name in ("points_lb", "points_ub", "monotone", "must_include"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        if self.blocks is not None:
            object.__setattr__(self, "blocks", tuple(s.stop - s.start for s in as_blocks(self.blocks)))
        must = np.asarray(self.must_include, dtype=float).reshape(-1)
        if must.size and (np.any(must != np.round(must)) or must.min() < 0):
            raise ValueError(f"must_include must hold variable indices >= 0, got {list(self.must_include)}")
        if self.max_size is not None and np.unique(must).size > self.max_size:
            raise ValueError(f"{np.unique(must).size} must-include variables exceed max_size={self.max_size}; "
                             "raise max_size")
        if self.blocks is not None:
            self.per_variable(len(self.blocks))

    def per_variable(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per-variable ``(lb, ub, monotone, must_include indices)`` for ``p`` variables, checked."""
        lb = per_variable_values(self.points_lb, p, "points_lb")
        ub = per_variable_values(self.points_ub, p, "points_ub")
        if not (np.isfinite(lb).all() and np.isfinite(ub).all()) or np.any(lb != np.round(lb)) or np.any(
                ub != np.round(ub)):
            raise ValueError(f"points_lb and points_ub must be finite integers; got {lb.tolist()}, {ub.tolist()}")
        if np.any(lb > 0) or np.any(ub < 0):
            raise ValueError(f"each points range must contain 0 (lb <= 0 <= ub); got lb={lb.tolist()}, "
                             f"ub={ub.tolist()}")
        if self.reference == "min" and np.any(lb != 0):
            raise ValueError("reference='min' sets the smallest points of each variable to 0, so points_lb must "
                             "be 0; for signed points use reference='first' or 'sum_to_zero'")
        mono = per_variable_values(0 if self.monotone is None else self.monotone, p, "monotone")
        if not np.isin(mono, (-1, 0, 1)).all():
            raise ValueError(f"monotone must hold one of -1, 0, +1 for each of the {p} variables")
        must = np.unique(np.asarray(self.must_include, dtype=int))
        if must.size and must.max() >= p:
            raise ValueError(f"must_include indices must lie in 0..{p - 1}, got {list(self.must_include)}")
        return lb, ub, mono.astype(int), must

    def design(self, X: Any) -> OrderedBins:
        """``compare``'s hook for raw numeric columns: ordered bins (``n_bins`` each) fitted on ``X``."""
        return OrderedBins(self.n_bins).fit(X)

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> "FusedInstance":
        """Bind to an ordered one-hot matrix ``X`` (``n x d̄``, one 1 per variable block and row)."""
        X, y, w = check_training_set(X, y, sample_weight, name="X_onehot")
        Xs = sp.csr_matrix(X)
        if not np.isin(Xs.data, (0.0, 1.0)).all():
            raise ValueError("X_onehot must contain only 0 and 1 (ordered one-hot bins); "
                             "bin the raw data first, e.g. milpscore.data.binning.OrderedBinner")
        slices = as_blocks(self.blocks, Xs.shape[1]) if self.blocks is not None else infer_blocks(Xs)
        member = membership_matrix(slices, Xs.shape[1])
        per_block = np.asarray((Xs @ member).todense())
        if not np.all(per_block == 1):
            i, j = np.argwhere(per_block != 1)[0]
            raise ValueError(f"row {i} of X_onehot has {per_block[i, j]:g} ones in block {j}; each row needs "
                             "exactly one 1 per variable (one-hot)")
        if np.unique(y).size < 2:
            raise ValueError("y has a single class; the hinge ILP needs samples of both classes")
        lb, ub, mono, must = self.per_variable(len(slices))
        names = self.variable_names or tuple(f"x{j}" for j in range(len(slices)))
        if len(names) != len(slices):
            raise ValueError(f"variable_names has {len(names)} names but X_onehot has {len(slices)} variables")
        mono, compiled = _operational(self.constraints, names, mono, self.reference)
        uniform = bool(np.all(w == w[0]))
        rows_in = (Xs, y) if uniform else None
        if self.merge_duplicates:
            Xm, ym, wm = merge_rows(Xs.toarray(), y, w)
            Xs, y, w = sp.csr_matrix(Xm), ym, wm
        else:
            keep = w > 0
            Xs, y, w = Xs[keep], y[keep], w[keep]
        return FusedInstance(self, Xs, y, w, slices, member, difference_matrix(slices, Xs.shape[1]), lb, ub, mono, must,
                             n_rows_in=int(X.shape[0]), rows_in=rows_in, constraints=compiled)


def _operational(constraints: tuple, names: tuple[str, ...], mono: np.ndarray,
                 reference: str) -> tuple[np.ndarray, CompiledConstraints]:
    """Monotone constraints folded into the per-variable directions; the rest compiled over ``used``."""
    mono, rest = fold_level_monotone(constraints, names, mono)
    compiled = compile_constraints(rest, names)
    if compiled.P.nnz or compiled.performance:
        raise NotRepresentableError("the fused table has no single 'points' per variable and no per-row errors: its "
                                    "Linear rows may use used[...] and the intercept only")
    if compiled.nonzero.any() and reference != "min":
        raise NotRepresentableError("requiring a variable to be used (AtLeast, Exactly, Implies, Linear used terms) "
                                    "needs reference='min' (then used means some bin has points > 0)")
    return mono, compiled


@dataclass(frozen=True)
class FusedInstance(CachedPrograms):
    """The fused-lasso hinge ILP on merged rows: programs, decode / lift / objective / round."""

    spec: FusedLassoHinge
    X: sp.csr_matrix = field(repr=False)
    y: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    blocks: tuple[slice, ...]
    member: sp.csr_matrix = field(repr=False)
    D: sp.csr_matrix = field(repr=False)
    lb: np.ndarray
    ub: np.ndarray
    monotone: np.ndarray
    must_include: np.ndarray
    n_rows_in: int
    rows_in: tuple | None = field(default=None, repr=False)
    constraints: CompiledConstraints | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def sizes(self) -> list[int]:
        return [s.stop - s.start for s in self.blocks]

    @property
    def intercept_bounds(self) -> tuple[float, float]:
        """Every optimal intercept lies here: scores of points in range span ``[sum lb, sum ub]``."""
        return float(-self.ub.sum() - self.spec.margin), float(-self.lb.sum() + self.spec.margin)

    @property
    def info(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows_in, "n_rows_kept": int(self.X.shape[0]), "n_bins": int(self.X.shape[1]),
                "blocks": self.sizes}

    # -------------------------------------------------------------------- program
    def _pinned_and_free(self) -> tuple[np.ndarray, np.ndarray]:
        """Bins fixed at 0 points by their bounds, and the blocks that need ``minimum`` binaries.

        ``"first"`` pins each block's first bin. ``"min"`` pins the end bin where a monotone block
        takes its minimum and the only bin of a one-bin block; the other blocks get binaries.
        """
        firsts = np.array([s.start for s in self.blocks])
        lasts = np.array([s.stop - 1 for s in self.blocks])
        if self.spec.reference == "first":
            return firsts, np.zeros(0, int)
        if self.spec.reference != "min":
            return np.zeros(0, int), np.zeros(0, int)
        by_bounds = (self.monotone != 0) | (lasts == firsts)
        return np.where(self.monotone >= 0, firsts, lasts)[by_bounds], np.flatnonzero(~by_bounds)

    def _build(self) -> Program:
        spec, member, D = self.spec, self.member, self.D
        d, p = self.X.shape[1], len(self.blocks)
        owner_lb, owner_ub = member @ self.lb, member @ self.ub
        col_lb, col_ub = owner_lb.copy(), owner_ub.copy()
        pinned, free = self._pinned_and_free()
        col_lb[pinned] = col_ub[pinned] = 0.0
        b = ProgramBuilder()
        b.add_variables("coef", d, col_lb, col_ub, integer=True)
        b.add_variables("intercept", 1, *self.intercept_bounds)
        yX = sp.diags(self.y) @ self.X
        b.add_variables("loss", self.X.shape[0], lb=0.0, cost=self.weights)
        b.add_rows("hinge", {"loss": sp.identity(self.X.shape[0], format="csr"), "coef": yX,
                             "intercept": sp.csr_matrix(self.y[:, None])}, lb=spec.margin)
        eye = sp.identity(D.shape[0], format="csr")
        b.add_variables("diff", D.shape[0], lb=0.0, cost=float(spec.lam))
        b.add_rows("diff_pos", {"diff": eye, "coef": -D}, lb=0.0)   # diff >= theta_{k+1} - theta_k
        b.add_rows("diff_neg", {"diff": eye, "coef": D}, lb=0.0)    # diff >= theta_k - theta_{k+1}
        sign = self.monotone[np.repeat(np.arange(p), np.array(self.sizes) - 1)].astype(float)
        if np.any(sign != 0):
            keep = np.flatnonzero(sign != 0)
            b.add_rows("monotone", {"coef": sp.diags(sign[keep]) @ D[keep]}, lb=0.0)
        if spec.reference == "sum_to_zero":
            b.add_rows("sum_to_zero", {"coef": member.T}, lb=0.0, ub=0.0)
        elif spec.reference == "min" and free.size:
            cols = np.concatenate([np.arange(self.blocks[j].start, self.blocks[j].stop) for j in free])
            nz = cols.size
            b.add_variables("minimum", nz, 0.0, 1.0, integer=True)
            pick = sp.csr_matrix((np.ones(nz), (np.arange(nz), cols)), shape=(nz, d))
            big_m = owner_ub[cols]
            # theta_k <= ub_j (1 - z_k): the bin marked as the minimiser has 0 points
            b.add_rows("minimum_zero", {"coef": pick, "minimum": sp.diags(big_m)}, ub=big_m)
            b.add_rows("minimum_one", {"minimum": sp.csr_matrix(member[cols][:, free].T)}, lb=1.0, ub=1.0)
        con = self.constraints
        if spec.max_size is not None or (con is not None and con.needs_used):
            u_lb = np.zeros(p)
            u_lb[self.must_include] = 1.0
            b.add_variables("size", p, u_lb, 1.0, integer=True)
            b.add_rows("size_upper", {"coef": sp.identity(d), "size": -sp.diags(owner_ub) @ member}, ub=0.0)
            b.add_rows("size_lower", {"coef": sp.identity(d), "size": -sp.diags(owner_lb) @ member}, lb=0.0)
        if spec.max_size is not None:
            b.add_rows("max_size", {"size": np.ones((1, p))}, ub=float(spec.max_size))
        if con is not None and con.n_rows:
            need = np.flatnonzero(con.nonzero)
            if need.size:  # used_j = 1 => some bin of j has points >= 1 (reference 'min': the minimum is 0)
                pick = sp.csr_matrix((np.ones(need.size), (np.arange(need.size), need)), shape=(need.size, p))
                b.add_rows("size_nonzero", {"coef": pick @ member.T, "size": -pick}, lb=0.0)
            terms = {"intercept": sp.csr_matrix(con.c[:, None])}
            if con.needs_used:
                terms["size"] = con.U
            b.add_rows("operational", terms, lb=con.lb, ub=con.ub)
        return b.build()

    def constraint_violation(self, model: Model) -> float:
        """Largest violation of the operational rows at ``used = points not constant`` (monotone
        blocks are program rows that :meth:`round` keeps)."""
        if not binding(self.constraints):
            return 0.0
        used = np.array([np.ptp(np.asarray(model.coef)[s]) > 0 for s in self.blocks], dtype=float)
        v = self.constraints.U @ used + self.constraints.c * model.intercept
        return float(max(np.max(self.constraints.lb - v, initial=0.0), np.max(v - self.constraints.ub, initial=0.0)))

    # ------------------------------------------------------------------ mappings
    def points(self, model: Model) -> FusedPoints:
        """The points table of a model (points per bin as given, not normalised)."""
        return FusedPoints(np.asarray(model.coef, dtype=float), model.intercept, self.blocks)

    def _model(self, theta: np.ndarray, intercept: float) -> Model:
        return Model(theta, intercept, {"points": FusedPoints(np.asarray(theta, float), float(intercept), self.blocks)})

    def decode(self, x: np.ndarray) -> Model:
        """Points and intercept of a solution vector of either program, as solved."""
        p = self.exact()
        x = np.asarray(x, dtype=float)
        if x.shape != (p.n_variables,):
            raise ValueError(f"x has shape {x.shape}; the program has {p.n_variables} variables")
        return self._model(p.block(x, "coef").copy(), float(p.block(x, "intercept")[0]))

    def normalise(self, model: Model) -> Model:
        """The same score function with each block shifted to the reference level.

        Block ``j`` is shifted by its minimum (``"min"``), its first bin (``"first"``) or its mean
        (``"sum_to_zero"``) and the shifts go into the intercept: every score is unchanged since each
        row has exactly one 1 per block, and so is the total variation.
        """
        theta = np.asarray(model.coef, dtype=float)
        if theta.shape != (self.member.shape[0],):
            raise ValueError(f"coef has shape {theta.shape}, expected ({self.member.shape[0]},): one value per bin")
        starts = [s.start for s in self.blocks]
        if self.spec.reference == "min":
            shift = np.minimum.reduceat(theta, starts)
        elif self.spec.reference == "first":
            shift = theta[starts]
        else:
            shift = (self.member.T @ theta) / np.array(self.sizes)
        return self._model(theta - self.member @ shift, model.intercept + float(shift.sum()))

    def lift(self, model: Model) -> np.ndarray:
        """Full vector of :meth:`exact`: the model at the reference level (scores unchanged), hinge
        slacks, differences, minimiser and size indicators at their smallest feasible values."""
        p = self.exact()
        model = self.normalise(model)
        theta, b = model.coef, model.intercept
        x = np.zeros(p.n_variables)
        x[p.blocks["coef"]] = theta
        x[p.blocks["intercept"]] = b
        x[p.blocks["loss"]] = self._hinge(theta, b)
        x[p.blocks["diff"]] = np.abs(self.D @ theta)
        if "minimum" in p.blocks:
            _, free = self._pinned_and_free()
            x[p.blocks["minimum"]] = np.concatenate(
                [(np.arange(self.sizes[j]) == np.argmin(theta[self.blocks[j]])).astype(float) for j in free])
        if "size" in p.blocks:
            used = (np.abs(theta) @ self.member) > 0
            x[p.blocks["size"]] = np.maximum(used, p.col_lb[p.blocks["size"]])
        return x

    def _hinge(self, theta: np.ndarray, b: float) -> np.ndarray:
        return np.maximum(0.0, self.spec.margin - self.y * (self.X @ theta + b))

    def objective(self, model: Model) -> float:
        """Eq. (1): weighted hinge of the merged rows + ``lam`` times the within-block total variation."""
        theta = np.asarray(model.coef, dtype=float)
        return float(self.weights @ self._hinge(theta, model.intercept) + self.spec.lam * np.abs(self.D @ theta).sum())

    def with_best_intercept(self, theta: np.ndarray) -> Model:
        """Points ``theta`` with the intercept minimising the weighted hinge (within the intercept bounds)."""
        b = hinge_intercept(self.X @ theta, self.y, self.weights, self.spec.margin)
        return self._model(theta, float(np.clip(b, *self.intercept_bounds)))

    def round(self, model: Model) -> Model:
        """Nearest points table in the program: at the reference level, monotone blocks projected
        (isotonic), rounded, clipped to the points range, ``sum_to_zero`` restored, the blocks of
        smallest total variation dropped beyond ``max_size``; then the better (true objective) of the
        best hinge intercept and the model's own (shifted, clipped) intercept."""
        normal = self.normalise(model)
        theta = round_points(normal.coef, self.blocks, self.lb, self.ub, self.monotone, self.spec.reference,
                             self.spec.max_size, self.must_include)
        own = self._model(theta, float(np.clip(normal.intercept, *self.intercept_bounds)))
        return min((self.with_best_intercept(theta), own), key=self.objective)

    # -------------------------------------------------------------- proximal path
    def composite(self) -> tuple[Any, Any]:
        """``(loss, penalty)`` for the proximal path: eq. (1) divided by the number of rows ``N`` with
        the hinge Huberised (width ``smoothing``; ``hinge - smoothing/2 <= h <= hinge``) and the
        binarsity penalty (per-block TV at weight ``lam / N`` + sum-to-zero centring; Alaya 2018,
        Algorithm 2). The points range, monotone blocks and ``max_size`` are not part of it, so its
        value bounds the exact optimum from below; unweighted rows and ``margin = 1`` only."""
        from formulations.losses import SmoothedHinge
        from formulations.penalties import Binarsity

        if self.rows_in is None:
            raise ValueError("the proximal path (backend 'prox') has no sample weights; pass equal weights, or "
                             "solve the relaxation with backend 'highs'")
        if self.spec.margin != 1.0:
            raise ValueError("the proximal path uses the margin-1 hinge; set margin=1 or use backend 'highs'")
        X, y = self.rows_in
        n = X.shape[0]
        return (SmoothedHinge(X, y, smoothing=self.spec.smoothing),
                Binarsity(np.asarray(self.sizes, dtype=np.int64), weights=self.spec.lam / n))


__all__ = ["FusedLassoHinge", "FusedInstance", "FusedPoints", "merge_runs", "REFERENCES"]
