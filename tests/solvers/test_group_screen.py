"""The screen of supports of groups of nested columns (solvers.exact.group_screen) and the SLIM
blocked step listing them (solvers.exact.blocked_pass.GroupBranch), against brute force.

A support of groups stands for the column supports inside it: the rows' levels on its groups split
them at least as finely as any of those columns do, so its Bayes error (or saturated loss) is at most
theirs. Checked here by enumeration: the screen lists every group support once and leaves exactly
the column supports whose sum, computed from the rows grouped by ``np.unique`` over their columns, is
below the cutoff; the least pruned sum it reports lies between the cutoff and the least sum of what it
pruned; every column
support has exactly one group support it is a member of, and its own sum is at least that group
support's; and SLIM's blocked step on groups proves the optimum enumerated over every integer model.
"""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.exact import blocked_pass
from solvers.exact import route as route_table
from solvers.exact.blocked_entropy import BAYES, first_middle, xlogx_table
from solvers.exact.blocked_pass import Branch, GroupBranch, plain_branch, screen_pairs
from solvers.exact.blocked_supports import solve_blocked
from solvers.exact.box_logistic import _cell_entropy, label_bits
from solvers.exact.group_screen import groups_of, pair_blocks, screen_group_pair
from solvers.exact.nested_columns import nested_chains
from solvers.exact.screen import SupportScreen
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.zero_one_supports import zero_one
from solvers.limits import Limits
from tests.solvers.test_exclusion import _nested
from tests.solvers.test_routes import _risk_brute_force, _slim_brute_force


def _binarised(seed: int, n: int = 160, variables: int = 4, lone: int = 2, cuts: int | None = None):
    """0/1 columns: thresholds ``x >= t`` of ``variables`` continuous columns (``cuts`` each, or 1-4, so
    chains of nested columns), ``lone`` random columns, shuffled; labels from two variables; integer
    weights."""
    rng = np.random.default_rng(5400 + seed)
    raw = rng.normal(size=(n, variables))
    columns = [raw[:, j] >= t for j in range(variables)
               for t in np.sort(rng.choice(np.linspace(-1.2, 1.2, 13), cuts or int(rng.integers(1, 5)),
                                           replace=False))]
    columns += list(rng.random((lone, n)) < 0.4)
    X = np.array(columns, float).T
    X = X[:, rng.permutation(X.shape[1])]
    y = np.where(raw[:, 0] - raw[:, 1] + rng.logistic(size=n) > 0.2, 1.0, -1.0)
    return X, y, rng.integers(1, 4, n).astype(float)


def _sum(X, y, weights, support, bayes: bool) -> float:
    keys, inverse = np.unique(X[:, list(support)], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    wp = np.bincount(inverse[y > 0], weights=weights[y > 0], minlength=keys.shape[0])
    wn = np.bincount(inverse[y < 0], weights=weights[y < 0], minlength=keys.shape[0])
    return float(np.minimum(wp, wn).sum()) if bayes else sum(_cell_entropy(a, b) for a, b in zip(wp, wn))


def _members(T, start, columns, size: int, lead_only: bool = False) -> list[tuple]:
    """The column supports (values of ``columns``, sorted) a group support ``T`` stands for, enumerated:
    ``size`` columns of its groups whose own groups, completed by the lowest groups they miss, are ``T``
    (with ``lead_only``, holding a column of group 0)."""
    group_of = {int(columns[c]): g for g in range(start.size - 1) for c in range(start[g], start[g + 1])}
    pool = [int(columns[c]) for g in T for c in range(start[g], start[g + 1])]
    found = []
    for S in itertools.combinations(pool, size):
        own = {group_of[c] for c in S}
        missed = [g for g in range(start.size - 1) if g not in own][:size - len(own)]
        if sorted(own | set(missed)) == sorted(int(g) for g in T) and (0 in own or not lead_only):
            found.append(tuple(sorted(S)))
    return found


def _groups(X):
    start, columns = groups_of(nested_chains(X, np.arange(X.shape[1])), X.shape[1])
    return start, columns, [columns[start[g]:start[g + 1]] for g in range(start.size - 1)]


def test_groups_cut_chains_into_nested_runs_and_cover_every_column_once():
    X, _, _ = _binarised(0, variables=5)
    start, columns, groups = _groups(X)
    assert np.array_equal(np.sort(columns), np.arange(X.shape[1]))
    assert any(len(g) == 2 for g in groups) and all(len(g) <= 2 for g in groups)
    for g in groups:  # each column inside the one before: a row's level fixes its values
        assert np.all(X[:, g[1:]] <= X[:, g[:-1]])
    assert [g.min() for g in groups] == sorted(g.min() for g in groups)


@pytest.mark.parametrize("seed,size", [(0, 3), (1, 4), (2, 5)])
def test_every_column_support_is_a_member_of_one_group_support_whose_sum_is_at_most_its_own(seed, size):
    X, y, weights = _binarised(seed, variables=5)
    start, columns, groups = _groups(X)
    every = [S for T in itertools.combinations(range(len(groups)), size) for S in _members(T, start, columns, size)]
    assert sorted(every) == list(itertools.combinations(range(X.shape[1]), size))
    for T in list(itertools.combinations(range(len(groups)), size))[::7]:  # own sums at least the group's
        cells = np.concatenate([groups[g] for g in T])
        for bayes in (True, False):
            whole = _sum(X, y, weights, cells, bayes)
            for S in _members(T, start, columns, size):
                assert set(S) <= set(cells)
                assert _sum(X, y, weights, S, bayes) >= whole - 1e-9


def test_plain_branch_lists_groups_only_when_they_pay(monkeypatch):
    X, _, _ = _binarised(1, variables=5, lone=0)
    assert isinstance(plain_branch(X, 2), Branch)  # pairs: nothing to group
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.0)
    branch = plain_branch(X, 3)
    assert isinstance(branch, GroupBranch) and branch.count(3) == math.comb(branch.start.size - 1, 3)
    free = np.random.default_rng(0).random((50, 9)) < 0.5  # no nested columns: one group per column
    assert isinstance(plain_branch(free.astype(float), 3), Branch)
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 1e9)
    assert isinstance(plain_branch(X, 3), Branch)


@pytest.mark.parametrize("seed,size,bayes,lead_only,width", [(0, 3, True, False, 2), (1, 4, False, False, 2),
                                                              (2, 5, True, True, 2), (3, 5, False, False, 2),
                                                              (4, 4, False, True, 3), (5, 3, True, False, 4)])
def test_the_screen_lists_every_group_support_once_and_leaves_exactly_the_members_below_the_cutoff(
        seed, size, bayes, lead_only, width):
    """Over every pair of first groups (of groups of up to ``width`` nested columns), in calls of a few
    group supports each, the screen lists every group support once and leaves exactly the column
    supports (enumerated members of the group supports, with ``lead_only`` those holding a column of
    group 0) whose own sums are below the cutoff (a member of a group support at the cutoff is at it too);
    its least pruned sum lies between the cutoff and the least sum of what it pruned (group supports, and
    members of those it kept)."""
    X, y, weights = _binarised(seed, variables=5, cuts=4 if width > 2 else None)
    start, columns = groups_of(nested_chains(X, np.arange(X.shape[1])), X.shape[1], width)
    G = start.size - 1
    group_sums = {T: _sum(X, y, weights, columns[np.concatenate([np.arange(start[g], start[g + 1]) for g in T])], bayes)
                  for T in itertools.combinations(range(G), size)}
    every = {S: (_sum(X, y, weights, S, bayes), T) for T in group_sums for S in _members(T, start, columns, size,
                                                                                          lead_only)}
    values = np.unique([v for v, _ in every.values()])  # a cutoff between two sums: no tie left to round-off
    cutoff = float(values[values.size // 3 - 1:values.size // 3 + 1].mean())
    bp, vp, up, bn, vn, un = label_bits(X, y > 0, weights)
    n_pos, n_neg = (int(sum(bin(int(v)).count("1") for v in valid)) for valid in (vp, vn))
    table = BAYES if bayes else xlogx_table(n_pos, n_neg, up, un)
    out = np.empty((len(every), size), np.int64)
    listed, kept, pruned = 0, [], math.inf
    for b in range(1, G):
        for a in range(b):
            middle = first_middle(b, size)
            blocked = pair_blocks(bp, n_pos, bn, n_neg, start, columns, a, b)
            while True:  # calls of a few supports each, resumed from ``middle``
                count, k, floor, finished = screen_group_pair(*blocked[:3], up, *blocked[3:], un, table, start,
                                                              columns, a, b, size, cutoff, lead_only, out, middle, 3)
                listed += count
                kept += [tuple(sorted(row)) for row in out[:k].tolist()]
                pruned = min(pruned, floor)
                if finished:
                    break
    assert listed == math.comb(G, size) and len(set(kept)) == len(kept)
    below = {S for S, (v, _) in every.items() if v < cutoff}
    assert below and sorted(kept) == sorted(below)
    least = min([v for v in group_sums.values() if v >= cutoff] +
                [v for v, T in every.values() if cutoff <= v and group_sums[T] < cutoff])
    assert cutoff <= pruned <= least + 1e-9


def _pass_case(seed: int, bayes: bool, size: int = 4):
    """A binarised table of 5 variables, its group branch (groups forced to pay), every group
    support's and column support's enumerated sum, a cutoff at the groups' 40 % quantile, and the
    bit sets and table a pass screens with."""
    X, y, weights = _binarised(seed, variables=5)
    branch = plain_branch(X, size)
    assert isinstance(branch, GroupBranch)
    groups = [branch.columns[branch.start[g]:branch.start[g + 1]] for g in range(branch.start.size - 1)]
    group_sums = {T: _sum(X, y, weights, np.concatenate([groups[g] for g in T]), bayes)
                  for T in itertools.combinations(range(len(groups)), size)}
    cutoff = float(np.quantile(list(group_sums.values()), 0.4)) + 1e-7
    sums = {S: _sum(X, y, weights, S, bayes) for S in itertools.combinations(range(X.shape[1]), size)}
    bp, vp, up, bn, vn, un = label_bits(X, y > 0, weights)
    n_pos, n_neg = (int(sum(bin(int(v)).count("1") for v in valid)) for valid in (vp, vn))
    table = BAYES if bayes else xlogx_table(n_pos, n_neg, up, un)
    return branch, group_sums, sums, cutoff, (bp, n_pos, up, bn, n_neg, un), table


@pytest.mark.parametrize("seed,threads,bayes", [(0, 1, True), (1, 2, True), (2, 1, False)])
def test_a_group_pass_leaves_exactly_the_column_supports_below_the_cutoff(seed, threads, bayes, monkeypatch):
    """The pass's survivors are exactly the column supports whose own sums are below the cutoff (each
    a member of a group support below it; on one thread or two), and its least pruned sum lies between
    the cutoff and the least sum of the column supports it pruned."""
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.0)
    size = 4
    branch, group_sums, sums, cutoff, bits, table = _pass_case(seed, bayes, size)
    found = screen_pairs(bits, table, [branch], size, cutoff, Limits.untimed().started(), threads)
    assert found.stopped is None and found.listed == len(group_sums)
    below = {S for S, v in sums.items() if v < cutoff}
    assert below and {tuple(r) for r in found.survivors} == below and found.survivors.shape[0] == len(below)
    assert cutoff <= found.pruned <= min(v for v in sums.values() if v >= cutoff) + 1e-9


@pytest.mark.parametrize("rows", ["half a prefix", "one"])
def test_a_call_ends_before_a_prefix_that_might_not_fit_its_buffer_and_screens_nothing_twice(rows, monkeypatch):
    """With a buffer that holds half of what one prefix's group supports may leave (a group support's
    most members per last group), the calls end before the prefixes that might not fit: every group
    support is listed once (the calls list each once, none overflows) and the pass leaves exactly the
    column supports below the cutoff. With a buffer of one row, the prefixes whose members do not fit
    are done again with buffers that hold them: the same survivors, and the listed count stays exact."""
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.0)
    size = 4
    branch, group_sums, sums, cutoff, bits, table = _pass_case(0, True, size)
    G = branch.start.size - 1
    below = {S for S, v in sums.items() if v < cutoff}
    calls = []

    def group_pair(*args):
        out = screen_group_pair(*args)
        calls.append((out[0], out[1], args[-3].shape[0]))
        return out

    monkeypatch.setattr(blocked_pass, "screen_group_pair", group_pair)
    monkeypatch.setattr(blocked_pass, "MEMBERS", 1)
    most_members = math.comb(size * int(np.diff(branch.start).max()), size)
    monkeypatch.setattr(blocked_pass, "MAX_SURVIVORS", G * most_members // 2 if rows == "half a prefix" else 1)
    found = screen_pairs(bits, table, [branch], size, cutoff, Limits.untimed().started(), 1)
    assert found.stopped is None and found.listed == len(group_sums)
    assert {tuple(r) for r in found.survivors} == below and found.survivors.shape[0] == len(below)
    if rows == "half a prefix":  # (calls end early, and none overflows: nothing is listed twice)
        assert len(calls) > len(branch.pairs) and sum(c[0] for c in calls) == len(group_sums)
        assert all(kept <= held for _, kept, held in calls)
    else:
        assert any(kept > held for _, kept, held in calls)


@pytest.mark.parametrize("seed", range(4))
def test_the_slim_blocked_step_on_groups_proves_the_brute_force_optimum(seed, monkeypatch):
    """SLIM (points -2..2, at most 3 features) on a binarised table of 7 columns: from an objective to
    beat above the optimum, the step lists supports of groups (forced here, they pay only on wide
    tables), searches the column supports they leave and finds the enumerated optimum, with a bound
    at most it."""
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.0)
    X, y, _ = _binarised(seed, n=40, variables=3, lone=1, cuts=2)
    names = [f"x{j}" for j in range(X.shape[1])]
    cs = CoefficientSet.uniform(names, 2)
    spec = SLIM(coefficients=cs, c0=0.01, max_size=3)
    inst = spec.instance(X, y)
    problem = zero_one(inst)
    assert isinstance(plain_branch(problem.X[:, problem.free], 3), GroupBranch)
    best = _slim_brute_force(X, y, cs, spec, inst, lambda coef: np.count_nonzero(coef) <= 3)
    found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 0.05)
    assert "groups of nested columns" in found.message
    assert found.finished and found.model is not None, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
    assert best - 1e-8 <= found.bound <= best + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_the_riskslim_blocked_step_on_groups_proves_the_brute_force_optimum(seed, monkeypatch):
    """RiskSLIM (points -2..2, at most 3 features) on a binarised table of 7 columns: with groups cheaper
    than any exclusion branches (forced here), the step screens supports of groups by their saturated
    loss, bounds and searches the column supports left, and proves the enumerated optimum, from the
    empty model and from an objective to beat; the screen serves a second multiplier too."""
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 0.0)
    X, y, _ = _binarised(10 + seed, n=60, variables=3, lone=1, cuts=2)
    inst = RiskSLIM(coef_bound=2, c0=0.01, max_size=3).instance(X, y)
    problem = SparseLogistic.from_instance(inst)
    best = _risk_brute_force(inst, lambda coef: True)
    for start, incumbent in (((np.zeros(X.shape[1]), 0.0), 10.0), (None, best + 0.05)):
        found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), start=start, incumbent=incumbent)
        assert "groups of nested columns" in found.message
        assert found.finished and found.model is not None, found.message
        assert inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
        assert best - 1e-8 * abs(best) <= found.bound <= best + 1e-9
    screen, doubled = SupportScreen(), RiskSLIM(coef_bound=2, c0=0.01, max_size=3, multiplier=2.0).instance(X, y)
    limits = Limits.untimed(mip_rel_gap=1e-9, screen=screen).started()
    solve_blocked(problem, limits, incumbent=best + 0.05)
    again = solve_blocked(SparseLogistic.from_instance(doubled), limits, incumbent=best + 0.05)
    assert "earlier fit's screen" in again.message
    optimum = _risk_brute_force(doubled, lambda coef: True)
    assert again.bound <= optimum + 1e-9
    if optimum < best + 0.05:
        assert again.model is not None and doubled.objective(Model(*again.model)) == pytest.approx(optimum, abs=1e-9)


def test_groups_less_work_than_the_sets_branches_are_screened_instead(monkeypatch):
    """RiskSLIM's exclusion branches give way to every support of groups when those are less work: with
    the rule-in run (as in test_blocked_supports) and groups made almost free, the step screens the
    group supports (nothing ruled in) and proves the brute-force optimum; at their real cost (here the
    column supports are listed) the sets' column branches are kept."""
    X, y = _nested(0, n=600)
    inst = RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y)
    best = _risk_brute_force(inst, lambda coef: True)
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    problem = SparseLogistic.from_instance(inst)
    found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 1e-3)
    assert "only supports holding one of the" in found.message and "groups" not in found.message, found.message
    monkeypatch.setattr(blocked_pass, "GROUP_COST", 1e-9)
    assert isinstance(plain_branch(problem.data.X[:, problem.free], 3), GroupBranch)
    found = solve_blocked(problem, Limits.untimed(mip_rel_gap=1e-9), incumbent=best + 1e-3)
    assert "only supports holding one of the" not in found.message and "groups of nested" in found.message, \
        found.message
    assert found.finished and inst.objective(Model(*found.model)) == pytest.approx(best, abs=1e-9)
