"""OWL-QN for the elastic-net CRF: orthant-wise limited-memory quasi-Newton (Andrew & Gao 2007).

Minimises ``F(theta) = f(theta) + rho1 ||theta||_1`` with the smooth part
``f = l(D; theta) + rho2 / 2 ||theta||^2`` (``formulations/crf/criterion.py``), the method of
Wapiti's ``-a l-bfgs`` when ``rho1 > 0`` (Andrew & Gao, "Scalable training of L1-regularized
log-linear models", ICML 2007, section 3). At ``theta`` with ``g = grad f(theta)``:

1. the pseudo-gradient (their eq. 4) ``pg_k = g_k + rho1 sign(theta_k)`` where ``theta_k != 0``;
   where ``theta_k = 0``: ``g_k + rho1`` if that is ``< 0``, ``g_k - rho1`` if that is ``> 0``,
   else ``0``. ``|pg_k|`` is the distance of zero to the subdifferential of ``F`` in coordinate
   ``k`` (``crf_problem.kkt_max`` is ``max_k |pg_k|``), so ``pg = 0`` exactly at the minimiser;
2. the direction ``d = -H pg`` by the L-BFGS two-loop recursion (Nocedal 1980) over the last
   ``memory`` pairs ``s = theta+ - theta``, ``y = g+ - g`` of smooth gradients, ``H_0`` scaled by
   ``s.y / y.y``; then constrained to the orthant of ``-pg``: ``d_k = 0`` where ``d_k pg_k >= 0``
   (their ``pi(d; -pg)``), so ``d`` is a descent direction of ``F``;
3. the orthant ``xi_k = sign(theta_k)``, or ``sign(-pg_k)`` where ``theta_k = 0``; the trial point
   ``theta+ = pi(theta + a d; xi)`` zeroes every coordinate that leaves the orthant, and ``a``
   backtracks (``a = 1`` first, ``1 / ||d||`` on the first iteration; halved, divided by 10 on the
   first) until ``F(theta+) <= F(theta) + GAMMA pg.(theta+ - theta)`` (their Armijo variant,
   section 3.2; ``pg.(theta+ - theta) < 0`` on every trial), so ``F`` decreases monotonically.
   Where that decrease is below the rounding of ``F`` the same inequality is certified by
   convexity instead: ``F(theta+) - F(theta) <= phi'(1-)``, the left derivative of
   ``phi(a) = F(theta + a (theta+ - theta))`` at 1 (:func:`left_slope`), computed from the
   gradient at ``theta+`` without cancellation; the step is accepted when either bound holds.

A pair with ``s.y <= 0`` (possible after a projection) is not stored. When no step is accepted
after ``MAX_BACKTRACKS`` trials the memory is cleared and the pseudo-gradient direction is tried
(a sure descent direction); if that fails too, ``F`` is flat to rounding along it and the run
stops with status ``"stalled"``.

Stopping rules: ``"converged"`` when ``max_k |pg_k| <= tol * scale`` (``scale`` defaults to
``rho1_max = ||grad l(0)||_inf``; the KKT rule of ``crf_bcd`` and ``crf_fista``); with
``stop_eps`` set, also ``"small_decrease"`` when the relative decrease of ``F`` over the last
``stop_window`` iterations, ``(F_{k-w} - F_k) / F_{k-w}``, is below ``stop_eps`` (the objective
window of Wapiti's l-bfgs, ``-o`` / ``-e``, ``lbfgs.c``); ``"max_iter"``, ``"out_of_time"`` (the
budget's wall seconds spent).
"""
from __future__ import annotations

import time

import numba
import numpy as np

from solvers.proximal.crf_forward_backward import SPARSE_DEFAULT, LossGradient
from solvers.proximal.crf_problem import (CRFFit, check_problem, check_stop, objective_value, rho1_max, stop_status,
                                          start_point)

GAMMA = 1e-4
MAX_BACKTRACKS = 40
MEMORY = 5


@numba.njit(cache=True)
def pseudo_gradient(theta, grad, rho1, rho2, out):
    """Andrew & Gao's pseudo-gradient of ``F`` (module docstring, step 1) into ``out``, ``grad``
    the gradient of the loss ``l`` (``g = grad + rho2 theta``); returns ``max_k |out_k|``."""
    largest = 0.0
    for k in range(len(theta)):
        w = theta[k]
        g = grad[k] + rho2 * w
        if w > 0.0:
            v = g + rho1
        elif w < 0.0:
            v = g - rho1
        elif g + rho1 < 0.0:
            v = g + rho1
        elif g - rho1 > 0.0:
            v = g - rho1
        else:
            v = 0.0
        out[k] = v
        largest = max(largest, abs(v))
    return largest


@numba.njit(cache=True)
def _dot(a, b):
    total = 0.0
    for k in range(len(a)):
        total += a[k] * b[k]
    return total


@numba.njit(cache=True)
def _axpy(out, a, x):
    for k in range(len(out)):
        out[k] += a * x[k]


@numba.njit(cache=True)
def two_loop(pg, s_hist, y_hist, rho_hist, order, direction, alpha, constrain):
    """``direction = -H pg`` by the two-loop recursion over the pairs ``order`` (oldest first), then
    with ``constrain`` the orthant constraint ``direction_k = 0`` where ``direction_k pg_k >= 0``."""
    for k in range(len(pg)):
        direction[k] = -pg[k]
    m = len(order)
    for i in range(m - 1, -1, -1):
        j = order[i]
        alpha[i] = rho_hist[j] * _dot(s_hist[j], direction)
        _axpy(direction, -alpha[i], y_hist[j])
    if m > 0:
        j = order[m - 1]
        gamma = 1.0 / (rho_hist[j] * _dot(y_hist[j], y_hist[j]))
        for k in range(len(direction)):
            direction[k] *= gamma
    for i in range(m):
        j = order[i]
        beta = rho_hist[j] * _dot(y_hist[j], direction)
        _axpy(direction, alpha[i] - beta, s_hist[j])
    if constrain:
        for k in range(len(pg)):
            if direction[k] * pg[k] >= 0.0:
                direction[k] = 0.0


@numba.njit(cache=True)
def orthant_step(theta, pg, direction, step, out):
    """``out = pi(theta + step direction; xi)`` (module docstring, step 3); returns
    ``(pg.(out - theta), ||out||_1, ||out||^2)``."""
    slope, l1, l2 = 0.0, 0.0, 0.0
    for k in range(len(theta)):
        w = theta[k]
        v = w + step * direction[k]
        orthant = w if w != 0.0 else -pg[k]
        if v * orthant <= 0.0:
            v = 0.0
        out[k] = v
        slope += pg[k] * (v - w)
        l1 += abs(v)
        l2 += v * v
    return slope, l1, l2


@numba.njit(cache=True)
def plain_step(theta, pg, direction, step, out):
    """``out = theta + step direction`` (``rho1 = 0``: L-BFGS, no orthant); returns
    ``(pg.(out - theta), ||out||_1, ||out||^2)``."""
    slope, l1, l2 = 0.0, 0.0, 0.0
    for k in range(len(theta)):
        v = theta[k] + step * direction[k]
        out[k] = v
        slope += pg[k] * (v - theta[k])
        l1 += abs(v)
        l2 += v * v
    return slope, l1, l2


@numba.njit(cache=True)
def left_slope(theta, trial, grad, rho2, rho1):
    """``phi'(1-)`` of ``phi(a) = F(theta + a (trial - theta))``, ``grad`` the loss gradient at
    ``trial``: ``sum_k u_k (g_k + rho2 trial_k) + rho1 (sign(trial_k) u_k if trial_k != 0 else
    -|u_k|)``, ``u = trial - theta``. By convexity ``F(trial) - F(theta) <= phi'(1-)``."""
    total = 0.0
    for k in range(len(theta)):
        w = trial[k]
        u = w - theta[k]
        total += u * (grad[k] + rho2 * w)
        if w > 0.0:
            total += rho1 * u
        elif w < 0.0:
            total -= rho1 * u
        else:
            total -= rho1 * abs(u)
    return total


@numba.njit(cache=True)
def store_pair(trial, theta, trial_grad, grad, rho2, s_out, y_out):
    """``s = trial - theta``, ``y = g(trial) - g(theta)`` of the smooth part (loss gradients plus
    ``rho2 s``); returns ``s.y``."""
    sy = 0.0
    for k in range(len(theta)):
        s = trial[k] - theta[k]
        y = trial_grad[k] - grad[k] + rho2 * s
        s_out[k] = s
        y_out[k] = y
        sy += s * y
    return sy


def solve_owlqn(data, rho1, rho2, theta=None, max_iter=1000, tol=1e-6, limits=None, sparse=SPARSE_DEFAULT,
                scale=None, memory=MEMORY, stop_window=5, stop_eps=None):
    """Minimise ``F`` by OWL-QN; returns a :class:`~solvers.proximal.crf_problem.CRFFit`.

    ``memory``: stored L-BFGS pairs; ``tol``, ``scale``, ``stop_window``, ``stop_eps``: the
    stopping rules of the module docstring; ``limits`` the budget (a
    :class:`solvers.limits.Limits`, started here if not yet; None: no time limit), checked after
    every function evaluation; ``sparse``: the slides' sparse forward-backward in the passes.
    """
    rho1, rho2 = check_problem(data, rho1, rho2)
    if int(memory) < 1:
        raise ValueError(f"memory (stored L-BFGS pairs) must be >= 1, got {memory}")
    check_stop(stop_eps, stop_window)
    memory = int(memory)
    clock = time.perf_counter()
    limits = None if limits is None else limits.started()
    theta = start_point(data, theta)
    evaluate = LossGradient(data, sparse)
    n_params = data.n_params
    grad = np.empty(n_params)
    loss, grad = evaluate(theta, grad)
    if not np.isfinite(loss):
        raise ValueError("theta (warm start): the loss is infinite there (potentials beyond the floating-point range)")
    if scale is None:
        scale = float(np.abs(grad).max(initial=0.0)) if not theta.any() else rho1_max(data, sparse)
    value = objective_value(loss, theta, rho1, rho2)
    pg, direction, trial = np.empty(n_params), np.empty(n_params), np.empty(n_params)
    trial_grad = np.empty(n_params)
    s_hist, y_hist = np.empty((memory, n_params)), np.empty((memory, n_params))
    rho_hist, alpha = np.zeros(memory), np.zeros(memory)
    stored: list[int] = []  # slots of the stored pairs, oldest first
    take = orthant_step if rho1 > 0 else plain_step
    history, status, n_iter, n_evals = [], "max_iter", 0, 1
    while True:
        violation = pseudo_gradient(theta, grad, rho1, rho2, pg)
        history.append((time.perf_counter() - clock, value, violation))
        stop = stop_status(history, tol * max(scale, 1e-300), stop_eps, stop_window, n_iter, max_iter, limits)
        if stop is not None:
            status = stop
            break
        accepted = False
        for attempt in range(2):  # the quasi-Newton direction, then (memory cleared) the pseudo-gradient's
            two_loop(pg, s_hist, y_hist, rho_hist, np.array(stored, dtype=np.int64), direction, alpha, rho1 > 0)
            first = not stored
            step = 1.0 / max(np.linalg.norm(direction), 1e-300) if n_iter == 0 and first else 1.0
            shrink = 0.1 if n_iter == 0 and first else 0.5
            for _ in range(MAX_BACKTRACKS):
                slope, l1, l2 = take(theta, pg, direction, step, trial)
                t_loss, trial_grad = evaluate(trial, trial_grad)
                n_evals += 1
                t_value = t_loss + rho1 * l1 + 0.5 * rho2 * l2
                if slope < 0 and (t_value <= value + GAMMA * slope or (
                        np.isfinite(t_value) and left_slope(theta, trial, trial_grad, rho2, rho1) <= GAMMA * slope)):
                    accepted = True
                    break
                if limits is not None and limits.expired():
                    break
                step *= shrink
            if accepted or not stored or (limits is not None and limits.expired()):
                break
            stored.clear()
        if not accepted:
            status = "out_of_time" if limits is not None and limits.expired() \
                else "stalled"
            break
        n_iter += 1
        free = [j for j in range(memory) if j not in stored]
        slot = free[0] if free else stored[0]  # a free slot, else the oldest pair's
        if slot in stored:
            stored.remove(slot)
        sy = store_pair(trial, theta, trial_grad, grad, rho2, s_hist[slot], y_hist[slot])
        if sy > 0:
            rho_hist[slot] = 1.0 / sy
            stored.append(slot)
        theta, trial = trial, theta
        grad, trial_grad = trial_grad, grad
        loss, value = t_loss, t_value
    return CRFFit(theta=theta, objective=value, loss=loss, kkt=violation, n_iter=n_iter, status=status,
                  seconds=time.perf_counter() - clock, history=tuple(history), rho1=rho1, rho2=rho2,
                  solver="owlqn")
