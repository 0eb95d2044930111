"""Exact swaps of supports (RiskSLIM start): checked against brute force over every integer model."""
import itertools

import numpy as np

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.constraints import Implies
from formulations.riskslim import RiskSLIM
from solvers.heuristics.riskslim import support_fit
from solvers.heuristics.support_swaps import support_swaps


def _binary(seed, n=160, d=7):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < rng.uniform(0.2, 0.6, d)).astype(float)
    score = X @ rng.normal(0, 1.2, d) - 0.4 + rng.normal(0, 0.8, n)
    return X, np.where(score > 0, 1.0, -1.0)


def _best_on(inst, support) -> float:
    """Least objective over every integer model whose support lies in ``support`` (every intercept)."""
    cs = inst.coefficients
    lo, hi = inst.intercept_bounds
    best = np.inf
    for points in itertools.product(*[range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in support]):
        coef = np.zeros(inst.X.shape[1])
        coef[list(support)] = points
        scores = inst.X @ coef
        loss = min(inst.data.loss_of_scores(scores, float(b)) for b in range(int(np.ceil(lo)), int(np.floor(hi)) + 1))
        best = min(best, loss + inst.penalty(coef))
    return best


def _instance(seed, k=2, constraints=()):
    X, y = _binary(seed)
    names = [f"x{j}" for j in range(X.shape[1])]
    return RiskSLIM(coefficients=CoefficientSet.uniform(names, 2), c0=0.01, max_size=k,
                    constraints=constraints).instance(X, y)


def test_a_model_one_swap_away_is_found_from_a_support_of_max_size():
    """The optimum's support (brute force over every support of ``max_size``) is one swap from the start's
    support, which has ``max_size`` features (so no feature can be added): the search ends at the optimum,
    from the start's support alone and from the empty model with that support given as a beam fit."""
    for seed in range(3):
        inst = _instance(seed)
        d = inst.X.shape[1]
        values = {s: _best_on(inst, s) for s in itertools.combinations(range(d), 2)}
        optimum = min(values, key=values.get)
        given = next(s for s in sorted(values, key=values.get, reverse=True) if len(set(s) & set(optimum)) == 1)
        assert values[given] > values[optimum] + 1e-6
        coef, b, _ = support_fit(inst, np.array(given))
        start = inst.round(Model(np.where(coef >= 0, 1.0, -1.0) * np.isin(np.arange(d), given), 0.0))
        assert set(np.flatnonzero(start.coef)) == set(given)
        empty = inst.round(Model(np.zeros(d), 0.0))
        for found in (support_swaps(inst, start, [], support_fit),
                      support_swaps(inst, empty, [(coef, b)], support_fit)):
            assert abs(inst.objective(found) - values[optimum]) < 1e-9
            assert np.count_nonzero(found.coef) <= 2 and inst.exact().is_feasible(inst.lift(found))


def test_no_neighbour_of_the_starts_support_holds_a_better_model():
    """Without a time limit and with every feature a candidate, the model returned is at least as good as
    the best model of the start's support and of every support one addition or swap from it (brute force),
    and never worse than the start."""
    for seed in range(3):
        inst = _instance(seed + 10)
        d = inst.X.shape[1]
        start = inst.round(Model(np.eye(d)[seed] * 2.0, 0.0))
        found = support_swaps(inst, start, [], support_fit)
        own = [seed]
        neighbours = [(seed, j) for j in range(d) if j != seed] + [(j,) for j in range(d)]
        least = min(_best_on(inst, s) for s in neighbours + [tuple(own)])
        assert inst.objective(found) <= least + 1e-9
        assert inst.objective(found) <= inst.objective(start)


def test_a_better_model_that_breaks_a_constraint_the_start_obeys_is_not_taken():
    """The label follows x0 (x1 is noise): without constraints the search uses x0 and not x1; with
    ``x0 used => x1 used`` (left out by the in-support search) the model returned obeys it."""
    for seed in range(3):
        X, _ = _binary(seed)
        y = np.where(X[:, 0] + np.random.default_rng(seed).normal(0, 0.3, X.shape[0]) > 0.5, 1.0, -1.0)
        names = [f"x{j}" for j in range(X.shape[1])]
        for constraints in ((), (Implies("x0", "x1"),)):
            inst = RiskSLIM(coefficients=CoefficientSet.uniform(names, 2), c0=0.01, max_size=2,
                            constraints=constraints).instance(X, y)
            start = inst.round(Model(np.zeros(X.shape[1]), 0.0))
            found = support_swaps(inst, start, [], support_fit)
            if constraints:
                assert inst.constraint_violation(found) == 0.0 and (found.coef[0] == 0 or found.coef[1] != 0)
            else:
                assert found.coef[0] != 0 and found.coef[1] == 0


def test_on_integer_features_or_with_real_points_the_start_is_returned_as_it_is():
    """Integer features, or points that are not integers: the search does not apply; on the same 0/1 table
    with integer points it does improve the empty start (so the two cases are not vacuous)."""
    X, y = _binary(0)
    names = [f"x{j}" for j in range(X.shape[1])]
    start = Model(np.zeros(X.shape[1]), 0.0)
    integer_points = RiskSLIM(coefficients=CoefficientSet.uniform(names, 2), c0=0.01, max_size=2).instance(X, y)
    assert integer_points.objective(support_swaps(integer_points, start, [], support_fit)) < \
        integer_points.objective(start)
    real_points = RiskSLIM(coefficients=CoefficientSet.uniform(names, 2, integer=False), c0=0.01,
                           max_size=2).instance(X, y)
    assert support_swaps(real_points, start, [], support_fit) is start
    X[:, 0] *= 3.0
    integer_features = RiskSLIM(coefficients=CoefficientSet.uniform(names, 2), c0=0.01, max_size=2).instance(X, y)
    assert support_swaps(integer_features, start, [], support_fit) is start
