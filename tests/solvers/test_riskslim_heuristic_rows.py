"""The RiskSLIM heuristic on large tables (solvers.heuristics.riskslim): its searches run on a
class-stratified sample of rows whose class totals equal the table's, and the start it returns is
a model of the full instance (inside the set and max_size) at least as good as the empty model and
as the polished sample model, by the objective on every row."""
import numpy as np

from formulations.base import Model
from formulations.riskslim import RiskSLIM
from solvers.heuristics.riskslim import SEARCH_ROWS, heuristic, sample_rows


def _instance(n, seed=0, d=12):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.4).astype(float)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X[:, :3] @ [1.7, -1.2, 0.9] - 0.5))), 1.0, -1.0)
    return RiskSLIM(coef_bound=3, max_size=3, c0=1e-4).instance(X, y)


def test_sample_keeps_class_totals_and_is_deterministic():
    inst = _instance(5000)
    sub = sample_rows(inst, 1000, seed=1)
    assert 990 <= sub.X.shape[0] <= 1010
    for side in (1, -1):
        assert np.isclose(sub.weights[sub.y == side].sum(), inst.weights[inst.y == side].sum())
    rows = {tuple(r) + (t,) for r, t in zip(inst.X, inst.y)}
    assert all(tuple(r) + (t,) in rows for r, t in zip(sub.X, sub.y))
    again = sample_rows(inst, 1000, seed=1)
    np.testing.assert_array_equal(again.X, sub.X)
    assert sub.intercept_bounds == inst.intercept_bounds and sub._cache is not inst._cache


def test_heuristic_on_more_rows_than_it_searches_returns_a_good_full_model():
    inst = _instance(SEARCH_ROWS + 5_000, d=24)
    assert inst.X.shape[0] > SEARCH_ROWS  # distinct rows (24 binary features): the sample path
    model = heuristic(inst)
    assert np.count_nonzero(model.coef) <= 3 and np.all(np.abs(model.coef) <= 3)
    lo, hi = inst.intercept_bounds
    assert lo <= model.intercept <= hi
    empty = inst.polish(Model(np.zeros(24), 0.0))
    assert inst.objective(model) <= inst.objective(empty)
    assert set(np.flatnonzero(model.coef)) == {0, 1, 2}  # the planted support
