"""RiskSLIM heuristics: starts for the certified solve (Ustun & Rudin 2019) within a wall-clock budget.

:func:`heuristic` (the catalog's start for RiskSLIM) keeps the best, by the true RiskSLIM objective, of

1. the *rounded logistic start*: the box-constrained logistic fit, its ``max_size`` largest points,
   scaled along a star ray and rounded (:func:`star_ray_round`);
2. a *beam search over supports* in the manner of FasterRisk (Liu et al. 2022, Algorithm 1):
   supports grow one feature at a time, each parent proposing the features of largest partial
   derivative, each child refitted on its support (box-constrained logistic fit), the ``beam``
   best children kept; every support of the final beam is then scaled along a star ray of
   multipliers, rounded and polished (Liu et al. 2022, Algorithm 3; the multiplier is searched to
   choose a rounding, the RiskSLIM model itself keeps multiplier 1);
3. an *integer local search* from the best model: coordinate moves (:func:`solvers.heuristics.polish.polish`), then swaps
   of one feature for another with every value of its range, with the best integer intercept;
4. on 0/1 features, *exact swaps of supports* from the final beam's supports and the model's own, each
   neighbour solved exactly (:mod:`solvers.heuristics.support_swaps`).

Every model lies inside the coefficient set and ``max_size`` by construction; every loop checks
the budget. The pipeline keeps the exact solve's model only when it is at least as good.

Large tables: the searches cost a pass over the rows per function evaluation. On more than
:data:`~solvers.heuristics.sampling.SEARCH_ROWS` merged rows they run on a class-stratified sample
of that many rows (:mod:`solvers.heuristics.sampling`; same coefficient set and intercept box), and the model they find
is then polished by coordinate moves on every row; the better of the two, by the full objective,
is the start. The start only has to be good for pruning: the certificate comes from the exact
solve on every row.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.optimize import minimize

from formulations.base import Model
from formulations.logistic_cuts import LogisticData
from formulations.riskslim import RiskSLIMInstance
from solvers.heuristics.sampling import SEARCH_ROWS, stratified_rows
from solvers.heuristics.polish import polish
from solvers.heuristics.support_swaps import support_swaps
from solvers.limits import Limits

#: multipliers tried along each star ray (Liu et al. 2022 use 20)
RAY_POINTS = 20


def sample_rows(instance: RiskSLIMInstance, rows: int, seed: int) -> RiskSLIMInstance:
    """The instance on a class-stratified random sample of about ``rows`` of its merged rows
    (:func:`solvers.heuristics.sampling.stratified_rows`), with the same coefficient set,
    intercept box and constraints."""
    data = instance.data
    chosen, w = stratified_rows(data.y, data.weights, rows, seed)
    sampled = LogisticData(np.ascontiguousarray(data.X[chosen]), data.y[chosen], w, data.table, data.radius,
                           data.scale)
    return replace(instance, data=sampled, _cache={})


def _expired(limits: Limits | None) -> bool:
    return limits is not None and limits.expired()


def support_fit(instance: RiskSLIMInstance, support: np.ndarray, start: np.ndarray | None = None,
                maxiter: int = 100) -> tuple[np.ndarray, float, float]:
    """Box-constrained logistic fit on ``support`` (other points 0): ``(coef, intercept, loss)``."""
    cs, data = instance.coefficients, instance.data
    d, k = instance.X.shape[1], support.size
    lo, hi = instance.intercept_bounds
    Xs = instance.X[:, support]

    def f(theta):
        z = data.y * (Xs @ theta[:k] + theta[k]) / data.scale
        r = -data.weights * data.y * np.exp(-np.logaddexp(0.0, z)) / data.scale
        return float(data.weights @ np.logaddexp(0.0, -z)), np.append(Xs.T @ r, r.sum())

    x0 = np.zeros(k + 1) if start is None else start
    res = minimize(f, x0, jac=True, method="L-BFGS-B", bounds=list(zip(cs.lb[support], cs.ub[support])) + [(lo, hi)],
                   options={"maxiter": maxiter})
    coef = np.zeros(d)
    coef[support] = res.x[:k]
    return coef, float(res.x[k]), float(res.fun)


def beam_search(instance: RiskSLIMInstance, size: int, beam: int = 8, children: int = 8,
                limits: Limits | None = None) -> list[tuple[np.ndarray, float]]:
    """Supports of at most ``size`` features grown by beam search; returns ``(coef, intercept)`` fits
    of the final beam and of the best support of every level, best first."""
    data, cs = instance.data, instance.coefficients
    d = instance.X.shape[1]
    forced = np.flatnonzero(instance.forced)
    coef0, b0, loss0 = support_fit(instance, forced) if forced.size else (np.zeros(d), 0.0, 0.0)
    if not forced.size:
        b0, loss0 = data.best_intercept(np.zeros(instance.X.shape[0]), instance.intercept_bounds,
                                        start=instance._zero_intercept())
    parents = [(loss0, coef0, float(b0))]
    kept: list[tuple[float, np.ndarray, float]] = [parents[0]]
    free = (cs.lb < 0) | (cs.ub > 0)
    for _ in range(forced.size, size):
        seen, pool = set(), []
        for _, coef, b in parents:
            if _expired(limits):
                break
            _, g, _ = data.gradient(coef, b)
            candidates = np.flatnonzero((coef == 0) & free & ~instance.forced)
            for j in candidates[np.argsort(-np.abs(g[candidates]))][:children]:
                support = np.flatnonzero(coef != 0)
                support = np.union1d(np.union1d(support, forced), [j]).astype(int)
                key = support.tobytes()
                if key in seen:
                    continue
                seen.add(key)
                start = np.append(coef[support], b)
                new_coef, new_b, loss = support_fit(instance, support, start)
                pool.append((loss, new_coef, new_b))
        if not pool:
            break
        pool.sort(key=lambda t: t[0])
        parents = pool[:beam]
        kept.append(parents[0])
        if _expired(limits):
            break
    fits = parents + kept[::-1]
    return [(coef, b) for _, coef, b in fits]


#: roundings polished after a star ray search (the best ones by objective)
POLISHED = 3


def ray_roundings(instance: RiskSLIMInstance, coef: np.ndarray, intercept: float, points: int = RAY_POINTS,
                  limits: Limits | None = None) -> dict[bytes, tuple[float, Model]]:
    """``coef`` scaled by multipliers from 0.5 to the largest that stays in the box and rounded into the
    set (best integer intercept): each distinct rounding by its points' bytes, with its objective (empty
    when ``coef`` is 0 or the budget is spent)."""
    cs = instance.coefficients
    pos, neg = coef > 1e-9, coef < -1e-9
    top = np.inf
    if pos.any():
        top = min(top, float(np.min(cs.ub[pos] / coef[pos])))
    if neg.any():
        top = min(top, float(np.min(cs.lb[neg] / coef[neg])))
    scored: dict[bytes, tuple[float, Model]] = {}
    if not np.isfinite(top):
        return scored
    for m in np.unique(np.r_[np.linspace(0.5, max(top, 1.0), points), 1.0]):
        if _expired(limits):
            break
        model = instance.round(Model(coef * m, intercept * m))
        key = model.coef.tobytes()
        if key not in scored:
            scored[key] = (instance.objective(model), model)
    return scored


def _polished_best(instance: RiskSLIMInstance, scored: dict[bytes, tuple[float, Model]],
                   limits: Limits | None) -> Model:
    """The best of the :data:`POLISHED` roundings of least objective in ``scored`` (non-empty), polished."""
    best = sorted(scored.values(), key=lambda t: t[0])[:POLISHED]
    return min((polish(instance, model, limits=limits) for _, model in best), key=instance.ranking)


def star_ray_round(instance: RiskSLIMInstance, coef: np.ndarray, intercept: float, points: int = RAY_POINTS,
                   limits: Limits | None = None) -> Model:
    """The roundings of ``coef``'s star ray (:func:`ray_roundings`), the best few polished; the best
    model (``coef`` rounded when the ray has none)."""
    scored = ray_roundings(instance, coef, intercept, points, limits)
    return _polished_best(instance, scored, limits) if scored else instance.round(Model(coef, intercept))


def swap_search(instance: RiskSLIMInstance, model: Model, limits: Limits | None = None, max_rounds: int = 20) -> Model:
    """Local search: polish, then the first improving swap (or addition, below ``max_size``) of one
    feature with any value of its range; repeat until no move improves or the budget runs out. A move
    that breaks an operational constraint the model obeys is not taken."""
    cs, data, X = instance.coefficients, instance.data, instance.X
    k = instance.spec.max_size if instance.spec.max_size is not None else X.shape[1]
    best = polish(instance, model, limits=limits)
    best_value = instance.objective(best)
    for _ in range(max_rounds):
        if _expired(limits):
            break
        coef, scores = best.coef, X @ best.coef
        support = np.flatnonzero(coef != 0)
        outside = np.flatnonzero((coef == 0) & ((cs.lb < 0) | (cs.ub > 0)))
        _, g, _ = data.gradient(coef, best.intercept)
        outside = outside[np.argsort(-np.abs(g[outside]))]
        leave = [None] if support.size < k else []
        leave += [j for j in support if not instance.forced[j]]
        found = None
        for j_out in leave:
            base = scores if j_out is None else scores - X[:, j_out] * coef[j_out]
            for j_in in outside:
                if _expired(limits):
                    break
                for v in np.arange(math.ceil(cs.lb[j_in]), math.floor(cs.ub[j_in]) + 1, dtype=float):
                    if v == 0:
                        continue
                    b, loss = data.best_intercept(base + X[:, j_in] * v, instance.intercept_bounds, start=best.intercept)
                    trial = coef.copy()
                    if j_out is not None:
                        trial[j_out] = 0.0
                    trial[j_in] = v
                    value = loss + instance.penalty(trial)
                    if value < best_value - 1e-12 and instance.constraint_violation(Model(trial, float(b))) <= \
                            instance.constraint_violation(best) + 1e-9:
                        found = Model(trial, float(b))
                        break
                if found is not None:
                    break
            if found is not None:
                break
        if found is None:
            break
        best = polish(instance, found, limits=limits)
        best_value = instance.objective(best)
    return best


def rounded_logistic_start(instance: RiskSLIMInstance, limits: Limits | None = None) -> Model:
    """The box-constrained logistic fit restricted to its ``max_size`` largest points (refitted),
    star-ray rounded; the rounded zero model when that is better."""
    coef, b = instance.continuous_fit()
    k = instance.spec.max_size
    zero = instance.round(Model(np.zeros(coef.size), instance._zero_intercept()))
    if not np.any(coef):
        return zero
    if k is not None and np.count_nonzero(coef) > k:
        priority = np.abs(coef) * np.abs(instance.X).mean(axis=0) + np.where(instance.forced, np.inf, 0.0)
        support = np.sort(np.argsort(-priority)[:k])
        coef, b, _ = support_fit(instance, support)
    model = star_ray_round(instance, coef, b, limits=limits)
    return min((model, zero), key=instance.ranking)


def heuristic(instance: RiskSLIMInstance, limits: Limits | None = None, seed: int = 0) -> Model:
    """Best of the rounded logistic start and the beam search + star ray, then swap search
    (module docstring). Deterministic (``seed`` is unused); stops early when ``limits`` expires.
    Models obeying the operational constraints rank first (:meth:`RiskSLIMInstance.ranking`)."""
    return _searched(instance, limits, seed)[0]


def _on_every_row(instance: RiskSLIMInstance, search: RiskSLIMInstance, model: Model, limits: Limits | None) -> Model:
    """``model``, found on ``search``; when that is a sample of ``instance``'s rows, the better of it and
    its polish on every row."""
    return model if search is instance else min((model, polish(instance, model, limits=limits)), key=instance.ranking)


def _searched(instance: RiskSLIMInstance, limits: Limits | None, seed: int, supports: list[np.ndarray] | None = None,
              swap: bool = True) -> tuple[Model, list[np.ndarray], RiskSLIMInstance]:
    """:func:`heuristic`'s model, the supports it rounded along star rays (the beam search's, or
    ``supports`` refitted in ``instance``'s box when given; the swap searches only when ``swap``) and the
    instance it searched (``instance``, or a sample of its rows)."""
    search = instance if instance.X.shape[0] <= SEARCH_ROWS else sample_rows(instance, SEARCH_ROWS, seed)
    candidates = [rounded_logistic_start(search, limits)]
    size = search.spec.max_size if search.spec.max_size is not None else search.X.shape[1]
    size = min(size, search.X.shape[1])
    fits: list[tuple[np.ndarray, float]] = []
    if supports is None:
        if not _expired(limits):
            fits = beam_search(search, size, limits=limits)
        supports = [np.flatnonzero(coef) for coef, _ in fits]
        for coef, b in fits:
            if _expired(limits):
                break
            candidates.append(star_ray_round(search, coef, b, limits=limits))
    else:  # (the roundings of every support's ray, the best few over all polished)
        scored: dict[bytes, tuple[float, Model]] = {}
        for support in {s.tobytes(): s for s in supports}.values():
            if _expired(limits):
                break
            scored.update(ray_roundings(search, *support_fit(search, support)[:2], limits=limits))
        if scored:
            candidates.append(_polished_best(search, scored, limits))
    best = min(candidates, key=search.ranking)
    if swap:
        best = min((best, swap_search(search, best, limits=limits)), key=search.ranking)
        best = support_swaps(search, best, fits, support_fit, limits)
    return _on_every_row(instance, search, best, limits), supports, search


def multiplier_starts(instances: list[RiskSLIMInstance], limits: Limits | None = None, seed: int = 0) -> list[Model]:
    """Starts for one table's instances at several multipliers (:mod:`solvers.multipliers`), in the
    manner of FasterRisk, which grows the supports once and searches the multiplier per support (Liu et
    al. 2022, Algorithms 1 and 3): the first instance's :func:`heuristic`; for each other, the first's
    supports (its final beam and the best support of every level) refitted in its own box and rounded
    along their star rays, the :data:`POLISHED` best roundings over all polished, and its rounded
    logistic start; then the swap search from the best of those when it beats the first's start.
    Every instance gets a model (once ``limits`` expires, its rounded logistic start); deterministic."""
    first, supports, search = _searched(instances[0], limits, seed)
    starts, searched = [first], [search]
    for instance in instances[1:]:
        model, _, search = _searched(instance, limits, seed, supports, swap=False)
        starts.append(model)
        searched.append(search)
    k = int(np.argmin([instance.objective(model) for instance, model in zip(instances, starts)]))
    if k > 0 and not _expired(limits):
        swapped = _on_every_row(instances[k], searched[k], swap_search(searched[k], starts[k], limits=limits), limits)
        starts[k] = min((starts[k], swapped), key=instances[k].ranking)
    return starts
