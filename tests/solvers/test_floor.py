"""Floors of the exact routes (solvers.exact.floor) against brute force.

SLIM's Bayes floor and RiskSLIM's sparse tangent floor are never above the enumerated optimum of
tiny instances (binary, few-valued and real features; forced features; ``max_size``); the sparse
tangent bound at a point equals the least tangent plane over every enumerated sparse model; the
projection on the hull of the sparse box satisfies the projection inequality at every vertex of the
hull; the floor is above the box floor when ``max_size`` binds; and short fits on a wide table
report a finite bound and gap whatever the other steps did.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from formulations.coefficients import CoefficientSet
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.exact.floor import SparseBox, bayes_floor, box_floor, riskslim_floor, sparse_tangent_bound
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from tests.solvers.test_routes import _risk_brute_force, _slim_brute_force, _slim_case


# -------------------------------------------------------------------------------------- SLIM
@pytest.mark.parametrize("seed", range(12))
def test_bayes_floor_is_below_the_brute_force_optimum(seed):
    X, y, cs, spec, _ = _slim_case(seed, ("binary", "integer", "real")[seed % 3], d=2 if seed % 2 else 3)
    if seed % 4 == 1:  # many copies of few rows: a positive floor
        X, y = np.tile(X, (3, 1)), np.r_[y, -y, y]
    inst = spec.instance(X, y)
    floor = bayes_floor(inst)
    optimum = _slim_brute_force(X, y, cs, spec, inst, lambda coef: True)
    assert 0.0 <= floor <= optimum + 1e-12


def test_bayes_floor_counts_the_groups_and_the_forced_features():
    """Rows (a, label) with a in {0, 1}: the groups' minority weights are the floor (hand-counted),
    plus a feature forced to points >= 1: its L0 cost and tie-breaker; a feature fixed at 0 does
    not split the groups."""
    X = np.array([[0, 1, 0], [0, 1, 1], [0, 0, 0], [1, 0, 1], [1, 1, 0], [1, 0, 1]], float)
    y = np.array([1, -1, -1, 1, -1, 1], float)
    # column 1 fixed at 0 (not a grouping column); column 2 forced (points 1..2)
    cs = CoefficientSet(np.array([-2.0, 0.0, 1.0]), np.array([2.0, 0.0, 2.0]), np.ones(3, bool), np.ones(3),
                        np.zeros(3, bool), ("a", "fixed", "forced"))
    inst = SLIM(coefficients=cs, c0=0.05).instance(X, y)
    # groups on (a, forced): (0,0): rows 0+, 2- -> 1/6; (0,1): row 1- -> 0; (1,1): rows 3+, 5+ -> 0; (1,0): 4- -> 0
    expected = 1 / 6 + 0.05 + inst.epsilon * 1.0
    assert bayes_floor(inst) == pytest.approx(expected, rel=1e-11)
    optimum = _slim_brute_force(X, y, cs, inst.spec, inst, lambda coef: True)
    assert bayes_floor(inst) <= optimum + 1e-12


# ----------------------------------------------------------------------------------- RiskSLIM
def _risk(seed: int, max_size: int | None, forced: bool = False):
    rng = np.random.default_rng(900 + seed)
    n, d = int(rng.integers(20, 40)), 4
    X = rng.integers(0, 2 if seed % 2 else 4, (n, d)).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) - 1.0 + rng.normal(0, 1.0, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    lb, ub = np.full(d, -2.0), np.full(d, 2.0)
    if forced:
        lb[0] = 1.0
    cs = CoefficientSet(lb, ub, np.ones(d, bool), np.ones(d), np.zeros(d, bool), tuple(f"x{j}" for j in range(d)))
    return RiskSLIM(coefficients=cs, c0=float(rng.choice([1e-6, 0.02])), max_size=max_size).instance(X, y)


def _sparse_models(inst):
    """Every integer point vector of the box with at most ``max_size`` features used."""
    cs, k = inst.coefficients, inst.spec.max_size
    for coef in itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(cs.lb, cs.ub)]):
        coef = np.array(coef, float)
        if k is None or np.count_nonzero(coef) <= k:
            yield coef


@pytest.mark.parametrize("seed", range(10))
def test_sparse_tangent_bound_is_the_least_tangent_plane_over_the_sparse_models(seed):
    """At random points, the bound equals (to round-off) the least plane + L0 cost over every
    enumerated model and intercept, so it is below every model's objective (the plane is below the
    loss)."""
    inst = _risk(seed, max_size=(1, 2, None)[seed % 3], forced=seed % 4 == 3)
    box = SparseBox.from_instance(inst)
    rng = np.random.default_rng(seed)
    lo, hi = inst.intercept_bounds
    models = np.array(list(_sparse_models(inst)))
    costs = inst.spec.c0 * ((models != 0) | box.forced) @ inst.coefficients.c0
    for _ in range(5):
        w, b = rng.uniform(-3, 3, 4), float(rng.uniform(-4, 4))
        value, g, g0 = inst.data.gradient(w, b)
        bound = sparse_tangent_bound(value, g, g0, w, b, box)
        plane = value + (models - w) @ g + min(g0 * (lo - b), g0 * (hi - b)) + costs
        assert bound == pytest.approx(plane.min(), abs=1e-9)
        assert bound <= plane.min() + 1e-12


@pytest.mark.parametrize("seed", range(10))
def test_riskslim_floor_is_below_the_brute_force_optimum(seed):
    inst = _risk(seed, max_size=(1, 2, None)[seed % 3], forced=seed % 4 == 3)
    floor, iterations, _ = riskslim_floor(inst, Limits.untimed())
    optimum = _risk_brute_force(inst, lambda coef: True)
    assert iterations >= 1
    assert inst.loss_floor() <= floor <= optimum + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_the_floor_is_the_sparse_tangent_bound_at_its_point(seed):
    """The point the floor returns gives the floor again (so its tangent, handed to SCIP, carries it)."""
    inst = _risk(seed, max_size=(1, 2, None)[seed % 3], forced=seed % 4 == 3)
    floor = riskslim_floor(inst, Limits.untimed())
    if floor.point is None:  # the box floor was larger
        assert floor.bound == pytest.approx(box_floor(inst), abs=1e-15)
        return
    w, b = floor.point
    value, g, g0 = inst.data.gradient(w, b)
    assert max(sparse_tangent_bound(value, g, g0, w, b, SparseBox.from_instance(inst)), 0.0) == floor.bound


def test_scip_with_the_floor_tangent_starts_at_the_floor():
    """SCIP on the exact program with the floor's tangent among its first cuts: its bound after one
    node is at least the floor (the root LP over the hull of the sparse box under that tangent is the
    floor). On this 600 x 80 table of nested thresholds SCIP's own root cuts stay below the floor."""
    from solvers.backends.scip import solve_scip

    X, y = _wide_table(2, n=600, columns=20)
    inst = RiskSLIM(coef_bound=5, c0=1e-6, max_size=5).instance(X, y)
    floor = riskslim_floor(inst, Limits.untimed())
    assert floor.point is not None and floor.bound > box_floor(inst)
    root = solve_scip(inst.with_tangents(inst.exact(), [floor.point]), node_limit=1)
    assert root.bound >= floor.bound - 1e-7 * max(1.0, floor.bound)


@pytest.mark.parametrize("seed", range(6))
def test_scip_with_the_floor_tangent_keeps_the_optimum(seed):
    """The floor's tangent is a valid cut: SCIP's optimum with it is the brute-force optimum."""
    from solvers.backends.scip import solve_scip

    inst = _risk(seed, max_size=(1, 2)[seed % 2], forced=seed % 3 == 2)
    floor = riskslim_floor(inst, Limits.untimed())
    assert floor.point is not None
    solved = solve_scip(inst.with_tangents(inst.exact(), [floor.point]), mip_rel_gap=1e-9)
    optimum = _risk_brute_force(inst, lambda coef: True)
    assert inst.objective(inst.round(inst.decode(solved.x))) == pytest.approx(optimum, abs=1e-9)
    assert solved.bound <= optimum + 1e-9


def test_the_hull_floor_beats_the_box_floor_when_max_size_binds():
    """One feature of the four allowed: the hull of the sparse box is far smaller than the box, and the
    floor is well above the box floor (and still below the optimum)."""
    inst = _risk(0, max_size=1)
    floor, _, _ = riskslim_floor(inst, Limits.untimed())
    assert floor > inst.loss_floor() + 0.01
    assert floor <= _risk_brute_force(inst, lambda coef: True) + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_projection_on_the_hull_of_the_sparse_box(seed):
    """``p = project(u)`` lies in the hull and ``(u - p) . (v - p) <= 0`` at every vertex ``v``
    (``max_size`` or fewer coordinates at a bound, the others 0): the Euclidean projection."""
    rng = np.random.default_rng(seed)
    d = 5
    lb = -rng.integers(0, 4, d).astype(float)
    ub = rng.integers(1, 4, d).astype(float)
    forced = np.zeros(d, bool)
    box = SparseBox(lb, ub, forced, int(rng.integers(1, 3)), -3.0, 3.0, np.zeros(d))
    vertices = [np.array(v, float) for v in itertools.product(*[(a, 0.0, b) for a, b in zip(lb, ub)])
                if np.count_nonzero(v) <= box.budget]
    for _ in range(20):
        u, b = rng.normal(0, 3, d), float(rng.normal(0, 5))
        p, pb = box.project(u, b)
        assert np.all(p >= lb - 1e-12) and np.all(p <= ub + 1e-12) and -3.0 <= pb <= 3.0
        radius = np.where(p > 0, ub, -lb)
        used = np.abs(p) / np.where(radius > 0, radius, 1.0)
        assert used.sum() <= box.budget + 1e-9
        for v in vertices:
            assert (u - p) @ (v - p) <= 1e-7


# ------------------------------------------------------------------------------ wide fits
def _wide_table(seed: int = 0, n: int = 2500, columns: int = 40, cuts: int = 4):
    """Correlated continuous columns cut at ``cuts`` quantile thresholds each (nested indicators)."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(n, 3)) @ rng.normal(size=(3, columns)) + rng.normal(size=(n, columns))
    levels = np.quantile(raw, np.linspace(0, 1, cuts + 2)[1:-1], axis=0)  # (cuts, columns)
    X = (raw[:, :, None] >= levels.T[None, :, :]).reshape(n, columns * cuts).astype(float)
    y = np.where(raw[:, :4] @ np.array([1.0, -1.0, 0.5, 0.5]) + rng.logistic(size=n) > 1.0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("kind", ["slim", "riskslim"])
def test_a_one_second_fit_on_a_wide_table_reports_a_finite_bound(kind):
    """2,500 rows x 160 nested threshold columns, ``time_limit=1``: the searches give up or stop at
    the clock, but the floor runs, so the bound and the gap are finite (and the bound valid: below
    the objective)."""
    X, y = _wide_table()
    inst = (SLIM(c0=1e-4, coef_bound=5, max_size=5) if kind == "slim" else
            RiskSLIM(coef_bound=5, c0=1e-6, max_size=5)).instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=1.0, mip_rel_gap=1e-4))
    floor = next(r for r in fit.steps if r.step == "floor")
    assert floor.ran and math.isfinite(floor.bound), fit.message
    assert fit.model is not None and math.isfinite(fit.bound) and math.isfinite(fit.gap), fit.message
    assert fit.bound <= fit.objective + 1e-12
    if kind == "riskslim":
        assert fit.bound > 0.5 * fit.objective  # the floor is a real bound there, not just loss >= 0


def test_riskscore_auto_on_a_wide_table_reports_a_finite_gap():
    """``multiplier="auto"`` in 2 s: every multiplier's fit has a floor, so the least bound over
    them (the certificate over all) is finite."""
    from milpscore.estimators import RiskScoreClassifier

    X, y = _wide_table(1, n=2000, columns=30)
    est = RiskScoreClassifier(coef_bound=5, max_size=5, multiplier="auto", time_limit=2.0).fit(X, y)
    assert np.isfinite(est.multipliers_["bound"]).all(), est.multipliers_
    assert math.isfinite(est.gap_) and est.bound_ <= est.objective_ + 1e-12


def test_the_progress_line_shows_a_finite_route_bound_from_the_start(monkeypatch):
    """With a reporter (what ``milpscore fit`` shows on a terminal), a fit on a wide table reports a
    finite bound from its first report on (the box floor is the route's first step), the hull floor's
    once it ran, and no report shows a smaller bound than an earlier one (the steps' own reports are
    folded with the route's) or a bound above the fit's objective. (No exclusion bounds, which prove
    this table within the limit, nor the blocked screen, which does too: the floors and SCIP must run.)"""
    import dataclasses

    import solvers.exact.riskslim_route as riskslim_route
    import solvers.exact.route as route_table
    from solvers import progress

    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION,
                                                                        rule_in_supports=10**18))
    monkeypatch.setattr(riskslim_route, "blocked_applies",
                        lambda problem, rules: "not in this test (it proves the table)")

    X, y = _wide_table(2, n=1000, columns=30)
    inst = RiskSLIM(coef_bound=5, c0=1e-6, max_size=5).instance(X, y)
    seen = []
    with progress.reporting(lambda elapsed, incumbent, bound, gap: seen.append((elapsed, incumbent, bound))):
        fit = solve_exact(inst, limits=Limits(time_limit=8.0, mip_rel_gap=1e-4))
    floor, scip = (next(r for r in fit.steps if r.step == name) for name in ("floor", "scip"))
    assert floor.ran and scip.ran and len(seen) > 3, fit.message  # SCIP reported too
    bounds = np.array([b for _, _, b in seen])
    assert np.isfinite(bounds).all() and bounds.max() >= floor.bound - 1e-15
    assert np.all(np.diff(bounds) >= -1e-15)
    assert bounds.max() <= fit.objective + 1e-9
    assert all(np.diff([e for e, _, _ in seen]) >= 0)


def test_the_floor_runs_with_no_time_left_but_keeps_the_memory_budget():
    """A floor step runs on an expired clock (the bound stays finite), and is skipped, saying so, when
    its allocation estimate is over ``memory_limit`` (the least accepted budget, 16 MiB, on 20,000 x 60)."""
    from solvers.limits import MIN_MEMORY
    from tests.solvers.test_slim_solver import run_steps

    X, y = _wide_table(3, n=400, columns=5)
    inst = SLIM(c0=1e-3, coef_bound=3, max_size=3).instance(np.tile(X, (2, 1)), np.r_[y, -y])
    out = run_steps(inst, ("floor",), Limits(time_limit=1e-9))
    assert out.records[0].ran and out.bound == pytest.approx(bayes_floor(inst)) and out.bound > 0, out.records
    rng = np.random.default_rng(0)
    big = (rng.random((20_000, 60)) < 0.5).astype(float)
    inst = SLIM(c0=1e-3, coef_bound=3, max_size=3).instance(big, np.where(big[:, 0] > 0, 1.0, -1.0))
    out = run_steps(inst, ("floor",), Limits(time_limit=10, memory=MIN_MEMORY))
    assert not out.records[0].ran and "memory_limit" in out.records[0].reason


@pytest.mark.parametrize("seed", range(16))
def test_floors_on_mixed_coefficient_sets_are_below_brute_force(seed):
    """Asymmetric and one-signed boxes, a feature forced by its range (points >= 1) or by must-include,
    ``max_size`` 1, 2 or none, multipliers and class weights: both floors stay below the enumerated
    optimum of the models that obey the set (a must-include feature has non-zero points)."""
    rng = np.random.default_rng(5000 + seed)
    d, n = int(rng.integers(2, 5)), int(rng.integers(8, 40))
    X = rng.integers(0, int(rng.integers(2, 4)), (n, d)).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) - 0.5 + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    lb, ub = -rng.integers(0, 3, d).astype(float), rng.integers(1, 3, d).astype(float)
    must = np.zeros(d, bool)
    if seed % 4 == 1:
        lb[0] = 1.0
    if seed % 4 == 2:
        must[0] = True
    cs = CoefficientSet(lb, ub, np.ones(d, bool), rng.uniform(0.5, 2, d), must, tuple(f"x{j}" for j in range(d)))
    k = (None, 1, 2)[seed % 3]

    def allowed(coef):
        return bool(np.all(coef[must] != 0)) and (k is None or np.count_nonzero(coef) <= k)

    risk = RiskSLIM(coefficients=cs, c0=float(rng.choice([1e-6, 0.02])), max_size=k,
                    multiplier=float(rng.choice([0.7, 1.0, 2.0])), class_weight=(1.0, float(rng.choice([1.0, 3.0]))))
    inst = risk.instance(X, y)
    assert riskslim_floor(inst, Limits.untimed())[0] <= _risk_brute_force(inst, allowed) + 1e-12
    slim = SLIM(coefficients=cs, c0=float(rng.choice([0.005, 0.02])), max_size=k, margin=float(rng.choice([0.5, 1.0])))
    inst = slim.instance(X, y)
    assert bayes_floor(inst) <= _slim_brute_force(X, y, cs, slim, inst, allowed) + 1e-12
