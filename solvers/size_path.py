"""Certified best models of each size: the exact solves of an accuracy-size path and what they share.

Let ``F_k`` be the models with at most ``k`` non-zero coefficients and ``V(k) = min over F_k`` of
the objective ``f`` (loss + ``C0 * size`` (+ SLIM's L1 tie-breaker); the same function for every
``k``, only the constraint ``size <= k`` changes). Since ``F_k`` is contained in ``F_{k+1}``,
``V`` is non-increasing in ``k``, and the solves of the sizes ``k_1 < k_2 < ...`` share:

* **models, upwards** -- a model found at any size fits every size at least its support size, so
  each size keeps the best model found at any size whose support it admits (in particular the
  best model of size ``k-1`` is the warm start of size ``k``);
* **bounds, downwards** -- a lower bound ``L <= V(K)`` is one for every ``k < K`` too
  (``V(k) >= V(K)``), so each size's bound is the largest bound of any size at least it.
  Hence a proven optimum at size ``K`` that uses ``s < K`` features is the optimum of every size
  ``s..K``;
* **the L0 cost, upwards** -- every model with more than ``k`` features has objective at least
  ``floor + (k + 1) * c`` (``c``: the least L0 cost of one feature; ``floor``: a lower bound on the
  loss of every model, 0 or RiskSLIM's ``loss_floor``), so when size ``k``'s
  proven optimum has objective at most that, it is the optimum of every larger size, which is
  then not solved.

Not valid, and not used: "the proven optimum of size ``k`` uses fewer than ``k`` features, so it
is optimal for every larger size". A pair of features can help where no single one does (a label
that is the AND of two balanced coins: the best 1-feature SLIM model is the empty one, the best
2-feature model has no error); the test suite checks this counterexample.

Each size is certified as :func:`solvers.pipeline.certify` does: status ``optimal`` when the
relative gap between its model's objective and its bound is at most ``mip_rel_gap``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from formulations.base import Instance
from solvers.limits import Limits
from solvers.pipeline import Fit, certify, solve_exact
from solvers.result import Status


@dataclass(frozen=True)
class SizeFit:
    """One size of the path: its instance (``max_size = size``), its certified fit and how the
    certificate was obtained (``"solved"``, or which sizes' model / bound it took)."""

    size: int
    instance: Instance
    fit: Fit
    how: str


def check_sizes(sizes: Sequence[int]) -> list[int]:
    """``sizes`` as a list of increasing non-negative integers, or a ``ValueError``."""
    out = [int(k) for k in sizes]
    if not out or any(k < 0 for k in out) or out != sorted(set(out)):
        raise ValueError(f"sizes must be increasing non-negative integers, got {list(sizes)}")
    return out


def solve_sizes(instance_for: Callable[[int], Instance], sizes: Sequence[int], limits: Limits,
                feature_cost: float, loss_floor: float = 0.0) -> list[SizeFit]:
    """Solve ``instance_for(k)`` for each ``k`` of ``sizes`` (increasing) within one budget.

    ``limits`` is started once; size ``i`` of ``n`` gets ``1 / (n - i)`` of the time left (what an
    earlier size leaves unused goes to the later ones). ``feature_cost`` is the least L0 cost of one
    feature (``C0 * min_j c0_j``) and ``loss_floor`` a lower bound on every model's loss, for the L0
    rule of the module docstring (``feature_cost=0`` disables it). Returns
    one :class:`SizeFit` per size, after the sharing of models and bounds.
    """
    sizes = check_sizes(sizes)
    limits = limits.started()
    solved: list[SizeFit] = []
    for i, k in enumerate(sizes):
        instance = instance_for(k)
        done = next((s for s in solved if s.fit.status == Status.OPTIMAL and s.fit.model is not None
                     and feature_cost > 0 and s.fit.objective <= loss_floor + feature_cost * (s.size + 1)), None)
        if done is not None:
            fit = replace(done.fit, times={"total": 0.0})  # nothing solved for this size
            solved.append(SizeFit(k, instance, _recertified(instance, fit, done.fit.model, done.fit.bound,
                                                            limits.mip_rel_gap),
                                  f"L0 rule: size {done.size}'s optimum costs at most {done.size + 1} features"))
            continue
        start = solved[-1].fit.model if solved else None
        fit = solve_exact(instance, start=start, limits=limits.share(1.0 / (len(sizes) - i)))
        solved.append(SizeFit(k, instance, fit, "solved"))
    return share(solved, limits.mip_rel_gap)


def share(path: list[SizeFit], mip_rel_gap: float) -> list[SizeFit]:
    """Each size with the best model of any size that fits it and the largest bound of any size at
    least it, re-certified (module docstring)."""
    out = []
    for j, own in enumerate(path):
        fits_here = [s for s in path if s.fit.model is not None
                     and int(np.sum(own.instance.used(s.fit.model))) <= own.size]
        best = own
        for s in fits_here:
            if s is not own and own.instance.objective(s.fit.model) < (
                    own.instance.objective(best.fit.model) if best.fit.model is not None else np.inf) - 1e-12:
                best = s
        bound, from_size = own.fit.bound, own.size
        for s in path[j + 1:]:  # a larger size's bound only where it is higher
            if np.isfinite(s.fit.bound) and not s.fit.bound <= bound:
                bound, from_size = s.fit.bound, s.size
        if best is own and from_size == own.size:
            out.append(own)
            continue
        if best.fit.model is None:
            out.append(replace(own, fit=replace(own.fit, bound=bound)))
            continue
        fit = _recertified(own.instance, own.fit, best.fit.model, bound, mip_rel_gap)
        taken = [f"model of size {best.size}"] * (best is not own) + [f"bound of size {from_size}"] * (
            from_size != own.size)
        out.append(SizeFit(own.size, own.instance, fit, f"{own.how}; took the {' and the '.join(taken)}"))
    return out


def _recertified(instance: Instance, fit: Fit, model, bound: float, mip_rel_gap: float) -> Fit:
    value = instance.objective(model)
    bound = min(bound, value) if np.isfinite(bound) else bound
    status, gap = certify(value, bound, mip_rel_gap) if np.isfinite(bound) else (Status.FEASIBLE, np.inf)
    return replace(fit, model=model, objective=value, bound=bound, gap=gap, status=status)
