"""The RiskSLIM and SLIM heuristics on large tables (solvers.heuristics.sampling): their searches run
on a class-stratified sample of rows whose class totals equal the table's, and the start they
return is a model of the full instance (inside the set and max_size) at least as good as the empty
model by the objective on every row, on the planted support."""
import numpy as np
import pytest

from formulations.base import Model
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.heuristics import riskslim as riskslim_heuristic
from solvers.heuristics import slim as slim_heuristic
from solvers.heuristics.sampling import SEARCH_ROWS, stratified_rows


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.4).astype(float)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X[:, :3] @ [2.2, -1.6, 1.2] - 0.5))), 1.0, -1.0)
    return X, y


def test_stratified_rows_keep_class_totals_and_are_deterministic():
    rng = np.random.default_rng(1)
    y = np.where(rng.random(5000) < 0.2, 1.0, -1.0)
    w = rng.random(5000)
    chosen, v = stratified_rows(y, w, 1000, seed=1)
    assert 990 <= chosen.size <= 1010 and np.all(np.diff(chosen) > 0)
    for side in (y > 0, y < 0):
        assert np.isclose(v[side[chosen]].sum(), w[side].sum())
    assert abs((y[chosen] > 0).mean() - (y > 0).mean()) < 0.01  # stratified
    again, _ = stratified_rows(y, w, 1000, seed=1)
    np.testing.assert_array_equal(again, chosen)
    one_class, _ = stratified_rows(np.ones(50), np.ones(50), 10, seed=0)
    assert one_class.size == 10


@pytest.mark.parametrize("family", ["riskslim", "slim"])
def test_heuristic_on_more_rows_than_it_searches_returns_a_good_full_model(family):
    X, y = _data(SEARCH_ROWS + 5_000, 24)
    if family == "riskslim":
        inst, module = RiskSLIM(coef_bound=3, max_size=3, c0=1e-4).instance(X, y), riskslim_heuristic
    else:
        inst, module = SLIM(coef_bound=3, max_size=3, c0=1e-3).instance(X, y), slim_heuristic
    assert inst.X.shape[0] > SEARCH_ROWS  # distinct rows (24 binary features): the sample path
    sub = module.sample_rows(inst, 2000, seed=0)
    assert sub.X.shape[0] < 2100 and sub.intercept_bounds == inst.intercept_bounds and sub._cache is not inst._cache
    model = module.heuristic(inst)
    assert np.count_nonzero(model.coef) <= 3 and np.all(np.abs(model.coef) <= 3)
    lo, hi = inst.intercept_bounds
    assert lo <= model.intercept <= hi
    assert inst.objective(model) <= inst.objective(inst.round(Model(np.zeros(24), 0.0)))
    assert set(np.flatnonzero(model.coef)) == {0, 1, 2}  # the planted support
