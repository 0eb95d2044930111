"""The saturated-loss screen on blocked rows (solvers.exact.blocked_entropy), the RiskSLIM step built
on it (solvers.exact.blocked_supports) and SLIM's least Bayes error over supports
(solvers.exact.support_bayes_floor) against brute force.

The screen, over all pairs of first columns, lists every support of ``K`` columns exactly once; the
supports it keeps are exactly those whose saturated loss (the conditional entropy of the label given
the support's values, computed here from the rows grouped by ``np.unique``) is below the cutoff; the
least bound it reports for the pruned ones lies between the cutoff and their least saturated loss.
The step proves the optimum enumerated over every integer model of tiny instances, from a poor start
and from none, and a weak incumbent makes it hand over (no bound) rather than hold too many survivors.
One screen serves every RiskSLIM multiplier: the supports it rules out at level ``L`` hold no model below
``L`` for any multiplier (enumerated), and a later multiplier's fit reuses it and proves its own optimum.
The least Bayes error equals the one enumerated over every support, and SLIM's floor from it lies
between the Bayes error of all the columns and the enumerated SLIM optimum.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import time

import numpy as np
import pytest

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.exact import blocked_pass, blocked_supports, slim_route, support_bayes_floor
from solvers.exact import route as route_table
from solvers.exact.floor import bayes_floor
from solvers.exact.support_bayes_floor import least_bayes_error
from solvers.exact.blocked_entropy import BAYES, screen_all, xlogx_table
from solvers.exact.blocked_supports import applies, solve_blocked
from solvers.exact.exclusion_listing import carries_over, exclusion_branches
from solvers.exact.box_logistic import _cell_entropy, label_bits
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.riskslim_route import ROUTE
from solvers.exact.screen import SupportScreen
from solvers.exact.route import Incumbent
from solvers.exact.zero_one_supports import zero_one
from solvers.limits import Limits
from tests.solvers.test_routes import _risk_brute_force, _slim_brute_force, _slim_case


def _table(seed: int, n: int = 120, d: int = 8):
    """0/1 columns, some nested thresholds of one variable, labels from a few columns; integer weights."""
    rng = np.random.default_rng(4100 + seed)
    raw = rng.normal(size=(n, 3))
    nested = np.column_stack([raw[:, 0] >= t for t in (-0.5, 0.0, 0.7)])
    other = rng.random((n, d - 3)) < rng.uniform(0.2, 0.8, d - 3)
    X = np.column_stack([nested, other]).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.logistic(size=n) > 0.3, 1.0, -1.0)
    weights = rng.integers(1, 4, n).astype(float)
    return X, y, weights


def _saturated(X, y, weights, support) -> float:
    keys, inverse = np.unique(X[:, support], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    wp = np.bincount(inverse[y > 0], weights=weights[y > 0], minlength=keys.shape[0])
    wn = np.bincount(inverse[y < 0], weights=weights[y < 0], minlength=keys.shape[0])
    return sum(_cell_entropy(a, b) for a, b in zip(wp, wn))


@pytest.mark.parametrize("seed,size", [(0, 2), (1, 3), (2, 4), (3, 5), (4, 5), (5, 3)])
def test_the_screen_lists_every_support_once_and_keeps_exactly_those_below_the_cutoff(seed, size):
    X, y, weights = _table(seed)
    weights = weights / weights.sum()
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(X, y > 0, weights)
    n_pos, n_neg = int(np.rint(weights[y > 0].sum() / unit_pos)), int(np.rint(weights[y < 0].sum() / unit_neg))
    xlogx = xlogx_table(n_pos, n_neg, unit_pos, unit_neg)
    d = X.shape[1]
    exact = {s: _saturated(X, y, weights, list(s)) for s in itertools.combinations(range(d), size)}
    cutoff = float(np.quantile(list(exact.values()), 0.3))
    listed, kept, pruned = 0, [], math.inf
    out = np.empty((4096, size), np.int64)
    for b in range(1, d):
        for a in range(b):
            for count, survived, floor, _ in screen_all(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx,
                                                        np.arange(d), a, b, size, cutoff, out, False, 7):  # calls of ~7 supports
                assert survived <= out.shape[0]
                listed += count
                kept += [tuple(row) for row in out[:survived]]
                pruned = min(pruned, floor)
    assert listed == math.comb(d, size)
    assert len(kept) == len(set(kept))
    assert set(kept) == {s for s, h in exact.items() if h < cutoff - 1e-12} | \
        ({s for s in kept if abs(exact[s] - cutoff) <= 1e-12})
    least_pruned = min(h for s, h in exact.items() if s not in set(kept))
    assert cutoff <= pruned <= least_pruned + 1e-12


def _tiny_risk(seed: int, max_size: int):
    """A 60-row RiskSLIM instance of 5 columns of 0/1 (points -2..2, at most ``max_size`` features)."""
    rng = np.random.default_rng(4200 + seed)
    X = (rng.random((60, 5)) < 0.5).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, 5) + rng.logistic(size=60) > 0.5, 1.0, -1.0)
    return RiskSLIM(coef_bound=2, c0=0.01, max_size=max_size).instance(X, y)


@pytest.mark.parametrize("seed", range(6))
def test_the_step_proves_the_brute_force_optimum(seed):
    """Tiny instances (0/1, points -2..2, at most 2-3 features): from a poor start (the empty model,
    objective 10) and from none (an objective to beat above the optimum), the step's model has the
    enumerated least objective and its bound is that, up to the gap tolerance."""
    inst = _tiny_risk(seed, 2 + seed % 2)
    d = inst.X.shape[1]
    problem = SparseLogistic.from_instance(inst)
    assert applies(problem) is None
    best = _risk_brute_force(inst, lambda coef: True)
    for start, incumbent in (((np.zeros(d), 0.0), 10.0), (None, best + 0.05)):  # the empty model; none
        found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), start=start, incumbent=incumbent)
        assert found.finished and found.model is not None, found.message
        assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
        assert found.objective == pytest.approx(best, abs=1e-9)
        assert best - 1e-8 * abs(best) <= found.bound <= best + 1e-9
    assert "stopped" in solve_blocked(problem, Limits.untimed()).message  # no incumbent: nothing to screen against


def test_too_many_survivors_hand_over_without_a_bound(monkeypatch):
    X, y, weights = _table(7, n=200, d=10)
    inst = RiskSLIM(coef_bound=2, c0=1e-4, max_size=3).instance(X, y)
    problem = SparseLogistic.from_instance(inst)
    monkeypatch.setattr(blocked_pass, "MAX_KEPT", 5)
    monkeypatch.setattr(blocked_pass, "HELD_BYTES", 2**60)  # (the memory budget holds no more than MAX_KEPT)
    found = solve_blocked(problem, Limits.untimed(), start=(np.zeros(10), 0.0), incumbent=10.0)
    assert not found.finished and found.bound == -math.inf and "pass the screen" in found.message
    assert "what the memory budget holds" in found.message


def test_a_pass_holds_what_its_memory_budget_holds():
    """Past ``MAX_KEPT``, the survivors a pass may hold are what the budget leaves after the bit sets and
    each thread's copy of them, at ``HELD_BYTES`` per column of a support."""
    bits = (np.zeros((4, 100), np.uint64), 0, 1.0, np.zeros((4, 300), np.uint64), 0, 1.0)
    table = 8 * 4 * 400
    memory = 10**9
    for threads in (1, 3):
        held = blocked_pass.most_held(memory, bits, 5, threads)
        assert held == (memory - (1 + threads) * table) // (blocked_pass.HELD_BYTES * 5) > blocked_pass.MAX_KEPT
    assert blocked_pass.most_held(blocked_pass.MAX_KEPT, bits, 5, 1) == blocked_pass.MAX_KEPT


def test_the_route_step_reads_the_instance_and_its_bound_holds():
    """The route's ``blocked`` row: not on integer features, nor with a forced feature; on 0/1 features it
    returns the brute-force optimum with a bound below it."""
    step = next(s for s in ROUTE if s.name == "blocked")
    X, y, _ = _table(8, n=80, d=5)
    spec = RiskSLIM(coef_bound=2, c0=0.01, max_size=2)
    inst = spec.instance(X, y)
    assert step.applies(inst, Limits()) is None
    assert "0/1" in step.applies(spec.instance(X * 2.0, y), Limits())
    lb = np.full(5, -2.0)
    lb[0] = 1.0  # feature 0 forced
    cs = CoefficientSet(lb, np.full(5, 2.0), np.ones(5, bool), np.ones(5), np.zeros(5, bool), tuple("abcde"))
    assert "forced" in step.applies(RiskSLIM(coefficients=cs, c0=0.01, max_size=2).instance(X, y), Limits())
    out = step.run(inst, Incumbent(None, 50.0), Limits(time_limit=None).started(), {})  # an objective to beat, no model
    best = _risk_brute_force(inst, lambda coef: True)
    assert out.model is not None and inst.objective(out.model) == pytest.approx(best, abs=1e-9)
    assert out.bound <= best + 1e-9
    # the budget's shared screen (RiskSLIM's multipliers): the second multiplier starts from the first's
    screen, doubled = SupportScreen(), RiskSLIM(coef_bound=2, c0=0.01, max_size=2, multiplier=2.0).instance(X, y)
    limits = Limits(time_limit=None, screen=screen).started()
    assert "screened on blocked rows" in step.run(inst, Incumbent(None, best + 0.05), limits, {}).message
    out = step.run(doubled, Incumbent(None, best + 0.05), limits, {})
    assert "earlier fit's screen" in out.message
    optimum = _risk_brute_force(doubled, lambda coef: True)
    assert out.bound <= optimum + 1e-9
    if optimum < best + 0.05:
        assert out.model is not None and doubled.objective(out.model) == pytest.approx(optimum, abs=1e-9)


# ------------------------------------------------------------- SLIM: the least Bayes error over supports
def _bayes(X, y, weights, support) -> float:
    keys, inverse = np.unique(X[:, support], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    wp = np.bincount(inverse[y > 0], weights=weights[y > 0], minlength=keys.shape[0])
    wn = np.bincount(inverse[y < 0], weights=weights[y < 0], minlength=keys.shape[0])
    return float(np.minimum(wp, wn).sum())


@pytest.mark.parametrize("seed,size", [(0, 2), (1, 3), (2, 4), (3, 5), (4, 3)])
def test_the_least_bayes_error_is_the_enumerated_one(seed, size, monkeypatch):
    """Over every support of ``size`` of the free columns (one column fixed at 0 is not free): the
    shrinking screen returns the least Bayes error, enumerated here, also in calls of a few supports
    (the cutoff carried from call to call); under a ceiling, the ceiling when that is lower."""
    X, y, weights = _table(seed, n=150, d=9)
    free = np.array([0, 1, 2, 3, 5, 6, 7, 8])
    least = min(_bayes(X, y, weights, list(s)) for s in itertools.combinations(free, size))
    found, message = least_bayes_error(X, y, weights, free, size, Limits.untimed())
    assert found == pytest.approx(least, rel=1e-12), message
    assert least_bayes_error(X, y, weights, free, size, Limits.untimed(), ceiling=least / 2)[0] == least / 2
    assert least_bayes_error(X, y, weights, free, size, Limits.untimed(), ceiling=least * 2)[0] == pytest.approx(least, rel=1e-12)
    monkeypatch.setattr(support_bayes_floor, "CALL_SUPPORTS", 3)
    assert least_bayes_error(X, y, weights, free, size, Limits.untimed())[0] == pytest.approx(least, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_the_slim_support_floor_is_below_the_brute_force_optimum(seed):
    """The SLIM route's ``support_floor`` row on tiny 0/1 instances with ``max_size``: its bound is at
    most the enumerated optimum and at least the Bayes error of all the columns (the floor step's)."""
    X, y, cs, spec, _ = _slim_case(seed, "binary", d=4)
    X, y = np.tile(X, (2, 1)), np.r_[y, np.where(np.arange(y.size) % 3 == 0, -y, y)]  # overlapping labels
    spec = SLIM(c0=spec.c0, coefficients=cs, max_size=2)
    inst = spec.instance(X, y)
    step = next(s for s in slim_route.ROUTE if s.name == "support_floor")
    assert step.applies(inst, Limits()) is None
    out = step.run(inst, Incumbent(None), Limits(time_limit=None).started(), {})
    optimum = _slim_brute_force(X, y, cs, spec, inst, lambda coef: np.count_nonzero(coef) <= 2)
    assert bayes_floor(inst) <= out.bound + 1e-12 and out.bound <= optimum + 1e-12, out.message
    assert out.bound == pytest.approx(min(_bayes(inst.X, inst.y, inst.weights, list(s)) for s in
                                          itertools.combinations(range(4), 2)), rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_the_slim_kind_proves_the_brute_force_optimum(seed):
    """SLIM on tiny 0/1 instances with ``max_size`` 2-3: from an objective to beat above the optimum
    (no model), the Bayes-error screen and the searches of the supports it leaves find the enumerated
    optimum, with a bound at most it."""
    X, y, cs, spec, _ = _slim_case(seed, "binary", d=4)
    X, y = np.tile(X, (2, 1)), np.r_[y, np.where(np.arange(y.size) % 3 == 0, -y, y)]
    size = 2 + seed % 2
    spec = SLIM(c0=spec.c0, coefficients=cs, max_size=size)
    inst = spec.instance(X, y)
    best = _slim_brute_force(X, y, cs, spec, inst, lambda coef: np.count_nonzero(coef) <= size)
    problem = zero_one(inst)
    assert applies(problem) is None
    found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 0.05)
    assert found.finished and found.model is not None, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
    assert best - 1e-8 <= found.bound <= best + 1e-9


@pytest.mark.parametrize("kind", ["SLIM", "RiskSLIM"])
def test_each_kind_screens_within_its_own_share_of_the_time_left(kind, monkeypatch):
    """SLIM's pass may project up to ``SLIM_PROJECTION_SHARE`` of the time left (its next bound is the
    sign-cover LP's), RiskSLIM's up to ``PROJECTION_SHARE`` (its one-group-at-a-time pass follows); with
    either, the step proves the enumerated optimum."""
    shares = []

    def screen(bits, table, branches, size, cutoff, limits, threads, share=blocked_pass.PROJECTION_SHARE):
        shares.append(share)
        return blocked_pass.screen_pairs(bits, table, branches, size, cutoff, limits, threads, share)

    monkeypatch.setattr(blocked_supports, "screen_pairs", screen)
    if kind == "SLIM":
        X, y, cs, spec, _ = _slim_case(0, "binary", d=4)
        inst = SLIM(c0=spec.c0, coefficients=cs, max_size=2).instance(X, y)
        best = _slim_brute_force(X, y, cs, spec, inst, lambda coef: np.count_nonzero(coef) <= 2)
        problem, share = zero_one(inst), blocked_supports.SLIM_PROJECTION_SHARE
    else:
        inst = _tiny_risk(0, 2)
        best = _risk_brute_force(inst, lambda coef: True)
        problem, share = SparseLogistic.from_instance(inst), blocked_pass.PROJECTION_SHARE
    found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 0.05)
    assert shares == [share] and found.finished, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
    assert blocked_pass.PROJECTION_SHARE < blocked_supports.SLIM_PROJECTION_SHARE < 1.0


# ------------------------------------------------------------- one screen for all of RiskSLIM's multipliers
@pytest.mark.parametrize("seed", range(4))
def test_one_screen_serves_every_multiplier(seed):
    """The screen of multiplier 1 at its prune level ``L``, kept in a :class:`SupportScreen`: every
    support it ruled out holds no model of objective below ``L`` for multipliers 1, 2 and 4
    (enumerated over every integer model of the support); a fit of multiplier 2 or 4 at a level at
    most ``L`` reuses it (no screen of its own) and proves its own enumerated optimum (or, when that is
    not below the level, that no model is); one at a level
    above ``L``, or on other rows, screens again."""
    rng = np.random.default_rng(4300 + seed)
    n, d = 70, 5
    X = (rng.random((n, d)) < 0.5).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) + rng.logistic(size=n) > 0.3, 1.0, -1.0)
    spec = {m: RiskSLIM(coef_bound=2, c0=0.01, max_size=2, multiplier=m) for m in (1.0, 2.0, 4.0)}
    inst = {m: s.instance(X, y) for m, s in spec.items()}
    best = {m: _risk_brute_force(i, lambda coef: True) for m, i in inst.items()}
    screen = SupportScreen()
    shared = Limits.untimed(mip_rel_gap=1e-9, screen=screen)
    first = solve_blocked(SparseLogistic.from_instance(inst[1.0]), shared, incumbent=best[1.0] + 0.02)
    assert first.finished and "screened on blocked rows" in first.message
    assert screen.supports is not None and screen.level == pytest.approx(best[1.0] + 0.02, rel=1e-3)
    kept = {tuple(s) for s in screen.supports}
    for support in itertools.combinations(range(d), 2):
        if support in kept:
            continue
        for m in inst:
            inside = _risk_brute_force(inst[m], support=support)
            assert inside >= screen.level - 1e-12, (support, m)
    for m in (2.0, 4.0):
        problem = SparseLogistic.from_instance(inst[m])
        target = min(best[m] + 0.01, screen.level)
        found = solve_blocked(problem, shared, incumbent=target)
        assert "earlier fit's screen" in found.message and found.finished, found.message
        if best[m] < target:  # the optimum, proven
            assert found.model is not None and inst[m].objective(Model(*found.model)) == pytest.approx(best[m], abs=1e-9)
            assert best[m] - 1e-8 <= found.bound <= best[m] + 1e-9
        else:  # proven: no model below the target
            assert found.model is None and found.bound == pytest.approx(target, abs=1e-12) and target <= best[m]
        higher = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9, screen=SupportScreen()),
                               incumbent=screen.level + 0.5)
        assert "screened on blocked rows" in higher.message
    above = solve_blocked(SparseLogistic.from_instance(inst[2.0]), shared, incumbent=screen.level + 0.5)
    assert "screened on blocked rows" in above.message and above.objective == pytest.approx(best[2.0], abs=1e-9)
    other = RiskSLIM(coef_bound=2, c0=0.01, max_size=2).instance(X[::-1][:60], y[::-1][:60])
    assert "screened on blocked rows" in solve_blocked(SparseLogistic.from_instance(other), shared,
                                                       incumbent=10.0).message


# ------------------------------------------------------------- variables ruled in (nested columns)
@pytest.mark.parametrize("seed", range(3))
def test_a_variable_ruled_in_lists_fewer_supports_and_proves_the_same_optimum(seed, monkeypatch):
    """With the size threshold lowered so the rule-in runs, a table whose strong variable is cut at
    three nested thresholds: the step screens only the supports holding one of the features ruled in
    (fewer than all, said in its message) and proves the brute-force optimum with a bound at most it;
    its screen is kept with the features it required; multiplier 2's fit reuses it without ruling anything
    in (the sets carry over to a larger multiplier) and multiplier 1/2's only if it rules in the same sets
    at its own level (else it screens its own), each proving its own brute-force optimum. With a level
    above the relaxation without every column nothing is ruled in and every support is screened."""
    from tests.solvers.test_exclusion import _nested
    X, y = _nested(seed, n=600)
    inst = {m: RiskSLIM(coef_bound=2, c0=1e-6, max_size=3, multiplier=m).instance(X, y) for m in (1.0, 2.0, 0.5)}
    best = {m: _risk_brute_force(i, lambda coef: True) for m, i in inst.items()}
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    screen = SupportScreen()
    shared = Limits.untimed(mip_rel_gap=1e-9, screen=screen)
    level = max(best.values()) + 1e-3
    found = solve_blocked(SparseLogistic.from_instance(inst[1.0]), shared, incumbent=level)
    assert "only supports holding one of the" in found.message, found.message
    ruled = int(found.message.split("only supports holding one of the ")[1].split(" ")[0])
    assert int(found.message.split(" supports of")[0]) <= math.comb(7, 3) - math.comb(7 - ruled, 3) < math.comb(7, 3)
    assert found.finished and found.model is not None, found.message
    assert inst[1.0].objective(Model(*found.model)) == pytest.approx(best[1.0], abs=1e-9)
    assert best[1.0] - 1e-8 <= found.bound <= best[1.0] + 1e-9
    assert screen.supports is not None and screen.ruled_in[0].size == ruled
    second = solve_blocked(SparseLogistic.from_instance(inst[2.0]), shared, incumbent=level)
    assert "earlier fit's screen" in second.message and "and its exclusion bounds" in second.message, second.message
    assert second.finished and inst[2.0].objective(Model(*second.model)) == pytest.approx(best[2.0], abs=1e-9)
    assert best[2.0] - 1e-8 <= second.bound <= best[2.0] + 1e-9
    smaller = solve_blocked(SparseLogistic.from_instance(inst[0.5]), shared, incumbent=level)
    assert "its exclusion bounds" not in smaller.message and smaller.finished, smaller.message
    assert inst[0.5].objective(Model(*smaller.model)) == pytest.approx(best[0.5], abs=1e-9)
    assert best[0.5] - 1e-8 <= smaller.bound <= best[0.5] + 1e-9
    plain = solve_blocked(SparseLogistic.from_instance(inst[1.0]), Limits.untimed(mip_rel_gap=1e-9), incumbent=10.0)
    assert "only supports" not in plain.message and plain.message.startswith(f"{math.comb(7, 3)} supports")


# ------------------------------------------------------------------------------- threads
def _pass_table(seed: int, d: int, size: int):
    """A 150-row table of ``d`` columns as a pass reads it: its bit sets, the ``c log c`` table and every
    support's saturated loss (computed here, by merging its rows)."""
    X, y, weights = _table(seed, n=150, d=d)
    weights = weights / weights.sum()
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(X, y > 0, weights)
    n_pos, n_neg = int(np.rint(weights[y > 0].sum() / unit_pos)), int(np.rint(weights[y < 0].sum() / unit_neg))
    bits = (bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg)
    exact = {s: _saturated(X, y, weights, list(s)) for s in itertools.combinations(range(d), size)}
    return bits, xlogx_table(n_pos, n_neg, unit_pos, unit_neg), exact


@pytest.mark.parametrize("seed,threads", [(0, 2), (1, 3), (2, 4)])
def test_a_pass_on_threads_finds_what_one_thread_finds(seed, threads, monkeypatch):
    """The pass over every pair on several threads (calls of a few supports, so the threads interleave)
    lists every support once and returns the serial pass's least pruned bound and survivors, which are
    exactly the supports whose saturated loss (computed here) is below the cutoff; the same with the
    columns listed in another order (a branch's order, mapped back)."""
    size, d = 4, 9
    bits, xlogx, exact = _pass_table(seed, d, size)
    cutoff = float(np.quantile(list(exact.values()), 0.2))
    plain = blocked_pass.all_pairs(d, size)
    shuffled = blocked_pass.Branch(np.random.default_rng(seed).permutation(d), plain.pairs)  # (another order)
    monkeypatch.setattr(blocked_pass, "CALL_SUPPORTS", 3)
    for branch in (plain, shuffled):
        serial = blocked_pass.screen_pairs(bits, xlogx, [branch], size, cutoff, Limits.untimed().started(), 1)
        parallel = blocked_pass.screen_pairs(bits, xlogx, [branch], size, cutoff, Limits.untimed().started(), threads)
        for found in (serial, parallel):
            assert found.stopped is None and found.listed == math.comb(d, size)
            assert {tuple(s) for s in found.survivors} == {s for s, h in exact.items() if h < cutoff}
        assert parallel.pruned == pytest.approx(serial.pruned, abs=1e-12)
        assert np.array_equal(parallel.survivors, serial.survivors)
    assert blocked_pass.screen_memory(d, size, 10.0, threads) > blocked_pass.screen_memory(d, size, 10.0, 1)


def test_a_pass_is_not_stopped_on_its_projection_before_its_window():
    """A pass that cannot fit its time (10^10 supports in 60 s) stops on its projection, but not before it
    has screened for ``PROJECT_WINDOW`` of the time left at its start (past ``PROJECT_AFTER``), unless a
    hundredth of its supports is listed by then."""
    rng = np.random.default_rng(7)
    X = (rng.random((200, 300)) < 0.3).astype(float)
    y = np.where(rng.random(200) < 0.3, 1.0, -1.0)
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(X, y > 0, np.ones(200))
    bits = (bits_pos, int(np.sum(y > 0)), unit_pos, bits_neg, int(np.sum(y < 0)), unit_neg)
    limits = Limits(time_limit=60.0).started()
    window = blocked_pass.PROJECT_WINDOW * limits.seconds_left()
    assert window > blocked_pass.PROJECT_AFTER
    started = time.perf_counter()
    found = blocked_pass.screen_pairs(bits, BAYES, [blocked_pass.all_pairs(300, 5)], 5, 10.0, limits, 1)
    took = time.perf_counter() - started
    assert found.too_long and f"would take about {found.projected:.0f} s" in found.stopped, found.stopped
    assert found.projected > blocked_pass.PROJECTION_SHARE * limits.seconds_left()  # (past its share of the time)
    assert took >= window or found.listed >= 0.01 * math.comb(300, 5), (took, found.listed)
    assert took < 0.5 * 60.0


@pytest.mark.parametrize("seed,calls", [(3, 5), (4, 40), (5, 10**6)])
def test_a_call_leaving_more_survivors_than_its_buffer_is_made_again(seed, calls, monkeypatch):
    """A thread's buffer of one survivor: every call of a plain branch that leaves more is made again from
    the same prefix with a buffer that holds them, so the pass neither overflows nor loses one (its
    survivors are exactly the supports whose saturated loss is below the cutoff) and lists each support
    once, whatever the calls' size."""
    size, d = 4, 9
    bits, xlogx, exact = _pass_table(seed, d, size)
    cutoff = float(np.quantile(list(exact.values()), 0.6))
    monkeypatch.setattr(blocked_pass, "CALL_SUPPORTS", calls)
    monkeypatch.setattr(blocked_pass, "MAX_SURVIVORS", 1)
    found = blocked_pass.screen_pairs(bits, xlogx, [blocked_pass.all_pairs(d, size)], size, cutoff,
                                      Limits.untimed().started(), 1)
    assert found.stopped is None and found.listed == math.comb(d, size)
    below = {s for s, h in exact.items() if h < cutoff}
    assert len(below) > 1 and {tuple(s) for s in found.survivors} == below and found.survivors.shape[0] == len(below)


def test_the_step_on_two_threads_proves_the_brute_force_optimum():
    """``n_jobs=2``: the step screens on two threads (it says so) and proves the brute-force optimum."""
    rng = np.random.default_rng(4250)
    n, d = 80, 6
    X = (rng.random((n, d)) < 0.5).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) + rng.logistic(size=n) > 0.5, 1.0, -1.0)
    inst = RiskSLIM(coef_bound=2, c0=0.01, max_size=3).instance(X, y)
    best = _risk_brute_force(inst, lambda coef: True)
    found = solve_blocked(SparseLogistic.from_instance(inst), Limits.untimed(mip_rel_gap=1e-9, n_jobs=2),
                          incumbent=best + 0.05)
    assert "on 2 threads" in found.message and found.finished, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
    assert best - 1e-8 <= found.bound <= best + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_every_support_the_exclusion_branches_leave_out_holds_no_model_below_the_level(seed, monkeypatch):
    """Brute force over every integer model of every support of 3 of 7 columns: a support no branch
    lists holds no model below the level; the branches list each support at most once; their sets'
    bound is at least the level."""
    from tests.solvers.test_exclusion import _nested
    X, y = _nested(seed, n=600)
    inst = RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y)
    problem = SparseLogistic.from_instance(inst)
    best = _risk_brute_force(inst, lambda coef: True)
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    level = best + 2e-3
    branches, ruled, sets = exclusion_branches(problem, level, Limits.untimed())
    assert ruled and ruled[1] >= level - 1e-12 and len(sets) == 1 + sets[0].size
    listed = []
    for branch in branches:
        for a, b in branch.pairs:
            for rest in itertools.combinations(range(b + 1, branch.columns.size), 1):
                listed.append(tuple(sorted(problem.free[branch.columns[[a, b, *rest]]].tolist())))
    assert len(listed) == len(set(listed)) < math.comb(7, 3)
    for support in itertools.combinations(range(7), 3):
        if support not in set(listed):
            inside = _risk_brute_force(inst, support=support)
            assert inside >= level - 1e-9, support


@pytest.mark.parametrize("seed", range(3))
def test_exclusion_branches_give_way_to_a_listing_of_less_work(seed, monkeypatch):
    """The sets' branches are kept only while their screen is less work than ``every``'s: against every
    column support they are kept (they list fewer), against a coarser grouping of the nested thresholds
    (one group per variable, its supports counted at a column support's cost, so less work than the
    branches) ``every`` comes back alone, with nothing ruled in, and it still stands for every support
    (its members)."""
    from tests.solvers.test_exclusion import _nested
    X, y = _nested(seed, n=600)
    problem = SparseLogistic.from_instance(RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y))
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    level = _risk_brute_force(RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y), lambda coef: True) + 2e-3
    columns = blocked_pass.all_pairs(7, 3)
    branches, ruled, _ = exclusion_branches(problem, level, Limits.untimed(), (), columns)
    assert ruled and sum(b.work(3) for b in branches) < columns.work(3)
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 1.0)
    start, order = blocked_pass.groups_of(blocked_pass.nested_chains(X, np.arange(7)), 7, 4)
    groups = start.size - 1
    coarse = blocked_pass.GroupBranch(start, order, np.array([(a, b) for b in range(1, groups - 1) for a in range(b)],
                                                             np.int64).reshape(-1, 2))
    assert coarse.work(3) <= sum(b.work(3) for b in branches)
    assert exclusion_branches(problem, level, Limits.untimed(), (), coarse) == ([coarse], (), ())
    from tests.solvers.test_group_screen import _members
    held = [S for T in itertools.combinations(range(groups), 3) for S in _members(T, start, order, 3)]
    assert sorted(held) == list(itertools.combinations(range(7), 3))


@pytest.mark.parametrize("seed", range(3))
def test_second_sets_are_sought_only_while_their_branches_are_less_work_than_every(seed, monkeypatch):
    """Against every column support, each branch of the union is looked at (its relaxation without the
    union's earlier features); against an ``every`` that lists one support, the first branch is already
    as much work: the sets are dropped there (``every`` comes back alone) and no later branch is looked at."""
    from tests.solvers.test_exclusion import _nested
    from solvers.exact import exclusion_listing
    X, y = _nested(seed, n=600)
    problem = SparseLogistic.from_instance(RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y))
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    level = _risk_brute_force(RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y), lambda coef: True) + 2e-3
    looked = []
    fit = exclusion_listing.fit_without
    monkeypatch.setattr(exclusion_listing, "fit_without", lambda *a, **k: looked.append(1) or fit(*a, **k))
    branches, ruled, sets = exclusion_branches(problem, level, Limits.untimed(), (), blocked_pass.all_pairs(7, 3))
    assert ruled and len(looked) == sets[0].size >= 2
    looked.clear()
    one = blocked_pass.Branch(np.arange(7), np.array([[0, 5]], np.int64))
    assert one.work(3) == 1
    assert exclusion_branches(problem, level, Limits.untimed(), (), one) == ([one], (), ())
    assert len(looked) == 1


@pytest.mark.parametrize("seed", range(3))
def test_exclusion_branches_of_a_multiplier_hold_for_every_larger_one(seed, monkeypatch):
    """The branches of multiplier 1 at its level: for multipliers 1.5, 2 and 4 (``carries_over``), brute
    force over every integer model of every support they leave out finds none below that level. The
    argument's conditions: not for a smaller multiplier, explicit intercept bounds, or a range without 0."""
    from tests.solvers.test_exclusion import _nested
    X, y = _nested(seed, n=600)
    first = RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y)
    problem = SparseLogistic.from_instance(first)
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    level = _risk_brute_force(first, lambda coef: True) + 2e-3
    branches, ruled, _ = exclusion_branches(problem, level, Limits.untimed())
    assert ruled
    listed = {tuple(sorted(problem.free[branch.columns[[a, b, *rest]]].tolist()))
              for branch in branches for a, b in branch.pairs
              for rest in itertools.combinations(range(b + 1, branch.columns.size), 1)}
    left_out = [s for s in itertools.combinations(range(7), 3) if s not in listed]
    assert left_out
    for m in (1.5, 2.0, 4.0):
        later = RiskSLIM(coef_bound=2, c0=1e-6, max_size=3, multiplier=m).instance(X, y)
        assert carries_over(1.0, True, SparseLogistic.from_instance(later))
        for support in left_out:
            inside = _risk_brute_force(later, support=support)
            assert inside >= level - 1e-9, (m, support)
    assert not carries_over(2.0, True, problem) and not carries_over(1.0, False, problem)
    lo = problem.lo.copy()
    lo[0] = 1.0
    assert not carries_over(1.0, True, dataclasses.replace(problem, lo=lo))
