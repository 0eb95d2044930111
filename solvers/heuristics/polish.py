"""RiskSLIM's polishing: integer coordinate descent on the support of a model (Ustun & Rudin 2019,
the polishing of Algorithm 2's integral points), as a heuristic and as the lazy oracle's polisher.

Each move sets one non-zero point to another value of its range (0 included) and re-optimises the
integer intercept exactly (:meth:`formulations.logistic_cuts.LogisticData.best_intercept`); the
first improving value of each coordinate is taken, and passes repeat until none improves. A move
never adds a feature, so the model stays in the coefficient set and within ``max_size``; a move
that would break an operational constraint more than the model does is skipped.

:func:`with_polisher` gives the exact program's lazy oracle (:class:`formulations.logistic_cuts.
LogisticCuts`) this polishing, so SCIP's lazy-cut tree (:mod:`solvers.backends.scip`) polishes
the integral points it finds; the formulation itself only declares the ``polisher`` hook.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from formulations.base import Model
from formulations.constraints import binding
from formulations.program import Program


def polish(instance, model: Model, max_passes: int = 10, limits: Any = None) -> Model:
    """The polished ``model`` of a :class:`formulations.riskslim.RiskSLIMInstance` (module
    docstring): never worse, never more features; stops when no move improves, after
    ``max_passes`` or when the budget ``limits`` (:class:`solvers.limits.Limits`) expires."""
    cs, X = instance.coefficients, instance.X
    costs = instance.spec.c0 * cs.c0 * ~instance.forced
    coef = np.asarray(model.coef, dtype=float).copy()
    scores = X @ coef
    b, loss = instance.data.best_intercept(scores, instance.intercept_bounds, start=model.intercept)
    best = loss + instance.penalty(coef)
    for _ in range(max_passes):
        improved = False
        for j in np.flatnonzero((coef != 0) & cs.integer):
            if limits is not None and limits.expired():
                return Model(coef, b)
            for v in np.arange(math.ceil(cs.lb[j] - 1e-9), math.floor(cs.ub[j] + 1e-9) + 1, dtype=float):
                if v == coef[j] or coef[j] == 0:
                    continue
                trial = scores + X[:, j] * (v - coef[j])
                bb, ll = instance.data.best_intercept(trial, instance.intercept_bounds, start=b)
                value = ll + instance.penalty(coef) - (costs[j] if v == 0 else 0.0)
                if binding(instance.constraints) and _breaks(instance.constraints, coef, b, j, v, bb):
                    continue
                if value < best - 1e-12:
                    best, b, scores, improved, coef[j] = value, bb, trial, True, v
        if not improved:
            break
    return Model(coef, float(b))


def _breaks(constraints, coef: np.ndarray, b: float, j: int, v: float, bb: float) -> bool:
    """Whether setting ``coef[j] = v`` (intercept ``bb``) violates the operational constraints more
    than ``(coef, b)`` does."""
    moved = coef.copy()
    moved[j] = v
    return constraints.violation(moved, bb) > constraints.violation(coef, b) + 1e-9


def polish_vector(instance, x: np.ndarray) -> np.ndarray:
    """The oracle protocol's ``polish(x)``: the program vector of the polished model at an integral
    ``x`` of ``instance``'s exact program; ``x`` itself (a copy) when it is fractional."""
    p = instance.exact()
    coef = np.asarray(x[p.blocks["coef"]], dtype=float)
    cs = instance.coefficients
    if not np.array_equal(coef[cs.integer], np.rint(coef[cs.integer])):
        return np.array(x, dtype=float)
    return instance.lift(polish(instance, instance.round(Model(coef, float(np.rint(x[p.blocks["intercept"]][0]))))))


def with_polisher(instance, program: Program) -> Program:
    """``program`` (the exact program of ``instance``) with its lazy oracle polishing by
    :func:`polish_vector`."""
    oracle = program.lazy
    return replace(program, lazy=replace(oracle, polisher=lambda x: polish_vector(instance, x)))
