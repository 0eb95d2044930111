"""Solving SLIM: a fast integer heuristic, then HiGHS warm-started from it.

The big-M LP relaxation of SLIM is weak (../shared/API-NOTES.md: on 5000 x 30 HiGHS did not
finish the root node in 30 s and, unstarted, kept the trivial all-errors model). So
:func:`solve_slim` always

1. fits a ridge-logistic model (L-BFGS), rescales it to several magnitudes, rounds into the
   coefficient box and keeps the best by the SLIM objective (:func:`rounded_logistic_start`);
2. improves it, and separately the zero model, by greedy integer coordinate search, each move
   choosing the value of one coefficient *and* the best intercept exactly
   (:func:`coordinate_search`), keeping the better (:func:`heuristic`);
3. passes it to HiGHS as a MIP start (``setSolution``) and returns the better of the two, so the
   returned model is never worse than the heuristic.
"""
from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize

from formulations.slim import SLIMInstance
from solvers.highs import solve_highs
from solvers.result import Result, Status, relative_gap


def best_intercept(scores: np.ndarray, y: np.ndarray, weights: np.ndarray, margin: float,
                   bounds: tuple[float, float], integer: bool) -> tuple[float, float]:
    """Intercept ``b`` minimising the weighted margin error ``sum_i v_i [y_i (s_i + b) < margin]``.

    Positive rows are correct iff ``b >= margin - s_i``, negative rows iff ``b <= -margin - s_i``;
    the optimum lies at one of these breakpoints (rounded inwards when ``b`` is integer) or at a
    bound. Every candidate is evaluated at once with sorted cumulative sums: O(n log n).
    Returns ``(b, weighted error)``.
    """
    lo, hi = bounds
    pos, neg = y > 0, y <= 0
    c = margin - scores[pos]   # positive i correct iff b >= c_i
    dn = -margin - scores[neg]  # negative i correct iff b <= d_i
    cands = np.concatenate([c, dn, [lo, hi]])
    if integer:
        cands = np.concatenate([np.ceil(c), np.floor(dn), [np.ceil(lo), np.floor(hi)]])
    cands = np.unique(np.clip(cands, lo, hi))
    cs, vc = _sorted_cumsum(c, weights[pos])
    ds, vd = _sorted_cumsum(dn, weights[neg])
    pos_wrong = vc[-1] - vc[np.searchsorted(cs, cands, side="right")]
    neg_wrong = vd[np.searchsorted(ds, cands, side="left")]
    loss = pos_wrong + neg_wrong
    k = int(np.argmin(loss))
    return float(cands[k]), float(loss[k])


def _sorted_cumsum(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(values, kind="stable")
    return values[order], np.concatenate([[0.0], np.cumsum(weights[order])])


def _penalty(instance: SLIMInstance, coef: np.ndarray) -> float:
    used = (coef != 0) | instance.coefficients.must_include
    return float(instance.spec.c0 * (instance.coefficients.c0 @ used) + instance.epsilon * np.abs(coef).sum())


def _with_intercept(instance: SLIMInstance, coef: np.ndarray) -> tuple[float, float]:
    """Best intercept for ``coef`` and the resulting SLIM objective."""
    b, err = best_intercept(instance.X @ coef, instance.y, instance.weights, instance.spec.margin,
                            instance.intercept_bounds, instance.integer_intercept)
    return b, err + _penalty(instance, coef)


def rounded_logistic_start(instance: SLIMInstance, l2: float = 1e-3) -> tuple[np.ndarray, float, float]:
    """Round a rescaled ridge-logistic fit into the coefficient box; keep the best scale.

    Returns ``(coef, intercept, objective)``; the all-zero model is always among the candidates.
    """
    X, y, w = instance.X, instance.y, instance.weights
    cs = instance.coefficients
    n, d = X.shape

    def f(theta):
        z = y * (X @ theta[:d] + theta[d])
        loss = np.logaddexp(0.0, -z)
        g = -w * y * np.exp(-np.logaddexp(0.0, z))
        return float(w @ loss + 0.5 * l2 * theta[:d] @ theta[:d]), np.append(X.T @ g + l2 * theta[:d], g.sum())

    theta = minimize(f, np.zeros(d + 1), jac=True, method="L-BFGS-B").x[:d]
    best = round_into_set(instance, np.zeros(d))
    peak = np.abs(theta).max()
    if peak > 0:
        for scale in cs.magnitude.max() * np.array([1.0, 0.5, 0.25, 0.125, 1 / 16]):
            candidate = round_into_set(instance, theta * (scale / peak))
            if candidate[2] < best[2]:
                best = candidate
    return best


def round_into_set(instance: SLIMInstance, coef: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Round real coefficients into the SLIM coefficient set and give them their best intercept.

    Clips to the box, rounds the integer coordinates, zeroes the smallest free coefficients until
    ``max_size`` holds, then picks the intercept exactly (:func:`best_intercept`). Returns
    ``(coef, intercept, objective)``.
    """
    cs = instance.coefficients
    coef = np.clip(np.asarray(coef, dtype=float), cs.lb, cs.ub)
    coef = _feasible_size(instance, np.where(cs.integer, np.round(coef), coef))
    b, objective = _with_intercept(instance, coef)
    return coef, b, objective


def _feasible_size(instance: SLIMInstance, coef: np.ndarray) -> np.ndarray:
    """Zero the smallest coefficients until ``max_size`` holds (must-include ones are kept)."""
    k = instance.spec.max_size
    if k is None:
        return coef
    must = instance.coefficients.must_include
    free_used = np.flatnonzero((coef != 0) & ~must)
    room = k - int(((coef != 0) | must).sum())
    if room >= 0:
        return coef
    drop = free_used[np.argsort(np.abs(coef[free_used]), kind="stable")[:-room]]
    coef = coef.copy()
    coef[drop] = 0.0
    return coef


def coordinate_search(instance: SLIMInstance, coef: np.ndarray, max_passes: int = 20) -> tuple[np.ndarray, float, float]:
    """Greedy integer coordinate descent on the SLIM objective.

    For each feature, every value in its integer range is tried with the best intercept
    (:func:`best_intercept`); the best strictly improving move is taken. Passes repeat until
    none improves. Each trial updates the scores incrementally (O(n) plus a sort).
    """
    cs = instance.coefficients
    coef = np.asarray(coef, dtype=float).copy()
    scores = instance.X @ coef
    b, obj = _with_intercept(instance, coef)
    k = instance.spec.max_size
    for _ in range(max_passes):
        improved = False
        for j in range(instance.X.shape[1]):
            if not cs.integer[j]:
                continue
            values = np.arange(np.ceil(cs.lb[j]), np.floor(cs.ub[j]) + 1)
            if k is not None and coef[j] == 0 and not cs.must_include[j]:
                if int(((coef != 0) | cs.must_include).sum()) >= k:
                    values = np.array([0.0])
            xj = instance.X[:, j]
            if not xj.any():
                values = np.array([0.0])
            for v in values:
                if v == coef[j]:
                    continue
                trial = coef.copy()
                trial[j] = v
                s = scores + xj * (v - coef[j])
                bb, err = best_intercept(s, instance.y, instance.weights, instance.spec.margin,
                                         instance.intercept_bounds, instance.integer_intercept)
                val = err + _penalty(instance, trial)
                if val < obj - 1e-12:
                    obj, b = val, bb
                    improved = True
                    scores = s
                    coef = trial
        if not improved:
            break
    return coef, b, obj


def heuristic(instance: SLIMInstance) -> tuple[np.ndarray, float, float]:
    """Best of two coordinate searches: from the rounded logistic start and from zero.

    Returns ``(coef, intercept, objective)``. From zero the search is forward selection with
    integer values (good when ``C0`` is small relative to the error); from the rounded logistic
    fit it prunes and adjusts a dense model.
    """
    coef, _, _ = rounded_logistic_start(instance)
    runs = [coordinate_search(instance, coef), coordinate_search(instance, np.zeros(instance.X.shape[1]))]
    return min(runs, key=lambda run: run[2])


def solve_slim(instance: SLIMInstance, *, time_limit: float | None = 60.0, mip_rel_gap: float = 1e-6,
               threads: int = 1, verbose: bool = False, use_heuristic: bool = True) -> tuple[np.ndarray, float, Result]:
    """Solve a SLIM instance: heuristic, then HiGHS from that start; never worse than the start.

    Returns ``(coef, intercept, result)``. ``result.raw["heuristic_objective"]`` and
    ``result.raw["heuristic_time"]`` report the start; if HiGHS returns nothing better (or
    nothing), the heuristic model is returned with status FEASIBLE and HiGHS' bound.
    """
    t0 = time.perf_counter()
    program = instance.exact()
    build_time = time.perf_counter() - t0
    start = None
    t1 = time.perf_counter()
    if use_heuristic:
        coef0, b0, obj0 = heuristic(instance)
        start = instance.lift(coef0, b0)
    heuristic_time = time.perf_counter() - t1
    remaining = None if time_limit is None else max(time_limit - heuristic_time, 1.0)
    result = solve_highs(program, time_limit=remaining, mip_rel_gap=mip_rel_gap, threads=threads,
                         verbose=verbose, warm_start=start)
    result.build_time = build_time
    if start is not None:
        result.raw.update(heuristic_objective=program.objective(start), heuristic_time=heuristic_time)
    if result.has_solution:
        coef, intercept = instance.decode(result.x)
        # rounding of near-integral HiGHS values: re-evaluate exactly
        exact_obj = instance.objective(coef, intercept)
        if start is None or exact_obj <= program.objective(start) + 1e-12:
            result.objective = exact_obj
            result.gap = relative_gap(exact_obj, result.bound) if result.status != Status.OPTIMAL else result.gap
            return coef, intercept, result
    if start is None:
        return np.zeros(instance.X.shape[1]), 0.0, result
    # HiGHS found nothing better: return the start, honestly labelled
    result.x = start
    result.objective = program.objective(start)
    if not result.status.has_solution:
        result.message = f"{result.message}; returned the heuristic start"
        result.status = Status.FEASIBLE
    result.gap = relative_gap(result.objective, result.bound)
    return coef0, b0, result
