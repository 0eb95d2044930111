"""SLIM through the pipeline equals brute-force enumeration; heuristic; limits; certificates.

The references here are written independently of the project's helpers: errors, L0 and L1
terms are recomputed from the raw (unmerged) rows, and the best intercept of each coefficient
vector is found by scanning every breakpoint and midpoint directly. The SLIM route (sign-cover LP,
support enumeration with Bayes-error bounds, box search, HiGHS on the strengthened MILP) is checked
whole and step by step; which step runs on which instance is ``tests/solvers/test_routes.py``.
"""
import itertools
import math
import time

import numpy as np
import pytest

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.intercept import margin_error_intercept
from formulations.slim import SLIM
from solvers.catalog import entry_for
from solvers.exact.box_cover import box_cover
from solvers.exact.route import RouteOutcome, run_route
from solvers.exact.supports import enumerate_supports
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.heuristics.slim import heuristic
from solvers.limits import Limits
from solvers.pipeline import FEASIBILITY_TOL, solve_exact, solve_relaxed, violation
from solvers.result import Status


def run_steps(inst, names, limits, start=None) -> RouteOutcome:
    """The catalog's route of ``inst`` restricted to the steps ``names`` (kept in the route's
    order), run from the model ``start`` as :func:`solvers.pipeline.solve_exact` runs it."""
    route = tuple(step for step in entry_for(inst.spec).route if step.name in names)
    assert len(route) == len(names), names
    limits = limits.started()
    return run_route(route, inst, start, limits.started(), lambda m: violation(inst, m) <= FEASIBILITY_TOL)


def _reference_terms(X, y, sw, cw, coef, b, margin, c0, costs):
    """(weighted error rate, L0 cost, L1) of one model on the raw rows."""
    v = sw * np.where(y > 0, cw[1], cw[0]) / sw.sum()
    s = X @ coef
    wrong = y * (s + b) < margin - 1e-9 * (1 + np.abs(s) + abs(b))  # rows on their margin count as correct
    used = (coef != 0)
    return float(v @ wrong), float(c0 * costs @ used), float(np.abs(coef).sum())


def _intercepts(X, y, coef, margin, lo, hi, integer):
    """Every intercept worth trying: breakpoints, midpoints and bounds (integers when integer)."""
    s = X @ coef
    points = np.unique(np.clip(np.r_[margin - s, -margin - s, lo, hi], lo, hi))
    if integer:
        return np.arange(np.ceil(lo), np.floor(hi) + 1)
    return np.r_[points, 0.5 * (points[1:] + points[:-1])]


def _enumerate(X, y, sw, cw, cs, spec, inst):
    """Minimum of loss + L0 and of the full objective over every model in the set."""
    ranges = [range(int(np.ceil(cs.lb[j])), int(np.floor(cs.ub[j])) + 1) for j in range(cs.d)]
    best_main, best_total = np.inf, np.inf
    forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
    lo, hi = inst.intercept_bounds
    for coef in itertools.product(*ranges):
        coef = np.array(coef, dtype=float)
        used = (coef != 0) | forced
        if spec.max_size is not None and used.sum() > spec.max_size:
            continue
        for b in _intercepts(X, y, coef, spec.margin, lo, hi, inst.integer_intercept):
            err, _, l1 = _reference_terms(X, y, sw, cw, coef, b, spec.margin, spec.c0, cs.c0)
            main = err + spec.c0 * cs.c0 @ used
            best_main = min(best_main, main)
            best_total = min(best_total, main + inst.epsilon * l1)
    return best_main, best_total


def _random_case(seed):
    rng = np.random.default_rng(seed)
    kind = ["binary", "small_integer", "real"][seed % 3]
    n, d = int(rng.integers(8, 25)), int(rng.integers(1, 4))
    if kind == "binary":
        X = rng.integers(0, 2, (n, d)).astype(float)
    elif kind == "small_integer":
        X = rng.integers(-2, 3, (n, d)).astype(float)
    else:
        X = np.round(rng.normal(size=(n, d)), 2)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = [f"x{j}" for j in range(d)]
    cs = CoefficientSet.uniform(names, 2, sign=rng.choice([-1, 0, 1], d) if seed % 4 == 1 else 0)
    if seed % 5 == 2:
        cs = cs.with_feature("x0", lb=1, ub=2)  # range excluding 0
    if seed % 7 == 3:
        cs = cs.with_feature(names[-1], must_include=True)
    forced = int(((cs.lb > 0) | (cs.ub < 0) | cs.must_include).sum())
    max_size = int(rng.integers(forced, d + 1)) if seed % 2 else None
    cw = (1.0, float(rng.choice([1.0, 2.0, 0.5]))) if seed % 6 == 0 else (1.0, 1.0)
    sw = rng.integers(1, 4, n).astype(float) if seed % 8 == 5 else (rng.random(n) + 0.1 if seed % 8 == 7 else np.ones(n))
    spec = SLIM(coefficients=cs, c0=float(rng.choice([0.0, 0.01, 0.05])), max_size=max_size, class_weight=cw)
    return X, y, sw, cw, cs, spec


@pytest.mark.parametrize("seed", range(240))
def test_exact_equals_enumeration(seed):
    X, y, sw, cw, cs, spec = _random_case(seed)
    inst = spec.instance(X, y, sw)
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    best_main, best_total = _enumerate(X, y, sw, cw, cs, spec, inst)
    assert fit.status == Status.OPTIMAL
    coef, b = fit.model.coef, fit.model.intercept
    # the model is inside the set, checked without the project's helpers
    assert np.all(coef >= cs.lb) and np.all(coef <= cs.ub) and np.array_equal(coef, np.round(coef))
    used = (coef != 0) | cs.must_include | (cs.lb > 0) | (cs.ub < 0)
    assert spec.max_size is None or used.sum() <= spec.max_size
    err, l0, l1 = _reference_terms(X, y, sw, cw, coef, b, spec.margin, spec.c0, cs.c0)
    main = err + spec.c0 * cs.c0 @ used
    assert main == pytest.approx(best_main, abs=1e-9)  # the tie-breaker never trades accuracy or sparsity
    assert main + inst.epsilon * l1 == pytest.approx(best_total, abs=1e-9)
    assert fit.objective == pytest.approx(main + inst.epsilon * l1, abs=1e-12)
    assert fit.bound <= best_total + 1e-9
    assert fit.gap == pytest.approx(max(0.0, fit.objective - fit.bound) / max(abs(fit.objective), 1e-10), abs=1e-12)
    relaxed = solve_relaxed(inst)
    assert relaxed.bound <= best_total + 1e-9


def test_real_valued_intercept_is_certified_on_the_true_objective():
    X = np.array([[1.59, .33], [-1.84, .85], [.28, 1.3], [.13, 1.25], [1.99, -.6], [-1.32, -.43], [1.01, -.24]])
    y = np.array([1, 1, 1, -1, -1, 1, -1], float)
    spec = SLIM(coef_bound=1, c0=0.01)
    inst = spec.instance(X, y)
    fit = solve_exact(inst)
    best_main, best_total = _enumerate(X, y, np.ones(7), (1.0, 1.0), inst.coefficients, spec, inst)
    assert fit.objective == pytest.approx(best_total, abs=1e-12)
    assert fit.status == Status.OPTIMAL and fit.bound <= fit.objective + 1e-12


def test_margin_error_intercept_matches_enumeration():
    rng = np.random.default_rng(5)
    s = rng.integers(-6, 7, 50).astype(float)
    y = rng.choice([-1.0, 1.0], 50)
    w = rng.random(50)
    b, loss = margin_error_intercept(s, y, w, 1.0, (-10, 10), integer=True)
    losses = [w @ (y * (s + c) < 1.0) for c in range(-10, 11)]
    assert loss == pytest.approx(min(losses))
    assert w @ (y * (s + b) < 1.0) == pytest.approx(loss)
    sr = rng.normal(size=50)
    b, loss = margin_error_intercept(sr, y, w, 1.0, (-10, 10), integer=False)
    grid = np.linspace(-10, 10, 200001)
    assert loss == pytest.approx(min(w @ (y * (sr + c) < 1.0) for c in grid[::50]), abs=1e-12) or loss <= min(
        w @ (y * (sr + c) < 1.0) for c in grid[::50])
    assert w @ (y * (sr + b) < 1.0) == pytest.approx(loss)


def _tiny(seed, n=30, d=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, d)).astype(float)
    w = rng.integers(-2, 3, d)
    y = np.where(X @ w + rng.normal(0, 1.0, n) > np.median(X @ w), 1.0, -1.0)
    return X, y


def test_heuristic_is_inside_the_set_and_beats_trivial():
    X, y = _tiny(7, n=200, d=6)
    inst = SLIM(coef_bound=5, c0=0.005, max_size=3).instance(X, y)
    model = heuristic(inst)
    assert inst.exact().is_feasible(inst.lift(model))
    assert np.count_nonzero(model.coef) <= 3
    trivial = inst.objective(inst.with_best_intercept(np.zeros(6)))
    assert inst.objective(model) < trivial


def test_time_limit_is_the_wall_time_of_the_whole_call():
    rng = np.random.default_rng(11)
    n, d = 3000, 25
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1.5, n) > 0, 1.0, -1.0)
    inst = SLIM(coef_bound=10, c0=1e-3).instance(X, y)
    t0 = time.perf_counter()
    fit = solve_exact(inst, limits=Limits(time_limit=2.0))
    wall = time.perf_counter() - t0
    assert wall < 2.0 + 1.5  # build of the cached program and result checks only beyond the limit
    assert fit.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert fit.bound <= fit.objective + 1e-9
    start = heuristic(inst)
    assert fit.objective <= inst.objective(start) + 1e-9
    assert fit.gap == pytest.approx((fit.objective - fit.bound) / fit.objective, rel=1e-6)


def test_node_limit_gives_reproducible_models():
    """Without a time limit, a node limit stops the box search and the MILP at the same node each
    time: the same steps, bounds and model."""
    X, y = _tiny(3, n=200, d=6)
    spec = SLIM(coef_bound=5, c0=1e-3)
    limits = Limits(time_limit=None, node_limit=50)
    a = solve_exact(spec.instance(X, y), limits=limits)
    b = solve_exact(spec.instance(X, y), limits=limits)
    np.testing.assert_array_equal(a.model.coef, b.model.coef)
    assert a.objective == b.objective and a.bound == b.bound
    assert [(r.step, r.ran, r.bound, r.objective) for r in a.steps] == \
        [(r.step, r.ran, r.bound, r.objective) for r in b.steps]


def test_infeasible_specification_ends_infeasible():
    # a feasible-looking spec whose rows cannot all hold: a point forced positive, intercept pinned
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([1.0, -1.0, 1.0])
    cs = CoefficientSet(lb=np.array([-1.0, 1.0]), ub=np.array([1.0, 1.0]), integer=np.ones(2, bool), c0=np.ones(2),
                        must_include=np.zeros(2, bool), names=("a", "b"), intercept_lb=0.0, intercept_ub=0.0)
    spec = SLIM(coefficients=cs, c0=0.0)
    inst = spec.instance(X, y)
    fit = solve_exact(inst)
    # every model is feasible for SLIM (errors are allowed), so this one is OPTIMAL, never a start that breaks bounds
    assert fit.status == Status.OPTIMAL and fit.model.coef[1] == 1.0 and fit.model.intercept == 0.0
    assert inst.objective(Model(fit.model.coef, 0.0)) == fit.objective


@pytest.mark.parametrize("step", ["bayes_supports", "box_search", "sign_cover_lp+highs"])
@pytest.mark.parametrize("seed", range(0, 240, 3))
def test_each_exact_step_alone_certifies_the_enumerated_optimum(seed, step):
    """Each exact step, from no start, certifies the enumerated optimum with a bound below it: the
    support enumeration with Bayes-error bounds (on every instance whose row weights are counted,
    whatever its features: on 0/1 features the route runs it, on others only this test), the box
    search (also on 0/1 features, which the route leaves to the MILP), and the sign-cover LP followed
    by HiGHS on the MILP strengthened with its cuts (the route without its two searches)."""
    X, y, sw, cw, cs, spec = _random_case(seed)
    inst = spec.instance(X, y, sw)
    _, best_total = _enumerate(X, y, sw, cw, cs, spec, inst)
    problem = ZeroOneProgram.from_instance(inst)
    if step == "bayes_supports":
        if not problem.countable:
            pytest.skip("row weights without a common unit: no Bayes errors (the route skips the step, "
                        "tests/solvers/test_routes.py)")
        found = enumerate_supports(problem, Limits(30, mip_rel_gap=1e-9))
        objective, bound, finished, message = found.objective, found.bound, found.finished, found.message
        coef, intercept = found.model
    elif step == "box_search":
        found = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9))
        objective, bound, finished, message = found.objective, found.bound, found.finished, ""
        coef, intercept = found.coef, found.intercept
    else:
        out = run_steps(inst, ("sign_cover_lp", "highs"), Limits(time_limit=30, mip_rel_gap=1e-9))
        assert all(r.ran for r in out.records) or not out.records[-1].ran, out.message
        objective, bound, finished, message = out.objective, out.bound, out.status == Status.OPTIMAL, out.message
        coef, intercept = out.model.coef, out.model.intercept
    assert finished, message
    assert objective == pytest.approx(best_total, abs=1e-9)
    assert inst.objective(Model(coef, intercept)) == pytest.approx(objective, abs=1e-12)
    assert objective - 1e-9 * max(abs(objective), 1e-10) - 1e-12 <= bound <= best_total + 1e-9


def test_support_enumeration_on_many_valued_features_plans_against_the_time_limit():
    """Features of more than two values (which the route gives the box search and the MILP, not this
    step): with a time limit the supports are enumerated (a small instance HiGHS's big-M tree needs
    many nodes for), certified and equal to HiGHS's optimum; with none the enumeration stops at
    once without a bound, and says why."""
    rng = np.random.default_rng(0)
    binary = rng.integers(0, 2, (80, 5)).astype(float)
    X = rng.integers(0, 4, (80, 5)).astype(float)
    y = np.where(binary[:, 0] + X[:, 1] + rng.normal(0, 1, 80) > 2, 1.0, -1.0)
    inst = SLIM(c0=0.01, coef_bound=10, max_size=2).instance(X, y)
    problem = ZeroOneProgram.from_instance(inst)
    enumerated = enumerate_supports(problem, Limits(60, mip_rel_gap=1e-9))
    assert enumerated.finished and "supports bounded" in enumerated.message
    highs = solve_exact(inst, "highs", limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    assert highs.status == Status.OPTIMAL
    assert enumerated.objective == pytest.approx(highs.objective, abs=1e-9)
    assert enumerated.bound <= highs.objective + 1e-9
    unlimited = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9))
    assert not unlimited.finished and unlimited.bound == -math.inf and unlimited.model is None
    assert "there is none" in unlimited.message


@pytest.mark.parametrize("seed", [3, 4])
def test_an_enumeration_that_would_not_fit_hands_the_time_to_the_milp(monkeypatch, seed):
    """When the support enumeration projects that its supports would not fit the time left, it
    stops with its incumbent and the bound of what it reached (the sizes it closed, the least
    bound of those it did not finish: finite, never above the optimum), and the route's next step
    (HiGHS on the MILP) certifies the optimum, which is the plain MILP's (HiGHS outside the route).
    The stop is forced by a zero projection share (the first size of more than one chunk of supports)."""
    import dataclasses

    import solvers.exact.route as route_table

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (24, 16)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.7, 24) > 0.5, 1.0, -1.0)
    inst = SLIM(c0=0.002, coef_bound=3, max_size=5).instance(X, y)
    plain = solve_exact(inst, "highs", limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, projection_share=0.0))
    out = run_steps(inst, ("bayes_supports", "highs"), Limits(time_limit=60, mip_rel_gap=1e-9))
    bayes, highs = out.records
    assert bayes.ran and bayes.message.startswith("stopped: bounding the"), out.message
    assert bayes.started >= 0.0 and 0.0 < bayes.projected < math.inf, bayes  # (its rest projected, its start in)
    assert -math.inf < bayes.bound <= plain.objective + 1e-9
    assert highs.ran and out.status == Status.OPTIMAL, out.message
    assert plain.status == Status.OPTIMAL
    assert out.objective == pytest.approx(plain.objective, abs=1e-9)
    assert out.bound <= plain.objective + 1e-9


def _signed_case(seed):
    """A tiny instance whose points are sign-constrained (so rows dominate each other)."""
    rng = np.random.default_rng(5000 + seed)
    n, d = int(rng.integers(8, 22)), int(rng.integers(1, 4))
    X = rng.integers(0, 3, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > np.median(X @ rng.normal(size=d)), 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = [f"x{j}" for j in range(d)]
    signs = rng.choice([-1, 1], d) if seed % 3 else np.r_[rng.choice([-1, 1], d - 1), 0]
    cs = CoefficientSet.uniform(names, 2, sign=signs)
    spec = SLIM(coefficients=cs, c0=float(rng.choice([0.0, 0.01, 0.05])), margin=float(rng.choice([1.0, 0.5])))
    return X, y, np.ones(n), (1.0, 1.0), cs, spec


@pytest.mark.parametrize("seed", range(150))
def test_dominance_cuts_remove_no_integer_model(seed):
    """Every pair of ``conflicting_rows`` has at most one correct row for every model of the set
    (every point vector, every intercept candidate), and the MILP with the cuts on HiGHS still
    reaches the enumerated optimum."""
    X, y, sw, cw, cs, spec = _signed_case(seed)
    inst = spec.instance(X, y, sw)
    p, q = inst.conflicting_rows()
    Xm, ym = inst.X, inst.y
    assert np.all(ym[p] > 0) and np.all(ym[q] < 0)
    lo, hi = inst.intercept_bounds
    ranges = [range(int(np.ceil(cs.lb[j])), int(np.floor(cs.ub[j])) + 1) for j in range(cs.d)]
    for coef in itertools.product(*ranges):
        coef = np.array(coef, float)
        for b in _intercepts(Xm, ym, coef, spec.margin, lo, hi, inst.integer_intercept):
            s = Xm @ coef + b
            assert not np.any((s[p] >= spec.margin) & (s[q] <= -spec.margin))
    fit = solve_exact(inst, "highs", limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    _, best_total = _enumerate(X, y, sw, cw, cs, spec, inst)
    assert fit.status == Status.OPTIMAL and fit.objective == pytest.approx(best_total, abs=1e-9)
    assert fit.bound <= best_total + 1e-9


def test_dominance_finds_more_pairs_than_equal_rows():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (200, 3)).astype(float)
    y = np.where(X.sum(axis=1) + rng.normal(0, 2, 200) > 4.5, 1.0, -1.0)
    names = ["a", "b", "c"]
    free = SLIM(coefficients=CoefficientSet.uniform(names, 3)).instance(X, y)
    signed = SLIM(coefficients=CoefficientSet.uniform(names, 3, sign=1)).instance(X, y)
    p0, q0 = free.conflicting_rows()
    p1, q1 = signed.conflicting_rows()
    assert np.all(free.X[p0] == free.X[q0], axis=1).all()
    assert np.all(signed.X[p1] <= signed.X[q1])
    assert p1.size > p0.size > 0
