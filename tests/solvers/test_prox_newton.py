"""Working-set proximal Newton (solvers.proximal.prox_newton) against independent references.

References: scipy's L-BFGS-B on the split variables w = w+ - w- >= 0 (a smooth bound-constrained
problem, solved to 1e-13 projected gradient), and the first-order working-set FISTA of
solvers.proximal.gradient; the duality-gap bound is checked to lie below the reference optimum.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit

from formulations.losses import LeastSquares, Logistic
from formulations.penalties import L1, ElasticNet, WeightedL1
from solvers.proximal.prox_newton import prox_newton, supports_prox_newton, violations
from solvers.proximal.gradient import working_set_solve
from solvers.result import Status

RNG = np.random.default_rng(7)
N, P = 240, 30
X = RNG.normal(size=(N, P)) @ np.diag(np.linspace(0.3, 3.0, P))  # uneven column scales
Y = np.where(RNG.uniform(size=N) < expit(X[:, :4] @ np.array([1.0, -1.0, 0.5, 0.8]) + 0.4), 1.0, -1.0)


def _lbfgs(tau: np.ndarray, kappa: np.ndarray, fit_intercept: bool) -> float:
    """min (1/n) sum log(1 + exp(-y(Xw + b))) + tau.|w| + kappa.w^2/2 with w = u - v, u, v >= 0."""
    def fun(theta):
        u, v, b = theta[:P], theta[P:2 * P], (theta[-1] if fit_intercept else 0.0)
        w = u - v
        m = Y * (X @ w + b)
        s = -Y * expit(-m) / N
        g = X.T @ s + kappa * w
        grad = np.concatenate([g + tau, -g + tau] + ([[s.sum()]] if fit_intercept else []))
        return np.logaddexp(0, -m).mean() + tau @ (u + v) + 0.5 * kappa @ (w * w), grad

    k = 2 * P + int(fit_intercept)
    bounds = [(0, None)] * (2 * P) + [(None, None)] * int(fit_intercept)
    res = minimize(fun, np.zeros(k), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 100000, "ftol": 1e-16, "gtol": 1e-13, "maxcor": 50})
    return float(res.fun)


PENALTIES = {
    "l1": (L1(0.02), np.full(P, 0.02), np.zeros(P)),
    "weighted-with-free": (WeightedL1(np.r_[0.0, 0.0, np.linspace(0.005, 0.05, P - 2)]),
                           np.r_[0.0, 0.0, np.linspace(0.005, 0.05, P - 2)], np.zeros(P)),
    "elastic-net": (ElasticNet(0.03, 0.4), np.full(P, 0.012), np.full(P, 0.018)),
}


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("name", PENALTIES)
def test_matches_lbfgs_and_certifies(name, fit_intercept):
    penalty, tau, kappa = PENALTIES[name]
    loss = Logistic(X, Y, fit_intercept=fit_intercept)
    res = prox_newton(loss, penalty, tol=1e-11)
    reference = _lbfgs(tau, kappa, fit_intercept)
    assert res.status is Status.OPTIMAL and res.backend == "prox_newton", res.message
    assert res.objective == pytest.approx(reference, rel=1e-9, abs=0)
    assert res.objective <= reference + 1e-12  # never worse than the reference
    if res.raw["criterion_name"] == "relative_duality_gap":
        assert res.bound <= reference + 1e-12 and res.gap <= 1e-11
    w, b = res.x, res.raw["intercept"]
    g, gb = loss.gradient(w, b)
    assert violations(w, g, tau, kappa).max() < 1e-6 and abs(gb) < 1e-6  # optimality conditions hold


def test_agrees_with_first_order_working_set_and_is_sparse():
    loss = Logistic(X, Y)
    newton = working_set_solve(loss, L1(0.03), tol=1e-10)
    first = working_set_solve(loss, L1(0.03), tol=1e-10, method="prox_gradient")
    assert newton.backend == "prox_newton" and first.backend == "fista"
    assert newton.objective == pytest.approx(first.objective, rel=1e-9)
    np.testing.assert_array_equal(newton.x == 0, np.abs(first.x) < 1e-7)  # the same support
    assert 0 < np.count_nonzero(newton.x) < P


def test_violations_are_zero_exactly_at_a_minimiser_of_one_coordinate():
    tau, kappa = np.array([1.0, 1.0, 1.0]), np.zeros(3)
    w = np.array([0.0, 2.0, -1.0])
    g = np.array([0.5, -1.0, 3.0])  # |0.5| < 1 at zero; -1 + 1 = 0; 3 - 1 = 2
    np.testing.assert_allclose(violations(w, g, tau, kappa), [0.0, 0.0, 2.0])


def test_budget_exhausted_reports_feasible_with_its_criterion():
    res = prox_newton(Logistic(X, Y), L1(0.001), tol=1e-14, max_outer=1)
    assert res.status is Status.FEASIBLE and res.raw["criterion"] > 1e-14
    assert np.isfinite(res.objective) and "Newton steps" in res.message


def test_dispatch_and_fallbacks():
    logistic = Logistic(X, Y)
    assert supports_prox_newton(logistic, L1(0.1))
    assert not supports_prox_newton(LeastSquares(X, Y), L1(0.1))  # no second derivative method: FISTA
    assert not supports_prox_newton(Logistic(sp.csr_matrix(X), Y), L1(0.1))  # sparse data: FISTA
    assert working_set_solve(Logistic(sp.csr_matrix(X), Y), L1(0.05), tol=1e-8).backend == "fista"
    assert working_set_solve(logistic, L1(0.05), tol=1e-8, accelerated=False).backend == "ista"
    with pytest.raises(ValueError, match="method must be"):
        working_set_solve(logistic, L1(0.05), method="newton")
    with pytest.raises(ValueError, match="proximal_gradient"):
        prox_newton(LeastSquares(X, Y), L1(0.1))
    with pytest.raises(ValueError, match="shape"):
        prox_newton(logistic, L1(0.1), w0=np.zeros(P + 1))
