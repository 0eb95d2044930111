"""Logistic regression with the weighted binarsity penalty: a warm-started, certified path.

The estimator of the binarsity slides (Alaya 2018, "Generalized linear models" and "Proximal
algorithm of weighted binarsity"): on an ordered one-hot design :math:`X^B` (n, d) whose raw
column ``j`` owns the contiguous block of :math:`d_j` bins,

.. math::

    \\min_{\\theta, b}\\; \\frac1n\\sum_{i=1}^n \\log\\big(1 + e^{-y_i(x_i^{B\\top}\\theta + b)}\\big)
        + s \\sum_j \\Big(\\sum_{k=2}^{d_j} \\hat\\omega_{j,k}|\\theta_{j,k} - \\theta_{j,k-1}|
        + \\delta(\\mathbf 1^\\top\\theta_{j,\\bullet} = 0)\\Big)

with the slides' data-driven weights :math:`\\hat\\omega_{j,k} = \\sqrt{\\log(d)\\,\\hat\\pi_{j,k}/n}`
(:meth:`formulations.penalties.Binarsity.from_data`) and the strength ``s`` (the constant of the
slides' :math:`\\mathcal O(\\cdot)`). The intercept ``b`` is not penalised.

:func:`binarsity_logistic_path` solves a decreasing geometric grid of strengths from
:math:`s_{max}` (the smallest strength at which :math:`\\theta = 0` is optimal, closed form:
:meth:`~formulations.penalties.Binarsity.zero_gauge` of the gradient at 0) down to the strength
asked, each point by FISTA (:func:`solvers.proximal.gradient.proximal_gradient`) warm-started
from the previous one. Each point carries a duality-gap certificate: the dual candidate
:math:`\\theta_{dual}` built from the gradient, rescaled into the dual feasible set
:math:`X^\\top\\theta_{dual} \\in s\\,\\partial\\operatorname{bina}(0)` (the conjugate of a positively
homogeneous penalty is the indicator of that set), gives a proven lower bound
(:func:`solvers.proximal.common.duality_gap`); a point is ``OPTIMAL`` when the relative gap is at
most ``tol``.

The design may be a dense array or a scipy.sparse matrix (CSR / CSC, converted once to CSR
float64 without densifying); the loss touches it only through ``X @ w`` and ``X.T @ r``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from formulations.losses import Logistic
from formulations.penalties import Binarsity
from solvers.proximal.path import PathPoint, lambda_max, regularisation_path

#: defaults of the path: relative duality gap per point, FISTA iterations per point
PATH_TOL = 1e-7
PATH_MAX_ITER = 20000


def strength_grid(s_max: float, strength: float, n_strengths: int) -> np.ndarray:
    """Decreasing geometric grid ``s_max .. strength`` of ``n_strengths`` points (one point,
    ``strength``, when ``strength >= s_max``: the null model is then optimal at once)."""
    if not (strength > 0 and math.isfinite(strength)):
        raise ValueError(f"strength must be positive and finite, got {strength!r}")
    if int(n_strengths) < 1:
        raise ValueError(f"n_strengths must be >= 1, got {n_strengths!r}")
    if not (s_max > strength) or int(n_strengths) == 1:
        return np.array([float(strength)])
    return np.geomspace(s_max, strength, int(n_strengths))


def binarsity_logistic_path(X_onehot: Any, y: Any, block_sizes: Any, *, strength: float = 1.0,
                            n_strengths: int = 10, tol: float = PATH_TOL, max_iter: int = PATH_MAX_ITER,
                            blas_threads: int | None = 1) -> tuple[list[PathPoint], Binarsity]:
    """Binarsity logistic regression along a warm-started path ending at ``strength``.

    Parameters
    ----------
    X_onehot : (n, d) ordered one-hot design (dense or scipy.sparse), blocks of ``block_sizes``.
    y : (n,) labels in {-1, +1} (or {0, 1}).
    block_sizes : the :math:`d_j` (sum = d), in column order.
    strength : the last (smallest) strength of the path, in units of the data-driven weights.
    n_strengths : points of the grid from :math:`s_{max}` down to ``strength``.
    tol : relative duality gap at which a point is certified optimal.
    max_iter : FISTA iteration budget per point (exhausted: that point is ``FEASIBLE``).
    blas_threads : BLAS thread cap inside the iterations.

    Returns
    -------
    (points, base) : one :class:`~solvers.proximal.path.PathPoint` per strength (``lam`` is the
    strength, ``result.gap`` the certified relative gap, ``result.bound`` the dual bound) in
    decreasing strength order, and the unit-strength penalty ``base`` (``base.scaled(s)`` is the
    penalty of strength ``s``).
    """
    return binarsity_path(Logistic(X_onehot, y), block_sizes, strength=strength, n_strengths=n_strengths, tol=tol,
                          max_iter=max_iter, blas_threads=blas_threads)


def binarsity_path(loss: Any, block_sizes: Any, *, strength: float = 1.0, n_strengths: int = 10,
                   tol: float = PATH_TOL, max_iter: int = PATH_MAX_ITER,
                   blas_threads: int | None = 1) -> tuple[list[PathPoint], Binarsity]:
    """:func:`binarsity_logistic_path` for a loss already bound to its design: a
    :class:`formulations.losses.Logistic` or a :class:`solvers.proximal.distributed.DaskLogistic`
    (the weights need only its ``column_sums`` and ``n``)."""
    base = Binarsity.from_column_sums(loss.column_sums, loss.n, block_sizes)
    grid = strength_grid(lambda_max(loss, base.scaled), float(strength), n_strengths)
    points = regularisation_path(loss, base.scaled, grid, working_set=False, tol=tol, max_iter=max_iter,
                                 blas_threads=blas_threads)
    return points, base


def block_support(coef: np.ndarray, block_sizes: Any, tol: float = 1e-9) -> np.ndarray:
    """(n_blocks,) bool: the raw columns whose block of points is not constant (the ones a
    prediction depends on; a sum-to-zero block is constant only when it is 0)."""
    sizes = np.asarray(block_sizes, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])[:-1]
    coef = np.asarray(coef, dtype=np.float64)
    if coef.size == 0:
        return np.zeros(sizes.size, dtype=bool)
    spread = np.maximum.reduceat(coef, starts) - np.minimum.reduceat(coef, starts)
    return spread > tol
