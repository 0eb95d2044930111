"""Start of the fused-lasso hinge ILP (Sokolovska, eqs. 1-5): its LP relaxation rounded into the
points table along its ray, or the flat table when the relaxation has no model in time.

The flat table (no points anywhere, the best hinge intercept) is built first and kept unless a
rounding of the relaxation beats it, so the exact solve always has a start the moment the
heuristic returns: a fit stopped at its time limit keeps a model rather than ending with none.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from formulations.base import Model
from solvers.feasibility import FEASIBILITY_TOL, violation
from solvers.heuristics.ray_rounding import round_along_ray
from solvers.limits import Limits


def heuristic(instance, limits: Limits, seed: int, relaxed: Callable[[], Any]) -> Model | None:
    """The better (feasible first, then true objective) of the flat table and the relaxation
    (``relaxed()``: the pipeline's relaxed solve within the heuristic's share of the time) rounded
    along its ray (:func:`solvers.heuristics.ray_rounding.round_along_ray`); None when neither is
    feasible (operational constraints the flat table breaks and no relaxation in time)."""
    flat = instance.round(Model(np.zeros(instance.X.shape[1]), 0.0))
    candidates = [flat]
    if not limits.expired():
        fit = relaxed()
        if fit.model is not None:
            candidates.append(round_along_ray(instance, fit.model, limits)[0])
    scored = [(violation(instance, m) > FEASIBILITY_TOL, instance.objective(m), i) for i, m in enumerate(candidates)]
    infeasible, _, best = min(scored)
    return None if infeasible else candidates[best]
