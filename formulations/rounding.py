"""Convex-rounding programs for {0,1} and {-1,0,+1} weights (hinge loss over the box).

Chevaleyre, Koriche & Zucker (2013), "Rounding methods for discrete linear classification".

Concept classes (section 2)
---------------------------
* ``C_r[0,1]``: binary weights ``c in {0,1}^d`` with threshold ``r``; label ``sgn(<c,x> - r)``.
* ``C_0[-1,0,+1]``: ternary weights ``c in {-1,0,+1}^n``, reduced to binary weights by the
  *doubling* ``x' = (x_1, -x_1, ..., x_n, -x_n)`` (``d = 2n``) and ``c_i = c'_{2i-1} - c'_{2i}``,
  so that ``<c', x'> = <c, x>`` and ``L(c'; S') = L(c; S)``.

Loss (section 2): the hinge loss with margin ``gamma > 0`` (called ``margin`` here),

.. math:: \\ell(c; x, y) = \\frac{1}{\\text{margin}}\\max[0, \\text{margin} - y(\\langle c, x\\rangle + b)],

and the cumulative loss ``L(c; S) = sum_t s_t ell(c; x_t, y_t)`` (``s_t`` sample weights, all
ones in the paper). In the project's convention the score is ``<c, x> + b`` with ``b = -r``;
``threshold=None`` makes ``b`` a free variable (a learned intercept).

Programs
--------
* Convex rounding, Figure 1 step (1) (section 3.1): ``relaxed()`` is the LP
  ``min L(w; S) s.t. w in [0,1]^d`` (``conv({0,1}^d) = [0,1]^d``); ``exact()`` is the same program
  with ``w`` binary (the combinatorial loss minimisation).
* Sparse convex rounding (section 3.2, Figure 5): add ``sum_i w_i <= k`` (``max_size``); the box
  intersected with that l1 ball is the convex hull of the k-sparse binary vectors.

Variable blocks: ``"coef"`` (the program's own binary weights: ``2n`` doubled ones for ternary
weights, ``n`` for binary), ``"intercept"`` (1; fixed to ``-r`` unless learned), ``"hinge"``
(m slacks ``xi_t = margin * ell_t``). Row blocks ``"hinge_rows"`` and, with a budget,
``"max_size"``. Objective ``L(w; S)`` (cumulative, not averaged). Everything is built from whole
sparse matrices: ``X`` may be scipy.sparse (the metagenomic regime, ``m ~ 200``, ``n ~ 1e5``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from formulations.base import CachedPrograms, Model
from formulations.constraints import SUPPORTED_BY, CompiledConstraints, check_constraints, compile_constraints
from formulations.encodings import add_hinge
from formulations.errors import NotRepresentableError
from formulations.intercept import hinge_intercept
from formulations.program import Program, ProgramBuilder
from formulations.rows import merge_rows
from formulations.validation import check_number, check_training_set

WEIGHT_KINDS = ("binary", "ternary")
#: a relaxed weight at least this close to 0 or 1 counts as integral
INTEGRAL_TOL = 1e-9


# --------------------------------------------------------------------------- doubling (section 2)
def double_features(X):
    """Doubled instances ``x' = (x_1, -x_1, ..., x_n, -x_n)`` (Chevaleyre et al. 2013, section 2).

    ``X`` (m, n) dense or sparse; returns (m, 2n) of the same kind (CSR when sparse): column
    ``2i`` is ``x_i`` and column ``2i + 1`` is ``-x_i`` (0-based).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float)
        n = X.shape[1]
        cols = np.arange(2 * n)
        T = sp.csr_matrix((np.where(cols % 2 == 0, 1.0, -1.0), (cols // 2, cols)), shape=(n, 2 * n))
        return (X @ T).tocsr()
    X = np.asarray(X, dtype=float)
    out = np.empty((X.shape[0], 2 * X.shape[1]))
    out[:, 0::2] = X
    out[:, 1::2] = -X
    return out


def ternary_from_binary(c_doubled: np.ndarray) -> np.ndarray:
    """Ternary weights ``c_i = c'_{2i-1} - c'_{2i}`` (section 2) from doubled weights, (2n,) -> (n,)."""
    c_doubled = np.asarray(c_doubled, dtype=float)
    if c_doubled.ndim != 1 or c_doubled.size % 2:
        raise ValueError(f"doubled weights must be a 1-D vector of even length, got shape {c_doubled.shape}")
    return c_doubled[0::2] - c_doubled[1::2]


def binary_from_ternary(c: np.ndarray) -> np.ndarray:
    """Doubled weights ``c' = (max(c_1,0), max(-c_1,0), ...)`` with ``ternary_from_binary(c') == c``.

    Works for any real ``c``: the split into positive and negative parts, the point of the
    doubled box with the smallest l1 norm that maps to ``c``.
    """
    c = np.asarray(c, dtype=float)
    out = np.empty(2 * c.size)
    out[0::2] = np.maximum(c, 0.0)
    out[1::2] = np.maximum(-c, 0.0)
    return out


# --------------------------------------------------------------------------- loss (section 2)
def hinge_losses(w: np.ndarray, X, y: np.ndarray, *, margin: float, intercept: float = 0.0) -> np.ndarray:
    """Per-sample ``(1/margin) max(0, margin - y_t(<w, x_t> + b))`` (section 2), shape (m,)."""
    score = np.asarray(X @ np.asarray(w, dtype=float)).ravel() + float(intercept)
    return np.maximum(0.0, margin - np.asarray(y, dtype=float) * score) / margin


def cumulative_hinge_loss(w: np.ndarray, X, y: np.ndarray, *, margin: float, intercept: float = 0.0,
                          sample_weight: np.ndarray | None = None) -> float:
    """Cumulative loss ``L(w; S) = sum_t s_t ell(w; x_t, y_t)`` (section 2)."""
    losses = hinge_losses(w, X, y, margin=margin, intercept=intercept)
    return float(losses.sum() if sample_weight is None else losses @ np.asarray(sample_weight, dtype=float))


# --------------------------------------------------------------------------- specification
@dataclass(frozen=True)
class ConvexRounding:
    """Convex rounding (Chevaleyre, Koriche & Zucker 2013, Figure 1) and its sparse variant (section 3.2).

    Parameters
    ----------
    margin : hinge margin ``gamma > 0`` (units of the score ``<c, x>``).
    weights : ``"ternary"`` (class ``C_0[-1,0,+1]`` by the doubling of section 2; the program's
        ``"coef"`` block holds ``2n`` binaries) or ``"binary"`` (class ``C_r[0,1]``).
    threshold : ``r`` of ``sgn(<c, x> - r)``; a number fixes it (the paper's classes: ``0`` for
        the ternary class), ``None`` learns the intercept ``b = -r`` (a free variable).
    max_size : budget ``k`` of the sparse variant, ``sum_i w_i <= k`` on the program's weights
        (for ternary weights this is the number of non-zero ``c_i``); None: no budget. A real ``k``
        is accepted (Proposition 2's ``E||c||_1 = k``); integer models use ``floor(k)`` features.

    constraints : operational constraints by feature name (:mod:`formulations.constraints`), on
        the ternary / binary weights ``c``: with ``c_i = c'_{2i-1} - c'_{2i}`` and
        ``used_i = c'_{2i-1} + c'_{2i}`` (exact once the row ``c'_{2i-1} + c'_{2i} <= 1`` is added,
        which loses nothing: both at 1 is the same model as both at 0) every row is linear in the
        program's binaries, so no extra variable is needed. No performance rows (no per-row errors).
    feature_names : the names the constraints use (default ``x0 .. x{n-1}``).

    Settings of the catalog methods (not of the programs): ``n_draws`` (randomized rounding,
    Proposition 1), ``n_restarts``, ``start_nonzeros``, ``epsilon``, ``max_moves`` (local search,
    Figure 6 and ternary hill climbing; ``max_moves=None`` means ``10 d`` per run).
    """

    margin: float = 1.0
    weights: str = "ternary"
    threshold: float | None = None
    max_size: float | None = None
    n_draws: int = 100
    n_restarts: int = 10
    start_nonzeros: int = 10
    epsilon: float = 1.0
    max_moves: int | None = None
    constraints: tuple = ()
    feature_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "constraints", check_constraints(self.constraints))
        if self.feature_names is not None:
            object.__setattr__(self, "feature_names", tuple(str(n) for n in self.feature_names))
        check_number("margin", self.margin, minimum=0.0, strict=True)
        if self.weights not in WEIGHT_KINDS:
            raise ValueError(f"weights must be one of {WEIGHT_KINDS}, got {self.weights!r}")
        if self.threshold is not None and not (isinstance(self.threshold, (int, float, np.number))
                                               and not isinstance(self.threshold, bool) and math.isfinite(self.threshold)):
            raise ValueError(f"threshold must be a finite number, or None to learn the intercept; got {self.threshold!r}")
        if self.max_size is not None:
            check_number("max_size", self.max_size, minimum=0.0, strict=False)
        check_number("n_draws", self.n_draws, minimum=1, strict=False, integer=True)
        check_number("n_restarts", self.n_restarts, minimum=0, strict=False, integer=True)
        check_number("start_nonzeros", self.start_nonzeros, minimum=1, strict=False, integer=True)
        check_number("epsilon", self.epsilon, minimum=0.0, strict=True)
        if self.max_moves is not None:
            check_number("max_moves", self.max_moves, minimum=0, strict=False, integer=True)

    @property
    def fixed_intercept(self) -> float | None:
        """``b = -threshold`` when the threshold is fixed (None when it is learned)."""
        return None if self.threshold is None else 0.0 - float(self.threshold)

    @property
    def budget(self) -> int | None:
        """Largest number of non-zero integer weights, ``floor(max_size)`` (None: no budget)."""
        return None if self.max_size is None else int(math.floor(self.max_size + 1e-9))

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> "ConvexRoundingInstance":
        """Bind to data: validate, merge identical dense rows (exact for a sum of row losses)."""
        X, y, s = check_training_set(X, y, sample_weight)
        n_rows = X.shape[0]
        if sp.issparse(X):
            keep = s > 0
            X, y, s = X[keep], y[keep], s[keep]
        else:
            X, y, s = merge_rows(X, y, s)
        names = self.feature_names or tuple(f"x{j}" for j in range(X.shape[1]))
        if len(names) != X.shape[1]:
            raise ValueError(f"feature_names has {len(names)} names but X has {X.shape[1]} columns")
        compiled = compile_constraints(self.constraints, names)
        if compiled.performance:
            raise NotRepresentableError(f"convex rounding has no per-row error indicators; use {SUPPORTED_BY['performance']}")
        return ConvexRoundingInstance(self, X, y, s, n_rows, compiled)


@dataclass(frozen=True)
class ConvexRoundingInstance(CachedPrograms):
    """A convex-rounding problem on data: programs, decode / lift / objective / round."""

    spec: ConvexRounding
    X: Any
    y: np.ndarray
    weights: np.ndarray
    n_rows_in: int
    constraints: CompiledConstraints | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def info(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows_in, "n_rows_kept": self.X.shape[0],
                "n_weights": 2 * self.n_features if self.spec.weights == "ternary" else self.n_features}

    def design(self):
        """The matrix the program's weights act on: ``X`` (binary) or its doubling (ternary)."""
        if "design" not in self._cache:
            self._cache["design"] = double_features(self.X) if self.spec.weights == "ternary" else self.X
        return self._cache["design"]

    # --------------------------------------------------------------- programs
    def _build(self) -> Program:
        """The exact program: binary ILP ``min L(c'; S) s.t. c' in {0,1}^d`` (``+ sum c' <= k`` with a budget)."""
        spec, Xd = self.spec, self.design()
        d = Xd.shape[1]
        b = ProgramBuilder()
        b.add_variables("coef", d, lb=0.0, ub=1.0, integer=True)
        if spec.threshold is None:
            b.add_variables("intercept", 1)
        else:
            b.add_variables("intercept", 1, lb=spec.fixed_intercept, ub=spec.fixed_intercept)
        add_hinge(b, Xd, self.y, weights="coef", intercept="intercept", margin=float(spec.margin),
                  sample_weight=self.weights, name="hinge", scale=1.0 / float(spec.margin))
        if spec.max_size is not None:
            b.add_rows("max_size", {"coef": sp.csr_matrix(np.ones((1, d)))}, ub=float(spec.max_size))
        con = self.constraints
        if con is not None and con.n_rows:
            n = self.n_features
            if spec.weights == "ternary":  # c = T c', used = S c'
                rows, cols = np.repeat(np.arange(n), 2), np.arange(2 * n)
                T = sp.csr_matrix((np.tile([1.0, -1.0], n), (rows, cols)), shape=(n, 2 * n))
                S = sp.csr_matrix((np.ones(2 * n), (rows, cols)), shape=(n, 2 * n))
                b.add_rows("no_cancel", {"coef": S}, ub=1.0)
            else:
                T = S = sp.identity(n, format="csr")
            b.add_rows("operational", {"coef": con.P @ T + con.U @ S, "intercept": sp.csr_matrix(con.c[:, None])},
                       lb=con.lb, ub=con.ub)
        return b.build()

    def constraint_violation(self, model: Model) -> float:
        """Largest violation of the operational constraints at the model's weights (0 when obeyed)."""
        return 0.0 if self.constraints is None else self.constraints.violation(model.coef, model.intercept)

    # ------------------------------------------------------------ mappings
    def decode(self, x: np.ndarray) -> Model:
        """Model of a solution of :meth:`exact` / :meth:`relaxed`, as solved.

        ``coef`` (n,) is ``c'_{2i-1} - c'_{2i}`` for ternary weights (in [-1, 1] for an LP
        point); ``extras["weights"]`` keeps the program's own weight vector (randomized rounding
        draws from it, Figure 1 step (2)).
        """
        p = self.exact()
        w = p.block(np.asarray(x, dtype=float), "coef").copy()
        coef = ternary_from_binary(w) if self.spec.weights == "ternary" else w.copy()
        return Model(coef, float(p.block(x, "intercept")[0]), {"weights": w})

    def program_weights(self, model: Model) -> np.ndarray:
        """The program's weight vector of a model (doubled by :func:`binary_from_ternary` if ternary)."""
        coef = np.asarray(model.coef, dtype=float)
        if coef.shape != (self.n_features,):
            raise ValueError(f"model has {coef.size} coefficients; the data have {self.n_features} features")
        return binary_from_ternary(coef) if self.spec.weights == "ternary" else coef

    def lift(self, model: Model) -> np.ndarray:
        """Full vector of :meth:`exact`: doubled weights, intercept, slacks ``xi_t = margin * ell_t``."""
        w = self.program_weights(model)
        xi = self.spec.margin * hinge_losses(model.coef, self.X, self.y, margin=self.spec.margin,
                                             intercept=model.intercept)
        return np.concatenate([w, [model.intercept], xi])

    def objective(self, model: Model) -> float:
        """The weighted cumulative hinge loss ``L(c; S)`` of section 2 (the programs' objective)."""
        if np.shape(model.coef) != (self.n_features,):
            raise ValueError(f"model has {np.size(model.coef)} coefficients; the data have {self.n_features} features")
        return cumulative_hinge_loss(model.coef, self.X, self.y, margin=self.spec.margin,
                                     intercept=model.intercept, sample_weight=self.weights)

    def best_intercept(self, coef: np.ndarray) -> float:
        """The fixed ``-threshold``, or the intercept minimising ``L`` for ``coef`` (exact search)."""
        if self.spec.threshold is not None:
            return self.spec.fixed_intercept
        scores = np.asarray(self.X @ np.asarray(coef, dtype=float)).ravel()
        return hinge_intercept(scores, self.y, self.weights, self.spec.margin)

    def round(self, model: Model) -> Model:
        """Deterministic rounding into the class: ``|c_i| >= 1/2`` keeps its sign (binary: ``c_i >= 1/2``).

        With a budget, only the ``floor(max_size)`` largest ``|c_i|`` are kept (ties by index).
        The intercept is ``-threshold`` when fixed; when learned, the better of the model's own
        and the exact best one (:func:`formulations.intercept.hinge_intercept`) is kept.
        """
        raw = np.asarray(model.coef, dtype=float)
        if self.spec.weights == "binary":
            raw = np.clip(raw, 0.0, 1.0)
        else:
            raw = np.clip(raw, -1.0, 1.0)
        coef = np.where(np.abs(raw) >= 0.5, np.sign(raw), 0.0)
        k = self.spec.budget
        if k is not None and np.count_nonzero(coef) > k:
            keep = np.argsort(-np.abs(raw), kind="stable")[:k]
            trimmed = np.zeros_like(coef)
            trimmed[keep] = np.sign(raw[keep])
            coef = trimmed
        coef = coef + 0.0
        if self.spec.threshold is not None:
            return Model(coef, self.spec.fixed_intercept)
        own = float(model.intercept) + 0.0 if math.isfinite(model.intercept) else 0.0  # + 0.0: no -0.0
        return min((Model(coef, own), Model(coef, self.best_intercept(coef))), key=self.objective)
