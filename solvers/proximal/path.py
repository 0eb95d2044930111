"""Warm-started regularisation paths, the Facets (lambda, gamma) grid, and MILP warm starts.

* :func:`regularisation_path`: a decreasing grid :math:`\\lambda_1 = \\lambda_{max} > \\dots >
  \\lambda_{max}\\cdot\\text{ratio}` (geometric), each point solved by :func:`solvers.proximal.gradient.fista`
  (or ISTA) from the previous solution. :math:`\\lambda_{max}` is computed in closed form: 0 is
  optimal for :math:`f + \\lambda\\Omega_1` iff :math:`\\Omega_1^\\circ(-\\nabla f(0, b_0)) \\le \\lambda`,
  with :math:`\\Omega_1^\\circ` the gauge of :math:`\\partial\\Omega_1(0)` (the dual norm for norms,
  :math:`\\mu\\|\\cdot\\|_\\infty` for Facets) and :math:`b_0` the best intercept of the null model.
* :func:`facets_path`: the (lambda, gamma) grid of the Facets paper, section 6, parametrised by
  :math:`\\alpha = \\lambda/\\gamma` (size) and :math:`\\beta = \\lambda/\\gamma^2` (shape), i.e.
  :math:`\\gamma = \\alpha/\\beta`, :math:`\\lambda = \\alpha^2/\\beta`, penalty
  :math:`\\lambda\\Omega(w/\\gamma)` (eq. 9) with :math:`\\Omega` = Facets or SCF_eps.
* Each :class:`PathPoint` records coefficients, intercept, objective, sparsity, integrity and
  magnitude (definitions on the class), and the solver :class:`~solvers.result.Result`.
* :func:`warm_start_from_path`: round a path point onto the integer grid and lift it into a
  Program's variable vector for ``solve_highs(program, warm_start=x)`` (HiGHS ``setSolution``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from formulations.penalties import Facets, Penalty, StronglyConvexFacets
from solvers.proximal.gradient import proximal_gradient, working_set_solve
from solvers.result import Result

PenaltyFamily = Callable[[float], Penalty]


@dataclass(frozen=True)
class PathPoint:
    """One solved point of a path.

    Attributes
    ----------
    lam, gamma : penalty strength and grid unit (gamma = 1 outside Facets paths).
    coef : (p,) coefficients; intercept : unpenalised intercept.
    objective : loss + penalty at ``coef``.
    sparsity : share of coefficients exactly 0.
    integrity : share of coefficients with ``coef / gamma`` within ``1e-6`` of an integer
        (Facets paper, section 4.3).
    magnitude : :math:`\\max_j |coef_j| / \\gamma` (the largest number of points on the card).
    result : the solver's :class:`Result` (status, criterion, iterations, time).
    """

    lam: float
    gamma: float
    coef: np.ndarray
    intercept: float
    objective: float
    sparsity: float
    integrity: float
    magnitude: float
    result: Result


def _point(lam: float, gamma: float, result: Result, integrity_tol: float = 1e-6) -> PathPoint:
    w = result.x
    scaled = w / gamma
    p = max(w.size, 1)
    return PathPoint(lam=float(lam), gamma=float(gamma), coef=w, intercept=result.raw["intercept"],
                     objective=result.objective, sparsity=float(np.sum(w == 0.0)) / p,
                     integrity=float(np.sum(np.abs(scaled - np.round(scaled)) <= integrity_tol)) / p,
                     magnitude=float(np.abs(scaled).max(initial=0.0)), result=result)


def lambda_max(loss: Any, family: PenaltyFamily) -> float:
    """Smallest :math:`\\lambda` for which ``coef = 0`` is optimal, for ``family(lam) = lam * Omega_1``.

    :math:`\\lambda_{max} = \\Omega_1^\\circ(-\\nabla_w f(0, b_0))` with ``Omega_1 = family(1.0)``.
    Requires ``family`` to be linear in ``lam`` (true for L1, elastic net at fixed ratio,
    weighted L1 times lam, OWL times lam, Facets / SCF at fixed grid unit, EYE, naive q).
    """
    b0 = loss.intercept_at_zero() if loss.has_intercept_variable else 0.0
    g, _ = loss.gradient(np.zeros(loss.p), b0)
    return float(family(1.0).zero_gauge(-g))


def lambda_grid(lam_max: float, n_lambdas: int = 50, ratio: float = 1e-3) -> np.ndarray:
    """Geometric grid from ``lam_max`` down to ``ratio * lam_max`` (``n_lambdas`` points)."""
    if not (lam_max > 0 and math.isfinite(lam_max)):
        raise ValueError(f"lam_max must be positive and finite, got {lam_max!r}; "
                         "the null model is optimal for every lambda or the penalty has no zero threshold")
    if int(n_lambdas) < 1 or not (0 < ratio <= 1):
        raise ValueError("n_lambdas must be >= 1 and ratio in (0, 1]")
    return lam_max * np.logspace(0.0, np.log10(ratio), int(n_lambdas))


def _solve(loss: Any, penalty: Penalty, w0, b0, working_set: bool, options: dict) -> Result:
    if working_set:
        return working_set_solve(loss, penalty, w0=w0, b0=b0, **options)
    return proximal_gradient(loss, penalty, w0=w0, b0=b0, **options)


def regularisation_path(loss: Any, family: PenaltyFamily, lambdas: Any = None, *, n_lambdas: int = 50,
                        ratio: float = 1e-3, gamma: float = 1.0, working_set: bool = True,
                        **solver_options: Any) -> list[PathPoint]:
    """Solve ``loss + family(lam)`` along a decreasing grid of ``lam`` with warm starts.

    Parameters
    ----------
    loss : a loss of :mod:`formulations.losses`.
    family : ``lam -> Penalty`` (e.g. ``L1``, ``lambda lam: ElasticNet(lam, 0.5)``,
        ``lambda lam: Facets(lam, mu=2.0)``).
    lambdas : explicit grid (sorted decreasingly here); default :func:`lambda_grid` from
        :func:`lambda_max`.
    gamma : grid unit used for the integrity / magnitude records.
    working_set : solve each point by :func:`solvers.proximal.gradient.working_set_solve` (growing set of
        coordinates, certified on all) when the penalty is separable; else plain FISTA/ISTA.
    solver_options : passed to :func:`solvers.proximal.gradient.proximal_gradient` (``accelerated``,
        ``tol``, ``max_iter``, ...).
    """
    if lambdas is None:
        lambdas = lambda_grid(lambda_max(loss, family), n_lambdas, ratio)
    grid = np.sort(np.asarray(lambdas, dtype=np.float64).reshape(-1))[::-1]
    if grid.size == 0 or np.any(grid < 0) or not np.all(np.isfinite(grid)):
        raise ValueError("lambdas must be a non-empty array of non-negative finite values")
    points: list[PathPoint] = []
    w, b = None, None
    for lam in grid:
        result = _solve(loss, family(float(lam)), w, b, working_set, solver_options)
        w, b = result.x, result.raw["intercept"]
        points.append(_point(lam, gamma, result))
    return points


def facets_path(loss: Any, alphas: Any, betas: Any, *, eps: float | None = None, working_set: bool = True,
                **solver_options: Any) -> list[PathPoint]:
    """Facets (or SCF_eps when ``eps`` is given) over the (alpha, beta) grid of section 6.

    For each shape ``beta`` the sizes ``alpha`` are visited decreasingly (weaker penalty last),
    warm-starting each solve from the previous one of the same shape after rescaling to the new
    grid unit (``w * gamma_new / gamma_old`` keeps ``w / gamma`` fixed). Returns points in
    (beta, decreasing alpha) order; point ``k`` has ``lam = alpha^2 / beta`` and
    ``gamma = alpha / beta``. ``working_set`` and ``solver_options`` as in
    :func:`regularisation_path` (pass ``accelerated=False`` for ISTA).
    """
    alphas = np.sort(np.asarray(alphas, dtype=np.float64).reshape(-1))[::-1]
    betas = np.asarray(betas, dtype=np.float64).reshape(-1)
    if alphas.size == 0 or betas.size == 0 or np.any(alphas <= 0) or np.any(betas <= 0):
        raise ValueError("alphas and betas must be non-empty arrays of positive values")
    points: list[PathPoint] = []
    for beta in betas:
        w, b, prev_gamma = None, None, None
        for alpha in alphas:
            gamma, lam = alpha / beta, alpha * alpha / beta
            pen = Facets(lam, mu=gamma) if eps is None else StronglyConvexFacets(lam, mu=gamma, eps=eps)
            w0 = None if w is None else w * (gamma / prev_gamma)
            result = _solve(loss, pen, w0, b, working_set, solver_options)
            w, b, prev_gamma = result.x, result.raw["intercept"], gamma
            points.append(_point(lam, gamma, result))
    return points


def warm_start_from_path(point: PathPoint, lift: Any, gamma: float | None = None,
                         *, round_intercept: bool = True) -> np.ndarray:
    """Round a path point to integers on the grid ``gamma`` and lift it into a Program vector.

    ``w_int = round(coef / gamma)``, ``b_int = round(intercept / gamma)`` (or ``intercept /
    gamma`` unrounded when ``round_intercept`` is False), then ``x = lift(w_int, b_int)``:
    ``lift`` is a builder whose ``lift(coef, intercept)`` returns the variable vector, or any
    such callable (bind extra arguments of other builders with ``functools.partial``).
    The returned full vector is what ``solve_highs(program, warm_start=x)`` passes to HiGHS'
    ``setSolution``; check it with ``program.violations(x)``.
    """
    g = point.gamma if gamma is None else float(gamma)
    if not (g > 0 and math.isfinite(g)):
        raise ValueError(f"gamma must be positive and finite, got {gamma!r}")
    lift = getattr(lift, "lift", lift)
    if not callable(lift):
        raise TypeError("lift must be a builder with a lift(coef, intercept) method or such a callable")
    w_int = np.round(point.coef / g)
    b = point.intercept / g
    x = lift(w_int, float(np.round(b)) if round_intercept else float(b))
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"lift must return a 1-D variable vector, got shape {x.shape}")
    return x
