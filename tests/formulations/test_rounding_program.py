"""Convex-rounding programs: doubling identity, ILP = enumeration, LP <= ILP, round / lift, sparse X, errors."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.base import Model
from formulations.intercept import hinge_intercept
from formulations.rounding import (ConvexRounding, binary_from_ternary, cumulative_hinge_loss, double_features,
                                   ternary_from_binary)
from solvers.backends.highs import solve_highs
from solvers.limits import Limits
from solvers.pipeline import solve_exact, solve_relaxed


def _data(m=25, n=4, seed=0, nonnegative=True):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.5, (m, n)).astype(float) if nonnegative else rng.normal(size=(m, n))
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    y[:2] = (-1.0, 1.0)
    return X, y


def _brute_force(X, y, margin, values, d, *, intercept=0.0, k=None, learn_intercept=False):
    """Minimum cumulative hinge loss over all weight vectors in values^d (optionally ||c||_1 <= k)."""
    C = np.array(list(itertools.product(values, repeat=d)), dtype=float)
    if k is not None:
        C = C[np.abs(C).sum(axis=1) <= k + 1e-9]
    S = C @ X.T  # (combos, m)
    if not learn_intercept:
        return float((np.maximum(0.0, margin - y * (S + intercept)) / margin).sum(axis=1).min())
    # optimal intercept of a convex piecewise-linear function lies at a breakpoint y_t margin - s_t
    best = np.inf
    for s in S:
        b = (y * margin - s)[:, None]
        best = min(best, float((np.maximum(0.0, margin - y[None, :] * (s[None, :] + b)) / margin).sum(axis=1).min()))
    return best


# ------------------------------------------------------------------- section 2 doubling identity
@pytest.mark.parametrize("sparse", [False, True])
def test_doubling_identity_for_random_ternary_weights(sparse):
    rng = np.random.default_rng(1)
    X, y = _data(m=30, n=7, seed=1, nonnegative=False)
    Xs = sp.csr_matrix(X) if sparse else X
    Xd = double_features(Xs)
    assert Xd.shape == (30, 14) and sp.issparse(Xd) == sparse
    dense = Xd.toarray() if sparse else Xd
    np.testing.assert_array_equal(dense[:, 0::2], X)
    np.testing.assert_array_equal(dense[:, 1::2], -X)
    for _ in range(20):
        c = rng.integers(-1, 2, 7).astype(float)
        c2 = binary_from_ternary(c)
        assert set(np.unique(c2)) <= {0.0, 1.0}
        np.testing.assert_array_equal(ternary_from_binary(c2), c)
        for margin in (0.3, 2.0):
            assert cumulative_hinge_loss(c2, Xd, y, margin=margin) == pytest.approx(
                cumulative_hinge_loss(c, X, y, margin=margin), abs=1e-12)


def test_hinge_loss_matches_definition():
    X, y = _data(m=6, n=3)
    c, margin, r = np.array([1.0, 0.0, 1.0]), 1.5, 2.0
    expected = sum(max(0.0, margin - yt * (xt @ c - r)) / margin for xt, yt in zip(X, y))
    assert cumulative_hinge_loss(c, X, y, margin=margin, intercept=-r) == pytest.approx(expected)


# ------------------------------------------------------------------------------ program structure
def test_program_blocks_bounds_and_lift():
    X, y = _data(n=4)
    inst = ConvexRounding(margin=2.0, weights="ternary", threshold=0.5, max_size=3).instance(X, y)
    exact, relaxed = inst.exact(), inst.relaxed()
    assert exact.is_mip and not relaxed.is_mip
    assert list(exact.blocks)[:2] == ["coef", "intercept"]
    assert int(exact.integer.sum()) == 8 and exact.integer[exact.blocks["coef"]].all()
    np.testing.assert_array_equal(exact.col_lb[exact.blocks["coef"]], 0.0)
    np.testing.assert_array_equal(exact.col_ub[exact.blocks["coef"]], 1.0)
    assert exact.col_lb[exact.blocks["intercept"]][0] == exact.col_ub[exact.blocks["intercept"]][0] == -0.5
    assert set(exact.row_blocks) == {"hinge_rows", "max_size"}
    c = np.array([1.0, -1.0, 0.0, 1.0])
    x = inst.lift(Model(c, -0.5))
    assert exact.is_feasible(x)
    assert exact.objective(x) == pytest.approx(cumulative_hinge_loss(c, X, y, margin=2.0, intercept=-0.5))
    assert inst.objective(Model(c, -0.5)) == pytest.approx(exact.objective(x))
    model = inst.decode(x)
    np.testing.assert_array_equal(model.coef, c)
    np.testing.assert_array_equal(model.extras["weights"], binary_from_ternary(c))
    assert model.intercept == -0.5
    # a 4-sparse ternary vector violates the k = 3 budget
    assert not exact.is_feasible(inst.lift(Model(np.array([1.0, -1.0, 1.0, 1.0]), -0.5)))


def test_sample_weight_scales_the_objective():
    X, y = _data(n=3)
    s = np.linspace(0.5, 2.0, y.size)
    inst = ConvexRounding(margin=1.0, weights="binary", threshold=1.0).instance(X, y, sample_weight=s)
    c = Model(np.array([1.0, 0.0, 1.0]), -1.0)
    expected = cumulative_hinge_loss(c.coef, X, y, margin=1.0, intercept=-1.0, sample_weight=s)
    assert inst.exact().objective(inst.lift(c)) == pytest.approx(expected)
    assert inst.objective(c) == pytest.approx(expected)


def test_duplicate_rows_are_merged_exactly():
    X, y = _data(m=20, n=3)
    X2, y2 = np.vstack([X, X[:5]]), np.concatenate([y, y[:5]])
    merged = ConvexRounding(margin=1.5).instance(X2, y2)
    weighted = ConvexRounding(margin=1.5).instance(X, y, np.r_[np.full(5, 2.0), np.ones(15)])
    assert merged.info["n_rows"] == 25 and merged.info["n_rows_kept"] <= 20
    model = Model(np.array([1.0, -1.0, 0.0]), 0.3)
    assert merged.objective(model) == pytest.approx(weighted.objective(model))


def test_sparse_and_dense_inputs_build_the_same_program():
    X, y = _data(m=40, n=6, seed=3)
    X[:, 2] = 0.0  # an all-zero column stays a column
    spec = ConvexRounding(margin=1.0, max_size=2)
    dense, sparse = spec.instance(X, y), spec.instance(sp.csr_matrix(X), y)
    a, b = dense.relaxed(), sparse.relaxed()
    assert a.n_variables == b.n_variables
    fa, fb = solve_relaxed(dense), solve_relaxed(sparse)
    assert fa.result.objective == pytest.approx(fb.result.objective, abs=1e-9)
    model = Model(np.array([1.0, 0.0, 0.0, -1.0, 0.0, 0.0]), 0.5)
    assert dense.objective(model) == pytest.approx(sparse.objective(model))


# ------------------------------------------------------------------------------- round()
def test_round_keeps_the_class_the_budget_and_the_intercept():
    X, y = _data(m=30, n=5, seed=2)
    raw = Model(np.array([0.7, -0.55, 0.2, -0.9, 0.5]), 0.37)
    ternary = ConvexRounding(threshold=None).instance(X, y).round(raw)
    np.testing.assert_array_equal(ternary.coef, [1, -1, 0, -1, 1])
    inst = ConvexRounding(threshold=None, max_size=2).instance(X, y)
    budget = inst.round(raw)
    np.testing.assert_array_equal(budget.coef, [1, 0, 0, -1, 0])  # the two largest |c_i|
    b = hinge_intercept(X @ budget.coef, y, np.ones(y.size), 1.0)
    assert inst.objective(budget) <= inst.objective(Model(budget.coef, b)) + 1e-12
    assert inst.objective(budget) <= inst.objective(Model(budget.coef, 0.37)) + 1e-12
    fixed = ConvexRounding(threshold=1.5, weights="binary").instance(X, y).round(raw)
    np.testing.assert_array_equal(fixed.coef, [1, 0, 0, 0, 1])  # negative weights clip to 0
    assert fixed.intercept == -1.5
    assert ConvexRounding(threshold=0.0).instance(X, y).round(raw).intercept == 0.0


# ----------------------------------------------------------------- ILP = enumeration, LP <= ILP
def _pipeline_optimum(inst):
    exact = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    assert exact.status.value == "optimal"
    return exact


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_ilp_with_threshold_equals_enumeration(seed):
    X, y = _data(m=30, n=8, seed=seed)
    inst = ConvexRounding(margin=1.0, weights="binary", threshold=3.0).instance(X, y)
    ilp = solve_highs(inst.exact())
    lp = solve_highs(inst.relaxed())
    expected = _brute_force(X, y, 1.0, (0, 1), 8, intercept=-3.0)
    assert ilp.status.value == "optimal"
    assert ilp.objective == pytest.approx(expected, abs=1e-6)
    assert lp.objective <= ilp.objective + 1e-7
    model = inst.round(inst.decode(ilp.x))
    assert cumulative_hinge_loss(model.coef, X, y, margin=1.0, intercept=-3.0) == pytest.approx(expected, abs=1e-6)
    assert _pipeline_optimum(inst).objective == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("k", [None, 2])
def test_ternary_ilp_equals_enumeration(k):
    X, y = _data(m=30, n=5, seed=4)
    inst = ConvexRounding(margin=2.0, weights="ternary", threshold=0.0, max_size=k).instance(X, y)
    ilp = solve_highs(inst.exact())
    expected = _brute_force(X, y, 2.0, (-1, 0, 1), 5, k=k)
    assert ilp.objective == pytest.approx(expected, abs=1e-6)
    coef = inst.round(inst.decode(ilp.x)).coef
    assert set(coef) <= {-1.0, 0.0, 1.0}
    if k is not None:
        assert np.abs(coef).sum() <= k
    assert solve_highs(inst.relaxed()).objective <= ilp.objective + 1e-7


def test_learned_threshold_ilp_equals_enumeration():
    X, y = _data(m=20, n=4, seed=5)
    inst = ConvexRounding(margin=1.0, weights="ternary", threshold=None).instance(X, y)
    ilp = solve_highs(inst.exact())
    assert ilp.objective == pytest.approx(_brute_force(X, y, 1.0, (-1, 0, 1), 4, learn_intercept=True), abs=1e-6)


@pytest.mark.parametrize("threshold, k", [(None, None), (None, 1), (0.0, None), (1.0, 2)])
def test_pipeline_exact_optimum_equals_enumeration_of_27_models(threshold, k):
    """d = 3: every ternary vector (27) with its best intercept (hinge_intercept) or the fixed threshold."""
    X, y = _data(m=25, n=3, seed=6, nonnegative=False)
    s = np.linspace(0.5, 1.5, y.size)
    inst = ConvexRounding(margin=0.8, threshold=threshold, max_size=k).instance(X, y, s)
    best = np.inf
    for c in itertools.product((-1.0, 0.0, 1.0), repeat=3):
        c = np.array(c)
        if k is not None and np.abs(c).sum() > k:
            continue
        b = -threshold if threshold is not None else hinge_intercept(X @ c, y, s, 0.8)
        best = min(best, cumulative_hinge_loss(c, X, y, margin=0.8, intercept=b, sample_weight=s))
    fit = _pipeline_optimum(inst)
    assert fit.objective == pytest.approx(best, abs=1e-7)
    assert set(fit.model.coef) <= {-1.0, 0.0, 1.0}
    assert solve_relaxed(inst).result.objective <= best + 1e-7


def test_sparse_lp_is_between_plain_lp_and_sparse_ilp():
    X, y = _data(m=40, n=6, seed=6, nonnegative=False)
    plain = solve_highs(ConvexRounding(margin=1.0, threshold=0.0).instance(X, y).relaxed()).objective
    inst = ConvexRounding(margin=1.0, threshold=0.0, max_size=1.5).instance(X, y)
    lp = solve_highs(inst.relaxed())
    ilp = solve_highs(inst.exact())
    assert plain <= lp.objective + 1e-7 <= ilp.objective + 2e-7
    assert inst.relaxed().block(lp.x, "coef").sum() <= 1.5 + 1e-7


# ------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("kwargs, match", [
    ({"margin": 0.0}, "margin"), ({"margin": -1.0}, "margin"), ({"margin": float("inf")}, "margin"),
    ({"weights": "integer"}, "weights"), ({"max_size": -1}, "max_size"), ({"threshold": float("nan")}, "threshold"),
    ({"n_draws": 0}, "n_draws"), ({"n_restarts": -1}, "n_restarts"), ({"start_nonzeros": 0}, "start_nonzeros"),
    ({"epsilon": 0.0}, "epsilon"), ({"max_moves": 1.5}, "max_moves"),
])
def test_bad_parameters_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ConvexRounding(**kwargs)


def test_bad_data_is_rejected():
    X, y = _data()
    spec = ConvexRounding()
    with pytest.raises(ValueError, match="-1, \\+1"):
        spec.instance(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="labels but X has"):
        spec.instance(X, y[:-1])
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        spec.instance(bad, y)
    with pytest.raises(ValueError, match="sample_weight"):
        spec.instance(X, y, sample_weight=-np.ones(y.size))
    with pytest.raises(ValueError, match="coefficients"):
        spec.instance(X, y).lift(Model(np.zeros(X.shape[1] + 1), 0.0))
