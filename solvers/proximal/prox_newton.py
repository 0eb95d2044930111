"""Working-set proximal Newton for margin losses with L1 / weighted L1 / elastic-net penalties.

Minimise :math:`P(w, b) = \\frac1n\\sum_i\\phi(y_i(x_i^\\top w + b)) + \\sum_j \\tau_j|w_j| + \\tfrac12\\sum_j\\kappa_j w_j^2`
(``b`` unpenalised; :math:`\\phi` twice differentiable: the logistic loss).

* **Proximal Newton** (Lee, Sun & Saunders, SIAM J. Optim. 2014): at ``(w, b)`` with scores
  :math:`z = Xw + b`, per-sample derivatives :math:`d_i = y_i\\phi'(y_iz_i)/n` and curvatures
  :math:`h_i = \\phi''(y_iz_i)/n`, the step :math:`\\delta` minimises the quadratic model
  :math:`d^\\top(X\\delta + \\delta_b) + \\tfrac12\\sum_i h_i (X\\delta + \\delta_b)_i^2` plus the penalty
  at :math:`w + \\delta`, by cyclic coordinate descent keeping :math:`u = X\\delta + \\delta_b`
  (each coordinate costs two passes over its column: the data are read column-major, Fortran
  order). The step length :math:`t` backtracks (halving) until the Armijo condition
  :math:`P(w + t\\delta) \\le P(w) + \\sigma t\\Delta`, :math:`\\Delta = \\nabla f^\\top\\delta +
  \\Omega(w + \\delta) - \\Omega(w) < 0`, holds (Tseng & Yun 2009), :math:`\\sigma = 10^{-4}`.
* **Working sets** (Massias et al., celer 2018; Bertrand et al., skglm 2022): Newton steps act on a
  set ``W`` of coordinates: the non-zeros and as many of the largest violations of the optimality
  conditions :math:`|\\nabla_j f| \\le \\tau_j` at zero (``|W| = max(10, 2 nnz)``, doubled when a
  round would repeat the previous set), and an inner round stops when the largest violation on
  ``W`` is below :data:`INNER_SHARE` times the one on all coordinates, or below
  :math:`\\mathrm{tol}\\,|P|/\\|w\\|_1` when that is smaller (the duality gap is about
  :math:`\\|w\\|_1` times the largest violation: one more Newton step on ``W`` instead of one more
  round with a product with all of X).
* **Along a path** the warm start is the previous point, whose scores and gradient the last
  certificate computed: they are kept on the loss (``_last_point``, used only when ``w0`` and
  ``b0`` equal that point exactly) and not recomputed.
* **Certificate**: every outer round computes the full gradient (one product with X) and the
  relative duality gap of :func:`solvers.proximal.gradient.duality_gap` (a proven lower bound); where no
  dual candidate is feasible (an intercept with a centred candidate outside the box), the exact
  distance from 0 to the subdifferential, :math:`\\|\\operatorname{dist}(0, \\partial P(w, b))\\|_2`,
  divided by :math:`\\max(1, \\|\\nabla f(0)\\|_2)` as in :mod:`solvers.proximal.gradient`.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numba
import numpy as np

from formulations.penalties import L1, ElasticNet, Penalty, WeightedL1
from solvers.proximal.common import _check_options, blas_limit, duality_gap
from solvers.result import Result, Status

#: Armijo constant of the step-length search
ARMIJO = 1e-4
#: relative size under which a predicted decrease is rounding noise
ROUNDING = 1e-13
#: share of a Newton step's target the coordinate-descent moves must reach
CD_SHARE = 0.3
#: share of the full problem's largest violation an inner (working-set) solve must reach
INNER_SHARE = 0.03


def l1_l2_split(penalty: Penalty, p: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(tau, kappa)`` with :math:`\\Omega(w) = \\sum\\tau_j|w_j| + \\frac12\\sum\\kappa_j w_j^2`, or None."""
    if isinstance(penalty, (L1, WeightedL1)):
        return np.asarray(penalty.coordinate_thresholds(p), dtype=np.float64), np.zeros(p)
    if isinstance(penalty, ElasticNet):
        return np.full(p, penalty.lam * penalty.l1_ratio), np.full(p, penalty.lam * (1.0 - penalty.l1_ratio))
    return None


def supports_prox_newton(loss: Any, penalty: Penalty) -> bool:
    """True for a dense-data margin loss with a second derivative and an L1-type penalty."""
    return (hasattr(loss, "second_derivative") and hasattr(loss, "fortran_columns")
            and not hasattr(loss.X, "tocsc") and l1_l2_split(penalty, loss.p) is not None)


@numba.njit(cache=True, nogil=True, fastmath=True)
def _column_dots(X, cols, v, out):
    """``out[k] = X[:, cols[k]] . v`` (X Fortran-ordered)."""
    n = X.shape[0]
    for k in range(cols.size):
        j = cols[k]
        s = 0.0
        for i in range(n):
            s += X[i, j] * v[i]
        out[k] = s
    return out


@numba.njit(cache=True, nogil=True, fastmath=True)
def _weighted_squares(X, cols, h, out):
    """``out[k] = sum_i h_i X[i, cols[k]]^2``: the diagonal of the model's Hessian on ``cols``."""
    n = X.shape[0]
    for k in range(cols.size):
        j = cols[k]
        s = 0.0
        for i in range(n):
            s += h[i] * X[i, j] * X[i, j]
        out[k] = s
    return out


@numba.njit(cache=True, nogil=True, fastmath=True)
def _newton_direction(X, cols, v, r, h, hdiag, tau, kappa, fit_b, hb, max_epochs, tol):
    """Coordinate descent on the quadratic model. ``v`` (the new point on ``cols``) and ``r`` (the
    model's derivative in the scores, :math:`d + h\\circ u` with :math:`u = X(v - w) + \\delta_b`)
    are updated in place. Returns ``(delta_b, epochs)``.

    Coordinate ``j``: with :math:`s = X_j^\\top r` the partial derivative of the loss model at ``v``
    and :math:`H = h^\\top X_j^2`, the exact minimiser along ``j`` of the model plus
    :math:`\\tau_j|v_j| + \\kappa_j v_j^2/2` is :math:`\\operatorname{ST}(Hv_j - s, \\tau_j) / (H + \\kappa_j)`;
    a move :math:`\\Delta` adds :math:`\\Delta\\,h\\circ X_j` to ``r``. After a pass over all of ``cols``
    the passes visit the non-zeros only (glmnet's active-set cycling) until their largest move, in
    the model's metric :math:`(H + \\kappa_j)|\\Delta v_j|`, is below ``tol``; then a full pass
    again, and the loop stops when a full pass moves nothing by more than ``tol``.
    """
    n = X.shape[0]
    delta_b = 0.0
    epochs = 0
    full = True
    for epoch in range(max_epochs):
        epochs = epoch + 1
        largest = 0.0
        for k in range(cols.size):
            j = cols[k]
            curv = hdiag[k] + kappa[j]
            if curv <= 0.0 or (not full and v[j] == 0.0):
                continue
            s = 0.0
            for i in range(n):
                s += X[i, j] * r[i]
            old = v[j]
            a = hdiag[k] * old - s
            new = 0.0
            if a > tau[j]:
                new = (a - tau[j]) / curv
            elif a < -tau[j]:
                new = (a + tau[j]) / curv
            step = new - old
            if step != 0.0:
                for i in range(n):
                    r[i] += step * h[i] * X[i, j]
                v[j] = new
                move = curv * abs(step)
                if move > largest:
                    largest = move
        if fit_b and hb > 0.0:
            s = 0.0
            for i in range(n):
                s += r[i]
            step = -s / hb
            for i in range(n):
                r[i] += step * h[i]
            delta_b += step
            if hb * abs(step) > largest:
                largest = hb * abs(step)
        if largest <= tol:
            if full:
                break
            full = True  # the non-zeros have settled: one pass over all of cols to confirm
        else:
            full = False
    return delta_b, epochs


def _penalty(w: np.ndarray, tau: np.ndarray, kappa: np.ndarray) -> float:
    """:math:`\\sum\\tau_j|w_j| + \\frac12\\sum\\kappa_j w_j^2` on matching slices."""
    return float(tau @ np.abs(w)) + 0.5 * float(kappa @ (w * w))


def violations(w: np.ndarray, g: np.ndarray, tau: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """Per coordinate, the distance from 0 to :math:`g_j + \\kappa_jw_j + \\tau_j\\partial|w_j|`.

    :math:`|g_j + \\kappa_jw_j + \\tau_j\\operatorname{sign}w_j|` for :math:`w_j \\ne 0`,
    :math:`\\max(|g_j| - \\tau_j, 0)` at 0; all zero exactly at a minimiser.
    """
    return np.where(w != 0.0, np.abs(g + kappa * w + tau * np.sign(w)), np.maximum(np.abs(g) - tau, 0.0))


def prox_newton(loss: Any, penalty: Penalty, *, w0: np.ndarray | None = None, b0: float | None = None,
                tol: float = 1e-8, max_outer: int = 50, max_newton: int = 50, max_epochs: int = 50,
                min_size: int = 10, blas_threads: int | None = 1, **_ignored: Any) -> Result:
    """Minimise ``loss + penalty`` by working-set proximal Newton (module docstring); a :class:`Result`.

    ``loss``: a dense-data margin loss with ``second_derivative`` (:class:`formulations.losses.Logistic`);
    ``penalty``: :class:`L1`, :class:`WeightedL1` or :class:`ElasticNet`. ``tol`` is the target of
    the certified criterion (relative duality gap, or scaled subgradient distance), checked on all
    coordinates. ``max_outer`` working-set rounds, ``max_newton`` Newton steps per round,
    ``max_epochs`` coordinate-descent epochs per step; ``min_size`` the first working set.
    Options of the first-order solvers (``accelerated``, ``check_every``, ...) are ignored.
    Returns ``x`` (p,), ``objective``, ``bound`` (dual value when available), ``gap``,
    ``iterations`` (Newton steps) and ``raw`` = {"criterion", "criterion_name", "intercept",
    "working_set_size", "cd_epochs", "history"}.
    """
    _check_options(tol, max_outer, 1)
    split = l1_l2_split(penalty, loss.p)
    if split is None or not supports_prox_newton(loss, penalty):
        raise ValueError(f"prox_newton needs a dense margin loss with a second derivative and an L1, weighted L1 "
                         f"or elastic-net penalty; got {type(loss).__name__} and {type(penalty).__name__}: "
                         "use solvers.proximal.gradient.proximal_gradient")
    start = time.perf_counter()
    tau, kappa = split
    X, n, p = loss.fortran_columns(), loss.n, loss.p
    has_b = bool(loss.has_intercept_variable)
    w, b, z, cached = _start_point(loss, X, w0, b0)
    pg_scale = _gradient_scale(loss)
    ws = np.zeros(0, dtype=np.intp)
    status, criterion, crit_name, dual = Status.FEASIBLE, math.inf, "subgradient_distance", math.nan
    history: list[tuple[int, float]] = []
    steps = epochs = 0
    with blas_limit(blas_threads):
        for _ in range(max_outer):
            if cached is None:
                value = loss.value_state(w, b, z)
                g, gb = loss.gradient_state(z)
            else:
                _, value, g, gb = cached
                cached = None
            primal = value + _penalty(w, tau, kappa)
            viol = violations(w, g, tau, kappa)
            dual, gap = duality_gap(loss, penalty, w, b, z, value, g, primal)
            if math.isfinite(gap):
                criterion, crit_name = max(gap, 0.0) / max(abs(primal), 1e-12), "relative_duality_gap"
            else:
                criterion, crit_name = math.sqrt(float(viol @ viol) + gb * gb) / pg_scale, "subgradient_distance"
            history.append((steps, criterion))
            if criterion <= tol:
                status = Status.OPTIMAL
                object.__setattr__(loss, "_last_point", (w.copy(), b, z, value, g, gb))
                break
            ws = _next_working_set(viol, w, ws, min_size)
            target = INNER_SHARE * max(float(viol.max(initial=0.0)), abs(gb))
            # the violations at which the gap is about tol (gap ~ ||w||_1 times the largest
            # violation): a tighter inner target costs a Newton step on W, one round fewer saves a
            # product with all of X
            target = min(target, tol * abs(primal) / max(float(np.abs(w).sum()), 1e-12))
            w, b, z, s, e, stalled = _newton_steps(loss, X, ws, w, b, z, g[ws], gb, tau, kappa, has_b, target,
                                                   max_newton, max_epochs)
            steps, epochs = steps + s, epochs + e
            if stalled and ws.size == p:
                break  # the whole problem admits no further decrease at machine precision: report FEASIBLE
    primal = loss.value_state(w, b, z) + _penalty(w, tau, kappa)
    return Result(status=status, x=w, objective=primal, bound=dual if math.isfinite(dual) else math.nan,
                  gap=criterion if crit_name == "relative_duality_gap" else math.nan,
                  solve_time=time.perf_counter() - start, iterations=steps, backend="prox_newton",
                  message=f"{crit_name} = {criterion:.3g} (tol {tol:.3g}) after {steps} Newton steps, "
                          f"working set {ws.size}/{p}",
                  raw={"criterion": criterion, "criterion_name": crit_name, "intercept": float(b),
                       "working_set_size": int(ws.size), "cd_epochs": epochs, "lipschitz": math.nan,
                       "restarts": 0, "history": history})


def _start_point(loss: Any, X: np.ndarray, w0: np.ndarray | None, b0: float | None) -> tuple:
    """``(w, b, z = X w + b, cached)`` of the start (zeros and the best constant by default);
    ``cached`` is :func:`_last_point` when the start is the last certified point on ``loss``."""
    p = loss.p
    w = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64).reshape(-1)
    if w.shape != (p,) or not np.all(np.isfinite(w)):
        raise ValueError(f"w0 must be a finite vector of shape ({p},), got shape {w.shape}")
    b = (loss.intercept_at_zero() if b0 is None else float(b0)) if loss.has_intercept_variable else 0.0
    cached = _last_point(loss, w, b)  # along a path, w0 is the previous point: its gradient is known
    if cached is not None:
        return w, b, cached[0], cached
    nonzero = np.flatnonzero(w)  # a warm start along a path is sparse: X w from its columns only
    return w, b, X[:, nonzero] @ w[nonzero] + b, None


def _next_working_set(viol: np.ndarray, w: np.ndarray, previous: np.ndarray, min_size: int) -> np.ndarray:
    """The non-zeros and the largest violations, at least ``max(min_size, 2 |nonzeros|)`` of them;
    twice the size when that is ``previous`` again (the same set did not certify)."""
    nonzero = np.flatnonzero(w)
    scores = viol.copy()
    scores[nonzero] = np.inf
    ws = _working_set(scores, max(min_size, 2 * nonzero.size))
    if np.array_equal(ws, previous):
        ws = _working_set(scores, 2 * ws.size)
    return ws


def _last_point(loss: Any, w: np.ndarray, b: float) -> tuple | None:
    """``(z, value, gradient, intercept gradient)`` at exactly ``(w, b)`` if the last certified
    solve on ``loss`` ended there (a path's warm start), else None: one product with X saved."""
    last = loss.__dict__.get("_last_point")
    if last is None or last[1] != b or not np.array_equal(last[0], w):
        return None
    return last[2:]


def _working_set(scores: np.ndarray, size: int) -> np.ndarray:
    """Indices of the ``size`` largest ``scores`` (all of them when ``size >= p``), sorted."""
    p = scores.size
    return np.arange(p) if size >= p else np.sort(np.argpartition(-scores, size - 1)[:size])


def _gradient_scale(loss: Any) -> float:
    """:math:`\\max(1, \\|\\nabla f(0, b_0)\\|_2)`, the scale of the subgradient criterion (cached on the loss)."""
    scale = loss.__dict__.get("_gradient_scale")
    if scale is None:
        g, gb = loss.gradient(np.zeros(loss.p), loss.intercept_at_zero() if loss.has_intercept_variable else 0.0)
        scale = max(1.0, math.sqrt(float(g @ g) + gb * gb))
        object.__setattr__(loss, "_gradient_scale", scale)
    return scale


def _newton_steps(loss, X, ws, w, b, z, g_ws, gb, tau, kappa, has_b, target, max_newton, max_epochs):
    """Newton steps restricted to ``ws`` until its largest violation is <= ``target``."""
    w = w.copy()
    buf = np.empty(ws.size)
    tau_ws, kappa_ws = tau[ws], kappa[ws]
    steps = epochs = 0
    stalled = False
    for _ in range(max_newton):
        d, h = loss.second_derivative(z)
        hdiag = _weighted_squares(X, ws, h, buf)
        v = w.copy()
        delta_b, e = _newton_direction(X, ws, v, d.copy(), h, hdiag, tau, kappa, has_b, float(h.sum()),
                                       max_epochs, CD_SHARE * target)
        steps, epochs = steps + 1, epochs + e
        delta = v[ws] - w[ws]
        moved = np.flatnonzero(delta)
        if moved.size == 0 and delta_b == 0.0:
            stalled = True
            break
        u = X[:, ws[moved]] @ delta[moved] + delta_b  # the step in the scores, X delta + delta_b
        w_ws = w[ws]
        before = _penalty(w_ws, tau_ws, kappa_ws)
        decrease = float(g_ws @ delta) + gb * delta_b + _penalty(v[ws], tau_ws, kappa_ws) - before
        value = loss.value_state(w, b, z)
        t = 1.0
        # a predicted decrease below the rounding error of the objective cannot be tested: take the
        # full step (near the optimum the unit Newton step is the one accepted, Lee et al. Thm 3.4)
        precise = -decrease <= ROUNDING * max(1.0, abs(value) + before)
        for _ in range(40):
            zt = z + t * u
            trial = w_ws + t * delta
            if precise:
                break
            change = loss.value_state(w, b, zt) - value + _penalty(trial, tau_ws, kappa_ws) - before
            if change <= ARMIJO * t * decrease:
                break
            t *= 0.5
        else:
            stalled = True  # no decrease along the direction: nothing more to gain on this set
            break
        w[ws] = trial
        b, z = b + t * delta_b, zt
        d, _ = loss.second_derivative(z)
        g_ws = _column_dots(X, ws, d, np.empty(ws.size))
        gb = float(d.sum()) if has_b else 0.0
        if max(float(violations(w[ws], g_ws, tau_ws, kappa_ws).max(initial=0.0)), abs(gb)) <= target:
            break
    return w, b, z, steps, epochs, stalled
