"""Proximal gradient methods: FISTA (backtracking, adaptive restart) and ISTA (Facets paper, sec. 5).

Minimise :math:`f(w, b) + \\Omega(w)` with ``f`` a smooth loss of :mod:`formulations.losses`
(intercept ``b`` unpenalised) and :math:`\\Omega` a penalty of :mod:`formulations.penalties`.

* ISTA (eqs. 10-11): :math:`w^{t+1} = \\operatorname{prox}_{\\tau\\Omega}(w^t - \\tau\\nabla f(w^t))`.
* FISTA (Beck & Teboulle 2009) with the gradient-based adaptive restart of O'Donoghue & Candes
  (2015): momentum is reset when :math:`\\langle y^k - w^{k+1}, w^{k+1} - w^k\\rangle > 0`.
  The Facets paper warns that acceleration may hurt integrity; both are exposed.
* Step :math:`\\tau = 1/L`, starting from the loss' Lipschitz constant and doubled by
  backtracking while the quadratic upper bound fails (so an underestimated L is safe).

Stopping is certified, never an iteration count alone. Where a Fenchel dual is available
(least squares / logistic with L1, weighted L1, OWL, elastic net) the criterion is the relative
duality gap :math:`(P(w) - D(\\theta))/|P(w)|` with :math:`\\theta` the rescaled dual candidate;
``bound`` of the :class:`~solvers.result.Result` is then :math:`D(\\theta)`, a proven lower bound.
Otherwise the criterion is the norm of the prox-gradient mapping
:math:`\\|(x - \\operatorname{prox}_{\\Omega/L}(x - \\nabla f(x)/L))L\\|_2` divided by
:math:`\\max(1, \\|\\nabla f(0)\\|_2)`; it is zero exactly at minimisers.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from formulations.penalties import OWL, L1, ElasticNet, Penalty, WeightedL1
from solvers.result import Result, Status

_NORM_PENALTIES = (L1, WeightedL1, OWL)


def fista(loss: Any, penalty: Penalty, **options: Any) -> Result:
    """FISTA with backtracking and adaptive restart; see :func:`proximal_gradient` for options."""
    return proximal_gradient(loss, penalty, accelerated=True, **options)


def ista(loss: Any, penalty: Penalty, **options: Any) -> Result:
    """ISTA (plain proximal gradient, eqs. 10-11) with backtracking; see :func:`proximal_gradient`."""
    return proximal_gradient(loss, penalty, accelerated=False, **options)


def _check_options(tol: float, max_iter: int, check_every: int) -> None:
    if not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be positive and finite, got {tol!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    if int(check_every) < 1:
        raise ValueError(f"check_every must be >= 1, got {check_every!r}")


def duality_gap(loss: Any, penalty: Penalty, w: np.ndarray, b: float, state: np.ndarray,
                primal: float) -> tuple[float, float]:
    """Dual objective and absolute duality gap at ``w`` (``(nan, nan)`` when no dual is available).

    Dual candidate :math:`\\theta = -\\nabla_z F(Xw + b)` (centred with an intercept), rescaled by
    :math:`\\min(1, 1/\\Omega^\\circ(X^\\top\\theta))` for norm penalties; for the elastic net
    :math:`D = -F^*(-\\theta) - \\Omega^*(X^\\top\\theta)`.
    """
    if not hasattr(loss, "dual_point"):
        return math.nan, math.nan
    if isinstance(penalty, _NORM_PENALTIES):
        xt_theta, loss_dual = loss.dual_point(w, b, state)
        gauge = penalty.zero_gauge(xt_theta)
        if not math.isfinite(gauge):  # unpenalised coordinates with a non-zero gradient
            return math.nan, math.nan
        alpha = 1.0 if gauge <= 1.0 else 1.0 / gauge
        dual = loss_dual(alpha)
    elif isinstance(penalty, ElasticNet) and penalty.l1_ratio < 1.0:
        xt_theta, loss_dual = loss.dual_point(w, b, state)
        dual = loss_dual(1.0) - penalty.conjugate(xt_theta)
    else:
        return math.nan, math.nan
    if not math.isfinite(dual):
        return math.nan, math.nan
    return dual, primal - dual


def proximal_gradient(loss: Any, penalty: Penalty, *, w0: np.ndarray | None = None, b0: float | None = None,
                      accelerated: bool = True, restart: bool = True, tol: float = 1e-8,
                      max_iter: int = 10000, check_every: int = 10, blas_threads: int | None = 1) -> Result:
    """Minimise ``loss + penalty`` by (accelerated) proximal gradient; returns a :class:`Result`.

    Parameters
    ----------
    loss : a loss of :mod:`formulations.losses` (bound to X (n, p) and y (n,)).
    penalty : a :class:`~formulations.penalties.Penalty` on the p coefficients.
    w0, b0 : warm start (coefficients (p,), intercept); default zeros and the best constant.
    accelerated : FISTA (True) or ISTA (False). restart : adaptive restart of the momentum.
    tol : target of the certified criterion (relative duality gap, or scaled prox-gradient norm).
    max_iter : iteration budget; reaching it without the criterion gives ``Status.FEASIBLE``.
    check_every : iterations between two evaluations of the criterion.
    blas_threads : cap on BLAS threads inside the iterations (None: leave as is).

    Returns
    -------
    Result with ``x`` = coefficients (p,), ``objective``, ``bound``/``gap`` (duality gap
    criterion only), ``iterations``, ``solve_time`` and ``raw`` = {"criterion", "criterion_name",
    "intercept", "lipschitz", "restarts", "history"}.
    """
    _check_options(tol, max_iter, check_every)
    if not isinstance(penalty, Penalty):
        raise TypeError(f"penalty must be a formulations.penalties.Penalty, got {type(penalty).__name__}")
    limiter = threadpool_limits(blas_threads) if blas_threads else None
    try:
        return _run(loss, penalty, w0, b0, accelerated, restart, float(tol), int(max_iter), int(check_every))
    finally:
        if limiter is not None:
            limiter.unregister()


def _run(loss, penalty, w0, b0, accelerated, restart, tol, max_iter, check_every) -> Result:
    start = time.perf_counter()
    p = loss.p
    has_b = bool(loss.has_intercept_variable)
    x = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64).reshape(-1)
    if x.shape != (p,):
        raise ValueError(f"w0 must have shape ({p},), got {x.shape}")
    bx = (loss.intercept_at_zero() if b0 is None else float(b0)) if has_b else 0.0
    sx = loss.state(x, bx)
    g0, gb0 = loss.gradient(np.zeros(p), loss.intercept_at_zero() if has_b else 0.0)
    pg_scale = max(1.0, math.sqrt(float(g0 @ g0) + gb0 * gb0))
    L = max(float(loss.lipschitz), 1e-12)
    y, by, sy = x, bx, sx
    fy = loss.value_state(y, by, sy)
    gy, gby = loss.gradient_state(sy)
    t = 1.0
    restarts = 0
    history: list[tuple[int, float]] = []
    criterion, crit_name, dual = math.inf, "prox_gradient_norm", math.nan
    fx = fy
    it = 0
    for it in range(1, max_iter + 1):
        while True:
            step = 1.0 / L
            xn = penalty._prox(y - step * gy, step)
            bn = by - step * gby if has_b else 0.0
            sn = loss.state(xn, bn)
            fn = loss.value_state(xn, bn, sn)
            d = xn - y
            db = bn - by
            quad = fy + float(gy @ d) + gby * db + 0.5 * L * (float(d @ d) + db * db)
            if fn <= quad + 1e-12 * abs(fy) or L > 1e20:
                break
            L *= 2.0
        if accelerated:
            if restart and float((y - xn) @ (xn - x)) + (by - bn) * (bn - bx) > 0:
                t = 1.0
                restarts += 1
                y, by, sy = xn, bn, sn
            else:
                tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
                beta = (t - 1.0) / tn
                t = tn
                y = xn + beta * (xn - x)
                by = bn + beta * (bn - bx)
                sy = sn + beta * (sn - sx)
        else:
            y, by, sy = xn, bn, sn
        x, bx, sx, fx = xn, bn, sn, fn
        fy = fn if y is xn else loss.value_state(y, by, sy)
        gy, gby = loss.gradient_state(sy)
        if it % check_every == 0 or it == max_iter:
            criterion, crit_name, dual = _criterion(loss, penalty, x, bx, sx, fx, L, pg_scale,
                                                    gy if y is xn else None, gby if y is xn else None)
            history.append((it, criterion))
            if criterion <= tol:
                break
    primal = fx + penalty.value(x)
    status = Status.OPTIMAL if criterion <= tol else Status.FEASIBLE
    gap = criterion if crit_name == "relative_duality_gap" else math.nan
    intercept = bx if has_b else loss.intercept(x)
    return Result(status=status, x=x.copy(), objective=primal, bound=dual if math.isfinite(dual) else math.nan,
                  gap=gap, solve_time=time.perf_counter() - start, iterations=it,
                  backend="fista" if accelerated else "ista",
                  message=f"{crit_name} = {criterion:.3g} (tol {tol:.3g}) after {it} iterations",
                  raw={"criterion": criterion, "criterion_name": crit_name, "intercept": float(intercept),
                       "lipschitz": L, "restarts": restarts, "history": history})


def _criterion(loss, penalty, x, bx, sx, fx, L, pg_scale, gx=None, gbx=None) -> tuple[float, str, float]:
    """Relative duality gap where available, else the scaled prox-gradient mapping norm."""
    primal = fx + penalty.value(x)
    dual, gap = duality_gap(loss, penalty, x, bx, sx, primal)
    if math.isfinite(gap):
        return max(gap, 0.0) / max(abs(primal), 1e-12), "relative_duality_gap", dual
    if gx is None:
        gx, gbx = loss.gradient_state(sx)
    step = 1.0 / L
    mapping = (x - penalty.prox(x - step * gx, step)) * L
    norm = math.sqrt(float(mapping @ mapping) + gbx * gbx)
    return norm / pg_scale, "prox_gradient_norm", math.nan
