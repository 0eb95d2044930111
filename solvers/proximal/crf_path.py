"""The regularisation path of the elastic-net CRF over ``rho1``, warm-started.

From ``rho1_max = ||grad l(0)||_inf`` (the least ``rho1`` at which ``theta = 0`` is optimal: the
subgradient condition ``|g_k| <= rho1`` holds for every ``k``) down a geometric grid, each problem
started from the previous solution (Friedman, Hastie & Tibshirani 2010, section 2.5). Every point
is solved by ``crf_bcd.solve_bcd`` or ``crf_fista.solve_fista`` with their KKT stopping rule
(``max_k kkt_k <= tol * rho1_max``), so the tolerance is the same at every point.
"""
from __future__ import annotations

import time

import numpy as np

from solvers.proximal.crf_bcd import solve_bcd
from solvers.proximal.crf_fista import solve_fista
from solvers.proximal.crf_problem import rho1_max

SOLVERS = {"bcd": solve_bcd, "fista": solve_fista}


def rho1_grid(data, n_rho=10, ratio=0.01) -> np.ndarray:
    """``n_rho`` values of ``rho1`` from ``rho1_max`` down to ``ratio * rho1_max``, geometric."""
    if n_rho < 1 or not 0 < ratio <= 1:
        raise ValueError(f"n_rho must be >= 1 and 0 < ratio <= 1, got n_rho={n_rho}, ratio={ratio}")
    return rho1_max(data) * np.geomspace(1.0, ratio, n_rho)


def crf_path(data, rho2, rho1s=None, n_rho=10, ratio=0.01, solver="bcd", tol=1e-6, max_iter=200, time_limit=None,
             **options):
    """Fits along ``rho1s`` (decreasing; default :func:`rho1_grid`), warm-started; a list of
    :class:`~solvers.proximal.crf_problem.CRFFit`. ``time_limit`` (seconds) covers the whole path;
    points not reached are left out."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {sorted(SOLVERS)}, got {solver!r}")
    rho1s = rho1_grid(data, n_rho, ratio) if rho1s is None else np.sort(np.asarray(rho1s, dtype=float))[::-1]
    scale = rho1_max(data)
    clock = time.perf_counter()
    theta, fits = None, []
    for rho1 in rho1s:
        left = None if time_limit is None else time_limit - (time.perf_counter() - clock)
        if left is not None and left <= 0:
            break
        fit = SOLVERS[solver](data, rho1, rho2, theta=theta, max_iter=max_iter, tol=tol, time_limit=left,
                              scale=scale, **options)
        fits.append(fit)
        theta = fit.theta
    return fits
