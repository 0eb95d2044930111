"""Proximal gradient methods: FISTA (backtracking, adaptive restart) and ISTA (Facets paper, sec. 5).

Minimise :math:`f(w, b) + \\Omega(w)` with ``f`` a smooth loss of :mod:`formulations.losses`
(intercept ``b`` unpenalised) and :math:`\\Omega` a penalty of :mod:`formulations.penalties`.

* ISTA (eqs. 10-11): :math:`w^{t+1} = \\operatorname{prox}_{\\tau\\Omega}(w^t - \\tau\\nabla f(w^t))`.
* FISTA (Beck & Teboulle 2009) with the gradient-based adaptive restart of O'Donoghue & Candes
  (2015): momentum is reset when :math:`\\langle y^k - w^{k+1}, w^{k+1} - w^k\\rangle > 0`.
  The Facets paper warns that acceleration may hurt integrity; both are exposed.
* Step :math:`\\tau = 1/L`, starting from the loss' Lipschitz constant and doubled by
  backtracking while the quadratic upper bound fails (so an underestimated L is safe).

Stopping is certified, never an iteration count alone, and costs no extra product with X:

* where a Fenchel dual is available (least squares / logistic with L1, weighted L1, OWL,
  elastic net) the criterion is the relative duality gap :math:`(P(w^{k+1}) - D(\\theta))/|P(w^{k+1})|`,
  :math:`\\theta` the (rescaled) dual candidate built from the gradient at the extrapolated point
  :math:`y^k` (any :math:`\\theta` gives a lower bound); ``bound`` of the
  :class:`~solvers.result.Result` is then :math:`D(\\theta)`, a proven lower bound;
* otherwise the criterion is :math:`(L_f + L)\\|w^{k+1} - y^k\\|_2 / \\max(1, \\|\\nabla f(0)\\|_2)`:
  since :math:`\\nabla f(w^{k+1}) - \\nabla f(y^k) + L(y^k - w^{k+1}) \\in \\partial P(w^{k+1})`,
  :math:`(L_f + L)\\|w^{k+1} - y^k\\|` bounds the distance from 0 to the subdifferential of the
  objective at the returned point (:math:`L_f` the loss' Lipschitz constant, :math:`L` the step's).
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from formulations.penalties import Penalty
from solvers.proximal.common import _check_options, blas_limit, duality_gap
from solvers.proximal.gram_cd import gram_coordinate_descent, supports_gram_cd
from solvers.proximal.prox_newton import prox_newton, supports_prox_newton
from solvers.result import Result, Status


def fista(loss: Any, penalty: Penalty, **options: Any) -> Result:
    """FISTA with backtracking and adaptive restart; see :func:`proximal_gradient` for options."""
    return proximal_gradient(loss, penalty, accelerated=True, **options)


def ista(loss: Any, penalty: Penalty, **options: Any) -> Result:
    """ISTA (plain proximal gradient, eqs. 10-11) with backtracking; see :func:`proximal_gradient`."""
    return proximal_gradient(loss, penalty, accelerated=False, **options)


def proximal_gradient(loss: Any, penalty: Penalty, *, w0: np.ndarray | None = None, b0: float | None = None,
                      accelerated: bool = True, restart: bool = True, tol: float = 1e-8,
                      max_iter: int = 10000, check_every: int = 5, blas_threads: int | None = 1,
                      limits: Any = None) -> Result:
    """Minimise ``loss + penalty`` by (accelerated) proximal gradient; returns a :class:`Result`.

    Parameters
    ----------
    loss : a loss of :mod:`formulations.losses` (bound to X (n, p) and y (n,)).
    penalty : a :class:`~formulations.penalties.Penalty` on the p coefficients.
    w0, b0 : warm start (coefficients (p,), intercept); default zeros and the best constant.
    accelerated : FISTA (True) or ISTA (False). restart : adaptive restart of the momentum.
    tol : target of the certified criterion (relative duality gap, or scaled subgradient bound).
    max_iter : iteration budget; reaching it without the criterion gives ``Status.FEASIBLE``.
    check_every : iterations between two evaluations of the criterion (O(n + p) each).
    blas_threads : cap on BLAS threads inside the iterations (None: leave as is).
    limits : the call's budget (a :class:`solvers.limits.Limits`, started here if not yet; None: no
        time limit): the loop stops at its deadline, with ``Status.FEASIBLE`` and the last point,
        and says so in the message.

    Returns
    -------
    Result with ``x`` = coefficients (p,), ``objective``, ``bound``/``gap`` (duality-gap
    criterion only), ``iterations``, ``solve_time`` and ``raw`` = {"criterion",
    "criterion_name" ("relative_duality_gap" or "subgradient_distance"), "intercept",
    "lipschitz", "restarts", "history"}.
    """
    _check_options(tol, max_iter, check_every)
    if not isinstance(penalty, Penalty):
        raise TypeError(f"penalty must be a formulations.penalties.Penalty, got {type(penalty).__name__}")
    with blas_limit(blas_threads):
        return _run(loss, penalty, w0, b0, accelerated, restart, float(tol), int(max_iter), int(check_every),
                    None if limits is None else limits.started())


def _run(loss, penalty, w0, b0, accelerated, restart, tol, max_iter, check_every, limits) -> Result:
    start = time.perf_counter()
    p = loss.p
    has_b = bool(loss.has_intercept_variable)
    x = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64).reshape(-1)
    if x.shape != (p,) or not np.all(np.isfinite(x)):
        raise ValueError(f"w0 must be a finite vector of shape ({p},), got shape {x.shape}")
    bx = (loss.intercept_at_zero() if b0 is None else float(b0)) if has_b else 0.0
    sx = loss.state(x, bx)
    g0, gb0 = loss.gradient(np.zeros(p), loss.intercept_at_zero() if has_b else 0.0)
    pg_scale = max(1.0, math.sqrt(float(g0 @ g0) + gb0 * gb0))
    lip_loss = float(loss.lipschitz)
    L = max(lip_loss, 1e-12)
    y, by, sy = x, bx, sx
    fy = loss.value_state(y, by, sy)
    gy, gby = loss.gradient_state(sy)
    t = 1.0
    restarts = 0
    history: list[tuple[int, float]] = []
    criterion, crit_name, dual = math.inf, "subgradient_distance", math.nan
    fx = fy
    it, out_of_time = 0, False
    for it in range(1, max_iter + 1):
        if limits is not None and it > 1 and limits.expired():
            out_of_time, it = True, it - 1
            break
        while True:
            step = 1.0 / L
            xn = penalty._prox(y - step * gy, step)
            bn = by - step * gby if has_b else 0.0
            sn = loss.state(xn, bn)
            fn = loss.value_state(xn, bn, sn)
            d = xn - y
            db = bn - by
            dd = float(d @ d) + db * db
            if fn <= fy + float(gy @ d) + gby * db + 0.5 * L * dd + 1e-12 * abs(fy) or L > 1e20:
                break
            L *= 2.0
        if it % check_every == 0 or it == max_iter:
            primal = fn + penalty.value(xn)
            dual, gap = duality_gap(loss, penalty, y, by, sy, fy, gy, primal)
            if math.isfinite(gap):
                criterion, crit_name = max(gap, 0.0) / max(abs(primal), 1e-12), "relative_duality_gap"
            else:
                criterion, crit_name = (lip_loss + L) * math.sqrt(dd) / pg_scale, "subgradient_distance"
            history.append((it, criterion))
            if criterion <= tol:
                x, bx, fx = xn, bn, fn
                break
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
    primal = fx + penalty.value(x)
    status = Status.OPTIMAL if criterion <= tol else Status.FEASIBLE
    gap = criterion if crit_name == "relative_duality_gap" else math.nan
    intercept = bx if has_b else loss.intercept(x)
    return Result(status=status, x=x.copy(), objective=primal, bound=dual if math.isfinite(dual) else math.nan,
                  gap=gap, solve_time=time.perf_counter() - start, iterations=it,
                  backend="fista" if accelerated else "ista",
                  message=f"{crit_name} = {criterion:.3g} (tol {tol:.3g}) after {it} iterations"
                          + (" (stopped at the time limit)" if out_of_time else ""),
                  raw={"criterion": criterion, "criterion_name": crit_name, "intercept": float(intercept),
                       "lipschitz": L, "restarts": restarts, "history": history})


#: options of the coordinate solvers (prox_newton, gram_cd) that the first-order loop does not take
_COORDINATE_OPTIONS = ("max_outer", "max_newton", "max_epochs")


def supports_working_set(loss: Any, penalty: Penalty) -> bool:
    """True when ``penalty`` is separable with per-coordinate zero thresholds and ``loss`` can be restricted."""
    return (bool(getattr(penalty, "separable", False)) and hasattr(penalty, "coordinate_thresholds")
            and hasattr(penalty, "restrict") and hasattr(loss, "restrict"))


def _coordinate_solve(loss: Any, penalty: Penalty, w0, b0, tol: float, min_size: int,
                      options: dict) -> tuple[Result | None, Any]:
    """The second-order or Gram-form solve of ``method="auto"`` (:func:`working_set_solve`) when
    the pair has one: ``(result, w0)``; ``(None, w0)`` when the first-order loop takes over (from
    the coordinate descent's point when it crawled)."""
    if supports_prox_newton(loss, penalty):
        return prox_newton(loss, penalty, w0=w0, b0=b0, tol=tol, min_size=min_size, **options), w0
    if supports_gram_cd(loss, penalty):
        result = gram_coordinate_descent(loss, penalty, w0=w0, tol=tol, min_size=min_size, **options)
        if result.status is Status.OPTIMAL:
            return result, w0
        return None, result.x  # coordinate descent crawled (ill-conditioned design): FISTA takes over from here
    return None, w0


def _grow(in_set: np.ndarray, violators: np.ndarray, excess: np.ndarray, w: np.ndarray, min_size: int,
          first: bool) -> None:
    """Add to the working set ``in_set`` the violators of largest ``excess`` (at most
    ``max(min_size, |W|)`` of them; in the ``first`` round also the ``min_size`` largest scores, to
    start from a useful set) and every non-zero coefficient."""
    order = np.argsort(-np.where(violators, excess, -np.inf))
    grow = max(min_size, int(in_set.sum()))
    add = order[:grow][violators[order[:grow]]]
    if first:
        add = np.union1d(add, order[:min(min_size, in_set.size)])
    in_set[add] = True
    in_set |= w != 0


def working_set_solve(loss: Any, penalty: Penalty, *, w0: np.ndarray | None = None, b0: float | None = None,
                      tol: float = 1e-8, min_size: int = 10, max_rounds: int = 100, method: str = "auto",
                      **options: Any) -> Result:
    """A working-set solve certified on all coordinates: proximal Newton or proximal gradient.

    ``method="auto"`` (default), for an L1, weighted L1 or elastic-net penalty and unless
    ``accelerated=False`` asks for ISTA, uses :func:`solvers.proximal.prox_newton.prox_newton` (second-order,
    coordinate descent on each Newton model) when the loss has a second derivative on dense data,
    and :func:`solvers.proximal.gram_cd.gram_coordinate_descent` for least squares in its Gram form (the
    first-order loop below takes over from its point when it crawls); ``"prox_gradient"`` always
    uses the first-order loop below.

    For a separable penalty, coordinate ``j`` with :math:`w_j = 0` is optimal iff
    :math:`|\\\\nabla_j f(w)| \\\\le \\\\tau_j` (``penalty.coordinate_thresholds``). Each round solves the
    problem restricted to the working set ``W`` (``loss.restrict``, ``penalty.restrict``: the
    products cost O(n |W|) instead of O(n p)), computes the full gradient once, and adds every
    coordinate violating its optimality condition. ``W`` only grows, so the loop ends; when no
    coordinate outside ``W`` violates, the full problem's criterion is evaluated (duality gap
    where available; otherwise the sub-problem's subgradient bound, exact for the full problem
    since the coordinates outside ``W`` satisfy their conditions). Falls back to
    :func:`proximal_gradient` when the pair does not support working sets.
    """
    if method not in ("auto", "prox_gradient"):
        raise ValueError(f"method must be 'auto' or 'prox_gradient', got {method!r}")
    if method == "auto" and options.get("accelerated", True):
        result, w0 = _coordinate_solve(loss, penalty, w0, b0, tol, min_size, options)
        if result is not None:
            return result
    options = {k: v for k, v in options.items() if k not in _COORDINATE_OPTIONS}
    if not supports_working_set(loss, penalty):
        return proximal_gradient(loss, penalty, w0=w0, b0=b0, tol=tol, **options)
    _check_options(tol, options.get("max_iter", 1), options.get("check_every", 1))
    start = time.perf_counter()
    p, has_b = loss.p, bool(loss.has_intercept_variable)
    w = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64).reshape(-1)
    if w.shape != (p,):
        raise ValueError(f"w0 must have shape ({p},), got {w.shape}")
    b = (loss.intercept_at_zero() if b0 is None else float(b0)) if has_b else 0.0
    tau = penalty.coordinate_thresholds(p)
    in_set = np.zeros(p, dtype=bool)
    sub_tol, iterations, sub = tol, 0, None
    status, criterion, crit_name, dual = Status.FEASIBLE, math.inf, "subgradient_distance", math.nan
    with blas_limit(options.get("blas_threads", 1)):
        for _ in range(max_rounds):
            state = loss.state(w, b)
            value = loss.value_state(w, b, state)
            g, _ = loss.gradient_state(state)
            excess = np.abs(g) - tau * (1 + 1e-12)
            violators = ~in_set & ((w != 0) | (excess > 0))
            if sub is not None and not violators.any():
                primal = value + penalty.value(w)
                dual, gap = duality_gap(loss, penalty, w, b, state, value, g, primal)
                if math.isfinite(gap):
                    criterion, crit_name = max(gap, 0.0) / max(abs(primal), 1e-12), "relative_duality_gap"
                else:
                    criterion, crit_name, dual = sub.raw["criterion"], sub.raw["criterion_name"], math.nan
                if criterion <= tol:
                    status = Status.OPTIMAL
                    break
                if sub.status is not Status.OPTIMAL:
                    break  # the sub-problem ran out of iterations: report FEASIBLE
                sub_tol /= 10.0
            else:
                _grow(in_set, violators, excess, w, min_size, first=sub is None)
            cols = np.flatnonzero(in_set)
            sub = proximal_gradient(loss.restrict(cols), penalty.restrict(cols), w0=w[cols], b0=b,
                                    tol=sub_tol, **options)
            iterations += sub.iterations
            w = np.zeros(p)
            w[cols] = sub.x
            b = sub.raw["intercept"] if has_b else 0.0
    return _working_set_result(loss, penalty, w, b, status, criterion, crit_name, dual, start, iterations, tol,
                               in_set, sub, options)


def _working_set_result(loss, penalty, w, b, status, criterion, crit_name, dual, start, iterations, tol, in_set,
                        sub, options) -> Result:
    """The :class:`Result` of :func:`working_set_solve` at ``(w, b)`` (``sub``: its last sub-problem)."""
    p, has_b = loss.p, bool(loss.has_intercept_variable)
    primal = loss.value(w, b) + penalty.value(w)
    return Result(status=status, x=w, objective=primal, bound=dual if math.isfinite(dual) else math.nan,
                  gap=criterion if crit_name == "relative_duality_gap" else math.nan,
                  solve_time=time.perf_counter() - start, iterations=iterations,
                  backend="fista" if options.get("accelerated", True) else "ista",
                  message=f"{crit_name} = {criterion:.3g} (tol {tol:.3g}), working set {int(in_set.sum())}/{p}",
                  raw={"criterion": criterion, "criterion_name": crit_name,
                       "intercept": float(b if has_b else loss.intercept(w)),
                       "working_set_size": int(in_set.sum()), "lipschitz": sub.raw["lipschitz"] if sub else math.nan,
                       "restarts": sub.raw["restarts"] if sub else 0, "history": sub.raw["history"] if sub else []})
