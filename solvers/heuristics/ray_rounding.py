"""A relaxed model rounded into the coefficient set along its ray.

A relaxation's direction carries its information, its scale often does not: a relaxed 0-1 or
hinge model with every coefficient below one half rounds to the empty model. So the nearest
rounding of the model (:meth:`formulations.base.Instance.round`) is compared with the roundings
of the model rescaled (intercept included) so that its largest coefficient is each of
:data:`RAY_TARGETS`; the feasible one (:func:`solvers.feasibility.violation`) of lowest true
objective is kept, never worse than plain nearest rounding.
"""
from __future__ import annotations

import numpy as np

from formulations.base import Instance, Model
from solvers.feasibility import FEASIBILITY_TOL, violation
from solvers.limits import Limits

#: largest |coefficient| targets of the rescaled roundings (model units)
RAY_TARGETS = (1.0, 2.0, 3.0, 5.0, 10.0)


def round_along_ray(instance: Instance, model: Model, limits: Limits) -> tuple[Model, float]:
    """``(rounded model, scale)``: the best rounding of ``model * scale`` over the scales of the module
    docstring (feasible first, then by true objective); the nearest rounding (scale 1) is always
    tried, the rescaled ones while ``limits`` has time."""
    peak = float(np.max(np.abs(model.coef), initial=0.0))
    scales = [1.0] + ([t / peak for t in RAY_TARGETS] if peak > 0 else [])
    best: tuple[bool, float, Model, float] | None = None
    for scale in scales:
        if limits.expired() and best is not None:
            break
        rounded = instance.round(Model(model.coef * scale, model.intercept * scale, model.extras))
        key = (violation(instance, rounded) > FEASIBILITY_TOL, instance.objective(rounded))
        if best is None or key < best[:2]:
            best = (*key, rounded, scale)
    return best[2], best[3]
