"""Facets programs: the Facets penalty (Belahcene et al., ACML 2020) as linear rows and cones.

Paper: ``../shared/papers/facets-soft-integrity-constraints.txt``. For one coefficient ``v`` the
Facets penalty is (Definition 1, eq. 3)

.. math::

    \\Omega_{1D}(v) = \\sum_{i \\ge 0} \\max(0, |v| - i)
                   = \\tfrac{k(k+1)}{2} + (k+1)(|v| - k),\\quad k = \\lfloor |v| \\rfloor,

a convex piecewise-linear function with a facet of slope ``k+1`` on ``k <= |v| <= k+1``. On a
box ``|v| <= U`` (``U`` integer) it is the maximum of ``U`` affine pieces of ``a = |v|``:
``Omega_1D(v) = max_{k<U} (k+1) a - k(k+1)/2``, so its epigraph is ``a >= |v|`` (two rows)
plus one row per facet. Scaling (eqs. 8-9): the model is ``theta = gamma * w`` and the
penalty acts on the grid units ``w = theta / gamma``. The strongly convex variant (eq. 14) is
``SCF_eps = (1 - eps) Facets + eps (L1 + L2)`` with ``L2(w) = ||w||_2^2 / 2``: the half is forced
by eq. 13 (``d/dw Omega_corr = w - floor(w)`` for ``Omega_corr = L2 + L1 - Facets``) and by the
prox of eq. 15. The square enters the convex program as one rotated second-order cone
``||w||^2 <= q``, i.e. ``||(2 w, q - 1)||_2 <= q + 1``, with cost ``eps / 2`` on ``q``.

Programs (variables ``w`` in grid units, ``intercept`` in model units)::

    min_w,b  (1/S) sum_i s_i loss(y_i, gamma x_i . w + b) + lam * Omega(w),   S = sum_i s_i
    s.t.     |w_j| <= U,  b in [b_lo, b_hi]          (w integer in the exact program)

with ``loss`` hinge (LP / MILP), logistic (exponential cones) or least squares (one SOC). The
exact program is the problem Facets relaxes: on integer ``w`` the Facets epigraph is exact
(Facets interpolates ``(|w| + w^2) / 2`` at the integers, Prop. 2). HiGHS has no MIQP, so the
exact SCF replaces ``w_j^2`` by its chords between consecutive integers,
``p_j >= (2k+1) |w_j| - k(k+1)``, which equal ``w_j^2`` at every integer: the exact program
is still a MILP with hinge loss, and ``relaxed <= exact`` because a convex function lies below
its chords. The exact logistic program is solved by outer approximation
(:class:`LossOuterApproximation`, ``solvers.outer_approximation``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from formulations.conic_encodings import add_loss, add_penalty, register_penalty_encoder
from formulations.encodings import add_abs
from formulations.errors import NotRepresentableError
from formulations.penalties import Facets, Scaled, StronglyConvexFacets
from formulations.program import Program, ProgramBuilder, SOC

LOSSES = ("hinge", "logistic", "least_squares")
SCF_SQUARE = 0.5  # SCF_eps = (1 - eps) Facets + eps (||w||_1 + SCF_SQUARE ||w||_2^2), eqs. 13-15
_ENCODER_LOSS = {"hinge": "hinge", "logistic": "logistic", "least_squares": "squared"}
_LOGISTIC_INTERCEPT_SLACK = 10.0  # logistic loss at margin 10 is 4.5e-5: beyond it b buys nothing


# ----------------------------------------------------------------------------- penalty maths
def facets_value(w: np.ndarray) -> float:
    """Facets penalty ``sum_j Omega_1D(w_j)`` in closed form (eq. 3); ``w`` of any shape."""
    a = np.abs(np.asarray(w, dtype=float))
    k = np.floor(a)
    return float(np.sum(k * (k + 1) / 2 + (k + 1) * (a - k)))


def facet_pieces(bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Slopes ``k+1`` and offsets ``k(k+1)/2`` (``k = 0..U-1``) of the facets on ``|w| <= U``.

    ``Omega_1D(w) = max_k slopes[k] * |w| - offsets[k]`` for ``|w| <= bound``.
    """
    k = np.arange(int(bound), dtype=float)
    return k + 1.0, k * (k + 1.0) / 2.0


def integer_square_chords(bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Slopes ``2k+1`` and offsets ``k(k+1)`` of the chords of ``a^2`` between ``k`` and ``k+1``.

    ``max_k slopes[k] * a - offsets[k]`` equals ``a^2`` at every integer ``0 <= a <= bound``
    and lies above it in between.
    """
    k = np.arange(int(bound), dtype=float)
    return 2.0 * k + 1.0, k * (k + 1.0)


# --------------------------------------------------------------------------- encoders (rows)
def add_max_affine(builder: ProgramBuilder, arg: str, slopes: np.ndarray, offsets: np.ndarray, *,
                   name: str, cost: float) -> slice:
    """Epigraph ``t_j >= slopes[k] * a_j - offsets[k]`` for all ``k``, ``a`` = block ``arg``.

    One row per piece per coordinate, built as one sparse block (``kron`` of the pieces with
    the identity); ``t >= 0`` with objective ``cost * sum_j t_j``. Returns the slice of ``t``.
    """
    d = builder.size(arg)
    t = builder.add_variables(name, d, lb=0.0, cost=cost)
    eye = sp.identity(d, format="csr")
    ones = np.ones((len(slopes), 1))
    builder.add_rows(name + "_facets", {name: sp.kron(ones, eye, format="csr"),
                                        arg: sp.kron(-np.asarray(slopes)[:, None], eye, format="csr")},
                     lb=np.repeat(-np.asarray(offsets, dtype=float), d))
    return t


def add_facets(builder: ProgramBuilder, abs_block: str, *, bound: int, name: str = "facets",
               cost: float = 1.0) -> slice:
    """Facets epigraph (eq. 3) on ``|w| <= bound``: ``t_j >= (k+1) a_j - k(k+1)/2``, ``k < bound``.

    ``abs_block`` holds ``a >= |w|`` (see :func:`formulations.encodings.add_abs`); since the
    facets increase in ``a``, ``t_j = Omega_1D(w_j)`` at any optimum with ``cost > 0``.
    """
    slopes, offsets = facet_pieces(bound)
    return add_max_affine(builder, abs_block, slopes, offsets, name=name, cost=cost)


def add_squared_norm(builder: ProgramBuilder, block: str, *, name: str = "squared_norm",
                     cost: float = 1.0) -> slice:
    """Rotated SOC ``||x||_2^2 <= q`` of a block, written as the standard SOC of dimension d+2.

    ``||x||^2 <= q * 1``  <=>  ``||(2 x, q - 1)||_2 <= q + 1``. Adds the scalar ``q >= 0`` with
    objective ``cost * q``. Returns its slice.
    """
    d = builder.size(block)
    q = builder.add_variables(name, 1, lb=0.0, cost=cost)
    qcol = sp.csr_matrix(np.r_[1.0, 1.0, np.zeros(d)][:, None])
    xmat = sp.vstack([sp.csr_matrix((2, d)), 2.0 * sp.identity(d)], format="csr")
    builder.add_cones(SOC, d + 2, {name: qcol, block: xmat}, constant=np.r_[1.0, -1.0, np.zeros(d)],
                      name=name)
    return q


# ----------------------------------------------- dispatch-table encoders of the penalty classes
def _box(builder: ProgramBuilder, weights: str, penalty) -> np.ndarray:
    lb, ub = builder.bounds(weights)
    box = np.maximum(np.abs(lb), np.abs(ub))
    if not np.all(np.isfinite(box)):
        raise NotRepresentableError(
            f"{type(penalty).__name__} is piecewise linear with infinitely many facets: its epigraph "
            f"needs a box on block {weights!r}; add the variables with finite lb/ub (|w_j| <= U * mu), "
            "or use the proximal solver")
    return box


@register_penalty_encoder(Facets)
@register_penalty_encoder(StronglyConvexFacets)
def encode_facets_penalty(builder: ProgramBuilder, penalty, *, weights: str, name: str, scale: float):
    """``scale * penalty.value(w)`` for :class:`Facets` / :class:`StronglyConvexFacets` (eqs. 3, 14).

    With ``x = w / mu`` on the box of block ``weights`` (``U = ceil(max |w_j| / mu)`` facets):
    ``a >= |w|`` (block ``name_abs``), facets ``t_j >= (k+1) a_j / mu - k(k+1)/2`` (block
    ``name_facets``, cost ``scale lam (1 - eps)``) and, for SCF, ``eps lam (a / mu + q / (2 mu^2))``
    with ``||w||^2 <= q`` one rotated SOC (block ``name_square``). Returns ``lift(w)``.
    """
    eps = getattr(penalty, "eps", 0.0)
    mu, lam = penalty.mu, penalty.lam * scale
    U = max(int(np.ceil(_box(builder, weights, penalty).max(initial=0.0) / mu - 1e-12)), 1)
    add_abs(builder, weights, name=name + "_abs", cost=lam * eps / mu)
    slopes, offsets = facet_pieces(U)
    add_max_affine(builder, name + "_abs", slopes / mu, offsets, name=name + "_facets", cost=lam * (1 - eps))
    if eps > 0:
        add_squared_norm(builder, weights, name=name + "_square", cost=lam * eps * SCF_SQUARE / mu ** 2)

    def lift(w):
        w = np.asarray(w, dtype=float)
        out = {name + "_abs": np.abs(w),
               name + "_facets": np.max(np.maximum(slopes[:, None] * np.abs(w) / mu - offsets[:, None], 0), axis=0)}
        if eps > 0:
            out[name + "_square"] = np.array([w @ w])
        return out

    return lift


@register_penalty_encoder(Scaled)
def encode_scaled_penalty(builder: ProgramBuilder, penalty, *, weights: str, name: str, scale: float):
    """``scale * penalty.penalty.value(w / gamma)`` (eq. 9): the inner penalty on ``v = w / gamma``.

    Adds block ``name_scaled`` (``v``, box of ``w`` divided by gamma) and rows ``gamma v = w``,
    then encodes the inner penalty on ``v`` through the dispatch table. Returns ``lift(w)``.
    """
    g = penalty.gamma
    lb, ub = builder.bounds(weights)
    builder.add_variables(name + "_scaled", lb.size, lb=lb / g, ub=ub / g)
    eye = sp.identity(lb.size, format="csr")
    builder.add_rows(name + "_scaled_rows", {name + "_scaled": g * eye, weights: -eye}, lb=0.0, ub=0.0)
    inner = add_penalty(builder, penalty.penalty, weights=name + "_scaled", name=name, scale=scale)
    return lambda w: {name + "_scaled": np.asarray(w, dtype=float) / g, **inner(np.asarray(w, dtype=float) / g)}


# ------------------------------------------------------------------------------ loss maths
def _log1pexp(z: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, z)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


# per-sample loss as a 1-D convex function of its argument z = M x + o (see loss_argument)
LOSS_1D = {
    "hinge": (lambda z: np.maximum(0.0, -z), lambda z: -(z < 0).astype(float)),
    "logistic": (lambda z: _log1pexp(-z), lambda z: -_sigmoid(-z)),
    "least_squares": (lambda z: 0.5 * z * z, lambda z: z),
}


def _check_xy(X, y, loss: str, sample_weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if sp.issparse(X):
        X = X.toarray()
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).reshape(-1)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; pass one label per row")
    if X.shape[0] == 0:
        raise ValueError("X and y are empty; pass at least one sample")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite (no NaN or inf); impute or drop those rows")
    if loss != "least_squares" and not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"y must be coded -1/+1 for the {loss} loss (use milpscore.data.validate_xy "
                         "to map 0/1 or string labels)")
    s = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if s.shape != y.shape or np.any(s < 0) or not np.all(np.isfinite(s)) or not s.sum() > 0:
        raise ValueError(f"sample_weight must be {y.shape[0]} finite non-negative numbers with a positive sum")
    return X, y, s


def merge_duplicates(X: np.ndarray, y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of ``[X, y]`` (sorted) with the weights of their copies added."""
    rows, inverse = np.unique(np.column_stack([X, y]), axis=0, return_inverse=True)
    return rows[:, :-1], rows[:, -1], np.bincount(inverse.reshape(-1), weights=s, minlength=rows.shape[0])


# --------------------------------------------------------------------------------- builder
@dataclass(frozen=True)
class FacetsProgram:
    """Builder of the Facets-penalised programs (eqs. 3, 8-9, 14), convex and exact.

    Objective ``(1/S) sum_i s_i loss_i + lam * Omega(w)`` (``S = sum_i s_i``: ``n`` without
    weights, and integer weights act as repeated rows) with model ``theta = gamma * w``
    (eq. 8) and ``Omega = (1 - eps) Facets + eps (L1 + L2^2)`` (eq. 14; ``eps = 0``: Facets).

    Parameters
    ----------
    loss : ``"hinge"`` (``max(0, margin - y f)``), ``"logistic"`` (``log(1 + exp(-y f))``)
        or ``"least_squares"`` (``(y - f)^2 / 2``), with ``f = gamma x . w + b``.
    lam : penalty weight ``lambda >= 0``.
    gamma : grid unit ``gamma > 0`` (eqs. 8-9); ``theta / gamma`` is penalised.
    eps : SCF weight in ``[0, 1)`` (eq. 14).
    bound : integer ``U >= 1``, box ``|w_j| <= U`` in grid units (the facets represented).
    margin : hinge margin.
    fit_intercept : unpenalised intercept ``b`` (model units).
    intercept_bounds : box on ``b``; None derives it from the data so that no hinge /
        least-squares optimum is cut off (logistic: widened by 10 units of margin).
    """

    loss: str = "hinge"
    lam: float = 0.1
    gamma: float = 1.0
    eps: float = 0.0
    bound: int = 5
    margin: float = 1.0
    fit_intercept: bool = True
    intercept_bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError(f"lam must be a finite number >= 0, got {self.lam}")
        if not (np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma must be > 0 (the grid unit of eqs. 8-9), got {self.gamma}")
        if not (0.0 <= self.eps < 1.0):
            raise ValueError(f"eps must lie in [0, 1) (eq. 14), got {self.eps}")
        if int(self.bound) != self.bound or self.bound < 1:
            raise ValueError(f"bound must be an integer >= 1 (box |w_j| <= bound), got {self.bound}")
        if self.margin <= 0:
            raise ValueError(f"margin must be > 0, got {self.margin}")
        if self.intercept_bounds is not None:
            lo, hi = self.intercept_bounds
            if not lo <= hi:
                raise ValueError(f"intercept_bounds must satisfy lo <= hi, got {self.intercept_bounds}")

    # ------------------------------------------------------------------ true objective
    def penalty(self) -> Facets | StronglyConvexFacets:
        """The same penalty as a :mod:`formulations.penalties` object (model units, grid ``gamma``).

        ``Facets(lam, mu=gamma)`` or ``StronglyConvexFacets(lam, mu=gamma, eps)``; equivalently
        ``Scaled(Facets(lam), gamma)`` (eq. 9). Its ``prox`` drives the proximal path.
        """
        if self.eps == 0:
            return Facets(self.lam, mu=self.gamma)
        return StronglyConvexFacets(self.lam, mu=self.gamma, eps=self.eps)

    def penalty_value(self, coef: np.ndarray) -> float:
        """``lam * Omega(coef / gamma)`` (eq. 9 form) for model coefficients ``coef``."""
        w = np.asarray(coef, dtype=float) / self.gamma
        facets = facets_value(w)
        if self.eps == 0:
            return self.lam * facets
        return self.lam * ((1 - self.eps) * facets + self.eps * (np.abs(w).sum() + SCF_SQUARE * (w @ w)))

    def loss_value(self, X, y, coef: np.ndarray, intercept: float = 0.0, sample_weight=None) -> float:
        """``(1/S) sum_i s_i loss(y_i, x_i . coef + intercept)``, ``S = sum_i s_i`` (model units)."""
        X, y, s = _check_xy(X, y, self.loss, sample_weight)
        z = self._argument(X @ np.asarray(coef, dtype=float) + intercept, y)
        return float(s @ LOSS_1D[self.loss][0](z) / s.sum())

    def objective_value(self, X, y, coef: np.ndarray, intercept: float = 0.0, sample_weight=None) -> float:
        """True objective ``loss + lam * Omega`` of a model (coefficients in model units)."""
        return self.loss_value(X, y, coef, intercept, sample_weight) + self.penalty_value(coef)

    def _argument(self, scores: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.loss == "least_squares":
            return scores - y
        if self.loss == "hinge":
            return y * scores - self.margin
        return y * scores

    def intercept_range(self, X, y) -> tuple[float, float]:
        """Box on ``b``: explicit ``intercept_bounds`` or derived from the data and ``|w| <= U``.

        With scores ``gamma x_i . w`` in ``[smin_i, smax_i]``, hinge optima have ``b`` in
        ``[-max smax - margin, -min smin + margin]``; least squares in
        ``[min y - max smax, max y - min smin]``; logistic gets the hinge box widened by 10.
        """
        if not self.fit_intercept:
            return 0.0, 0.0
        if self.intercept_bounds is not None:
            return float(self.intercept_bounds[0]), float(self.intercept_bounds[1])
        X = np.asarray(X, dtype=float)
        reach = self.gamma * self.bound * np.abs(X).sum(axis=1)
        smin, smax = -reach, reach
        if self.loss == "least_squares":
            y = np.asarray(y, dtype=float)
            return float(np.floor(y.min() - smax.max())), float(np.ceil(y.max() - smin.min()))
        slack = self.margin + (_LOGISTIC_INTERCEPT_SLACK if self.loss == "logistic" else 0.0)
        return float(np.floor(-smax.max() - slack)), float(np.ceil(-smin.min() + slack))

    # -------------------------------------------------------------------- programs
    def _penalised(self, X, y, *, integer: bool) -> ProgramBuilder:
        """Builder holding ``w``, ``intercept`` and the penalty epigraph (no loss yet)."""
        d = X.shape[1]
        b = ProgramBuilder()
        b.add_variables("w", d, lb=-self.bound, ub=self.bound, integer=integer)
        lo, hi = self.intercept_range(X, y)
        b.add_variables("intercept", 1, lb=lo, ub=hi)
        add_abs(b, "w", name="abs", cost=self.lam * self.eps)
        add_facets(b, "abs", bound=int(self.bound), name="facets", cost=self.lam * (1 - self.eps))
        if self.eps > 0:
            if integer:
                slopes, offsets = integer_square_chords(int(self.bound))
                add_max_affine(b, "abs", slopes, offsets, name="square",
                               cost=self.lam * self.eps * SCF_SQUARE)
            else:
                add_squared_norm(b, "w", name="square", cost=self.lam * self.eps * SCF_SQUARE)
        return b

    def _add_loss(self, b: ProgramBuilder, X, y, s):
        """Loss epigraph on ``f = gamma X w + b`` with weight ``s_i / S``; returns its lift."""
        options = {"margin": self.margin} if self.loss == "hinge" else {}
        return add_loss(b, _ENCODER_LOSS[self.loss], self.gamma * X, y, weights="w", intercept="intercept",
                        sample_weight=s, name="loss", scale=1.0 / s.sum(), **options)

    def relaxed(self, X, y, sample_weight=None) -> Program:
        """The convex program: LP (hinge, Facets), SOCP/exp-cone program otherwise."""
        X, y, s = _check_xy(X, y, self.loss, sample_weight)
        b = self._penalised(X, y, integer=False)
        self._add_loss(b, X, y, s)
        return b.build()

    def exact(self, X, y, sample_weight=None) -> Program:
        """The integer program Facets relaxes: same objective with ``w`` integer (MILP for hinge).

        For the logistic / least-squares losses the result is a mixed-integer conic program
        (solve it with :func:`solvers.outer_approximation.solve_outer_approximation`).
        """
        X, y, s = _check_xy(X, y, self.loss, sample_weight)
        b = self._penalised(X, y, integer=True)
        self._add_loss(b, X, y, s)
        return b.build()

    def outer_approximation(self, X, y, sample_weight=None, points=(-2.0, 0.0, 2.0)
                            ) -> "LossOuterApproximation":
        """Exact program with the loss replaced by tangent cuts at ``points`` (a MILP).

        Identical samples ``(x_i, y_i)`` are merged first (their weights added: the objective is
        unchanged and binary data shrink several-fold, e.g. mammo 961 -> 146 rows). Each
        distinct sample's loss ``f(z_i)``, ``z_i = M_i x + o_i``, gets an epigraph variable
        ``t_i >= 0`` (cost ``s_i / S``) and one tangent row per point; tangents under-estimate
        the convex ``f``, so the MILP optimum is a lower bound on the exact optimum.
        """
        X, y, s = _check_xy(X, y, self.loss, sample_weight)
        if self.loss == "hinge":
            raise ValueError("the hinge loss is already linear: solve exact(X, y) with HiGHS directly")
        X, y, s = merge_duplicates(X, y, s)
        b = self._penalised(X, y, integer=True)
        n = y.shape[0]
        b.add_variables("loss", n, lb=0.0, cost=s / s.sum())
        # z_i = yg_i (gamma x_i . w + b) + o_i as variables: each tangent row then has 2 non-zeros
        yg = y if self.loss != "least_squares" else np.ones(n)
        offset = -y if self.loss == "least_squares" else np.zeros(n)
        b.add_variables("argument", n)
        b.add_rows("argument_rows", {"argument": sp.identity(n, format="csr"),
                                     "w": -yg[:, None] * (self.gamma * X), "intercept": -yg[:, None]},
                   lb=offset, ub=offset)
        base = b.build()
        M = sp.lil_matrix((n, base.n_variables))
        M[:, base.blocks["w"]] = yg[:, None] * (self.gamma * X)
        M[:, base.blocks["intercept"]] = yg[:, None]
        oa = LossOuterApproximation(self.loss, base, M.tocsr(), offset, base.blocks["loss"], s / s.sum(),
                                    base.blocks["argument"])
        z0 = np.repeat(np.asarray(points, dtype=float), n)
        return oa.with_cuts(z0, np.tile(np.arange(n), len(points)))

    # ------------------------------------------------------------------ decode / lift
    def decode(self, x: np.ndarray, program: Program) -> tuple[np.ndarray, float]:
        """Model coefficients ``theta = gamma * w`` and intercept ``b`` from a solution vector."""
        x = np.asarray(x, dtype=float)
        return self.gamma * program.block(x, "w"), float(program.block(x, "intercept")[0])

    def lift(self, program: Program, X, y, coef: np.ndarray, intercept: float = 0.0,
             sample_weight=None) -> np.ndarray:
        """Full solution vector of ``program`` (built by this builder on ``X, y``) from a model.

        Fills ``w = coef / gamma``, the intercept, the penalty epigraphs at their values and the
        loss epigraph (outer approximation: ``z_i`` and ``t_i = f(z_i)`` per distinct sample;
        otherwise the lift of the loss encoder of :mod:`formulations.conic_encodings`). The
        lifted point's objective is the true objective of the model. Check with ``violations``.
        """
        X, y, s = _check_xy(X, y, self.loss, sample_weight)
        w = np.asarray(coef, dtype=float) / self.gamma
        x = np.zeros(program.n_variables)
        blocks = program.blocks
        x[blocks["w"]] = w
        x[blocks["intercept"]] = intercept
        a = np.abs(w)
        x[blocks["abs"]] = a
        slopes, offsets = facet_pieces(int(self.bound))
        x[blocks["facets"]] = np.max(np.maximum(slopes[:, None] * a - offsets[:, None], 0.0), axis=0)
        if "square" in blocks:
            if program.blocks["square"].stop - program.blocks["square"].start == 1:
                x[blocks["square"]] = w @ w
            else:
                slopes, offsets = integer_square_chords(int(self.bound))
                x[blocks["square"]] = np.max(np.maximum(slopes[:, None] * a - offsets[:, None], 0.0), axis=0)
        if "tangents" in program.row_blocks:  # outer approximation: one t_i per distinct sample
            X, y, s = merge_duplicates(X, y, s)
            z = self._argument(X @ (self.gamma * w) + intercept, y)
            x[blocks["argument"]] = z
            x[blocks["loss"]] = LOSS_1D[self.loss][0](z)
        else:  # the loss encoder's own lift, from a scratch builder with the same blocks
            scratch = ProgramBuilder()
            scratch.add_variables("w", X.shape[1])
            scratch.add_variables("intercept", 1)
            for name, values in self._add_loss(scratch, X, y, s)(w, intercept).items():
                x[blocks[name]] = values
        return x


@dataclass(frozen=True)
class LossOuterApproximation:
    """A MILP whose per-sample loss epigraph ``t_i >= f(z_i)`` is cut by tangents.

    Attributes
    ----------
    loss : name of the 1-D loss ``f`` (:data:`LOSS_1D`).
    program : the MILP (tangents so far in row block ``"tangents"``).
    argument : (n, n_variables) CSR ``M`` with ``z = M x + offset`` the loss argument of each
        sample (margin ``y_i f_i`` for logistic, residual ``f_i - y_i`` for least squares).
    offset : (n,) ``o``.
    loss_block : slice of the epigraph variables ``t``.
    weights : (n,) objective cost of ``t`` (``s_i / S``).
    argument_block : slice of the variables ``z`` (rows ``z = M x + o`` in the program): the
        tangents are written on ``(t_i, z_i)`` only, two non-zeros per row.
    """

    loss: str
    program: Program
    argument: sp.csr_matrix
    offset: np.ndarray
    loss_block: slice
    weights: np.ndarray
    argument_block: slice

    def cuts(self, z0: np.ndarray, samples: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Tangent rows ``t_i - f'(z0) z_i >= f(z0) - f'(z0) z0`` at points ``z0``.

        ``samples[k]`` is the sample of the ``k``-th cut. Returns the rows (over all variables,
        one sparse block, two non-zeros per row) and their lower bounds.
        """
        value, slope = LOSS_1D[self.loss]
        z0 = np.asarray(z0, dtype=float)
        samples = np.asarray(samples)
        g = slope(z0)
        k = np.arange(samples.size)
        rows = sp.csr_matrix((np.r_[np.ones(samples.size), -g],
                              (np.r_[k, k], np.r_[self.loss_block.start + samples, self.argument_block.start + samples])),
                             shape=(samples.size, self.argument.shape[1]))
        return rows, value(z0) - g * z0

    def with_cuts(self, z0: np.ndarray, samples: np.ndarray) -> "LossOuterApproximation":
        """Copy whose program has the tangent rows at ``z0`` appended to row block ``"tangents"``."""
        rows, lb = self.cuts(z0, samples)
        p = self.program
        start = p.row_blocks.get("tangents", slice(p.n_rows, p.n_rows)).start
        row_blocks = dict(p.row_blocks, tangents=slice(start, p.n_rows + rows.shape[0]))
        program = replace(p, A=sp.vstack([p.A, rows], format="csr"), row_lb=np.r_[p.row_lb, lb],
                          row_ub=np.r_[p.row_ub, np.full(lb.size, np.inf)], row_blocks=row_blocks)
        return replace(self, program=program)

    def arguments(self, x: np.ndarray) -> np.ndarray:
        """Loss arguments ``z = M x + o`` at a solution vector."""
        return self.argument @ np.asarray(x, dtype=float) + self.offset

    def true_objective(self, x: np.ndarray) -> float:
        """Objective with the exact loss: linear part of the program plus ``sum_i c_i f(z_i)``."""
        x = np.asarray(x, dtype=float)
        c = self.program.c
        linear = float(c @ x - c[self.loss_block] @ x[self.loss_block] + self.program.offset)
        return linear + float(self.weights @ LOSS_1D[self.loss][0](self.arguments(x)))
