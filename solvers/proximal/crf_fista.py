"""FISTA for the elastic-net CRF: the exact-gradient proximal method (Beck & Teboulle 2009).

Minimises ``F(theta) = f(theta) + rho1 ||theta||_1`` with the smooth part
``f = l(D; theta) + rho2 / 2 ||theta||^2`` (``formulations/crf/criterion.py``). An iteration
takes the gradient of ``l`` at the extrapolated point ``z`` (one forward-backward pass over every
sentence), the proximal step ``theta+ = S(z - grad f(z) / L, rho1 / L)``, and backtracks ``L``
(doubling) until ``f(theta+) <= f(z) + grad f(z).(theta+ - z) + L / 2 ||theta+ - z||^2``
(Beck & Teboulle, eq. 2.5) or, once that quadratic term is below the rounding of ``f``, until
``(grad f(theta+) - grad f(z)).(theta+ - z) <= L ||theta+ - z||^2`` (TFOCS, Becker, Candès & Grant
2011, section 5.3); ``L`` is halved again before the next iteration. The momentum is
restarted whenever ``F`` would increase or the momentum points uphill,
``(z - theta+).(theta+ - theta) > 0`` (O'Donoghue & Candès 2015, function and gradient schemes;
the second still works where ``F`` is flat to machine precision); the step taken right after a
restart is a plain proximal-gradient step, which decreases ``F`` by the majorisation (an increase
there can only be rounding, at the last digits of ``F``), so ``F`` decreases monotonically.

Stopping rule (KKT, the same as ``crf_bcd``): stop when ``max_k kkt_k <= tol * rho1_max`` at
the current ``theta``, with the exact gradient of ``l`` (``crf_problem.kkt_max``).
"""
from __future__ import annotations

import time

import numpy as np

from solvers.proximal.crf_forward_backward import SPARSE_DEFAULT
from solvers.proximal.crf_problem import (CRFFit, check_problem, check_stop, full_gradient, kkt_max, objective_value,
                                          rho1_max, stop_status, start_point)

MAX_DOUBLINGS = 60


def _soft(v, threshold):
    return np.sign(v) * np.maximum(np.abs(v) - threshold, 0.0)


def solve_fista(data, rho1, rho2, theta=None, max_iter=5000, tol=1e-6, limits=None, sparse=SPARSE_DEFAULT,
                scale=None, lipschitz=None, stop_eps=None, stop_window=5):
    """Minimise ``F`` by FISTA with backtracking and restarts; returns a
    :class:`~solvers.proximal.crf_problem.CRFFit`. ``lipschitz`` is the first guess of ``L``
    (default: ``max_tokens_per_feature``-free estimate ``1``, corrected by the backtracking);
    ``stop_eps`` (None: off) and ``stop_window``: also stop (``"small_decrease"``) when ``F`` fell
    by less than ``stop_eps`` relatively over the last ``stop_window`` iterations
    (``crf_problem.small_decrease``, Wapiti's rule). ``limits``: the budget (a
    :class:`solvers.limits.Limits`, started here if not yet; None: no time limit), checked every
    iteration."""
    rho1, rho2 = check_problem(data, rho1, rho2)
    check_stop(stop_eps, stop_window)
    clock = time.perf_counter()
    limits = None if limits is None else limits.started()
    theta = start_point(data, theta)
    if scale is None:
        scale = rho1_max(data, sparse)
    step_l = 1.0 if lipschitz is None else float(lipschitz)
    loss, grad = full_gradient(theta, data, sparse)
    value = objective_value(loss, theta, rho1, rho2)
    z, z_loss, z_grad = theta, loss, grad
    momentum = 1.0
    history, status, n_iter = [], "max_iter", 0
    while True:
        violation = kkt_max(theta, grad, rho1, rho2)
        history.append((time.perf_counter() - clock, value, violation))
        stop = stop_status(history, tol * max(scale, 1e-300), stop_eps, stop_window, n_iter, max_iter, limits)
        if stop is not None:
            status = stop
            break
        smooth_z = z_loss + 0.5 * rho2 * z @ z
        gradient_z = z_grad + rho2 * z
        for _ in range(MAX_DOUBLINGS):
            candidate = _soft(z - gradient_z / step_l, rho1 / step_l)
            c_loss, c_grad = full_gradient(candidate, data, sparse)
            diff = candidate - z
            quadratic = 0.5 * step_l * diff @ diff
            if quadratic <= 1e-10 * max(abs(smooth_z), 1.0):  # below rounding of f: curvature test
                if (c_grad + rho2 * candidate - gradient_z) @ diff <= 2.0 * quadratic:
                    break
            elif c_loss + 0.5 * rho2 * candidate @ candidate <= smooth_z + gradient_z @ diff + quadratic:
                break
            step_l *= 2.0
        c_value = objective_value(c_loss, candidate, rho1, rho2)
        n_iter += 1
        if c_value > value and momentum > 1.0:  # restart the momentum from theta
            z, z_loss, z_grad, momentum = theta, loss, grad, 1.0
            continue
        if (z - candidate) @ (candidate - theta) > 0:  # gradient restart: momentum points uphill
            momentum = 1.0
        next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum * momentum))
        extrapolated = candidate + ((momentum - 1.0) / next_momentum) * (candidate - theta)
        theta, loss, grad, value, momentum = candidate, c_loss, c_grad, c_value, next_momentum
        if momentum > 1.0 and np.any(extrapolated != theta):
            z = extrapolated
            z_loss, z_grad = full_gradient(z, data, sparse)
        else:
            z, z_loss, z_grad = theta, loss, grad
        step_l *= 0.5
    return CRFFit(theta=theta, objective=value, loss=loss, kkt=violation, n_iter=n_iter, status=status,
                  seconds=time.perf_counter() - clock, history=tuple(history), rho1=rho1, rho2=rho2,
                  solver="fista")
