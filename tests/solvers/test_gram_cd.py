"""Gram-form coordinate descent (solvers.proximal.gram_cd) against independent references.

References: the closed-form lasso solution of an orthogonal design (soft-thresholding of X'y / n),
scipy's L-BFGS-B on the split variables w = u - v (u, v >= 0), and the first-order FISTA loop.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from formulations.losses import LeastSquares, Logistic
from formulations.penalties import L1, ElasticNet, WeightedL1
from solvers.proximal.gram_cd import gram_coordinate_descent, supports_gram_cd
from solvers.proximal.gradient import working_set_solve
from solvers.result import Status

RNG = np.random.default_rng(11)
N, P = 200, 25
X = RNG.normal(size=(N, P)) + 0.3 * RNG.normal(size=(N, 1))  # correlated columns
Y = X[:, :3] @ np.array([2.0, -1.0, 0.5]) + RNG.normal(size=N) + 4.0


def _lbfgs(tau: np.ndarray, kappa: np.ndarray) -> float:
    Xc, yc = X - X.mean(0), Y - Y.mean()

    def fun(theta):
        w = theta[:P] - theta[P:]
        r = Xc @ w - yc
        g = Xc.T @ r / N + kappa * w
        return r @ r / (2 * N) + tau @ theta[:P] + tau @ theta[P:] + 0.5 * kappa @ (w * w), np.r_[g + tau, -g + tau]

    res = minimize(fun, np.zeros(2 * P), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * P),
                   options={"maxiter": 100000, "ftol": 1e-16, "gtol": 1e-13, "maxcor": 50})
    return float(res.fun)


@pytest.mark.parametrize("penalty, tau, kappa", [
    (L1(0.05), np.full(P, 0.05), np.zeros(P)),
    (WeightedL1(np.r_[0.0, np.linspace(0.01, 0.2, P - 1)]), np.r_[0.0, np.linspace(0.01, 0.2, P - 1)], np.zeros(P)),
    (ElasticNet(0.1, 0.3), np.full(P, 0.03), np.full(P, 0.07)),
])
def test_matches_lbfgs_and_certifies(penalty, tau, kappa):
    loss = LeastSquares(X, Y, gram=True)
    res = gram_coordinate_descent(loss, penalty, tol=1e-12)
    reference = _lbfgs(tau, kappa)
    assert res.status is Status.OPTIMAL and res.backend == "gram_cd", res.message
    assert res.objective == pytest.approx(reference, rel=1e-9)
    assert res.bound <= reference + 1e-12 <= res.objective + 1e-9
    assert res.raw["intercept"] == pytest.approx(Y.mean() - X.mean(0) @ res.x)


def test_orthogonal_design_is_soft_thresholding():
    Q, _ = np.linalg.qr(RNG.normal(size=(N, P)))
    Xo = Q * np.sqrt(N)  # X'X / n = I, centred columns not needed without an intercept
    y = Xo @ np.linspace(-1, 1, P) + RNG.normal(size=N)
    loss = LeastSquares(Xo, y, fit_intercept=False, gram=True)
    res = gram_coordinate_descent(loss, L1(0.3), tol=1e-13)
    z = Xo.T @ y / N
    np.testing.assert_allclose(res.x, np.sign(z) * np.maximum(np.abs(z) - 0.3, 0), atol=1e-10)


def test_working_set_dispatch_and_fallback_to_fista():
    loss = LeastSquares(X, Y, gram=True)
    auto = working_set_solve(loss, L1(0.02), tol=1e-10)
    first = working_set_solve(loss, L1(0.02), tol=1e-10, method="prox_gradient")
    assert auto.backend == "gram_cd" and first.backend == "fista"
    assert auto.objective == pytest.approx(first.objective, rel=1e-9)
    # one pass per round cannot certify 1e-12 here: FEASIBLE, and working_set_solve finishes with FISTA
    crawl = gram_coordinate_descent(loss, L1(0.02), tol=1e-12, max_epochs=1)
    assert crawl.status is Status.FEASIBLE and crawl.raw["criterion"] > 1e-12
    finished = working_set_solve(loss, L1(0.02), tol=1e-10, max_epochs=1)
    assert finished.backend == "fista" and finished.status is Status.OPTIMAL
    assert finished.objective == pytest.approx(first.objective, rel=1e-9)
    assert not supports_gram_cd(LeastSquares(X, Y), L1(0.1)) and not supports_gram_cd(Logistic(X, Y > 4), L1(0.1))
    with pytest.raises(ValueError, match="gram=True"):
        gram_coordinate_descent(LeastSquares(X, Y), L1(0.1))
