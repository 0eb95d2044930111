"""What the proximal solvers share: option checks, the BLAS thread cap, the duality gap.

:func:`duality_gap` is the stopping certificate of FISTA / ISTA (:mod:`solvers.proximal.gradient`),
prox-Newton (:mod:`solvers.proximal.prox_newton`) and Gram coordinate descent
(:mod:`solvers.proximal.gram_cd`): the gap between the primal value and the dual objective at the
rescaled dual candidate.
"""
from __future__ import annotations

import math
from contextlib import nullcontext
from functools import lru_cache
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from formulations.penalties import OWL, L1, Binarsity, ElasticNet, Penalty, WeightedL1

_NORM_PENALTIES = (L1, WeightedL1, OWL, Binarsity)  # positively homogeneous: conjugate = indicator of the gauge ball


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    """One scan of the loaded BLAS/OpenMP libraries (a scan reads /proc: ~2 ms, too slow per solve)."""
    return ThreadpoolController()


def blas_limit(threads: int | None):
    """Context manager capping BLAS threads to ``threads`` (None: no change)."""
    return _controller().limit(limits=int(threads), user_api="blas") if threads else nullcontext()


def _check_options(tol: float, max_iter: int, check_every: int) -> None:
    if not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be positive and finite, got {tol!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    if int(check_every) < 1:
        raise ValueError(f"check_every must be >= 1, got {check_every!r}")


def duality_gap(loss: Any, penalty: Penalty, w: np.ndarray, b: float, state: np.ndarray, value: float,
                gradient: np.ndarray, primal: float) -> tuple[float, float]:
    """Dual objective at the candidate built at ``(w, b)`` and the gap to ``primal``.

    ``state``, ``value`` and ``gradient`` (w-part) are the loss' state, value and gradient at
    ``(w, b)``. Dual candidate :math:`\\theta = -\\nabla_z F` (centred with an intercept), rescaled
    by :math:`\\min(1, 1/\\Omega^\\circ(X^\\top\\theta))` for norm penalties; for the elastic net
    :math:`D = -F^*(-\\theta) - \\Omega^*(X^\\top\\theta)`. Returns ``(nan, nan)`` when no dual is
    available or the candidate is not dual feasible.
    """
    if not hasattr(loss, "dual_point"):
        return math.nan, math.nan
    if isinstance(penalty, _NORM_PENALTIES):
        xt_theta, loss_dual = loss.dual_point(w, b, state, value, gradient)
        gauge = penalty.zero_gauge(xt_theta)
        if not math.isfinite(gauge):  # unpenalised coordinates with a non-zero gradient
            return math.nan, math.nan
        dual = loss_dual(1.0 if gauge <= 1.0 else 1.0 / gauge)
    elif isinstance(penalty, ElasticNet) and penalty.l1_ratio < 1.0:
        xt_theta, loss_dual = loss.dual_point(w, b, state, value, gradient)
        dual = loss_dual(1.0) - penalty.conjugate(xt_theta)
    else:
        return math.nan, math.nan
    if not math.isfinite(dual):
        return math.nan, math.nan
    return dual, primal - dual
