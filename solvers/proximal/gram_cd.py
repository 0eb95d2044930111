"""Working-set coordinate descent on the Gram form of least squares (L1 / weighted L1 / elastic net).

Minimise :math:`\\frac12 w^\\top G w - c^\\top w + \\frac{1}{2n}\\|y_c\\|^2 + \\sum_j\\tau_j|w_j| +
\\frac12\\sum_j\\kappa_jw_j^2` with :math:`G = X_c^\\top X_c/n`, :math:`c = X_c^\\top y_c/n`
(:class:`formulations.losses.LeastSquares` with ``gram=True``; the intercept is profiled out).

* **Coordinate descent** (Friedman, Hastie & Tibshirani, J. Stat. Softw. 2010, "covariance
  updates"): with :math:`g = Gw` kept for every coordinate, the exact minimiser along ``j`` is
  :math:`\\operatorname{ST}(G_{jj}w_j - (g_j - c_j), \\tau_j)/(G_{jj} + \\kappa_j)`; a move
  :math:`\\Delta` adds :math:`\\Delta G_{:,j}` to ``g`` (O(p), no pass over the samples). Passes
  cycle over the non-zeros once a full pass has been made (active-set cycling), with a full
  pass to confirm.
* **Working sets** and **certificate** as in :mod:`solvers.proximal.prox_newton`: the full gradient
  :math:`g - c` is free, so each outer round evaluates the relative duality gap
  (:func:`solvers.proximal.gradient.duality_gap`, a proven bound) on all coordinates and picks the next set
  from the largest violations of the optimality conditions.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numba
import numpy as np

from formulations.penalties import Penalty
from solvers.proximal.prox_newton import INNER_SHARE, l1_l2_split, violations
from solvers.proximal.common import _check_options, duality_gap
from solvers.result import Result, Status


def supports_gram_cd(loss: Any, penalty: Penalty) -> bool:
    """True for least squares in its Gram form with an L1, weighted L1 or elastic-net penalty."""
    return bool(getattr(loss, "gram", False)) and hasattr(loss, "G") and l1_l2_split(penalty, loss.p) is not None


@numba.njit(cache=True, nogil=True, fastmath=True)
def _gram_epochs(G, c, cols, w, g, tau, kappa, max_epochs, tol):
    """Coordinate descent on ``cols``; ``w`` and ``g = G w`` updated in place. Returns the epochs."""
    p = G.shape[0]
    full = True
    epochs = 0
    for epoch in range(max_epochs):
        epochs = epoch + 1
        largest = 0.0
        for k in range(cols.size):
            j = cols[k]
            old = w[j]
            if not full and old == 0.0:
                continue
            curv = G[j, j] + kappa[j]
            if curv <= 0.0:
                continue
            a = G[j, j] * old - (g[j] - c[j])
            new = 0.0
            if a > tau[j]:
                new = (a - tau[j]) / curv
            elif a < -tau[j]:
                new = (a + tau[j]) / curv
            step = new - old
            if step != 0.0:
                w[j] = new
                for i in range(p):  # G is symmetric: row j, read contiguously, is column j
                    g[i] += step * G[j, i]
                move = curv * abs(step)
                if move > largest:
                    largest = move
        if largest <= tol:
            if full:
                break
            full = True
        else:
            full = False
    return epochs


def gram_coordinate_descent(loss: Any, penalty: Penalty, *, w0: np.ndarray | None = None, b0: float | None = None,
                            tol: float = 1e-8, max_outer: int = 50, max_epochs: int = 200, min_size: int = 10,
                            **_ignored: Any) -> Result:
    """Minimise the Gram-form least squares plus ``penalty`` (module docstring); a :class:`Result`.

    ``tol`` is the target of the relative duality gap, checked on all coordinates; ``max_outer``
    working-set rounds of at most ``max_epochs`` passes each. A round that uses all its passes ends
    the solve as ``FEASIBLE`` (coordinate descent crawls on ill-conditioned designs, where a
    first-order method does better: :func:`solvers.proximal.gradient.working_set_solve` then continues with
    FISTA from this point). ``b0`` and the first-order solvers' options are ignored (the intercept
    is profiled out: ``raw["intercept"]`` is its optimum).
    """
    _check_options(tol, max_outer, 1)
    if not supports_gram_cd(loss, penalty):
        raise ValueError(f"gram_coordinate_descent needs LeastSquares(gram=True) and an L1, weighted L1 or "
                         f"elastic-net penalty; got {type(loss).__name__} and {type(penalty).__name__}")
    start = time.perf_counter()
    tau, kappa = l1_l2_split(penalty, loss.p)
    G, c, p = loss.G, loss.Xty, loss.p
    w = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64).reshape(-1)
    if w.shape != (p,) or not np.all(np.isfinite(w)):
        raise ValueError(f"w0 must be a finite vector of shape ({p},), got shape {w.shape}")
    g = loss.state(w)
    ws = np.zeros(0, dtype=np.intp)
    status, criterion, dual, epochs = Status.FEASIBLE, math.inf, math.nan, 0
    history: list[tuple[int, float]] = []
    for _ in range(max_outer):
        value = loss.value_state(w, 0.0, g)
        grad = g - c
        primal = value + float(tau @ np.abs(w)) + 0.5 * float(kappa @ (w * w))
        dual, gap = duality_gap(loss, penalty, w, 0.0, g, value, grad, primal)
        criterion = max(gap, 0.0) / max(abs(primal), 1e-12) if math.isfinite(gap) else math.inf
        history.append((epochs, criterion))
        if criterion <= tol:
            status = Status.OPTIMAL
            break
        viol = violations(w, grad, tau, kappa)
        scores = np.where(w != 0.0, np.inf, viol)
        size = min(p, max(min_size, 2 * int(np.count_nonzero(w))))
        previous = ws
        ws = np.arange(p) if size >= p else np.sort(np.argpartition(-scores, size - 1)[:size])
        if np.array_equal(ws, previous):  # the same set again did not certify: grow it
            size = min(p, 2 * ws.size)
            ws = np.arange(p) if size >= p else np.sort(np.argpartition(-scores, size - 1)[:size])
        target = INNER_SHARE * float(viol.max(initial=0.0))
        spent = _gram_epochs(G, c, ws, w, g, tau, kappa, max_epochs, target)
        epochs += spent
        if spent >= max_epochs:
            break  # ill-conditioned (e.g. equicorrelated columns): coordinate descent crawls; report FEASIBLE
    primal = loss.value_state(w, 0.0, g) + float(tau @ np.abs(w)) + 0.5 * float(kappa @ (w * w))
    return Result(status=status, x=w, objective=primal, bound=dual if math.isfinite(dual) else math.nan,
                  gap=criterion if math.isfinite(criterion) else math.nan,
                  solve_time=time.perf_counter() - start, iterations=epochs, backend="gram_cd",
                  message=f"relative_duality_gap = {criterion:.3g} (tol {tol:.3g}) after {epochs} epochs, "
                          f"working set {ws.size}/{p}",
                  raw={"criterion": criterion, "criterion_name": "relative_duality_gap",
                       "intercept": float(loss.intercept(w)), "working_set_size": int(ws.size),
                       "lipschitz": math.nan, "restarts": 0, "history": history})
