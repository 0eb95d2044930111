"""The blocked screen one group at a time (solvers.exact.ordered_screen) against brute force.

Tiny binarised tables (three variables cut at three thresholds, one unrelated column; supports of 3):
every support is listed exactly once over the branches, the floor without the groups done is below
every model that avoids them, every bound the pass reports on its way is below the brute-force
optimum, and the whole pass proves it, on single columns and on groups of nested thresholds.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import minimize

from formulations.base import Model
from formulations.riskslim import RiskSLIM
from solvers import progress
from solvers.catalog import entry_for
from solvers.exact import blocked_pass, blocked_supports
from solvers.exact.blocked_pass import plain_branch
from solvers.exact.blocked_supports import solve_blocked
from solvers.exact.floor import SparseBox, hull_floor
from solvers.exact.ordered_screen import RestFloor, branch_parts, group_order, ordered_branches
from solvers.exact.route import relaxation_bound, run_route
from solvers.exact.screen import SupportScreen
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.limits import Limits
from tests.solvers.test_group_screen import _members
from tests.solvers.test_routes import _risk_brute_force


def _table(seed: int, n: int = 500):
    """Variable 0 strong, 1 weaker, 2 unrelated, each cut at three thresholds (columns 0-8, nested in
    threes), and an unrelated 0/1 column 9."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(n, 3))
    X = np.column_stack([raw[:, v] >= t for v in range(3) for t in (-0.5, 0.1, 0.7)]
                        + [rng.random(n) < 0.5]).astype(float)
    y = np.where(2.0 * raw[:, 0] + 0.8 * raw[:, 1] + rng.logistic(size=n) > 0.3, 1.0, -1.0)
    return X, y


def _instance(seed):
    X, y = _table(seed)
    return RiskSLIM(coef_bound=2, c0=1e-4, max_size=3).instance(X, y)


def _optimum(inst, avoid=()) -> float:
    """Least objective over the models of supports of 3 columns avoiding ``avoid`` (brute force)."""
    columns = [j for j in range(inst.X.shape[1]) if j not in set(avoid)]
    return min(_risk_brute_force(inst, support=s) for s in itertools.combinations(columns, 3))


def _real_optimum(inst) -> float:
    """At least the least objective of the *real* models of the box (points anywhere in their ranges, the
    intercept in its range, at most 3 non-zero): per support of 3 columns, the loss minimised over the box
    (L-BFGS-B, from 0) plus the L0 costs of the three."""
    cs, (lo, hi) = inst.coefficients, inst.intercept_bounds
    best = math.inf
    for support in itertools.combinations(range(inst.X.shape[1]), 3):
        X = inst.X[:, support]

        def loss(theta):
            z = -inst.y * (X @ theta[:-1] + theta[-1]) / inst.data.scale
            gradient = -(inst.weights / (1.0 + np.exp(-z))) * inst.y / inst.data.scale
            return float(inst.weights @ np.logaddexp(0.0, z)), np.append(X.T @ gradient, gradient.sum())

        box = [(cs.lb[j], cs.ub[j]) for j in support] + [(lo, hi)]
        fit = minimize(loss, np.zeros(4), jac=True, method="L-BFGS-B", bounds=box, options={"ftol": 1e-14})
        best = min(best, fit.fun + inst.spec.c0 * float(cs.c0[list(support)].sum()))
    return best


def _listed(branches, size):
    """Every column support (sorted feature tuple) the branches list: a Branch's supports, a GroupBranch's
    members (those holding a column of its first group, but in the last branch)."""
    out = []
    for branch in branches:
        if isinstance(branch, blocked_pass.GroupBranch):
            groups = branch.start.size - 1
            for a, b in branch.pairs:
                for rest in itertools.combinations(range(b + 1, groups), size - 2):
                    out += _members((a, b, *rest), branch.start, branch.columns, size, branch.lead_only)
        else:
            for a, b in branch.pairs:
                for rest in itertools.combinations(range(b + 1, branch.columns.size), size - 2):
                    out.append(tuple(sorted(branch.columns[[a, b, *rest]].tolist())))
    return out


@pytest.mark.parametrize("grouped", [False, True])
def test_the_branches_list_every_support_once(grouped):
    """Groups variable by variable in decreasing weight at the point; over all branches each support of 3
    of the 10 columns is listed exactly once (single columns, and nested thresholds in groups of 2)."""
    X, _ = _table(0)
    every = blocked_pass.plain_branch(X, 3)
    if grouped:
        start, columns = blocked_pass.groups_of(blocked_pass.nested_chains(X, np.arange(10)), 10, 2)
        every = blocked_pass.GroupBranch(start, columns, np.zeros((0, 2), np.int64))
    order = group_order(X, every, np.array([0.1, 0.1, 0.1, 2.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.4]))
    # variable 1 (columns 3-5, weight 2) first, then variable 2 (1.5), column 9 (0.4), variable 0 (0.3):
    # grouped, the last two groups hold the support (0, 1, 2), which only the last branch lists
    weights = [0.3, 2.0, 1.5, 0.4]
    first_variable = [0 if g[0] < 3 else 1 if g[0] < 6 else 2 if g[0] < 9 else 3 for g in order]
    assert [weights[v] for v in first_variable] == sorted([weights[v] for v in first_variable], reverse=True)
    listed = _listed(ordered_branches(order, 3, grouped), 3)
    assert len(listed) == len(set(listed)) == math.comb(10, 3)


@pytest.mark.parametrize("seed", range(2))
def test_the_floor_without_the_groups_done_is_below_every_model_avoiding_them(seed):
    inst = _instance(seed)
    problem = SparseLogistic.from_instance(inst)
    box = SparseBox(problem.lo, problem.hi, problem.forced, 3, problem.intercept_lo, problem.intercept_hi,
                    problem.cost)
    rest = RestFloor(problem.data, box, inst.continuous_fit())
    first = rest.without(np.zeros(0, np.int64), Limits.untimed())
    assert first <= _optimum(inst) + 1e-9
    strong = rest.without(np.array([0, 1, 2]), Limits.untimed())
    assert first < strong <= _optimum(inst, avoid=(0, 1, 2)) + 1e-9  # the strong variable's fit is gone
    assert strong <= rest.without(np.array([3]), Limits.untimed()) <= _optimum(inst, avoid=(0, 1, 2, 3)) + 1e-9
    lb, ub = problem.lo.copy(), problem.hi.copy()  # (on the columns not fixed: the floor of the whole box)
    lb[:4] = ub[:4] = 0.0
    whole = hull_floor(problem.data, box.within(lb, ub), inst.continuous_fit(), Limits.untimed())
    assert rest.bound == pytest.approx(whole.bound, abs=1e-5)


@pytest.mark.parametrize("seed, grouped", [(0, False), (1, True), (2, True)])
def test_the_pass_proves_the_optimum_and_every_bound_on_its_way_is_below_it(seed, grouped, monkeypatch):
    if grouped:  # (groups listed whatever their cost)
        monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.1)
    inst = _instance(seed)
    best = _optimum(inst)
    problem = SparseLogistic.from_instance(inst)
    with progress.reporting(trace := progress.Trace()):
        found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 0.02, ordered=True,
                              point=inst.continuous_fit())
    assert "one group at a time" in found.message and "every support screened" in found.message, found.message
    assert found.finished and inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
    assert best - 1e-8 <= found.bound <= best + 1e-9
    bounds = [row[2] for row in trace.rows]
    assert max(bounds) <= best + 1e-9 and sum(b > -math.inf for b in bounds) >= 3  # (from the first group done)


def _stopped_at(inst, done: int, incumbent: float, monkeypatch):
    """The pass one group at a time from ``incumbent``, its screen stopped at branch ``done`` (as on its
    projection)."""
    calls = []

    def stopping(*args, **kwargs):
        calls.append(1)
        if len(calls) > done:
            return blocked_pass.Pass(stopped="a projection past the time left", too_long=True)
        return blocked_pass.screen_pairs(*args, **kwargs)

    monkeypatch.setattr(blocked_supports, "screen_pairs", stopping)
    return solve_blocked(SparseLogistic.from_instance(inst), Limits.untimed(mip_rel_gap=1e-9), incumbent=incumbent,
                         ordered=True, point=inst.continuous_fit())


@pytest.mark.parametrize("seed, done", [(0, 0), (0, 2), (1, 1), (1, 3)])
def test_a_pass_stopped_midway_keeps_a_bound_below_the_optimum(seed, done, monkeypatch):
    """The screen of branch ``done`` stops (as when its projection does not fit the time left): with
    groups done, the bound is the least of theirs and of the floor without them, finite and below the
    optimum; with none done there is none (-inf: the route's floors bound the fit)."""
    inst = _instance(seed)
    best = _optimum(inst)
    found = _stopped_at(inst, done, best + 0.05, monkeypatch)
    assert not found.finished and f"{done} of " in found.message and "stopped (a projection" in found.message
    if done:
        assert -math.inf < found.bound <= best + 1e-9
    else:
        assert found.bound == -math.inf


def test_the_floors_wait_while_the_supports_left_project_within_the_deadline():
    """The floors get no time while the supports left, at the pass's rate so far, take at most the time
    left, all of it from ``FLOOR_FULL_PROJECTION`` times the time left on, in proportion between; without
    a deadline, all of it."""
    state = blocked_supports._OrderedState(None, None, None, None, Limits(time_limit=100.0).started(), 1, 0.0)
    full = blocked_supports.FLOOR_FULL_PROJECTION
    assert full > 1.0
    state.total, state.listed, state.seconds = 1000, 500, 10.0  # (500 left at 50 a second: 10 s)
    assert state.floor_share() == 0.0
    state.seconds = 99.0  # (500 left at about 5 a second: 99 s)
    assert state.floor_share() == 0.0
    state.seconds = 200.0 * full  # (500 left: 200 * full s, past full times the time left)
    assert state.floor_share() == 1.0
    left = state.limits.seconds_left()
    state.seconds = left * (1.0 + full) / 2.0  # (halfway between the time left and full times it)
    assert state.floor_share() == pytest.approx(0.5, abs=0.01)
    state.limits = Limits.untimed().started()
    state.seconds = 10.0
    assert state.floor_share() == 1.0


@pytest.mark.parametrize("seed, waited", [(0, 1), (1, 2)])
def test_a_floor_after_floors_that_waited_leaves_out_every_group_done(seed, waited, monkeypatch):
    """The floors of the first ``waited`` branches wait (the pass projected to finish); the pass stops at
    branch 3: the first floor computed fixes the columns of every group done at 0 (then one after each
    branch, and one as branch 3 goes in parts), and the bound is finite and below the optimum over the
    models avoiding the groups done."""
    inst = _instance(seed)
    best = _optimum(inst)
    fixed = []
    shares = iter([0.0] * waited)  # (then the whole share)
    monkeypatch.setattr(blocked_supports._OrderedState, "floor_share", lambda self: next(shares, 1.0))
    without = RestFloor.without

    def recording(self, columns, limits):
        bound = without(self, columns, limits)
        fixed.append(np.flatnonzero((self.lb == 0) & (self.ub == 0)))
        return bound

    monkeypatch.setattr(RestFloor, "without", recording)
    found = _stopped_at(inst, 3, best + 0.05, monkeypatch)
    assert not found.finished and len(fixed) == 4 - waited
    order = group_order(inst.X, plain_branch(inst.X, 3), inst.continuous_fit()[0])
    done = np.sort(np.concatenate(order[:waited + 1]))
    assert np.array_equal(fixed[0], done)
    assert -math.inf < found.bound <= _optimum(inst, avoid=tuple(np.concatenate(order[:3]))) + 1e-9


@pytest.mark.parametrize("seed", range(2))
def test_a_whole_ordered_pass_serves_the_later_multipliers(seed):
    """A pass that did every branch is kept at the least level its branches screened at: every support
    it left out holds no model below that level for multipliers 1 and 2 (brute force), and a fit of
    multiplier 2 reuses it and proves its own optimum."""
    X, y = _table(seed, n=300)
    inst = {m: RiskSLIM(coef_bound=2, c0=1e-4, max_size=3, multiplier=m).instance(X, y) for m in (1.0, 2.0)}
    best = {m: _optimum(i) for m, i in inst.items()}
    screen = SupportScreen()
    shared = Limits.untimed(mip_rel_gap=1e-9, screen=screen)
    first = solve_blocked(SparseLogistic.from_instance(inst[1.0]), shared, incumbent=best[1.0] + 0.02, ordered=True,
                          point=inst[1.0].continuous_fit())
    assert first.finished and screen.supports is not None and screen.level <= best[1.0] + 0.02 + 1e-12
    kept = {tuple(sorted(s)) for s in screen.supports.tolist()}
    for support in itertools.combinations(range(10), 3):
        if support not in kept:
            for m in inst:
                assert _risk_brute_force(inst[m], support=support) >= screen.level - 1e-12, (support, m)
    later = solve_blocked(SparseLogistic.from_instance(inst[2.0]), shared,
                          incumbent=min(best[2.0] + 0.01, screen.level))
    assert "earlier fit's screen" in later.message and later.finished, later.message
    if best[2.0] < screen.level:
        assert inst[2.0].objective(Model(*later.model)) == pytest.approx(best[2.0], abs=1e-9)


def test_a_whole_ordered_pass_with_too_many_survivors_is_not_kept(monkeypatch):
    """Past what one pass may hold (``MAX_KEPT`` survivors over all branches) the survivors are not kept
    for the later fits; the pass still proves the optimum."""
    inst = _instance(0)
    best = _optimum(inst)
    monkeypatch.setattr(blocked_supports, "MAX_KEPT", 0)
    screen = SupportScreen()
    found = solve_blocked(SparseLogistic.from_instance(inst), Limits.untimed(mip_rel_gap=1e-9, screen=screen),
                          incumbent=best + 0.02, ordered=True, point=inst.continuous_fit())
    assert found.finished and screen.supports is None
    assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("grouped", [False, True])
def test_the_parts_of_a_branch_list_what_it_lists(grouped):
    """Each branch's parts are runs of its pairs in order, and list its supports, each once."""
    X, _ = _table(1)
    every = blocked_pass.plain_branch(X, 3)
    if grouped:
        start, columns = blocked_pass.groups_of(blocked_pass.nested_chains(X, np.arange(10)), 10, 2)
        every = blocked_pass.GroupBranch(start, columns, np.zeros((0, 2), np.int64))
    order = group_order(X, every, np.linspace(2.0, 0.2, 10))
    for branch in ordered_branches(order, 3, grouped):
        parts = branch_parts(branch, 3, parts=3)
        assert np.array_equal(np.concatenate([p.pairs for p in parts]), branch.pairs)
        assert len(parts) == min(3, branch.pairs.shape[0]) or branch.pairs.shape[0] > 3
        listed = _listed(parts, 3)
        assert sorted(listed) == sorted(_listed([branch], 3)) and len(set(listed)) == len(listed)


def _stopping_in_parts(monkeypatch, stop_after: int | None) -> tuple[list, list, list]:
    """Every whole branch of more than one pair "does not fit the time left" (so it is screened in parts),
    and the screen stops at part ``stop_after`` (None: never); returns the parts screened, for each call
    whether it was a part, its pairs and its projection's share of the time left, and the branches and
    parts refused."""
    parts, screened, refused = set(), [], []
    shares = []  # (a part?, its pairs, the share of the time left it may project)

    def parted(branch, size):
        runs = branch_parts(branch, size)
        parts.update(map(id, runs))
        return runs

    def screen(bits, table, branches, size, cutoff, limits, threads, share):
        branch = branches[0]
        shares.append((id(branch) in parts, branch.pairs.shape[0], share))
        if id(branch) not in parts and branch.pairs.shape[0] > 1 or len(screened) == stop_after:
            refused.append(branch)
            return blocked_pass.Pass(stopped="a projection past the time left", too_long=True)
        screened.append(branch)
        return blocked_pass.screen_pairs(bits, table, branches, size, cutoff, limits, threads, share)

    monkeypatch.setattr(blocked_supports, "branch_parts", parted)
    monkeypatch.setattr(blocked_supports, "screen_pairs", screen)
    return screened, shares, refused


@pytest.mark.parametrize("seed, grouped", [(0, False), (1, True)])
def test_a_pass_in_parts_proves_the_optimum(seed, grouped, monkeypatch):
    if grouped:
        monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.1)
    inst = _instance(seed)
    best = _optimum(inst)
    _, shares, _ = _stopping_in_parts(monkeypatch, None)
    with progress.reporting(trace := progress.Trace()):
        found = solve_blocked(SparseLogistic.from_instance(inst), Limits.untimed(mip_rel_gap=1e-9),
                              incumbent=best + 0.02, ordered=True, point=inst.continuous_fit())
    assert "every support screened" in found.message and found.finished, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
    assert max(row[2] for row in trace.rows) <= best + 1e-9
    # a whole branch of several pairs may project a quarter of the time left, a part (or one pair) 0.9 of it
    assert {share for part, pairs, share in shares if not part and pairs > 1} == \
        {blocked_supports.WHOLE_BRANCH_SHARE}
    assert {share for part, pairs, share in shares if part or pairs == 1} == \
        {blocked_pass.PROJECTION_SHARE}


@pytest.mark.parametrize("seed, grouped, stop_after", [(0, False, 1), (0, False, 4), (1, True, 1), (1, True, 3),
                                                       (2, True, 2), (3, False, 6), (0, False, 10)])
def test_a_pass_stopped_inside_a_branch_bounds_the_models_it_did_not_list(seed, grouped, stop_after, monkeypatch):
    """Stopped after ``stop_after`` parts: each support the branches and parts done did not list avoids
    the columns fixed at 0 by one of the two floors (so its models lie in that floor's box), the floors'
    bound is finite and below every model of those supports (brute force), and the fit's bound is below
    the optimum."""
    if grouped:
        monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.1)
    inst = _instance(seed)
    best = _optimum(inst)
    screened, _, refused = _stopping_in_parts(monkeypatch, stop_after)
    zero: dict[int, set] = {}  # each floor's columns fixed at 0
    without = RestFloor.without

    def recorded(self, columns, limits):
        bound = without(self, columns, limits)
        zero[id(self)] = set(np.flatnonzero((self.lb == 0) & (self.ub == 0)).tolist())
        return bound

    monkeypatch.setattr(RestFloor, "without", recorded)
    found = solve_blocked(SparseLogistic.from_instance(inst), Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 0.05,
                          ordered=True, point=inst.continuous_fit())
    assert not found.finished and "parts of the next" in found.message, found.message
    of_the_branch = sum(np.array_equal(part.columns, refused[-1].columns) for part in screened)
    assert f" {of_the_branch} parts of the next" in found.message, found.message
    assert found.bound <= best + 1e-9
    listed = set(_listed(screened, 3))
    left = [s for s in itertools.combinations(range(10), 3) if s not in listed]
    # each support not listed avoids the columns of a floor taken in the bound (so that floor bounds it)
    # (the floor without the groups done, the first made, and the last branch's fork)
    floors = [zero[key] for key in (list(zero)[0], list(zero)[-1])]
    assert len(zero) >= 2 and all(any(not set(s) & fixed for fixed in floors) for s in left)
    rest = float(found.message.split("not listed are above ")[1].split(" ")[0])
    assert -math.inf < rest <= min(_risk_brute_force(inst, support=s) for s in left) + 1e-7, found.message


@pytest.mark.parametrize("seed, done", [(0, None), (1, None), (0, 2), (1, 1), (2, 3)])
def test_the_relaxed_bound_holds_for_the_real_models_of_the_box(seed, done, monkeypatch):
    """What a pass closed by relaxations alone (the screen's saturated losses, the survivors' box fits, the
    floors without the groups done; not the searches) bounds every real model of the box: finite and at most
    the real optimum, which lies below the integer one, so the fit's own bound would not do. Through the
    route for the whole screen (:func:`solvers.exact.route.relaxation_bound` of its rows: the blocked step's,
    above the box floor's); the pass one group at a time stopped at branch ``done`` (as on its projection)."""
    inst = _instance(seed)
    best, real = _optimum(inst), _real_optimum(inst)
    assert real < best - 1e-4  # (so that the integer bound is not a relaxed one)
    if done is None:  # (the route's box floor, then the screen of every support, from no model)
        route = tuple(step for step in entry_for(inst.spec).route if step.name in ("box_floor", "blocked"))
        limits = replace(Limits.untimed(mip_rel_gap=1e-9), objective_limit=best + 0.02).started()
        out = run_route(route, inst, None, limits, lambda model: True)
        assert [r.ran for r in out.records] == [True, True] and out.bound == pytest.approx(best, abs=1e-8), out.message
        floor, blocked = out.records
        assert floor.relaxed == floor.bound and blocked.relaxed > floor.relaxed
        relaxed = relaxation_bound(out.records)
        assert relaxed == blocked.relaxed
    else:
        found = _stopped_at(inst, done, best + 0.05, monkeypatch)
        assert not found.finished and f"{done} of " in found.message, found.message
        relaxed = found.relaxed
        assert relaxed <= found.bound + 1e-12
    assert -math.inf < relaxed <= real + 1e-7
