"""Facets formulation: linear models with the Facets penalty (Belahcene et al. 2020).

With the grid unit ``g`` (``grid_unit``, eqs. 8-9) the model is ``coef = g w`` and the penalty acts
on the grid units ``w``; with merged rows of weights ``v_i`` (sample weights divided by their sum)::

    min_{w, b}  sum_i v_i loss_i(g x_i . w + b) + lam Omega(w),   |w_j| <= U,  b in [b_lo, b_hi]

``Omega = (1 - eps) Facets + eps (||w||_1 + ||w||^2 / 2)`` (Facets: eq. 3; strongly convex Facets
SCF: eq. 14, ``eps = 0`` is Facets) and ``loss`` hinge ``max(0, margin - y f)``, logistic
``log(1 + e^{-y f})`` or least squares ``(y - f)^2 / 2``.

* :meth:`FacetsInstance.relaxed` is the convex problem the paper solves: an LP for the hinge
  (one row per facet, :mod:`formulations.facets_encoding`), exponential cones for the logistic
  loss, a second-order cone for least squares (and one rotated cone for the SCF square).
* :meth:`FacetsInstance.exact` is the problem Facets relaxes, ``w`` integer: a MILP for the
  hinge, and for smooth losses the outer-approximation MILP (per-sample epigraph ``t_i`` with a
  few tangents) carrying the lazy oracle :class:`~formulations.tangent_cuts.TangentCuts` that
  adds the missing tangents (:mod:`solvers.backends.cutting_planes`). On integer ``w`` the Facets epigraph
  is exact (Facets interpolates ``(|w| + w^2) / 2`` at the integers, Prop. 2); HiGHS has no MIQP,
  so the exact SCF square is written by its chords between consecutive integers, exact at every
  integer and above the square in between (so ``relaxed <= exact`` still holds).

Both programs start with the blocks ``"coef"`` (``w``, grid units: :meth:`FacetsInstance.decode`
multiplies by ``g``) and ``"intercept"`` (model units).

Intercept box (when ``intercept_bounds`` is None). Every ``w`` of the box gives scores
``|g x_i . w| <= R = g U max_i ||x_i||_1``; for fixed scores the objective is convex in ``b``:

* hinge: beyond ``b = R + margin`` every positive row has zero loss and the negative ones only
  grow, so some optimum has ``b <= R + margin``; symmetrically ``b >= -R - margin``;
* least squares: the optimum is the weighted mean of ``y_i - s_i``, in ``[min y - R, max y + R]``;
* logistic: with ``V+``, ``V-`` the weights of the two classes, the derivative in ``b`` is
  ``-sum_pos v_i sigma(-(s_i + b)) + sum_neg v_i sigma(s_i + b)``. At ``b = R + u`` it is at least
  ``-V+ sigma(-u) + V- sigma(u)``, which is ``>= 0`` iff ``e^u >= V+ / V-``; at ``b = -R - u'``
  it is ``<= 0`` iff ``e^{u'} >= V- / V+``. Hence the optimal intercept lies in
  ``log(V+ / V-) +- R``, however unbalanced the class weights. (With one class only, the loss
  has no minimiser; the box is ``+-(R + 40)``, where one row's loss is below ``5e-18``.)
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from formulations.base import Model
from formulations.conic_encodings import add_hinge_loss, add_least_squares, add_logistic
from formulations.constraint_rows import add_constraint_rows, lift_constraint_blocks
from formulations.constraints import CompiledConstraints, check_constraints, compile_constraints
from formulations.errors import NotRepresentableError
from formulations.facets_encoding import encode_facets_penalty
from formulations.intercept import hinge_intercept
from formulations.losses import LOSS_1D, LeastSquares, Logistic
from formulations.penalties.facets import Facets as FacetsPenalty
from formulations.penalties.facets import StronglyConvexFacets
from formulations.program import Program, ProgramBuilder
from formulations.rows import merge_rows
from formulations.tangent_cuts import INITIAL_POINTS, TangentCuts
from formulations.validation import check_training_set

LOSSES = ("hinge", "logistic", "least_squares")
#: logistic intercept reach with one class only: log(1 + e^-40) < 5e-18
ONE_CLASS_REACH = 40.0


def _finite(name: str, value: Any, *, low: float, low_open: bool = False, high: float | None = None,
            high_open: bool = False) -> None:
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value > low if low_open else value >= low)
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        interval = f"{'(' if low_open else '['}{low:g}, {'inf' if high is None else f'{high:g}'}{')' if high_open or high is None else ']'}"
        raise ValueError(f"{name} must be a finite number in {interval}, got {value!r}")


@dataclass(frozen=True)
class Facets:
    """Modelling choices of a Facets-penalised linear model (module docstring).

    Parameters
    ----------
    loss : ``"hinge"``, ``"logistic"`` or ``"least_squares"``.
    lam : penalty strength ``lam >= 0`` (objective units per unit of Facets).
    grid_unit : ``g > 0``; ``coef / g`` is penalised (eqs. 8-9) and integer in the exact program.
    eps : SCF weight in ``[0, 1)`` (eq. 14; 0 is plain Facets).
    bound : integer ``U >= 1``, box ``|coef_j| <= U g`` (the facets represented).
    margin : hinge margin.
    fit_intercept : unpenalised intercept (model units); False fixes it at 0.
    intercept_bounds : box on the intercept; None derives one that contains the optimum.
    constraints : operational constraints by feature name (:mod:`formulations.constraints`), on the
        grid steps ``w = coef / grid_unit`` (a Monotone or Linear row reads ``points`` in grid steps).
    feature_names : the names the constraints use (default ``x0 .. x{d-1}``).
    """

    loss: str = "hinge"
    lam: float = 0.1
    grid_unit: float = 1.0
    eps: float = 0.0
    bound: int = 5
    margin: float = 1.0
    fit_intercept: bool = True
    intercept_bounds: tuple[float, float] | None = None
    constraints: tuple = ()
    feature_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "constraints", check_constraints(self.constraints))
        if self.feature_names is not None:
            object.__setattr__(self, "feature_names", tuple(str(n) for n in self.feature_names))
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        _finite("lam", self.lam, low=0.0)
        _finite("grid_unit", self.grid_unit, low=0.0, low_open=True)
        _finite("eps", self.eps, low=0.0, high=1.0, high_open=True)
        _finite("margin", self.margin, low=0.0, low_open=True)
        if isinstance(self.bound, bool) or not isinstance(self.bound, (int, float, np.integer)) \
                or int(self.bound) != self.bound or self.bound < 1:
            raise ValueError(f"bound must be an integer >= 1 (box |coef_j| <= bound * grid_unit), got {self.bound!r}")
        if self.intercept_bounds is not None:
            lo, hi = self.intercept_bounds
            if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
                raise ValueError(f"intercept_bounds must be finite with lo <= hi, got {self.intercept_bounds!r}")

    def penalty(self, unit: float | None = None) -> FacetsPenalty | StronglyConvexFacets:
        """The penalty as a :mod:`formulations.penalties` object on the grid ``unit`` (default
        ``grid_unit``: model units; ``unit=1``: grid units)."""
        mu = self.grid_unit if unit is None else unit
        if self.eps == 0:
            return FacetsPenalty(self.lam, mu=mu)
        return StronglyConvexFacets(self.lam, mu=mu, eps=self.eps)

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> "FacetsInstance":
        """Validate, merge identical rows (weights added) and fix the intercept box."""
        X, y, s = check_training_set(X, y, sample_weight, labels="real" if self.loss == "least_squares" else "binary")
        X = X.toarray() if sp.issparse(X) else X
        rows_in = (X, y) if np.ptp(s) == 0 else None  # the proximal losses are unweighted means
        Xm, ym, wm = merge_rows(X, y, s / s.sum())
        names = self.feature_names or tuple(f"x{j}" for j in range(X.shape[1]))
        if len(names) != X.shape[1]:
            raise ValueError(f"feature_names has {len(names)} names but X has {X.shape[1]} columns")
        return FacetsInstance(self, Xm, ym, wm, self._intercept_box(Xm, ym, wm), X.shape[0], rows_in,
                              compile_constraints(self.constraints, names))

    def _intercept_box(self, X: np.ndarray, y: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        if not self.fit_intercept:
            return 0.0, 0.0
        if self.intercept_bounds is not None:
            return float(self.intercept_bounds[0]), float(self.intercept_bounds[1])
        R = self.grid_unit * self.bound * float(np.abs(X).sum(axis=1).max(initial=0.0))
        if self.loss == "least_squares":
            return float(y.min() - R), float(y.max() + R)
        if self.loss == "hinge":
            return -R - self.margin, R + self.margin
        pos, neg = float(v[y > 0].sum()), float(v[y < 0].sum())
        if pos == 0 or neg == 0:
            return -R - ONE_CLASS_REACH, R + ONE_CLASS_REACH
        center = float(np.log(pos / neg))
        return center - R, center + R


@dataclass(frozen=True)
class FacetsInstance:
    """A :class:`Facets` problem on merged rows: programs, decode / lift / objective / round."""

    spec: Facets
    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    intercept_bounds: tuple[float, float]
    n_rows_in: int
    rows_in: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    constraints: CompiledConstraints | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the cache (its lift closures are rebuilt on first use)."""
        return {**self.__dict__, "_cache": {}}

    @property
    def info(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows_in, "n_rows_kept": int(self.y.size), "intercept_bounds": self.intercept_bounds,
                "grid_unit": self.spec.grid_unit, "loss": self.spec.loss}

    # -------------------------------------------------------------------------- programs
    def exact(self) -> Program:
        """Integer ``w``: the hinge MILP, or the outer-approximation MILP with its lazy oracle."""
        if "exact" not in self._cache:
            self._cache["exact"] = self._build(exact=True)
        return self._cache["exact"][0]

    def relaxed(self) -> Program:
        """The convex program (LP for the hinge, exponential cones / SOC for smooth losses)."""
        if "relaxed" not in self._cache:
            self._cache["relaxed"] = self._build(exact=False)
        return self._cache["relaxed"][0]

    def _build(self, exact: bool) -> tuple[Program, Any]:
        spec, (n, d) = self.spec, self.X.shape
        U = int(spec.bound)
        b = ProgramBuilder()
        b.add_variables("coef", d, lb=-U, ub=U, integer=exact)
        b.add_variables("intercept", 1, lb=self.intercept_bounds[0], ub=self.intercept_bounds[1])
        penalty_lift = encode_facets_penalty(b, spec.penalty(unit=1.0), weights="coef", name="penalty",
                                             square="chords" if exact else "cone")
        if self.constraints is not None:  # the relaxation keeps the rows, with integrality dropped
            add_constraint_rows(b, self.constraints, coef_lb=np.full(d, -U, float), coef_ub=np.full(d, U, float),
                                integer=np.ones(d, bool), formulation="Facets")
        finish = (lambda prog: prog) if exact else (lambda prog: prog.relax())
        gX = spec.grid_unit * self.X
        if spec.loss == "hinge" or not exact:
            encoder = {"hinge": add_hinge_loss, "logistic": add_logistic, "least_squares": add_least_squares}[spec.loss]
            options = {"margin": spec.margin} if spec.loss == "hinge" else {}
            loss_lift = encoder(b, gX, self.y, weights="coef", intercept="intercept", sample_weight=self.weights,
                                name="loss", **options)
            return finish(b.build()), (penalty_lift, loss_lift)
        # outer approximation: z_i = a_i (g x_i . w + b) + o_i as variables, tangents on (t_i, z_i)
        a, o = self._argument_map()
        b.add_variables("loss", n, lb=0.0, cost=self.weights)
        b.add_variables("argument", n)
        eye = sp.identity(n, format="csr")
        b.add_rows("argument_rows", {"argument": eye, "coef": -a[:, None] * gX, "intercept": -a[:, None]}, lb=o, ub=o)
        value, slope = LOSS_1D[spec.loss]
        p = np.asarray(INITIAL_POINTS, dtype=float)
        b.add_rows("tangents", {"loss": sp.kron(np.ones((p.size, 1)), eye, format="csr"),
                                "argument": sp.kron(-slope(p)[:, None], eye, format="csr")},
                   lb=np.repeat(value(p) - slope(p) * p, n))
        program = b.build()
        M = sp.hstack([sp.csr_matrix(a[:, None] * gX), sp.csr_matrix(a[:, None]),
                       sp.csr_matrix((n, program.n_variables - d - 1))], format="csr")
        oracle = TangentCuts(spec.loss, M, o, program.blocks["loss"], self.weights, program.c, program.offset,
                             argument_block=program.blocks["argument"],
                             intercept=d if spec.fit_intercept else None, intercept_bounds=self.intercept_bounds)
        return replace(program, lazy=oracle), (penalty_lift, None)

    def _argument_map(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, o)`` with the loss argument ``z_i = a_i score_i + o_i`` (:data:`LOSS_1D`)."""
        if self.spec.loss == "least_squares":
            return np.ones(self.y.size), -self.y
        if self.spec.loss == "hinge":
            return self.y, np.full(self.y.size, -self.spec.margin)
        return self.y, np.zeros(self.y.size)

    # ------------------------------------------------------------------------- mappings
    def decode(self, x: np.ndarray) -> Model:
        """``coef = grid_unit * w`` and the intercept of a solution of either program (not rounded)."""
        p = self.exact()
        return Model(self.spec.grid_unit * p.block(x, "coef"), float(p.block(x, "intercept")[0]),
                     {"grid_unit": self.spec.grid_unit})

    def grid_units(self, coef: np.ndarray) -> np.ndarray:
        """``coef / grid_unit``, with round-off of at most 1e-9 from an integer removed."""
        w = np.asarray(coef, dtype=float) / self.spec.grid_unit
        near = np.rint(w)
        return np.where(np.abs(w - near) <= 1e-9, near, w)

    def lift(self, model: Model) -> np.ndarray:
        """Full vector of :meth:`exact`: ``w``, intercept, penalty epigraphs and loss epigraph at their values."""
        program = self.exact()
        penalty_lift, loss_lift = self._cache["exact"][1]
        w = self.grid_units(model.coef)
        x = np.zeros(program.n_variables)
        x[program.blocks["coef"]] = w
        x[program.blocks["intercept"]] = model.intercept
        parts = dict(penalty_lift(w))
        if loss_lift is not None:
            parts.update(loss_lift(w, model.intercept))
        for name, values in parts.items():
            x[program.blocks[name]] = values
        if self.constraints is not None:
            U = float(self.spec.bound)
            lift_constraint_blocks(x, program.blocks, w, self.constraints, np.full(w.size, -U), np.full(w.size, U))
        if program.lazy is not None:
            z = program.lazy.arguments(x)
            x[program.blocks["argument"]] = z
            x[program.blocks["loss"]] = LOSS_1D[self.spec.loss][0](z)
        return x

    def constraint_violation(self, model: Model) -> float:
        """Largest violation of the operational constraints at the model's grid steps (0 when obeyed)."""
        if self.constraints is None:
            return 0.0
        return self.constraints.violation(self.grid_units(model.coef), model.intercept)

    def scores(self, model: Model) -> np.ndarray:
        return self.X @ model.coef + model.intercept

    def loss(self, model: Model) -> float:
        """Weighted mean loss ``sum_i v_i loss_i`` of a model (model units)."""
        a, o = self._argument_map()
        return float(self.weights @ LOSS_1D[self.spec.loss][0](a * self.scores(model) + o))

    def objective(self, model: Model) -> float:
        """True objective: weighted mean loss plus ``lam Omega(coef / grid_unit)`` (eqs. 9, 14)."""
        return self.loss(model) + self.spec.penalty(unit=1.0).value(self.grid_units(model.coef))

    def round(self, model: Model) -> Model:
        """Nearest grid point inside the box ``|w| <= bound``; the intercept clipped to its box."""
        U = self.spec.bound
        w = np.clip(np.rint(np.asarray(model.coef, dtype=float) / self.spec.grid_unit), -U, U)
        b = float(np.clip(model.intercept, *self.intercept_bounds))
        return Model(self.spec.grid_unit * w, b, {"grid_unit": self.spec.grid_unit})

    def with_best_intercept(self, coef: np.ndarray) -> Model:
        """``coef`` with the intercept in its box minimising the objective (exact 1-D search)."""
        lo, hi = self.intercept_bounds
        s = self.X @ np.asarray(coef, dtype=float)
        loss = self.spec.loss
        if not self.spec.fit_intercept or lo == hi:
            b = lo
        elif loss == "hinge":
            b = hinge_intercept(s, self.y, self.weights, self.spec.margin)
        elif loss == "least_squares":
            b = float(self.weights @ (self.y - s) / self.weights.sum())
        else:  # logistic: bisection on the increasing derivative
            slope = LOSS_1D["logistic"][1]
            lo_, hi_ = lo, hi
            for _ in range(100):
                mid = 0.5 * (lo_ + hi_)
                if float(self.weights @ (self.y * slope(self.y * (s + mid)))) < 0:
                    lo_ = mid
                else:
                    hi_ = mid
            b = 0.5 * (lo_ + hi_)
        return Model(coef, float(np.clip(b, lo, hi)), {"grid_unit": self.spec.grid_unit})

    def composite(self) -> tuple[Any, Any]:
        """``(loss, penalty)`` of :mod:`formulations.losses` / :mod:`formulations.penalties` in model
        units, for the proximal path (smooth losses, unweighted rows; the box is not enforced)."""
        spec = self.spec
        if spec.loss == "hinge":
            raise ValueError("the hinge loss is not smooth: the proximal path needs loss='logistic' or "
                             "'least_squares'; solve the relaxed LP with backend 'highs' or 'ecos', or the exact MILP")
        if spec.constraints:
            raise NotRepresentableError("the proximal path cannot carry operational constraints; solve the program "
                                        "(backend 'ecos' / 'highs', or the exact MILP) instead")
        if self.rows_in is None:
            raise ValueError("the proximal path fits unweighted losses: pass no sample_weight (or equal weights), "
                             "or solve the relaxed program with backend 'ecos'")
        X, y = self.rows_in
        data = (Logistic if spec.loss == "logistic" else LeastSquares)(X, y, fit_intercept=spec.fit_intercept)
        return data, spec.penalty()
