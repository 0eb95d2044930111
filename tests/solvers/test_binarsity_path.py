"""The binarsity logistic path against cvxpy, its duality-gap certificate, and sparse designs.

References independent of the proximal code: cvxpy (CLARABEL, exponential cones) solves the same
program (logistic loss + weighted block TV + sum-to-zero per block); the dual bound of every point
must lie below cvxpy's optimum and the objective above it, within the certified gap.
"""
import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from formulations.penalties import Binarsity
from solvers.proximal.binarsity import binarsity_logistic_path, block_support, strength_grid


def _instance(seed: int, n: int = 300, sizes=(4, 3, 5)):
    rng = np.random.default_rng(seed)
    sizes = np.array(sizes)
    codes = np.column_stack([rng.integers(0, d, size=n) for d in sizes])
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    X = sp.csr_matrix((np.ones(codes.size), (np.repeat(np.arange(n), sizes.size), (codes + offsets).ravel())),
                      shape=(n, sizes.sum()))
    z = 0.8 * (codes[:, 0] >= 2) - 0.5 * codes[:, 2] / sizes[2]  # block 1 is noise
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0)
    return X, y, sizes


def _cvxpy(X, y, pen: Binarsity):
    n, d = X.shape
    theta, b = cp.Variable(d), cp.Variable()
    cons, terms, k = [], [], 0
    for a, c in zip(pen.starts[:-1], pen.starts[1:]):
        cons.append(cp.sum(theta[a:c]) == 0)
        terms.append(cp.sum(cp.multiply(pen.weights[k:k + c - a - 1], cp.abs(cp.diff(theta[a:c])))))
        k += c - a - 1
    obj = cp.sum(cp.logistic(-cp.multiply(y, X.toarray() @ theta + b))) / n + sum(terms)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.ECOS, abstol=1e-10, reltol=1e-10, feastol=1e-10)
    assert prob.status == "optimal"
    return prob.value, theta.value, b.value


@pytest.mark.parametrize("seed", [0, 1])
def test_path_points_match_cvxpy_and_their_certificates_hold(seed):
    X, y, sizes = _instance(seed)
    points, base = binarsity_logistic_path(X, y, sizes, strength=0.3, n_strengths=4, tol=1e-9)
    assert [p.lam for p in points] == sorted([p.lam for p in points], reverse=True)
    assert points[-1].lam == pytest.approx(0.3)
    for point in points[1:]:  # the first is the null model
        value, theta, b = _cvxpy(X, y, base.scaled(point.lam))
        res = point.result
        assert res.status.value == "optimal" and res.raw["criterion_name"] == "relative_duality_gap"
        assert res.bound <= value + 1e-9 <= res.objective + 2e-9  # weak duality around the reference
        assert res.objective - value <= 1e-8 * abs(value)
        np.testing.assert_allclose(point.coef, theta, atol=2e-4)
        assert point.intercept == pytest.approx(b, abs=2e-4)
        sums = np.add.reduceat(point.coef, base.starts[:-1])
        np.testing.assert_allclose(sums, 0.0, atol=1e-12)


def test_first_point_is_the_null_model_and_just_below_it_is_not():
    X, y, sizes = _instance(2)
    points, base = binarsity_logistic_path(X, y, sizes, strength=0.05, n_strengths=3, tol=1e-9)
    assert np.abs(points[0].coef).max() <= 1e-15  # zero up to the centring's rounding
    s_max = points[0].lam
    below, _ = binarsity_logistic_path(X, y, sizes, strength=0.99 * s_max, n_strengths=1, tol=1e-10)
    assert np.any(np.abs(below[0].coef) > 1e-8)


def test_dense_csr_csc_designs_give_the_same_path():
    X, y, sizes = _instance(3)
    ref, _ = binarsity_logistic_path(X, y, sizes, strength=0.2, n_strengths=3, tol=1e-10)
    for design in (X.toarray(), X.tocsc(), sp.csr_array(X)):
        other, _ = binarsity_logistic_path(design, y, sizes, strength=0.2, n_strengths=3, tol=1e-10)
        for a, b in zip(ref, other):
            np.testing.assert_allclose(a.coef, b.coef, atol=1e-9)
            assert a.objective == pytest.approx(b.objective, rel=1e-12)


def test_block_support_and_grid():
    coef = np.array([0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(block_support(coef, [2, 2, 3]), [False, True, False])
    np.testing.assert_allclose(strength_grid(8.0, 1.0, 4), [8.0, 4.0, 2.0, 1.0])
    np.testing.assert_allclose(strength_grid(0.5, 1.0, 4), [1.0])
    with pytest.raises(ValueError, match="strength"):
        strength_grid(1.0, 0.0, 3)
    with pytest.raises(ValueError, match="n_strengths"):
        strength_grid(1.0, 0.5, 0)
