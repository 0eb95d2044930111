"""Whether a model is a feasible point of its exact program: the one check of starts and results.

:func:`violation` is the largest violation of ``instance.lift(model)`` in the exact program
(:meth:`formulations.base.Instance.exact`: its rows, bounds, integrality and cones); a model is
feasible when it is at most :data:`FEASIBILITY_TOL`.
"""
from __future__ import annotations

from formulations.base import Instance, Model

#: constraint tolerance of the feasibility checks of starts and returned models
FEASIBILITY_TOL = 1e-6


def violation(instance: Instance, model: Model) -> float:
    """Largest violation of ``lift(model)`` in the exact program (rows, bounds, integrality, cones)."""
    v = instance.exact().violations(instance.lift(model), FEASIBILITY_TOL)
    return float(max(v["rows"], v["bounds"], v["integrality"], v["cones"]))
