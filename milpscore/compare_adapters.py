"""Built-in formulation adapters of :func:`milpscore.compare.compare`.

Each adapter runs, on the training data, the methods of ``context.methods`` it supports and
returns :class:`~milpscore.compare.MethodFit` records whose objectives are all in the units of
that formulation's exact program, so ``relaxed <= exact`` can be read off the table:

* ``slim`` (Ustun & Rudin 2016; :mod:`formulations.slim`): exact MILP (heuristic start + HiGHS),
  its LP relaxation, and the LP solution rounded to the nearest integer points with the best
  intercept (:func:`solvers.slim.round_into_set`), scored by the SLIM objective.
* ``facets`` (Belahcene et al. 2020, eqs. 3, 8-9; hinge loss): exact MILP with ``coef / gamma``
  integer (:class:`milpscore.estimators.facets.FacetsClassifier`, ``solver="highs-exact"``),
  the LP relaxation (the convex Facets problem), and the relaxation rounded to ``gamma * Z``.
* ``facets_logistic`` (the paper's logistic loss): exact by outer approximation on HiGHS (certified
  gap), the conic relaxation on ECOS, its rounding to the grid, and FISTA with the Facets prox
  (section 5) rounded to the grid (``prox_rounding``).
* ``convex_rounding`` (Chevaleyre, Koriche & Zucker; ternary weights, learned intercept):
  exact ILP, LP of Figure 1 step (1), seeded randomized rounding (step 2, best of ``n_draws``)
  and seeded random-restart ternary hill climbing (section 4), all scored by ``L_gamma``.
* ``fused`` (fused-lasso hinge ILP on ordered bins, eqs. 1-5): exact ILP and LP relaxation via
  :class:`milpscore.estimators.fused.FusedScoreClassifier` on raw columns.

Colleagues' modules are imported inside the adapters, so a missing optional piece only disables
its own formulation.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from milpscore.compare import FitContext, MethodFit, register_formulation
from milpscore.data import validate_features
from solvers.result import Result, Status, relative_gap


def _needs_relaxation(ctx: FitContext) -> bool:
    return bool({"relaxed", "rounding", "local_search"} & set(ctx.methods))


def _rounded_result(objective: float, bound: float, x: np.ndarray | None, solve_time: float, build_time: float,
                    backend: str, **raw: Any) -> Result:
    return Result(Status.FEASIBLE, x=x, objective=float(objective), bound=float(bound),
                  gap=relative_gap(objective, bound), solve_time=solve_time, build_time=build_time,
                  backend=backend, message="heuristic: feasible model, optimality not proven", raw=raw)


# ------------------------------------------------------------------------------------- SLIM
@register_formulation("slim", ("exact", "relaxed", "rounding"), "SLIM MILP (0-1 loss, L0 + tiny L1)")
def slim_adapter(X: Any, y: np.ndarray, ctx: FitContext) -> list[MethodFit]:
    """SLIM: exact MILP, LP relaxation, nearest-integer rounding of the LP solution."""
    from formulations.slim import SLIM
    from solvers.highs import solve_highs
    from solvers.slim import round_into_set, solve_slim

    Xa = validate_features(X)
    params = {"coef_bound": 5, "c0": 0.01, **ctx.params}
    t0 = time.perf_counter()
    instance = SLIM(**params).instance(Xa, y)
    program = instance.exact()
    build = time.perf_counter() - t0
    fits: list[MethodFit] = []
    if "exact" in ctx.methods:
        coef, intercept, result = solve_slim(instance, time_limit=ctx.time_limit)
        result.build_time = build
        fits.append(MethodFit("exact", coef, intercept, result))
    if not _needs_relaxation(ctx):
        return fits
    lp = solve_highs(program.relax(), time_limit=ctx.time_limit)
    lp.build_time = build
    if not lp.has_solution:
        raise RuntimeError(f"the SLIM LP relaxation returned no solution ({lp.status.value}: {lp.message})")
    coef_lp, b_lp = program.block(lp.x, "coef").copy(), float(program.block(lp.x, "intercept")[0])
    if "relaxed" in ctx.methods:
        fits.append(MethodFit("relaxed", coef_lp, b_lp, lp, bound=lp.objective))
    if "rounding" in ctx.methods:
        t1 = time.perf_counter()
        coef, b, objective = round_into_set(instance, coef_lp)
        res = _rounded_result(objective, lp.objective, instance.lift(coef, b),
                              lp.solve_time + time.perf_counter() - t1, build, "highs+rounding")
        fits.append(MethodFit("rounding", coef, b, res))
    return fits


# ------------------------------------------------------------------------------------ Facets
@register_formulation("facets", ("exact", "relaxed", "rounding"), "Facets penalty, hinge loss (LP / MILP)")
def facets_adapter(X: Any, y: np.ndarray, ctx: FitContext) -> list[MethodFit]:
    """Facets (hinge): exact MILP on ``gamma * Z``, the convex LP, and the LP rounded to the grid."""
    from formulations.facets import FacetsProgram
    from milpscore.estimators.facets import FacetsClassifier
    from solvers.highs import solve_highs

    Xa = validate_features(X)
    params = {"lam": 0.01, "gamma": 1.0, "bound": 5, **ctx.params, "loss": "hinge"}
    fp = FacetsProgram(**params)
    fits: list[MethodFit] = []
    if "exact" in ctx.methods:
        est = FacetsClassifier(solver="highs-exact", time_limit=ctx.time_limit,
                               **{k: v for k, v in params.items() if k != "fit_intercept"}).fit(Xa, y)
        fits.append(MethodFit("exact", est.coef_, est.intercept_, est.result_, unit=fp.gamma,
                              objective=est.fit_info_["objective"]))
    if not _needs_relaxation(ctx):
        return fits
    t0 = time.perf_counter()
    program = fp.relaxed(Xa, y)
    build = time.perf_counter() - t0
    lp = solve_highs(program, time_limit=ctx.time_limit)
    lp.build_time = build
    if not lp.has_solution:
        raise RuntimeError(f"the Facets LP returned no solution ({lp.status.value}: {lp.message})")
    coef_lp, b_lp = fp.decode(lp.x, program)
    relaxed_obj = fp.objective_value(Xa, y, coef_lp, b_lp)
    if "relaxed" in ctx.methods:
        fits.append(MethodFit("relaxed", coef_lp, b_lp, lp, unit=fp.gamma, objective=relaxed_obj, bound=lp.objective))
    if "rounding" in ctx.methods:
        t1 = time.perf_counter()
        coef = fp.gamma * np.clip(np.round(coef_lp / fp.gamma), -fp.bound, fp.bound)
        objective = fp.objective_value(Xa, y, coef, b_lp)
        res = _rounded_result(objective, lp.objective, None, lp.solve_time + time.perf_counter() - t1, build,
                              "highs+rounding")
        fits.append(MethodFit("rounding", coef, b_lp, res, unit=fp.gamma))
    return fits


# --------------------------------------------------------------------------- convex rounding
@register_formulation("convex_rounding", ("exact", "relaxed", "rounding", "local_search"),
                      "ternary weights, hinge loss L_gamma (convex rounding paper)")
def convex_rounding_adapter(X: Any, y: np.ndarray, ctx: FitContext) -> list[MethodFit]:
    """Ternary convex rounding: ILP, LP, randomized rounding, ternary hill climbing (seeded)."""
    from formulations.rounding import ConvexRounding
    from solvers.highs import solve_highs
    from solvers.local_search import ternary_hill_climbing
    from solvers.rounding import randomized_rounding

    Xa = validate_features(X)
    opts = dict(ctx.params)
    n_draws = int(opts.pop("n_draws", 200))
    n_restarts = int(opts.pop("n_restarts", 10))
    spec = ConvexRounding(**{"gamma": 1.0, "weights": "ternary", "threshold": None, **opts})
    t0 = time.perf_counter()
    program = spec.exact(Xa, y)
    build = time.perf_counter() - t0
    fits: list[MethodFit] = []
    if "exact" in ctx.methods:
        ilp = solve_highs(program, time_limit=ctx.time_limit)
        ilp.build_time = build
        if ilp.has_solution:
            coef, b = spec.decode(ilp.x, program)
            fits.append(MethodFit("exact", coef, b, ilp))
    if not _needs_relaxation(ctx):
        return fits
    lp = solve_highs(program.relax(), time_limit=ctx.time_limit)
    lp.build_time = build
    if not lp.has_solution:
        raise RuntimeError(f"the convex-rounding LP returned no solution ({lp.status.value}: {lp.message})")
    coef_lp, b_lp = spec.decode(lp.x, program)
    if "relaxed" in ctx.methods:
        fits.append(MethodFit("relaxed", coef_lp, b_lp, lp, bound=lp.objective))
    if "rounding" in ctx.methods:
        t1 = time.perf_counter()
        design = spec.design(Xa)
        out = randomized_rounding(program.block(lp.x, "w"), design, y, gamma=spec.gamma, intercept=b_lp,
                                  n_draws=n_draws, seed=ctx.seed, max_l1=spec.sparsity)
        coef = out.weights[0::2] - out.weights[1::2] if spec.weights == "ternary" else out.weights
        res = _rounded_result(out.loss, lp.objective, None, lp.solve_time + time.perf_counter() - t1, build,
                              "highs+randomized_rounding", mean_loss=out.mean_loss, bound_prop1=out.bound_prop1)
        fits.append(MethodFit("rounding", coef, b_lp, res))
    if "local_search" in ctx.methods and spec.weights == "ternary":
        t1 = time.perf_counter()
        out = ternary_hill_climbing(Xa, y, gamma=spec.gamma, intercept=b_lp, n_restarts=n_restarts, seed=ctx.seed)
        res = _rounded_result(out.loss, lp.objective, None, time.perf_counter() - t1, 0.0, "ternary_hill_climbing",
                              restart_losses=out.restart_losses)
        fits.append(MethodFit("local_search", out.weights, b_lp, res))
    return fits


# -------------------------------------------------------------------------------------- fused
@register_formulation("fused", ("exact", "relaxed"), "fused-lasso hinge ILP on ordered bins (points table)")
def fused_adapter(X: Any, y: np.ndarray, ctx: FitContext) -> list[MethodFit]:
    """Fused points table: the ILP and its LP relaxation on raw (binned internally) columns."""
    from milpscore.estimators.fused import FusedScoreClassifier

    fits: list[MethodFit] = []
    for method, solver in (("exact", "highs"), ("relaxed", "lp")):
        if method not in ctx.methods:
            continue
        est = FusedScoreClassifier(solver=solver, time_limit=ctx.time_limit, **ctx.params).fit(X, y)
        bound = est.result_.objective if method == "relaxed" else None
        fits.append(MethodFit(method, est.coef_, est.intercept_, est.result_, bound=bound,
                              scores=est.decision_function))
    return fits


# --------------------------------------------------------------------------- Facets, logistic
@register_formulation("facets_logistic", ("exact", "relaxed", "rounding", "prox_rounding"),
                      "Facets penalty, logistic loss (conic / outer approximation / proximal)")
def facets_logistic_adapter(X: Any, y: np.ndarray, ctx: FitContext) -> list[MethodFit]:
    """Facets (logistic): exact by outer approximation, conic relaxation (ECOS), both roundings.

    ``prox_rounding`` solves the same convex problem by FISTA with the Facets prox (the paper's
    section 5 algorithm) and rounds ``coef / gamma`` to the nearest integers in the box; its
    bound is the conic relaxation's value when that was solved too.
    """
    from formulations.facets import FacetsProgram
    from milpscore.estimators.facets import FacetsClassifier

    Xa = validate_features(X)
    params = {"lam": 0.01, "gamma": 1.0, "bound": 5, **ctx.params, "loss": "logistic"}
    fp = FacetsProgram(**params)
    objective = lambda coef, b: fp.objective_value(Xa, y, coef, b)  # noqa: E731
    to_grid = lambda coef: fp.gamma * np.clip(np.round(coef / fp.gamma), -fp.bound, fp.bound)  # noqa: E731
    fits: list[MethodFit] = []
    relaxed_value = float("nan")
    if {"relaxed", "rounding"} & set(ctx.methods):
        est = FacetsClassifier(solver="ecos", **params).fit(Xa, y)
        relaxed_value = est.result_.objective
        if "relaxed" in ctx.methods:
            fits.append(MethodFit("relaxed", est.coef_, est.intercept_, est.result_, unit=fp.gamma,
                                  objective=objective(est.coef_, est.intercept_), bound=relaxed_value))
        if "rounding" in ctx.methods:
            coef = to_grid(est.coef_)
            value = objective(coef, est.intercept_)
            fits.append(MethodFit("rounding", coef, est.intercept_,
                                  _rounded_result(value, relaxed_value, None, est.result_.solve_time,
                                                  est.result_.build_time, "ecos+rounding"), unit=fp.gamma))
    if "exact" in ctx.methods:
        est = FacetsClassifier(solver="highs-exact", time_limit=ctx.time_limit, **params).fit(Xa, y)
        fits.append(MethodFit("exact", est.coef_, est.intercept_, est.result_, unit=fp.gamma,
                              objective=objective(est.coef_, est.intercept_)))
    if "prox_rounding" in ctx.methods:
        est = FacetsClassifier(solver="prox", **params).fit(Xa, y)
        coef = to_grid(est.coef_)
        value = objective(coef, est.intercept_)
        fits.append(MethodFit("prox_rounding", coef, est.intercept_,
                              _rounded_result(value, relaxed_value, None, est.result_.solve_time,
                                              est.result_.build_time, "fista+rounding",
                                              prox_objective=objective(est.coef_, est.intercept_)),
                              unit=fp.gamma))
    order = {m: k for k, m in enumerate(("exact", "relaxed", "rounding", "prox_rounding"))}
    return sorted(fits, key=lambda f: order[f.method])
