"""SLIM builder: big-M values, row merging, eps tie-breaker, lift/decode consistency, errors."""
import numpy as np
import pytest

from formulations.coefficients import CoefficientSet
from formulations.slim import SLIM


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 0.5, n) > X.mean() * d * 0.3, 1.0, -1.0)
    if len(np.unique(y)) < 2:
        y[0] = -y[0]
    return X, y


def test_duplicates_merged_exactly():
    X, y = _data()
    X2, y2 = np.vstack([X, X]), np.concatenate([y, y])
    a, b = SLIM(c0=0.01).instance(X, y), SLIM(c0=0.01).instance(X2, y2)
    assert b.n_rows_in == 80 and b.n_rows_kept == a.n_rows_kept <= 40
    np.testing.assert_allclose(a.weights.sum(), 1.0)
    coef = np.array([1.0, -1.0, 2.0])
    assert a.objective(coef, -1.0) == pytest.approx(b.objective(coef, -1.0))


def test_big_m_is_tight_for_each_row():
    X, y = _data()
    inst = SLIM(coef_bound=2).instance(X, y)
    lo, hi = inst.intercept_bounds
    # brute force the worst case over the corners of the box
    corners = np.array(np.meshgrid(*[[-2, 2]] * 3)).reshape(3, -1).T
    worst = np.max(1.0 - inst.y[:, None] * (inst.X @ corners.T + np.where(inst.y[:, None] > 0, lo, hi)), axis=1)
    np.testing.assert_allclose(inst.big_m, np.maximum(worst, 0))


def test_lift_is_feasible_and_objectives_agree():
    X, y = _data(seed=2)
    inst = SLIM(coef_bound=3, c0=0.02, max_size=2).instance(X, y)
    p = inst.exact()
    for coef, b in [(np.array([1.0, 0.0, -2.0]), 0.0), (np.zeros(3), 1.0)]:
        x = inst.lift(coef, b)
        assert p.is_feasible(x)
        assert p.objective(x) == pytest.approx(inst.objective(coef, b))
        c2, b2 = inst.decode(x)
        np.testing.assert_array_equal(c2, coef)
        assert b2 == b


def test_epsilon_never_trades_accuracy_or_sparsity():
    X, y = _data()
    inst = SLIM(coef_bound=10, c0=0.01).instance(X, y)
    assert inst.epsilon * inst.coefficients.magnitude.sum() < min(inst.weights.min(), 0.01)


def test_relaxed_is_relax_of_exact():
    X, y = _data()
    inst = SLIM().instance(X, y)
    assert inst.exact().is_mip and not inst.relaxed().is_mip
    assert inst.relaxed().n_rows == inst.exact().n_rows


@pytest.mark.parametrize("kwargs, match", [
    ({"c0": -1}, "c0 must be >= 0"), ({"margin": 0}, "margin must be > 0"),
    ({"max_size": -1}, "max_size"), ({"class_weight": (0, 0)}, "class_weight"), ({"class_weight": (-1, 1)}, "class_weight"),
])
def test_bad_choices_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SLIM(**kwargs)


def test_bad_data_rejected():
    X, y = _data()
    with pytest.raises(ValueError, match="y must be in"):
        SLIM().instance(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="3 columns"):
        SLIM(coefficients=CoefficientSet.uniform(2)).instance(X, y)
    cs = CoefficientSet.uniform(3, must_include=["x0", "x1"])
    with pytest.raises(ValueError, match="must-include"):
        SLIM(coefficients=cs, max_size=1).instance(X, y)


def test_coefficient_set_validation():
    with pytest.raises(ValueError, match="impossible bounds for feature 'x1'"):
        CoefficientSet.uniform(3).with_feature("x1", lb=3, ub=1)
    with pytest.raises(KeyError, match="unknown feature"):
        CoefficientSet.uniform(3).with_feature("nope", lb=0)
    cs = CoefficientSet.uniform(["a", "b"], 5, sign=[1, -1])
    np.testing.assert_array_equal(cs.lb, [0, -5])
    np.testing.assert_array_equal(cs.ub, [5, 0])
