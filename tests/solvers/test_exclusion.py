"""Exclusion bounds (solvers.exact.exclusion): features every RiskSLIM model below the incumbent uses.

References: cvxpy with ECOS for the relaxation without a feature (an independent convex solver);
brute force over every integer model without it; SCIP and the enumeration without ruling in for
the certified optimum.
"""
import dataclasses
import itertools
import math

import cvxpy as cp
import numpy as np
import pytest

import solvers.exact.exclusion as exclusion
import solvers.exact.route as route_table
from formulations.riskslim import RiskSLIM
from solvers.exact.exclusion import bound_without, excluded_union, must_use
from solvers.exact.exclusion_listing import _groups
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.supports import enumerate_supports
from solvers.limits import Limits
from solvers.pipeline import solve_exact


def _planted(seed, n=4000, d=7):
    """Many rows, few columns, three strong planted features: the relaxation without one of them is
    clearly worse than the best sparse model."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(float)
    score = 2.0 * X[:, 0] - 1.5 * X[:, 1] + 1.2 * X[:, 2] - 0.5
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-score)), 1.0, -1.0)
    return X, y


def _nested(seed, n=1500):
    """A strong variable cut at three thresholds (nested columns 0-2), a weaker one at two (3-4), two
    unrelated columns: a model without one threshold of the strong variable uses its neighbour."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(n, 2))
    X = np.column_stack([raw[:, 0] >= t for t in (-0.6, 0.0, 0.6)] + [raw[:, 1] >= t for t in (-0.3, 0.4)]
                        + [rng.random(n) < 0.4, rng.random(n) < 0.6]).astype(float)
    y = np.where(2.5 * raw[:, 0] + 0.7 * raw[:, 1] + rng.logistic(size=n) > 0.2, 1.0, -1.0)
    return X, y


def _relaxation_without(problem, j):
    """min of the loss over the box with points_j = 0 (cvxpy + ECOS; ``j`` an index or an array)."""
    data, d = problem.data, problem.d
    theta, b = cp.Variable(d), cp.Variable()
    z = cp.multiply(data.y, data.X @ theta + b) / data.scale
    constraints = [theta >= problem.lo, theta <= problem.hi, b >= problem.intercept_lo, b <= problem.intercept_hi,
                   theta[j] == 0]
    value = cp.Problem(cp.Minimize(data.weights @ cp.logistic(-z)), constraints).solve(solver="ECOS", abstol=1e-9,
                                                                                        reltol=1e-9)
    return float(value)


@pytest.mark.parametrize("seed", range(3))
def test_ruled_in_features_are_those_whose_relaxation_reaches_the_level(seed):
    """A feature is ruled in only when cvxpy's minimum without it reaches the level, its certified
    bound is at most that minimum and at least the level; with the level just below the smallest
    such minimum every planted feature is ruled in, and none with the level above the full fit."""
    problem = SparseLogistic.from_instance(RiskSLIM(coef_bound=3, c0=1e-6, max_size=3).instance(*_planted(seed)))
    without = np.array([_relaxation_without(problem, j) for j in range(problem.d)])
    planted = np.argsort(-without)[:3]
    assert set(planted.tolist()) == {0, 1, 2}
    level = float(without[planted].min()) - 1e-4
    ruled_in, floor = must_use(problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi,
                               problem.free, level, 3, Limits.untimed())
    assert sorted(ruled_in.tolist()) == [0, 1, 2]
    assert level <= floor <= without[ruled_in].min() + 1e-7
    for j in ruled_in:  # each alone: its own bound against cvxpy's minimum
        one, bound = must_use(problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi,
                              np.array([j]), level, 1, Limits.untimed())
        assert one.tolist() == [j] and level <= bound <= without[j] + 1e-7
    assert must_use(problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi, problem.free,
                    float(without.max()) + 1e-3, 3, Limits.untimed())[0].size == 0  # nothing reaches a level above every minimum
    two, _ = must_use(problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi, problem.free,
                      level, 2, Limits.untimed())
    assert two.size == 2 and set(two.tolist()) <= {0, 1, 2}


def test_every_integer_model_without_a_ruled_in_feature_is_above_its_bound():
    """Brute force: every integer model (points -2..2 on 5 features, every intercept) with points 0
    on a ruled-in feature has a loss at least the bound."""
    X, y = _planted(7, n=1500, d=5)
    inst = RiskSLIM(coef_bound=2, c0=1e-6, max_size=5).instance(X, y)
    problem = SparseLogistic.from_instance(inst)
    level = _relaxation_without(problem, 0) - 5e-4
    ruled_in, floor = must_use(problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi,
                               np.array([0]), level, 1, Limits.untimed())
    assert ruled_in.tolist() == [0]
    data = problem.data
    best = math.inf
    for coef in itertools.product(range(-2, 3), repeat=4):
        scores = data.X[:, 1:] @ np.array(coef, float)
        for b in range(problem.intercept_lo, problem.intercept_hi + 1):
            best = min(best, data.loss_of_scores(scores, float(b)))
    assert best >= floor - 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_enumeration_with_features_ruled_in_certifies_the_same_optimum(seed, monkeypatch):
    """On planted tables, the enumeration that rules features in (the size threshold lowered so it
    runs) certifies the optimum of SCIP and of the enumeration without it, and says so; the bound
    stays valid."""
    inst = RiskSLIM(coef_bound=3, c0=1e-6, max_size=4).instance(*_planted(seed, n=3000, d=8))
    problem = SparseLogistic.from_instance(inst)
    start = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    scip = solve_exact(inst, "scip", limits=Limits(time_limit=120, mip_rel_gap=1e-9))
    assert scip.status.value == "optimal"
    plain = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9), start=(start.model.coef, start.model.intercept),
                               incumbent=start.objective + 1e-3)
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, rule_in_supports=1))
    ruled = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9), start=(start.model.coef, start.model.intercept),
                               incumbent=start.objective + 1e-3)
    assert "exclusion bounds" in ruled.message and "exclusion bounds" not in plain.message
    for found in (plain, ruled):
        assert found.finished, found.message
        assert found.objective == pytest.approx(scip.objective, abs=1e-8)
        assert found.bound <= scip.objective + 1e-9
    assert np.count_nonzero(ruled.model[0][:3]) == 3


def test_the_hessian_is_the_logistic_losss_in_single_precision(monkeypatch):
    """The Newton metric against ``[X 1]^T diag(v s (1 - s) / m^2) [X 1]`` in double precision (and
    against central differences of the exact gradient), over one block and over blocks of a few rows,
    with a multiplier: symmetric, both triangles, the intercept's row and column."""
    X, y = _planted(2)
    data = RiskSLIM(coef_bound=3, c0=1e-6, max_size=3, multiplier=1.7).instance(X, y).data
    theta = np.random.default_rng(5).normal(size=data.X.shape[1] + 1) * 0.3
    A = np.column_stack([data.X, np.ones(data.X.shape[0])])
    z = data.y * (A @ theta) / data.scale
    s = 1.0 / (1.0 + np.exp(z))
    exact = A.T @ (A * (data.weights * s * (1 - s) / data.scale ** 2)[:, None])
    step = 1e-6
    differences = np.column_stack([(exclusion._loss_gradient(data, theta + step * e)[1]
                                    - exclusion._loss_gradient(data, theta - step * e)[1]) / (2 * step)
                                   for e in np.eye(theta.size)])
    assert np.allclose(differences, exact, rtol=1e-5, atol=1e-7 * np.abs(exact).max())
    for cells in (exclusion.BLOCK_CELLS, 37 * (data.X.shape[1] + 1)):
        monkeypatch.setattr(exclusion, "BLOCK_CELLS", cells)
        H = exclusion._hessian(data, theta)
        assert np.array_equal(H, H.T)
        assert np.allclose(H, exact, rtol=1e-5, atol=1e-6 * np.abs(exact).max())


def test_blocked_hessian_and_width_cap(monkeypatch):
    """Summing the Hessian over blocks of a few rows (not one block) rules in the same features with
    the same bound; a table wider than MOST_FEATURES is not tried (nothing ruled in, no bound)."""
    problem = SparseLogistic.from_instance(RiskSLIM(coef_bound=3, c0=1e-6, max_size=3).instance(*_planted(1)))
    level = min(_relaxation_without(problem, j) for j in range(3)) - 1e-4
    args = (problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi, problem.free, level, 3,
            Limits.untimed())
    whole, floor = must_use(*args)
    assert problem.data.X.shape[0] * (problem.d + 1) <= exclusion.BLOCK_CELLS  # one block by default
    monkeypatch.setattr(exclusion, "BLOCK_CELLS", 97 * (problem.d + 1))
    blocked, blocked_floor = must_use(*args)
    assert sorted(blocked.tolist()) == sorted(whole.tolist()) == [0, 1, 2]
    assert blocked_floor == pytest.approx(floor, abs=1e-9)
    monkeypatch.setattr(exclusion, "MOST_FEATURES", problem.d - 1)
    none, no_floor = must_use(*args)
    assert none.size == 0 and no_floor == math.inf


@pytest.mark.parametrize("seed", range(4))
def test_a_union_is_ruled_in_when_the_relaxation_without_it_reaches_the_level(seed):
    """On a table whose strong variable is cut at three nested thresholds, the chains are found; at a
    level just below cvxpy's minimum without that variable a union is ruled in whose relaxation
    (cvxpy) reaches the level, with a certified bound between the level and that minimum; at a level
    above the minimum without every column, or with too few columns allowed, none is."""
    X, y = _nested(seed)
    problem = SparseLogistic.from_instance(RiskSLIM(coef_bound=2, c0=1e-6, max_size=3).instance(X, y))
    groups = _groups(X, problem.free)
    assert [g.tolist() for g in groups[:2]] == [[0, 1, 2], [3, 4]]
    box = (problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi)
    level = _relaxation_without(problem, np.array([0, 1, 2])) - 1e-3
    chosen, bound = excluded_union(*box, groups, level, problem.d, Limits.untimed())
    union = np.concatenate([groups[g] for g in chosen])
    assert chosen and level <= bound <= _relaxation_without(problem, union) + 1e-7
    everything = _relaxation_without(problem, np.arange(problem.d))
    assert excluded_union(*box, groups, everything + 1e-3, problem.d, Limits.untimed()) == ([], -math.inf)
    one, _ = excluded_union(*box, groups, level, 1, Limits.untimed())  # (at most one feature)
    assert not one or (len(one) == 1 and groups[one[0]].size == 1 and
                       _relaxation_without(problem, groups[one[0]]) >= level)
    alone = bound_without(*box, union, level, Limits.untimed())
    assert level <= alone <= _relaxation_without(problem, union) + 1e-7


def test_every_integer_model_without_a_ruled_in_union_is_above_its_bound():
    """Brute force: every integer model (points -2..2, every intercept) with points 0 on all of a
    ruled-in union's features has a loss at least its bound."""
    X, y = _nested(5)
    inst = RiskSLIM(coef_bound=2, c0=1e-6, max_size=7).instance(X, y)
    problem = SparseLogistic.from_instance(inst)
    groups = _groups(X, problem.free)
    level = _relaxation_without(problem, np.array([0, 1, 2])) - 5e-4
    chosen, bound = excluded_union(problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi,
                                   groups, level, problem.d, Limits.untimed())
    union = np.concatenate([groups[g] for g in chosen])
    rest = np.setdiff1d(np.arange(problem.d), union)
    assert chosen and rest.size >= 2
    data, best = problem.data, math.inf
    for coef in itertools.product(range(-2, 3), repeat=rest.size):
        scores = data.X[:, rest] @ np.array(coef, float)
        for b in range(problem.intercept_lo, problem.intercept_hi + 1):
            best = min(best, data.loss_of_scores(scores, float(b)))
    assert best >= bound - 1e-9
