"""What the CRF solvers share: input checks, the exact loss and gradient, the KKT measure, the fit record.

The objective is ``F(theta) = l(D; theta) + rho1 ||theta||_1 + rho2 / 2 ||theta||^2``
(``formulations/crf/criterion.py``); ``kkt_k`` is the distance of zero to the subdifferential of
``F`` in coordinate ``k``: ``|g_k + rho2 theta_k + rho1 sign(theta_k)|`` where ``theta_k != 0``,
``(|g_k + rho2 theta_k| - rho1)_+`` where ``theta_k = 0`` (``g = grad l``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.proximal.crf_forward_backward import SPARSE_DEFAULT, loss_and_gradient


@dataclass(frozen=True)
class CRFFit:
    """A solver's answer: weights, objective ``F``, loss ``l``, largest KKT violation, outer
    iterations, status (``"converged"``: the KKT rule held; ``"max_iter"``; ``"out_of_time"``: the
    budget's time spent), wall seconds, and ``history`` rows ``(seconds, F, kkt)`` after each outer iteration."""

    theta: np.ndarray
    objective: float
    loss: float
    kkt: float
    n_iter: int
    status: str
    seconds: float
    history: tuple
    rho1: float
    rho2: float
    solver: str

    @property
    def n_active(self) -> int:
        return int(np.count_nonzero(self.theta))


def check_problem(data, rho1, rho2) -> tuple[float, float]:
    """Validate the penalty and the labels; return ``(rho1, rho2)`` as floats."""
    rho1, rho2 = float(rho1), float(rho2)
    if not (np.isfinite(rho1) and rho1 >= 0):
        raise ValueError(f"rho1 must be a finite number >= 0, got {rho1}")
    if not (np.isfinite(rho2) and rho2 >= 0):
        raise ValueError(f"rho2 must be a finite number >= 0, got {rho2}")
    if data.n_tokens == 0:
        raise ValueError("no tokens to train on")
    if np.any(data.y < 0):
        raise ValueError("training needs the label of every token")
    return rho1, rho2


def start_point(data, theta) -> np.ndarray:
    """A fresh float copy of the warm start ``theta`` (zeros when None), its shape checked."""
    if theta is None:
        return np.zeros(data.n_params)
    theta = np.array(theta, dtype=float)
    if theta.shape != (data.n_params,):
        raise ValueError(f"theta (warm start): expected shape ({data.n_params},), got {theta.shape}; warm-start "
                         f"only from a fit on the same data and templates")
    if not np.isfinite(theta).all():
        raise ValueError("theta (warm start) has non-finite values")
    return theta


def check_stop(stop_eps, stop_window) -> None:
    """Validate the relative-decrease rule's ``stop_eps`` (None: off) and ``stop_window``."""
    if stop_eps is not None and not (stop_eps > 0 and int(stop_window) >= 1):
        raise ValueError(f"stop_eps must be > 0 (or None) with stop_window >= 1, got stop_eps={stop_eps}, "
                         f"stop_window={stop_window}")


def small_decrease(history, stop_eps, stop_window) -> bool:
    """The objective-window rule of Wapiti's l-bfgs (``-o`` / ``-e``, ``lbfgs.c``): the relative
    decrease of ``F`` over the last ``stop_window`` outer iterations, ``(F_{k-w} - F_k) / |F_{k-w}|``, is below ``stop_eps``
    (``history`` rows ``(seconds, F, kkt)``, one per iteration; never with ``stop_eps`` None)."""
    if stop_eps is None or len(history) <= stop_window:
        return False
    before, now = history[-1 - stop_window][1], history[-1][1]
    return (before - now) / max(abs(before), 1e-300) < stop_eps


def stop_status(history, tol: float, stop_eps, stop_window: int, n_iter: int, max_iter: int,
                limits=None) -> str | None:
    """Why the iterations stop after the last ``history`` row ``(seconds, F, kkt)``, or None: the
    optimality violation at most ``tol`` (``"converged"``), Wapiti's objective window
    (:func:`small_decrease`), ``max_iter`` iterations done, or the budget ``limits`` (a started
    :class:`solvers.limits.Limits`; None: no time limit) spent; the
    stopping rules of every CRF solver, in this order."""
    _, _, violation = history[-1]
    if violation <= tol:
        return "converged"
    if small_decrease(history, stop_eps, stop_window):
        return "small_decrease"
    if n_iter >= max_iter:
        return "max_iter"
    if limits is not None and limits.expired():
        return "out_of_time"
    return None


def full_gradient(theta, data, sparse=SPARSE_DEFAULT):
    """``(l(D; theta), grad l)`` by one forward-backward pass over every sentence."""
    return loss_and_gradient(theta, data, sparse)


def objective_value(loss, theta, rho1, rho2) -> float:
    """``F`` from the loss ``l`` and the weights."""
    return float(loss + rho1 * np.abs(theta).sum() + 0.5 * rho2 * theta @ theta)


def kkt_max(theta, grad, rho1, rho2) -> float:
    """``max_k kkt_k`` (module docstring)."""
    smooth = grad + rho2 * theta
    nonzero = theta != 0
    violation = np.maximum(np.abs(smooth) - rho1, 0.0)
    violation[nonzero] = np.abs(smooth[nonzero] + rho1 * np.sign(theta[nonzero]))
    return float(violation.max(initial=0.0))


def rho1_max(data, sparse=SPARSE_DEFAULT) -> float:
    """The least ``rho1`` with ``theta = 0`` optimal: ``||grad l(0)||_inf``."""
    return float(np.abs(full_gradient(np.zeros(data.n_params), data, sparse)[1]).max(initial=0.0))
