"""Operational constraints as rules on supports (:mod:`formulations.support_rules`): which rows are rules,
the signs folded into the box, and the support enumerations under rules against brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.constraints import (AtLeast, AtMost, Implies, MinTruePositiveRate, Monotone, compile_constraints,
                                      one_per_group)
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from formulations.support_rules import NOT_RULES, folded_bounds, instance_rules, support_rules
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
