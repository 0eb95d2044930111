"""Convex-rounding programs: doubling identity, ILP = enumeration, LP <= ILP, sparse X, errors."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.rounding import (ConvexRounding, binary_from_ternary, cumulative_hinge_loss, double_features,
                                   ternary_from_binary)
from solvers.highs import solve_highs


def _data(m=25, n=4, seed=0, nonnegative=True):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.5, (m, n)).astype(float) if nonnegative else rng.normal(size=(m, n))
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    y[:2] = (-1.0, 1.0)
    return X, y


def _brute_force(X, y, gamma, values, d, *, intercept=0.0, k=None, learn_intercept=False):
    """Minimum cumulative hinge loss over all weight vectors in values^d (optionally ||c||_1 <= k)."""
    C = np.array(list(itertools.product(values, repeat=d)), dtype=float)
    if k is not None:
        C = C[np.abs(C).sum(axis=1) <= k + 1e-9]
    S = C @ X.T  # (combos, m)
    if not learn_intercept:
        return float((np.maximum(0.0, gamma - y * (S + intercept)) / gamma).sum(axis=1).min())
    # optimal intercept of a convex piecewise-linear function lies at a breakpoint y_t gamma - s_t
    best = np.inf
    for s in S:
        b = (y * gamma - s)[:, None]
        best = min(best, float((np.maximum(0.0, gamma - y[None, :] * (s[None, :] + b)) / gamma).sum(axis=1).min()))
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
        for gamma in (0.3, 2.0):
            assert cumulative_hinge_loss(c2, Xd, y, gamma=gamma) == pytest.approx(
                cumulative_hinge_loss(c, X, y, gamma=gamma), abs=1e-12)


def test_hinge_loss_matches_definition():
    X, y = _data(m=6, n=3)
    c, gamma, r = np.array([1.0, 0.0, 1.0]), 1.5, 2.0
    expected = sum(max(0.0, gamma - yt * (xt @ c - r)) / gamma for xt, yt in zip(X, y))
    assert cumulative_hinge_loss(c, X, y, gamma=gamma, intercept=-r) == pytest.approx(expected)


# ------------------------------------------------------------------------------ program structure
def test_program_blocks_bounds_and_lift():
    X, y = _data(n=4)
    builder = ConvexRounding(gamma=2.0, weights="ternary", threshold=0.5, sparsity=3)
    exact, relaxed = builder.exact(X, y), builder.relaxed(X, y)
    assert exact.is_mip and not relaxed.is_mip
    assert int(exact.integer.sum()) == 8 and exact.integer[exact.blocks["w"]].all()
    np.testing.assert_array_equal(exact.col_lb[exact.blocks["w"]], 0.0)
    np.testing.assert_array_equal(exact.col_ub[exact.blocks["w"]], 1.0)
    assert exact.col_lb[exact.blocks["intercept"]][0] == exact.col_ub[exact.blocks["intercept"]][0] == -0.5
    assert set(exact.row_blocks) == {"hinge_rows", "sparsity"}
    c = np.array([1.0, -1.0, 0.0, 1.0])
    x = builder.lift(c, X, y)
    assert exact.is_feasible(x)
    assert exact.objective(x) == pytest.approx(cumulative_hinge_loss(c, X, y, gamma=2.0, intercept=-0.5))
    coef, intercept = builder.decode(x, exact)
    np.testing.assert_array_equal(coef, c)
    assert intercept == -0.5
    # a 4-sparse ternary vector violates the k = 3 budget
    assert not exact.is_feasible(builder.lift(np.array([1.0, -1.0, 1.0, 1.0]), X, y))


def test_sample_weight_scales_the_objective():
    X, y = _data(n=3)
    s = np.linspace(0.5, 2.0, y.size)
    builder = ConvexRounding(gamma=1.0, weights="binary", threshold=1.0)
    c = np.array([1.0, 0.0, 1.0])
    program = builder.exact(X, y, sample_weight=s)
    assert program.objective(builder.lift(c, X, y)) == pytest.approx(
        cumulative_hinge_loss(c, X, y, gamma=1.0, intercept=-1.0, sample_weight=s))


def test_sparse_and_dense_inputs_build_the_same_program():
    X, y = _data(m=40, n=6, seed=3)
    builder = ConvexRounding(gamma=1.0, sparsity=2)
    a, b = builder.relaxed(X, y), builder.relaxed(sp.csr_matrix(X), y)
    assert abs(a.A - b.A).max() == 0
    np.testing.assert_array_equal(a.c, b.c)
    assert solve_highs(a).objective == pytest.approx(solve_highs(b).objective, abs=1e-9)


# ----------------------------------------------------------------- ILP = enumeration, LP <= ILP
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_ilp_with_threshold_equals_enumeration(seed):
    X, y = _data(m=30, n=8, seed=seed)
    builder = ConvexRounding(gamma=1.0, weights="binary", threshold=3.0)
    ilp = solve_highs(builder.exact(X, y))
    lp = solve_highs(builder.relaxed(X, y))
    expected = _brute_force(X, y, 1.0, (0, 1), 8, intercept=-3.0)
    assert ilp.status.value == "optimal"
    assert ilp.objective == pytest.approx(expected, abs=1e-6)
    assert lp.objective <= ilp.objective + 1e-7
    coef, _ = builder.decode(ilp.x, builder.exact(X, y))
    assert cumulative_hinge_loss(np.round(coef), X, y, gamma=1.0, intercept=-3.0) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("k", [None, 2])
def test_ternary_ilp_equals_enumeration(k):
    X, y = _data(m=30, n=5, seed=4)
    builder = ConvexRounding(gamma=2.0, weights="ternary", threshold=0.0, sparsity=k)
    program = builder.exact(X, y)
    ilp = solve_highs(program)
    expected = _brute_force(X, y, 2.0, (-1, 0, 1), 5, k=k)
    assert ilp.objective == pytest.approx(expected, abs=1e-6)
    coef, _ = builder.decode(ilp.x, program)
    assert set(np.round(coef)) <= {-1.0, 0.0, 1.0}
    if k is not None:
        assert np.abs(np.round(coef)).sum() <= k
    assert solve_highs(builder.relaxed(X, y)).objective <= ilp.objective + 1e-7


def test_learned_threshold_ilp_equals_enumeration():
    X, y = _data(m=20, n=4, seed=5)
    builder = ConvexRounding(gamma=1.0, weights="ternary", threshold=None)
    ilp = solve_highs(builder.exact(X, y))
    assert ilp.objective == pytest.approx(_brute_force(X, y, 1.0, (-1, 0, 1), 4, learn_intercept=True), abs=1e-6)


def test_sparse_lp_is_between_plain_lp_and_sparse_ilp():
    X, y = _data(m=40, n=6, seed=6, nonnegative=False)
    plain = solve_highs(ConvexRounding(gamma=1.0).relaxed(X, y)).objective
    sparse_builder = ConvexRounding(gamma=1.0, sparsity=1.5)
    lp = solve_highs(sparse_builder.relaxed(X, y))
    ilp = solve_highs(sparse_builder.exact(X, y))
    assert plain <= lp.objective + 1e-7 <= ilp.objective + 2e-7
    assert lp.x[sparse_builder.relaxed(X, y).blocks["w"]].sum() <= 1.5 + 1e-7


# ------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("kwargs, match", [
    ({"gamma": 0.0}, "gamma"), ({"gamma": -1.0}, "gamma"), ({"weights": "integer"}, "weights"),
    ({"sparsity": -1}, "sparsity"), ({"threshold": float("nan")}, "threshold"),
])
def test_bad_parameters_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ConvexRounding(**kwargs)


def test_bad_data_is_rejected():
    X, y = _data()
    builder = ConvexRounding()
    with pytest.raises(ValueError, match="-1, \\+1"):
        builder.exact(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="labels but X has"):
        builder.exact(X, y[:-1])
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        builder.exact(bad, y)
    with pytest.raises(ValueError, match="sample_weight"):
        builder.exact(X, y, sample_weight=-np.ones(y.size))
    with pytest.raises(ValueError, match="intercept is required"):
        ConvexRounding(threshold=None).lift(np.zeros(X.shape[1]), X, y)
