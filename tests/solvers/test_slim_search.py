"""SLIM's exact-move search (solvers.heuristics.slim_search) against brute force on the raw rows.

The reference objective of a coefficient vector is recomputed here without the project's
helpers: the 0-1 margin error of every candidate intercept (breakpoints, midpoints, bounds; every
integer in range for an integer intercept), the least of them, plus the L0 and L1 terms.
"""
import itertools

import numpy as np
import pytest

from formulations.coefficients import CoefficientSet
from formulations.constraints import AtMost, Monotone
from formulations.slim import SLIM
from solvers.heuristics.slim import heuristic
from solvers.heuristics.slim_search import MoveSearch, applies, search


def _reference(X, y, v, coef, margin, lo, hi, integer, c0, costs, eps, hinge=False):
    """Least margin error (or hinge loss) over the intercepts, plus the L0 and L1 terms."""
    s = X @ coef
    if integer:
        cands = np.arange(np.ceil(lo), np.floor(hi) + 1)
    else:
        pts = np.unique(np.clip(np.r_[margin - s, -margin - s, lo, hi], lo, hi))
        cands = np.r_[pts, 0.5 * (pts[1:] + pts[:-1])]
    shortfall = margin - y[:, None] * (s[:, None] + cands[None, :])
    loss = np.maximum(shortfall, 0.0) if hinge else shortfall > 1e-9
    return float((v @ loss).min() + c0 * costs @ (coef != 0) + eps * np.abs(coef).sum())


def _case(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(6, 30)), int(rng.integers(1, 4))
    X = rng.integers(0 if seed % 2 else -2, 3, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    sw = rng.integers(1, 4, n).astype(float) if seed % 3 == 0 else np.ones(n)
    names = [f"x{j}" for j in range(d)]
    cs = CoefficientSet.uniform(names, 2, sign=rng.choice([-1, 0, 1], d) if seed % 4 == 1 else 0)
    spec = SLIM(coefficients=cs, c0=float(rng.choice([0.0, 0.01, 0.05])), margin=float(rng.choice([1.0, 0.5])),
                max_size=int(rng.integers(1, d + 1)) if seed % 5 == 2 else None,
                integer_intercept=bool(seed % 2), class_weight=(1.0, 2.0) if seed % 7 == 3 else (1.0, 1.0))
    return X, y, sw, spec


def _raw_weights(y, sw, spec):
    v = sw * np.where(y > 0, spec.class_weight[1], spec.class_weight[0])
    return v / sw.sum()


@pytest.mark.parametrize("hinge", [False, True])
@pytest.mark.parametrize("seed", range(60))
def test_every_move_equals_brute_force(seed, hinge):
    _check_moves(*_case(seed), seed, hinge)


@pytest.mark.parametrize("seed", range(8))
def test_moves_of_columns_with_many_values_equal_brute_force(seed):
    """A column of more distinct values than move_errors histograms per value (it shifts that
    column's rows one by one) beside few-valued ones, both checked against brute force."""
    _, _, _, spec = _case(seed)
    d = len(spec.coefficients.names)
    rng = np.random.default_rng(500 + seed)
    X = rng.integers(-1, 3, (40, d)).astype(float)
    X[:, 0] = rng.permutation(np.r_[-20:0, 1:21])  # 40 distinct non-zero values (> MAX_COLUMN_VALUES)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 3, 40) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    _check_moves(X, y, np.ones(40), spec, seed, seed % 2 == 1)


def _check_moves(X, y, sw, spec, seed, hinge):
    inst = spec.instance(X, y, sw)
    assert applies(inst)
    ms = MoveSearch(inst)
    cs = inst.coefficients
    rng = np.random.default_rng(1000 + seed)
    coef = np.clip(rng.integers(-1, 2, cs.d), np.ceil(cs.lb), np.floor(cs.ub)).astype(np.int64)
    if spec.max_size is not None and np.count_nonzero(coef) > spec.max_size:
        coef[np.flatnonzero(coef)[spec.max_size:]] = 0
    obj = ms.moves(coef, np.arange(cs.d), hinge=hinge)
    lo, hi = inst.intercept_bounds
    v = _raw_weights(y, sw, spec)
    for j in range(cs.d):
        for k in range(obj.shape[1]):
            value = int(np.ceil(cs.lb[j])) + k
            trial = coef.astype(float).copy()
            trial[j] = value
            if value > cs.ub[j] or (spec.max_size is not None and np.count_nonzero(trial) > spec.max_size):
                assert obj[j, k] == np.inf
                continue
            ref = _reference(X, y, v, trial, spec.margin, lo, hi, inst.integer_intercept, spec.c0, cs.c0, inst.epsilon,
                             hinge)
            assert obj[j, k] == pytest.approx(ref, abs=1e-12), (j, value)


@pytest.mark.parametrize("seed", range(40))
def test_search_ends_inside_the_set_at_a_local_optimum_never_below_the_optimum(seed):
    X, y, sw, spec = _case(seed)
    inst = spec.instance(X, y, sw)
    cs = inst.coefficients
    model = search(inst, [inst.with_best_intercept(np.zeros(cs.d))])
    coef = model.coef
    assert np.all(coef >= cs.lb) and np.all(coef <= cs.ub) and np.array_equal(coef, np.round(coef))
    assert spec.max_size is None or np.count_nonzero(coef) <= spec.max_size
    lo, hi = inst.intercept_bounds
    v = _raw_weights(y, sw, spec)
    ref = lambda c: _reference(X, y, v, c, spec.margin, lo, hi, inst.integer_intercept, spec.c0, cs.c0, inst.epsilon)
    value = ref(coef)
    assert inst.objective(model) == pytest.approx(value, abs=1e-12)
    # no single move improves (brute force over the neighbourhood)
    for j in range(cs.d):
        for w in range(int(np.ceil(cs.lb[j])), int(np.floor(cs.ub[j])) + 1):
            trial = coef.copy()
            trial[j] = w
            if spec.max_size is None or np.count_nonzero(trial) <= spec.max_size:
                assert ref(trial) >= value - 1e-12
    ranges = [range(int(np.ceil(cs.lb[j])), int(np.floor(cs.ub[j])) + 1) for j in range(cs.d)]
    optimum = min(ref(np.array(c, float)) for c in itertools.product(*ranges)
                  if spec.max_size is None or np.count_nonzero(c) <= spec.max_size)
    assert value >= optimum - 1e-12


@pytest.mark.parametrize("planted_points, threshold", [((1, 1, 1, -1), 0.5), ((1, 2, -1, 1), 0.5), ((2, 2, -1, 1), 1.5)])
def test_beam_search_recovers_a_planted_sparse_card(planted_points, threshold):
    """Cards no single feature predicts (the 0-1 loss is flat along the way: the hinge guide)."""
    rng = np.random.default_rng(3)
    n, d = 600, 30
    X = rng.integers(0, 2, (n, d)).astype(float)
    planted = np.zeros(d)
    planted[[2, 7, 11, 19]] = planted_points
    y = np.where(X @ planted - threshold > 0, 1.0, -1.0)
    inst = SLIM(coef_bound=5, c0=0.002).instance(X, y)
    separating = inst.with_best_intercept(2 * planted)  # integer scores 2 apart: margin 1 on every row
    assert np.all(inst.errors(separating) == 0)
    model = search(inst, [])
    assert np.all(inst.errors(model) == 0)
    assert set(np.flatnonzero(model.coef)) == {2, 7, 11, 19}
    assert inst.objective(model) <= inst.objective(separating) + 1e-4  # up to the L1 tie-breaker


def test_search_keeps_operational_constraints():
    rng = np.random.default_rng(4)
    n, d = 300, 8
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X @ np.array([2, 2, -1, 1, 0, 0, 1, -2]) + rng.normal(0, 0.5, n) > 1, 1.0, -1.0)
    names = [f"x{j}" for j in range(d)]
    cons = (AtMost(("x0", "x1"), 1), Monotone(("x3", "x6"), "increasing"))
    inst = SLIM(coefficients=CoefficientSet.uniform(names, 3), c0=0.001, max_size=4, constraints=cons).instance(X, y)
    free = SLIM(coefficients=CoefficientSet.uniform(names, 3), c0=0.001, max_size=4).instance(X, y)
    model = heuristic(inst)
    assert inst.constraint_violation(model) == 0.0
    assert np.count_nonzero(model.coef[:2]) <= 1 and np.count_nonzero(model.coef) <= 4
    # the unconstrained search uses both x0 and x1: the constraint binds
    assert np.count_nonzero(heuristic(free).coef[:2]) == 2


def test_heuristic_never_worse_than_its_start_on_real_data():
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    X = (data.data > np.median(data.data, axis=0)).astype(float)
    y = np.where(data.target == 1, 1.0, -1.0)
    inst = SLIM(coef_bound=5, c0=0.01).instance(X, y)
    from solvers.heuristics.slim import rounded_logistic_start

    start = rounded_logistic_start(inst)
    assert inst.objective(heuristic(inst)) <= inst.objective(start) + 1e-12


def test_wide_score_ranges_use_the_coordinate_search():
    rng = np.random.default_rng(6)
    X = rng.integers(0, 10**5, (50, 3)).astype(float)
    y = np.where(X[:, 0] > 5e4, 1.0, -1.0)
    inst = SLIM(coef_bound=10, c0=0.01).instance(X, y)
    assert not applies(inst)  # 3 features x 1e5 x 10 points: more levels than a histogram should hold
    model = heuristic(inst)
    assert inst.objective(model) < inst.objective(inst.with_best_intercept(np.zeros(3)))


def test_features_whose_range_excludes_zero_stay_inside_it():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 2, (200, 5)).astype(float)
    y = np.where(X @ np.array([2, -1, 1, 0, 1]) + rng.normal(0, 0.5, 200) > 1, 1.0, -1.0)
    names = [f"x{j}" for j in range(5)]
    cs = CoefficientSet.uniform(names, 3).with_feature("x3", lb=1, ub=2).with_feature("x1", must_include=True)
    inst = SLIM(coefficients=cs, c0=0.01, max_size=3).instance(X, y)
    model = search(inst, [])
    assert 1 <= model.coef[3] <= 2
    assert np.all(model.coef >= cs.lb) and np.all(model.coef <= cs.ub)
    assert np.count_nonzero(model.coef != 0) <= 3  # x1 is counted whether or not it is 0
    assert np.count_nonzero((model.coef != 0) | cs.must_include | (cs.lb > 0)) <= 3
