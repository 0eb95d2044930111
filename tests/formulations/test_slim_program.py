"""SLIM builder: big-M values, row merging, eps tie-breaker, lift/decode consistency, errors."""
import numpy as np
import pytest

from formulations.coefficients import CoefficientSet
from formulations.base import Model
from formulations.slim import SLIM, common_unit


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
    model = Model([1.0, -1.0, 2.0], -1.0)
    assert a.objective(model) == pytest.approx(b.objective(model))


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
    for model in [Model([1.0, 0.0, -2.0], 0.0), Model(np.zeros(3), 1.0)]:
        x = inst.lift(model)
        assert p.is_feasible(x)
        assert p.objective(x) == pytest.approx(inst.objective(model))
        back = inst.decode(x)
        np.testing.assert_array_equal(back.coef, model.coef)
        assert back.intercept == model.intercept


def test_epsilon_never_trades_accuracy_or_sparsity():
    X, y = _data()
    inst = SLIM(coef_bound=10, c0=0.01).instance(X, y)
    # unweighted: loss + L0 values are multiples of gcd(1/40, 0.01) = 1/200; the L1 term moves less than half of it
    assert inst.epsilon * inst.coefficients.magnitude.sum() <= 0.5 / 200 + 1e-15
    assert inst.epsilon > 0


def test_common_unit_is_exact():
    assert common_unit(np.array([1 / 3, 1 / 2])) == pytest.approx(1 / 6, rel=1e-12)
    assert common_unit(np.array([0.25, 0.75, 0.01])) == pytest.approx(0.01, rel=1e-12)
    assert common_unit(np.array([np.pi, 1.0])) < 1e-8  # no useful common unit: the tie-breaker is negligible


def test_relaxed_is_relax_of_exact():
    X, y = _data()
    inst = SLIM().instance(X, y)
    assert inst.exact().is_mip and not inst.relaxed().is_mip
    assert inst.relaxed().n_rows == inst.exact().n_rows


@pytest.mark.parametrize("kwargs, match", [
    ({"c0": -1}, "c0 must be a finite number >= 0"), ({"margin": 0}, "margin must be a finite number > 0"),
    ({"c0": float("nan")}, "c0"), ({"margin": float("inf")}, "margin"), ({"class_weight": (float("inf"), 1)}, "class_weight"),
    ({"max_size": -1}, "max_size"), ({"class_weight": (0, 0)}, "class_weight"), ({"class_weight": (-1, 1)}, "class_weight"),
])
def test_bad_choices_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SLIM(**kwargs)


def test_bad_data_rejected():
    X, y = _data()
    with pytest.raises(ValueError, match="y must hold labels in"):
        SLIM().instance(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="3 columns"):
        SLIM(coefficients=CoefficientSet.uniform(2)).instance(X, y)
    cs = CoefficientSet.uniform(3, must_include=["x0", "x1"])
    with pytest.raises(ValueError, match="must be used"):
        SLIM(coefficients=cs, max_size=1).instance(X, y)


def test_coefficient_set_validation():
    with pytest.raises(ValueError, match="impossible bounds for feature 'x1'"):
        CoefficientSet.uniform(3).with_feature("x1", lb=3, ub=1)
    with pytest.raises(KeyError, match="unknown feature"):
        CoefficientSet.uniform(3).with_feature("nope", lb=0)
    cs = CoefficientSet.uniform(["a", "b"], 5, sign=[1, -1])
    np.testing.assert_array_equal(cs.lb, [0, -5])
    np.testing.assert_array_equal(cs.ub, [5, 0])


@pytest.mark.parametrize("change, match", [
    ({"lb": 0.5, "ub": 0.7}, "holds none"),
])
def test_specifications_infeasible_on_their_face_are_refused(change, match):
    with pytest.raises(ValueError, match=match):
        SLIM(coefficients=CoefficientSet.uniform(["x0", "x1"], 2).with_feature("x1", **change))


def test_range_excluding_zero_counts_as_used():
    cs = CoefficientSet.uniform(["x0", "x1"], 2).with_feature("x1", lb=1, ub=2)
    with pytest.raises(ValueError, match="max_size=0"):
        SLIM(coefficients=cs, max_size=0)
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 5, float)
    inst = SLIM(coefficients=cs).instance(X, np.where(X[:, 0] > 0, 1.0, -1.0))
    rounded = inst.round(Model(np.zeros(2), 0.0))
    assert rounded.coef[1] == 1.0  # clipped into [1, 2], not 0
    assert inst.exact().is_feasible(inst.lift(rounded))


def test_integer_intercept_without_integer_in_bounds_is_refused():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    cs = CoefficientSet(lb=np.full(2, -2.0), ub=np.full(2, 2.0), integer=np.ones(2, bool), c0=np.ones(2),
                        must_include=np.zeros(2, bool), names=("a", "b"), intercept_lb=0.5, intercept_ub=0.5)
    with pytest.raises(ValueError, match="holds no integer"):
        SLIM(coefficients=cs).instance(X, np.array([1.0, -1.0, 1.0]))


def test_coefficient_set_aligned_by_name():
    cs = CoefficientSet.uniform(["a", "b", "c"], 3).with_feature("b", lb=0, ub=0)
    aligned = cs.aligned(["c", "b", "a"])
    np.testing.assert_array_equal(aligned.ub, [3, 0, 3])
    with pytest.raises(ValueError, match="columns without an entry"):
        cs.aligned(["a", "b", "z"])
