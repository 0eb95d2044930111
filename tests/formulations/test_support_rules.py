"""Operational constraints as rules on supports (:mod:`formulations.support_rules`): which rows are rules,
the signs folded into the box, and the support enumerations under rules against brute force."""
from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.constraints import (AtLeast, AtMost, Implies, MinTruePositiveRate, Monotone, compile_constraints,
                                      one_per_group, threshold_groups)
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from formulations.support_rules import NOT_RULES, SupportRules, folded_bounds, instance_rules, support_rules
from solvers.exact.blocked_supports import applies as blocked_applies
from solvers.exact.blocked_supports import solve_blocked
from solvers.exact import slim_route
from solvers.exact.monotone_supports import monotone_supports
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.supports import enumerate_supports
from solvers.exact.zero_one_supports import zero_one
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from solvers.result import Status
from tests.solvers.test_engine_fuzz import _brute_force

NAMES = [f"x{j}" for j in range(6)]


def _compiled(*constraints):
    return compile_constraints(constraints, NAMES)


def test_rules_count_the_features_of_each_support_as_a_direct_count_does():
    rng = np.random.default_rng(0)
    groups = [list(rng.choice(6, int(rng.integers(1, 5)), replace=False)) for _ in range(4)]
    most = [int(rng.integers(0, 3)) for _ in groups]
    c = _compiled(*[AtMost([NAMES[j] for j in g], k) for g, k in zip(groups, most)])
    rules = support_rules(c, -np.ones(6), np.ones(6))
    supports = np.array(list(itertools.combinations(range(6), 3)))
    expected = [all(len(set(s) & set(g)) <= k for g, k in zip(groups, most)) for s in supports]
    assert rules.feasible(supports).tolist() == expected
    assert 0 < sum(expected) < len(expected)  # (the rules cut some supports and keep others)
    assert rules.feasible(np.zeros((4, 0), np.int64)).all()  # the empty support obeys every count


def test_which_constraints_are_rules_on_supports():
    box = (-2 * np.ones(6), 2 * np.ones(6))
    assert support_rules(_compiled(*one_per_group({"a": NAMES[:3], "b": NAMES[3:]})), *box).most.tolist() == [1, 1]
    assert support_rules(None, *box).most.size == 0
    for other in (Implies("x0", "x1"), AtLeast(NAMES[:2], 1), Monotone(NAMES[:3], kind="levels"),
                  MinTruePositiveRate(0.9)):
        assert support_rules(_compiled(AtMost(NAMES[:2], 1), other), *box) is None, other
    # a sign row is a rule only once the box obeys it (folded_bounds)
    signs = _compiled(Monotone(NAMES[:2], "increasing"), AtMost(NAMES, 3))
    assert support_rules(signs, *box) is None
    lb, ub = folded_bounds(signs, *box, np.ones(6, bool))
    assert lb.tolist() == [0, 0, -2, -2, -2, -2] and ub.tolist() == [2] * 6
    assert support_rules(signs, lb, ub).most.tolist() == [3]


def test_signs_fold_into_the_box_rounded_inwards_and_an_empty_box_is_named():
    c = _compiled(Monotone(["x1"], "decreasing"))
    lb, ub = folded_bounds(c, np.full(6, -2.5), np.full(6, 2.5), np.ones(6, bool))
    assert (lb[1], ub[1]) == (-2.5, 0.0) and lb[0] == -2.5
    X = np.random.default_rng(1).integers(0, 2, (30, 6)).astype(float)
    y = np.where(np.arange(30) % 3 == 0, 1.0, -1.0)
    inst = SLIM(coef_bound=3, c0=0.01, constraints=(Monotone(["x4"], "increasing"),)).instance(X, y)
    assert inst.coefficients.lb.tolist() == [-3, -3, -3, -3, 0, -3]
    boxed = CoefficientSet.uniform(NAMES, 3, lower=1.0)  # (points of x0..x5 in [1, 3])
    with pytest.raises(ValueError, match="'x2'"):
        SLIM(coefficients=boxed, constraints=(Monotone(["x2"], "decreasing"),)).instance(X, y)


def _case(seed: int, family: str):
    """Tiny 0/1 tables (SLIM's enumeration takes 0/1 features): two variables of two nested thresholds
    each and a fifth column; one threshold per variable, points increasing along the first. ``max_size``
    3, or 4 on odd seeds, where no support of 4 features obeys the rules (every model uses at most 3)."""
    rng = np.random.default_rng(40 + seed)
    n = int(rng.integers(25, 60))
    u = rng.random((n, 2))
    X = np.column_stack([u[:, 0] > 0.3, u[:, 0] > 0.6, u[:, 1] > 0.5, u[:, 1] > 0.8,
                         rng.random(n) < 0.4]).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, 5) + rng.normal(0, 1, n) > 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    names = NAMES[:5]
    rules = one_per_group({"u": names[:2], "v": names[2:4]}) + (Monotone(names[:2], "increasing"),)
    cs = CoefficientSet.uniform(names, 2)
    k = 3 + seed % 2
    spec = (SLIM(coefficients=cs, c0=float(rng.choice([0.005, 0.02])), max_size=k, constraints=rules)
            if family == "slim" else
            RiskSLIM(coefficients=cs, c0=float(rng.choice([1e-3, 0.02])), max_size=k, constraints=rules))
    return spec.instance(X, y)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("family", ["slim", "riskslim"])
def test_the_enumeration_under_rules_proves_the_brute_force_optimum(seed, family):
    """The support enumeration runs (not the MILP, not SCIP; unless the heuristic's model meets the floor
    at once) and its optimum is the least objective of every point vector that obeys the constraints
    (brute force on the rows)."""
    inst = _case(seed, family)
    rules, reason = instance_rules(inst)
    assert reason is None and rules.most.tolist() == [1, 1]
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    step = {"slim": "bayes_supports", "riskslim": "supports"}[family]
    records = {r.step: r for r in fit.steps}
    assert records[step].ran or records[step].reason == "the incumbent is already proven optimal", fit.message
    assert "stopped" not in records[step].message and not records[{"slim": "highs", "riskslim": "scip"}[family]].ran
    assert fit.status == Status.OPTIMAL, fit.message
    best = _brute_force(inst)
    assert fit.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert fit.bound <= best + 1e-7
    coef = fit.model.coef
    assert inst.constraint_violation(fit.model) <= 1e-9
    assert np.count_nonzero(coef[:2]) <= 1 and np.count_nonzero(coef[2:4]) <= 1 and (coef[:2] >= 0).all()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("family", ["slim", "riskslim"])
def test_the_enumeration_alone_finds_the_optimum_under_rules(seed, family):
    """From no start (no heuristic's model to fall back on), the enumeration under the rules finds the
    brute-force optimum; on odd seeds only supports smaller than ``max_size`` obey them."""
    inst = _case(seed, family)
    problem = zero_one(inst) if family == "slim" else SparseLogistic.from_instance(inst)
    found = enumerate_supports(problem, Limits(mip_rel_gap=1e-9), rules=instance_rules(inst)[0])
    assert found.finished and found.model is not None, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(_brute_force(inst), rel=1e-6, abs=1e-9)


def test_an_implies_is_not_a_rule_and_the_enumeration_says_so():
    inst = _case(0, "riskslim")
    other = RiskSLIM(coefficients=inst.coefficients, max_size=3, constraints=(Implies("x0", "x1"),))
    assert instance_rules(other.instance(inst.X, inst.y)) == (None, NOT_RULES)


def _chains(seed: int, variables: int = 4, cuts: int = 3):
    """A 0/1 table of ``variables`` variables cut at ``cuts`` nested thresholds each (named ``v >= k``); the
    label rises in the middle of v1 (two thresholds of one variable explain it best)."""
    rng = np.random.default_rng(70 + seed)
    n = int(rng.integers(150, 300))
    raw = rng.normal(size=(n, variables))
    X = np.column_stack([raw[:, v] > t for v in range(variables) for t in np.linspace(-0.8, 0.8, cuts)]).astype(float)
    bump = 3.0 * ((raw[:, 1] > -0.8) & (raw[:, 1] <= 0.8))
    y = np.where(raw @ rng.normal(0, 0.7, variables) + bump + rng.normal(0, 0.7, n) > 1.5, 1.0, -1.0)
    names = [f"v{v} >= {k}" for v in range(variables) for k in range(cuts)]
    return X, y, names


def _maximal_sizes(rules: SupportRules, free: np.ndarray) -> set[int]:
    """Sizes of the supports of ``free`` that obey ``rules`` and to which no column of ``free`` can be added."""
    obeys = {s for r in range(free.size + 1) for s in itertools.combinations(free.tolist(), r)
             if rules.feasible(np.array(s, np.int64).reshape(1, -1))[0]}
    return {len(s) for s in obeys if not any(tuple(sorted(s + (c,))) in obeys for c in free.tolist() if c not in s)}


@pytest.mark.parametrize("seed", range(8))
def test_reach_is_the_size_of_every_maximal_support_that_obeys_laminar_rules(seed):
    """Laminar groups (one threshold per variable, and at most k of some variables): every support that
    obeys them and takes no further column has the size ``reach`` says (brute force), so it extends to
    ``max_size`` up to that size; a column outside ``free`` does not count."""
    rng = np.random.default_rng(seed)
    variables = [list(range(3 * v, 3 * v + int(rng.integers(1, 4)))) for v in range(3)]  # (column 9 in none)
    members = np.zeros((4, 10), bool)
    for g, cols in enumerate(variables):
        members[g, cols] = True
    members[3] = members[0] | members[1]  # (at most k of the first two variables: nested around both)
    rules = SupportRules(members, np.array([1, int(rng.integers(1, 3)), 1, int(rng.integers(0, 3))]))
    free = np.flatnonzero(members.any(axis=0) | (np.arange(10) == 9))
    free = free[rng.random(free.size) < 0.9]
    assert _maximal_sizes(rules, free) == {rules.reach(free)}
    reach = rules.reach(free)
    assert rules.screen_reason(free, reach) is None and f"at most {reach}" in rules.screen_reason(free, reach + 1)


def test_reach_refuses_groups_that_overlap_without_nesting():
    overlapping = SupportRules(np.array([[1, 1, 0], [0, 1, 1]], bool), np.array([1, 1]))
    assert overlapping.reach(np.arange(3)) is None and "overlap" in overlapping.screen_reason(np.arange(3), 2)
    assert len(_maximal_sizes(overlapping, np.arange(3))) == 2  # (sizes 1 and 2: no one max_size covers all)


@pytest.mark.parametrize("seed", [0, 1, 2, 5])  # (tables on which the rules bind, as the test checks)
@pytest.mark.parametrize("family", ["slim", "riskslim"])
def test_the_screen_on_blocked_rows_under_rules_agrees_with_the_enumeration_and_the_program(seed, family):
    """One threshold per variable, points increasing along v0 (and on odd seeds at most one of v0 and v1,
    laminar over the variables' groups): the screen on blocked rows (from the zero
    model's objective, so it must find the optimum itself) drops the supports that break the rules, and
    its optimum is the enumeration's under the rules (checked against brute force above) and the optimum
    of the program alone, which keeps the rules as rows (HiGHS's MILP for SLIM, SCIP's tree for RiskSLIM)."""
    X, y, names = _chains(seed)
    rules = one_per_group(threshold_groups(names)) + (Monotone(names[:3], "increasing"),)
    rules += (AtMost(names[:6], 1),) if seed % 2 else ()  # (at most one of v0, v1: nested around both)
    cs = CoefficientSet.uniform(names, 3)
    spec = SLIM(coefficients=cs, c0=0.01, max_size=3, constraints=rules) if family == "slim" else \
        RiskSLIM(coefficients=cs, c0=0.01, max_size=3, constraints=rules)
    inst = spec.instance(X, y)
    found_rules, _ = instance_rules(inst)
    problem = zero_one(inst) if family == "slim" else SparseLogistic.from_instance(inst)
    assert blocked_applies(problem, found_rules) is None  # (laminar groups, room for 3 features)
    zero = inst.with_best_intercept(np.zeros(12)) if family == "slim" else Model(np.zeros(12), 0.0)
    screened = solve_blocked(problem, Limits(mip_rel_gap=1e-9), rules=found_rules, start=(zero.coef, zero.intercept),
                             incumbent=inst.objective(zero))
    listed = enumerate_supports(problem, Limits(mip_rel_gap=1e-9), rules=found_rules)
    alone = solve_exact(inst, {"slim": "highs", "riskslim": "scip"}[family], limits=Limits(mip_rel_gap=1e-9))
    assert screened.finished and listed.finished and alone.status == Status.OPTIMAL, screened.message
    model = Model(*screened.model)
    assert inst.constraint_violation(model) <= 1e-9
    free = replace(spec, constraints=()).instance(X, y)  # (the rules bind: without them the optimum is lower)
    unruled = enumerate_supports(zero_one(free) if family == "slim" else SparseLogistic.from_instance(free),
                                 Limits(mip_rel_gap=1e-9))
    assert unruled.objective < inst.objective(model) - 1e-6
    assert inst.objective(model) == pytest.approx(inst.objective(Model(*listed.model)), rel=1e-6, abs=1e-9)
    assert inst.objective(model) == pytest.approx(alone.objective, rel=1e-6, abs=1e-9)


def _integer_case(seed: int, rules: bool = True):
    """Tiny SLIM tables of few-valued integer columns (0..3; the orthant search takes them): at most one of
    x0, x1, x2, and points decreasing along x3 unless ``seed % 3 == 2`` (then every free feature takes
    either sign: the screen's other path). ``max_size`` 3, or 4 on odd seeds, where no support of 4
    features obeys the rules (every model uses at most 3)."""
    rng = np.random.default_rng(80 + seed)
    n = int(rng.integers(30, 60))
    X = rng.integers(0, 4, (n, 5)).astype(float)
    y = np.where(X @ np.array([1.0, 0.9, -0.4, 0.8, 0.3]) + rng.normal(0, 0.6, n) > 4.0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    names = NAMES[:5]
    constraints = (AtMost(names[:3], 1),) + ((Monotone(["x3"], "decreasing"),) if seed % 3 != 2 else ())
    constraints = constraints if rules else ()
    spec = SLIM(coefficients=CoefficientSet.uniform(names, 2), c0=float(rng.choice([0.005, 0.02])),
                max_size=3 + seed % 2, constraints=constraints)
    return spec.instance(X, y)


@pytest.mark.parametrize("seed", range(6))
def test_the_orthant_search_under_rules_proves_the_brute_force_optimum(seed):
    """Integer columns: the orthant search runs under the rules (not the MILP; the box search does not read
    counts and says so) and its optimum is the least objective of every point vector that obeys them
    (brute force), which the rules make worse than the unconstrained one."""
    inst = _integer_case(seed)
    rules, reason = instance_rules(inst)
    signed = seed % 3 != 2
    assert reason is None and rules.most.tolist() == [1] and inst.coefficients.ub[3] == (0 if signed else 2)
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    records = {r.step: r for r in fit.steps}
    monotone = records["monotone_supports"]
    assert monotone.ran or monotone.reason == "the incumbent is already proven optimal", fit.message
    assert "not finished" not in monotone.message and not records["highs"].ran, fit.message
    assert "counts the features used" in {s.name: s.applies(inst, Limits()) for s in slim_route.ROUTE}["box_search"]
    assert fit.status == Status.OPTIMAL, fit.message
    best = _brute_force(inst)
    assert fit.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert fit.bound <= best + 1e-7
    assert inst.constraint_violation(fit.model) <= 1e-9
    assert np.count_nonzero(fit.model.coef[:3]) <= 1 and (fit.model.coef[3] <= 0 or not signed)
    assert _brute_force(_integer_case(seed, rules=False)) < best - 1e-9  # (the rules bind)


@pytest.mark.parametrize("seed", range(4))
def test_the_orthant_search_alone_finds_the_optimum_under_rules(seed):
    """From no start, the orthant search under the rules finds the brute-force optimum; on odd seeds only
    supports smaller than ``max_size`` obey them."""
    inst = _integer_case(seed)
    found = monotone_supports(zero_one(inst), Limits(mip_rel_gap=1e-9).started(), rules=instance_rules(inst)[0])
    assert found.finished and found.coef is not None, found.message
    model = Model(found.coef, found.intercept)
    assert inst.constraint_violation(model) <= 1e-9
    assert inst.objective(model) == pytest.approx(_brute_force(inst), rel=1e-6, abs=1e-9)
