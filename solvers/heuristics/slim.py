"""SLIM heuristic: a start for the exact MILP (Ustun & Rudin 2016), within the wall-clock budget.

The big-M LP relaxation of SLIM is weak: unstarted, HiGHS may keep the trivial all-errors model
for a long time. :func:`heuristic` (the catalog's start for SLIM)

1. fits a ridge-logistic model (L-BFGS), rescales it to several magnitudes, rounds each into the
   coefficient set (:meth:`SLIMInstance.round`: clip, round, ``max_size``, best intercept) and
   keeps the best by the SLIM objective (:func:`rounded_logistic_start`);
2. with integer features and points, grows supports by beam search with exact integer moves
   and swaps and descends from the start (:mod:`solvers.heuristics.slim_search`); otherwise improves the
   start, and separately the rounded zero model, by greedy integer coordinate search, each move
   choosing the value of one coefficient *and* the best intercept exactly
   (:func:`coordinate_search`), and keeps the better;
3. on 0/1 features without operational constraints, grows supports by their Bayes error and
   solves the best of each size exactly (:mod:`solvers.heuristics.support_beam`: where no single
   feature beats the constant model, as with few positives, the integer moves of step 2 keep the
   constant model), and keeps the better model.

Every model it returns lies inside the coefficient set and ``max_size`` (the pipeline checks it
again with ``violations`` before using it). Every loop checks the budget.

Large tables without operational constraints: on more than
:data:`~solvers.heuristics.sampling.SEARCH_ROWS` merged rows the searches run on a
class-stratified sample of that many (:mod:`solvers.heuristics.sampling`), and the model found is
then improved by :func:`coordinate_search` on every row; the better, by the full objective, is the
start.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.optimize import minimize

from formulations.base import Model
from formulations.constraints import binding
from formulations.intercept import margin_error_intercept
from formulations.slim import SLIMInstance
from solvers.compiled import kernels_ready
from solvers.heuristics.sampling import SEARCH_ROWS, stratified_rows
from solvers.heuristics.slim_search import applies, search
from solvers.heuristics.support_beam import KERNELS as BEAM_KERNELS, bayes_beam
from solvers.limits import Limits


def _penalty(instance: SLIMInstance, coef: np.ndarray) -> float:
    used = instance.used(Model(coef, 0.0))
    return float(instance.spec.c0 * (instance.coefficients.c0 @ used) + instance.epsilon * np.abs(coef).sum())


def rounded_logistic_start(instance: SLIMInstance, l2: float = 1e-3, limits: Limits | None = None) -> Model:
    """Round a rescaled ridge-logistic fit into the coefficient set; keep the best scale.

    The rounded zero model is always among the candidates; the fit stops at its last iterate when
    ``limits`` expires.
    """
    X, y, w = instance.X, instance.y, instance.weights
    d = X.shape[1]

    def f(theta):
        z = y * (X @ theta[:d] + theta[d])
        loss = np.logaddexp(0.0, -z)
        g = -w * y * np.exp(-np.logaddexp(0.0, z))
        return float(w @ loss + 0.5 * l2 * theta[:d] @ theta[:d]), np.append(X.T @ g + l2 * theta[:d], g.sum())

    best = instance.round(Model(np.zeros(d), 0.0))
    best_value = instance.objective(best)
    if limits is not None and limits.expired():
        return best
    def stop(intermediate_result) -> None:
        if limits is not None and limits.expired():
            raise StopIteration

    theta = minimize(f, np.zeros(d + 1), jac=True, method="L-BFGS-B", options={"maxiter": 200}, callback=stop).x[:d]
    peak = np.abs(theta).max()
    if peak > 0:
        for scale in instance.coefficients.magnitude.max() * np.array([1.0, 0.5, 0.25, 0.125, 1 / 16]):
            candidate = instance.round(Model(theta * (scale / peak), 0.0))
            value = instance.objective(candidate)
            if value < best_value:
                best, best_value = candidate, value
    return best


def coordinate_search(instance: SLIMInstance, start: Model, max_passes: int = 20,
                      limits: Limits | None = None) -> Model:
    """Greedy integer coordinate descent on the SLIM objective from a model in the set.

    For each feature, every integer value in its range is tried with the best intercept
    (:func:`~formulations.intercept.margin_error_intercept`); the first strictly improving value
    is taken. Passes repeat until none improves, ``max_passes`` or the budget runs out. Each trial
    updates the scores incrementally (O(n) plus a sort). Moves that would exceed ``max_size``
    are skipped, so the search stays inside the coefficient set. With operational constraints
    the search minimises ``(constraint violation, objective)`` lexicographically: from a start
    that breaks a constraint it first repairs it, and once feasible it never leaves.
    """
    cs = instance.coefficients
    coef = start.coef.copy()
    scores = instance.X @ coef
    b, err = margin_error_intercept(scores, instance.y, instance.weights, instance.spec.margin,
                                    instance.intercept_bounds, instance.integer_intercept)
    obj = (instance.constraint_violation(Model(coef, b)), err + _penalty(instance, coef))
    k = instance.spec.max_size
    for _ in range(max_passes):
        improved = False
        for j in range(instance.X.shape[1]):
            if not cs.integer[j] or (limits is not None and limits.expired()):
                continue
            xj = instance.X[:, j]
            values = np.arange(np.ceil(cs.lb[j] - 1e-9), np.floor(cs.ub[j] + 1e-9) + 1)
            if not xj.any():
                values = values[np.abs(values) == np.abs(values).min()]
            if k is not None and coef[j] == 0 and instance.used(Model(coef, 0.0)).sum() >= k:
                values = values[values == 0]
            for v in values:
                if v == coef[j]:
                    continue
                trial = coef.copy()
                trial[j] = v
                s = scores + xj * (v - coef[j])
                bb, err = margin_error_intercept(s, instance.y, instance.weights, instance.spec.margin,
                                                 instance.intercept_bounds, instance.integer_intercept)
                val = (instance.constraint_violation(Model(trial, bb)), err + _penalty(instance, trial))
                if val[0] < obj[0] - 1e-12 or (val[0] <= obj[0] and val[1] < obj[1] - 1e-12):
                    obj, b, scores, coef = val, bb, s, trial
                    improved = True
        if not improved or (limits is not None and limits.expired()):
            break
    return Model(coef, b)


def heuristic(instance: SLIMInstance, limits: Limits | None = None, seed: int = 0) -> Model:
    """The best SLIM model the searches find within ``limits``.

    With integer features and points (:func:`solvers.heuristics.slim_search.applies`): beam search over
    supports with exact integer moves and swaps (:func:`solvers.heuristics.slim_search.search`), also
    descending from the rounded logistic start (repaired first by :func:`coordinate_search` when
    it breaks an operational constraint). Otherwise the best of two coordinate searches, from the
    rounded logistic start and from the rounded zero model: from zero the search is forward
    selection with integer values, from the rounded fit it prunes and adjusts a dense model.
    Then, on 0/1 features, the Bayes-error beam over supports (:func:`solvers.heuristics.support_beam.bayes_beam`)
    from the model found. The beam searches need their numba kernels: when they are not compiled
    yet and the budget is short (:func:`solvers.compiled.kernels_ready`), the coordinate searches
    run instead, and the Bayes-error beam not at all.
    Deterministic (``seed`` is unused). Models that obey the operational constraints come first;
    the pipeline rejects a start that does not.
    """
    c = instance.constraints
    if instance.X.shape[0] > SEARCH_ROWS and not binding(c):
        found = _heuristic(sample_rows(instance, SEARCH_ROWS, seed), limits)
        if limits is None or not limits.expired():
            found = min((found, coordinate_search(instance, found, limits=limits)), key=instance.objective)
    else:
        found = _heuristic(instance, limits)
    if (limits is not None and limits.expired()) or not kernels_ready(BEAM_KERNELS, limits):
        return found
    beam = bayes_beam(instance, instance.objective(found), limits)
    return found if beam is None else beam


def sample_rows(instance: SLIMInstance, rows: int, seed: int) -> SLIMInstance:
    """The instance on a class-stratified random sample of about ``rows`` of its merged rows
    (:func:`solvers.heuristics.sampling.stratified_rows`), with the same coefficient set, intercept
    box, margin and tie-breaker (for instances without operational constraints)."""
    chosen, w = stratified_rows(instance.y, instance.weights, rows, seed)
    return replace(instance, X=np.ascontiguousarray(instance.X[chosen]), y=instance.y[chosen], weights=w,
                   big_m=instance.big_m[chosen], _cache={})


def _heuristic(instance: SLIMInstance, limits: Limits | None) -> Model:
    start = rounded_logistic_start(instance, limits=limits)
    if applies(instance) and kernels_ready(("solvers.heuristics.slim_search",), limits):
        if instance.constraint_violation(start) > 1e-9:
            start = coordinate_search(instance, start, limits=limits)
        return search(instance, [start], limits=limits)
    return coordinate_heuristic(instance, start, limits)


def coordinate_heuristic(instance: SLIMInstance, start: Model, limits: Limits | None = None) -> Model:
    """The better of two :func:`coordinate_search` runs, from ``start`` and from the rounded zero
    model (the heuristic for data that is not integer; models obeying the constraints first)."""
    runs = [coordinate_search(instance, start, limits=limits)]
    if limits is None or not limits.expired():
        zero = instance.round(Model(np.zeros(instance.X.shape[1]), 0.0))
        runs.append(coordinate_search(instance, zero, limits=limits))
    return min(runs, key=lambda m: (instance.constraint_violation(m) > 1e-9, instance.objective(m)))
