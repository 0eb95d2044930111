"""Convex-rounding and sparse-convex-rounding programs for {0,1} and {-1,0,+1} weights.

Chevaleyre, Koriche & Zucker, "Learning linear classifiers with ternary weights from
metagenomic data" (``papers/ternary-weights-convex-rounding.txt``).

Concept classes (section 2)
---------------------------
* ``C_r[0,1]``: binary weights ``c in {0,1}^d`` with threshold ``r``; label ``sgn(<c,x> - r)``.
* ``C_0[-1,0,+1]``: ternary weights ``c in {-1,0,+1}^n`` with zero threshold, reduced to binary
  weights by the *doubling* ``x' = (x_1, -x_1, ..., x_n, -x_n)`` (``d = 2n``) and
  ``c_i = c'_{2i-1} - c'_{2i}``, so that ``<c', x'> = <c, x>`` and ``L(c'; S') = L(c; S)``.

Loss (section 2): the hinge loss with margin ``gamma > 0``,

.. math:: \\ell_\\gamma(c; x, y) = \\frac{1}{\\gamma}\\max[0, \\gamma - y(\\langle c, x\\rangle - r)],

and the cumulative loss ``L_gamma(c; S) = sum_t s_t ell_gamma(c; x_t, y_t)`` (``s_t`` sample
weights, all ones in the paper). Labels ``y in {-1,+1}``; in the project's convention the
decision is ``<c, x> + b`` with intercept ``b = -r``.

Programs
--------
* Convex rounding, Figure 1 step (1) (section 3.1): ``relaxed()`` is the LP
  ``min L_gamma(w; S) s.t. w in [0,1]^d`` (``conv({0,1}^d) = [0,1]^d``); ``exact()`` is the same
  program with ``w`` binary (the ILP of the combinatorial loss minimisation).
* Sparse convex rounding (section 3.2, Figure 5): add ``||w||_1 = sum_i w_i <= k``; the box
  intersected with that l1 ball is the convex hull of the k-sparse binary vectors, so the
  relaxation is again the LP of the exact k-sparse ILP.

The hinge epigraph rows come from :func:`formulations.encodings.add_hinge`:
``xi_t + y_t <w, x_t> + y_t b >= gamma``, ``xi_t >= 0``, objective ``(1/gamma) sum_t s_t xi_t``.
Everything is built from whole sparse matrices: ``X`` may be a scipy.sparse matrix (the
metagenomic regime: ``m ~ 200`` samples, ``n ~ 1e5`` count features).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from formulations.encodings import add_hinge
from formulations.program import Program, ProgramBuilder

WEIGHT_KINDS = ("binary", "ternary")


# --------------------------------------------------------------------------- doubling (section 2)
def double_features(X):
    """Doubled instances ``x' = (x_1, -x_1, ..., x_n, -x_n)`` of section 2.

    Parameters
    ----------
    X : (m, n) array or scipy.sparse matrix.

    Returns
    -------
    (m, 2n) array of the same kind (CSR when ``X`` is sparse), column ``2i`` is ``x_i`` and
    column ``2i + 1`` is ``-x_i`` (0-based).
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
    """Ternary weights ``c_i = c'_{2i-1} - c'_{2i}`` (section 2) from doubled weights, shape (2n,) -> (n,)."""
    c_doubled = np.asarray(c_doubled, dtype=float)
    if c_doubled.ndim != 1 or c_doubled.size % 2:
        raise ValueError(f"doubled weights must be a 1-D vector of even length, got shape {c_doubled.shape}")
    return c_doubled[0::2] - c_doubled[1::2]


def binary_from_ternary(c: np.ndarray) -> np.ndarray:
    """Doubled weights ``c' = (max(c_1,0), max(-c_1,0), ...)`` with ``ternary_from_binary(c') == c``.

    Works for any real ``c`` (then ``c'`` is the split into positive and negative parts, the
    point of the doubled box ``[0,1]^{2n}`` with the smallest l1 norm that maps to ``c``).
    """
    c = np.asarray(c, dtype=float)
    out = np.empty(2 * c.size)
    out[0::2] = np.maximum(c, 0.0)
    out[1::2] = np.maximum(-c, 0.0)
    return out


# --------------------------------------------------------------------------- loss (section 2)
def hinge_losses(w: np.ndarray, X, y: np.ndarray, *, gamma: float, intercept: float = 0.0) -> np.ndarray:
    """Per-sample hinge losses ``(1/gamma) max(0, gamma - y_t(<w, x_t> + b))`` (section 2), shape (m,).

    ``b = -r`` is the intercept (minus the threshold). ``X`` dense or sparse, ``w`` shape (d,).
    """
    score = np.asarray(X @ np.asarray(w, dtype=float)).ravel() + float(intercept)
    return np.maximum(0.0, gamma - np.asarray(y, dtype=float) * score) / gamma


def cumulative_hinge_loss(w: np.ndarray, X, y: np.ndarray, *, gamma: float, intercept: float = 0.0,
                          sample_weight: np.ndarray | None = None) -> float:
    """Cumulative loss ``L_gamma(w; S) = sum_t s_t ell_gamma(w; x_t, y_t)`` (section 2)."""
    losses = hinge_losses(w, X, y, gamma=gamma, intercept=intercept)
    return float(losses.sum() if sample_weight is None else losses @ np.asarray(sample_weight, dtype=float))


# --------------------------------------------------------------------------- validation
def check_training_set(X, y, sample_weight=None) -> tuple[object, np.ndarray, np.ndarray]:
    """Validate ``X`` (dense or sparse, finite, 2-D), ``y`` in {-1,+1} and non-negative weights.

    Returns ``(X, y, s)`` with ``X`` a float ndarray or CSR matrix, ``y`` float (m,), ``s`` (m,).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float)
        values = X.data
    else:
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("X must be a numeric array or a scipy.sparse matrix") from None
        values = X
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D matrix (m samples, n features), got shape {X.shape}")
    if not np.isfinite(values).all():
        raise ValueError("X contains NaN or inf; impute or drop those entries first")
    y = np.asarray(y, dtype=float).ravel()
    if y.shape != (X.shape[0],):
        raise ValueError(f"y has {y.shape[0]} labels but X has {X.shape[0]} rows; they must match")
    if not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("y must hold labels in {-1, +1}; map 0/1 labels with y = 2 * y - 1")
    if sample_weight is None:
        s = np.ones(X.shape[0])
    else:
        s = np.asarray(sample_weight, dtype=float).ravel()
        if s.shape != y.shape or not np.isfinite(s).all() or (s < 0).any() or s.sum() <= 0:
            raise ValueError(f"sample_weight must be {y.shape[0]} finite non-negative numbers, not all zero")
    return X, y, s


# --------------------------------------------------------------------------- builder
@dataclass(frozen=True)
class ConvexRounding:
    """Builder of the convex-rounding LP / ILP (Figure 1) and its sparse variant (section 3.2).

    Parameters
    ----------
    gamma : margin ``gamma > 0`` of the hinge loss (units of the score ``<c, x>``).
    weights : ``"ternary"`` (class ``C_0[-1,0,+1]`` through the doubling of section 2; the
        program's weight block has ``2n`` binary entries) or ``"binary"`` (class ``C_r[0,1]``).
    threshold : ``r`` of ``sgn(<c, x> - r)``; a float fixes it (the paper's classes; ``0`` for
        the ternary class), ``None`` makes the intercept ``b = -r`` a free continuous variable.
    sparsity : ``k`` of the sparse variant, ``||w||_1 <= k`` (None: no budget). For ternary
        weights the budget applies to the doubled vector, which bounds ``||c||_1`` (section 2).

    Variable blocks of the programs: ``"w"`` (d weights in [0,1], integer in ``exact``),
    ``"intercept"`` (1; fixed to ``-r`` unless ``threshold is None``), ``"hinge"`` (m slacks
    ``xi_t = gamma * ell_gamma``). Row blocks: ``"hinge_rows"`` and, with ``sparsity``,
    ``"sparsity"``. Objective: ``L_gamma(w; S)`` (cumulative, not averaged).
    """

    gamma: float = 1.0
    weights: str = "ternary"
    threshold: float | None = 0.0
    sparsity: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.gamma, (int, float, np.number)) and np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma must be a finite number > 0 (the hinge margin), got {self.gamma!r}")
        if self.weights not in WEIGHT_KINDS:
            raise ValueError(f"weights must be one of {WEIGHT_KINDS}, got {self.weights!r}")
        if self.threshold is not None and not np.isfinite(self.threshold):
            raise ValueError(f"threshold must be a finite number or None (learned), got {self.threshold!r}")
        if self.sparsity is not None and not (np.isfinite(self.sparsity) and self.sparsity >= 0):
            raise ValueError(f"sparsity must be None or a number k >= 0 (the l1 budget), got {self.sparsity!r}")

    # ----------------------------------------------------------------- design
    def design(self, X):
        """The matrix the program's weights act on: ``X`` (binary) or its doubling (ternary)."""
        return double_features(X) if self.weights == "ternary" else X

    # --------------------------------------------------------------- programs
    def exact(self, X, y: np.ndarray, sample_weight: np.ndarray | None = None) -> Program:
        """Binary ILP ``min L_gamma(c; S) s.t. c in {0,1}^d`` (``+ sum c <= k`` if sparse).

        Parameters
        ----------
        X : (m, n) array or scipy.sparse matrix of features; y : (m,) labels in {-1,+1};
        sample_weight : (m,) non-negative weights ``s_t`` (ones by default).
        """
        X, y, s = check_training_set(X, y, sample_weight)
        Xd = self.design(X)
        d = Xd.shape[1]
        b = ProgramBuilder()
        b.add_variables("w", d, lb=0.0, ub=1.0, integer=True)
        if self.threshold is None:
            b.add_variables("intercept", 1)
        else:
            b.add_variables("intercept", 1, lb=-float(self.threshold), ub=-float(self.threshold))
        add_hinge(b, Xd, y, weights="w", intercept="intercept", margin=float(self.gamma),
                  sample_weight=s, name="hinge", scale=1.0 / float(self.gamma))
        if self.sparsity is not None:
            b.add_rows("sparsity", {"w": sp.csr_matrix(np.ones((1, d)))}, ub=float(self.sparsity))
        return b.build()

    def relaxed(self, X, y: np.ndarray, sample_weight: np.ndarray | None = None) -> Program:
        """LP of Figure 1 step (1): the exact program over ``conv`` of the class (section 3.1 / 3.2)."""
        return self.exact(X, y, sample_weight).relax()

    # ---------------------------------------------------------- decode / lift
    def decode(self, x: np.ndarray, program: Program) -> tuple[np.ndarray, float]:
        """Weights and intercept from a solution ``x`` of :meth:`exact` / :meth:`relaxed`.

        Returns ``(coef, intercept)``: ``coef`` has shape (n,) in the units of ``X`` (ternary:
        ``c'_{2i-1} - c'_{2i}``, in [-1, 1] for a relaxed solution) and ``intercept = -r``.
        """
        x = np.asarray(x, dtype=float)
        if x.shape != (program.n_variables,):
            raise ValueError(f"x has shape {x.shape}; the program has {program.n_variables} variables")
        w = program.block(x, "w")
        coef = ternary_from_binary(w) if self.weights == "ternary" else w.copy()
        return coef, float(program.block(x, "intercept")[0])

    def lift(self, coef: np.ndarray, X, y: np.ndarray, intercept: float | None = None) -> np.ndarray:
        """Full variable vector of :meth:`exact` for weights ``coef`` (shape (n,), units of ``X``).

        Ternary weights are split with :func:`binary_from_ternary`; the slacks are the smallest
        feasible ones, ``xi_t = max(0, gamma - y_t(<c, x_t> + b))``. ``intercept`` defaults to
        ``-threshold`` (required when the threshold is learned).
        """
        X, y, _ = check_training_set(X, y)
        coef = np.asarray(coef, dtype=float)
        if coef.shape != (X.shape[1],):
            raise ValueError(f"coef has shape {coef.shape}; X has {X.shape[1]} features")
        if intercept is None:
            if self.threshold is None:
                raise ValueError("intercept is required when the threshold is learned (threshold=None)")
            intercept = -float(self.threshold)
        w = binary_from_ternary(coef) if self.weights == "ternary" else coef
        xi = self.gamma * hinge_losses(coef, X, y, gamma=self.gamma, intercept=intercept)
        return np.concatenate([w, [float(intercept)], xi])
