"""Extra method of the Facets formulation: proximal path + rounding to the grid.

The paper's own route (Belahcene et al. 2020, section 5): solve the convex Facets problem by
proximal gradient (FISTA with the Facets / SCF prox of eqs. 12 / 15, whose plateaus push the
coefficients onto the grid), then round ``coef / grid_unit`` to the nearest integers in the box
and give the rounded model its best intercept.
"""
from __future__ import annotations

from typing import Any, Callable

from formulations.base import Model
from solvers.limits import Limits
from solvers.proximal.gradient import proximal_gradient

#: FISTA iteration budget of the method (the budget is checked before and after the path)
MAX_ITER = 20000


def prox_rounding(instance, source, limits: Limits, seed: int) -> tuple[Model | None, str]:
    """Catalog method ``"prox_rounding"``: FISTA on :meth:`FacetsInstance.composite`, rounded to the grid.

    ``source`` (a relaxed fit) warm-starts the path when it has a model. Returns ``(None, reason)``
    for the hinge loss (not smooth), weighted rows or an expired budget.
    """
    if instance.spec.loss == "hinge":
        return None, "prox_rounding needs a smooth loss (logistic or least_squares); use 'rounding' for the hinge"
    if limits.expired():
        return None, "time limit reached before the proximal path"
    try:
        loss, penalty = instance.composite()
    except ValueError as exc:
        return None, str(exc)
    start = source.model if source is not None and source.model is not None else None
    result = proximal_gradient(loss, penalty, w0=None if start is None else start.coef,
                               b0=None if start is None else start.intercept, tol=1e-8, max_iter=MAX_ITER)
    if result.x is None:
        return None, f"proximal path found no model ({result.status.value}: {result.message})"
    rounded = instance.round(Model(result.x, float(result.raw["intercept"])))
    model = min((rounded, instance.with_best_intercept(rounded.coef)), key=instance.objective)
    return model, (f"FISTA {result.status.value} after {result.iterations} iterations (objective {result.objective:.6g}), "
                   f"rounded to the grid with its best intercept")


def heuristic(instance, limits: Limits, seed: int, relaxed: Callable[[], Any]) -> Model | None:
    """Start of the exact solve: the convex program rounded to the grid. ``relaxed()`` is the
    pipeline's relaxed solve (the formulation's default relaxed backend) within the heuristic's
    limits (its share of the call's time, and the call's memory, threads and seed).

    The rounded model keeps its intercept (clipped) or takes its best intercept, whichever is
    better; None when the relaxation finds no model within the budget.
    """
    if limits.expired():
        return None
    fit = relaxed()
    if fit.model is None:
        return None
    rounded = instance.round(fit.model)
    return min((rounded, instance.with_best_intercept(rounded.coef)), key=instance.objective)
