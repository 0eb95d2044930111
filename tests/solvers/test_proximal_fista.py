"""FISTA / ISTA against independent references: cvxpy (Clarabel) optima, scikit-learn, the
Facets paper's linear rate (Prop. 8); statuses and certified criteria."""
import cvxpy as cp
import numpy as np
import pytest

from formulations.losses import LeastSquares, Logistic, SquaredHinge
from formulations.penalties import (EYE, L1, OWL, ElasticNet, Facets, StronglyConvexFacets, TotalVariation,
                                    WeightedL1)
from solvers.proximal.gradient import fista, ista, proximal_gradient
from solvers.result import Status

RNG = np.random.default_rng(7)
N, P = 80, 6
X = RNG.normal(size=(N, P)) + 0.3 * RNG.normal(size=(N, 1))  # correlated columns
W_TRUE = np.array([2.0, -1.5, 0.0, 0.0, 1.0, 0.5])
Y_REG = X @ W_TRUE + 0.7 + 0.5 * RNG.normal(size=N)
Y_CLS = np.where(X @ W_TRUE + RNG.normal(size=N) > 0, 1.0, -1.0)


def _cvx_reference(loss_name, omega):
    w, b = cp.Variable(P), cp.Variable()
    z = X @ w + b
    if loss_name == "ls":
        f = cp.sum_squares(Y_REG - z) / (2 * N)
    elif loss_name == "logistic":
        f = cp.sum(cp.logistic(-cp.multiply(Y_CLS, z))) / N
    else:
        f = cp.sum_squares(cp.pos(1 - cp.multiply(Y_CLS, z))) / N
    prob = cp.Problem(cp.Minimize(f + omega(w)))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    return prob.value, w.value


def _facets_expr(lam, mu, eps=0.0):
    def omega(w):
        a = cp.abs(w) / mu
        hinges = sum(cp.sum(cp.pos(a - i)) for i in range(8))
        return lam * ((1 - eps) * hinges + eps * (cp.sum(a) + 0.5 * cp.sum_squares(w) / mu ** 2))
    return omega


CASES = {
    "ls-l1": ("ls", L1(0.1), lambda w: 0.1 * cp.norm1(w)),
    "ls-enet": ("ls", ElasticNet(0.2, 0.3), lambda w: 0.2 * (0.3 * cp.norm1(w) + 0.35 * cp.sum_squares(w))),
    "ls-weighted": ("ls", WeightedL1(np.linspace(0, 0.3, P)),
                    lambda w: cp.sum(cp.multiply(np.linspace(0, 0.3, P), cp.abs(w)))),
    "ls-owl": ("ls", OWL(np.linspace(0.3, 0.05, P)),
               lambda w: sum(d * cp.sum_largest(cp.abs(w), i + 1) for i, d in
                             enumerate(np.append(-np.diff(np.linspace(0.3, 0.05, P)), 0.05)))),
    "ls-facets": ("ls", Facets(0.3, mu=0.5), _facets_expr(0.3, 0.5)),
    "ls-scf": ("ls", StronglyConvexFacets(0.3, 0.5, 0.1), _facets_expr(0.3, 0.5, 0.1)),
    "ls-tv": ("ls", TotalVariation(0.2), lambda w: 0.2 * cp.norm1(cp.diff(w))),
    "logistic-l1": ("logistic", L1(0.02), lambda w: 0.02 * cp.norm1(w)),
    "logistic-enet": ("logistic", ElasticNet(0.05, 0.5), lambda w: 0.05 * (0.5 * cp.norm1(w) + 0.25 * cp.sum_squares(w))),
    "logistic-eye": ("logistic", EYE(np.array([1, 1, 0, 0, 0.5, 0]), 0.02),
                     lambda w: 0.02 * (cp.norm1(cp.multiply(np.array([0, 0, 1, 1, 0.5, 1.0]), w))
                                       + cp.norm2(cp.hstack([cp.norm1(cp.multiply(np.array([0, 0, 1, 1, 0.5, 1.0]), w)),
                                                             cp.norm2(cp.multiply(np.array([1, 1, 0, 0, 0.5, 0]), w))])))),
    "logistic-facets": ("logistic", Facets(0.05, mu=2.0), _facets_expr(0.05, 2.0)),
    "sqhinge-l1": ("sqhinge", L1(0.05), lambda w: 0.05 * cp.norm1(w)),
}
LOSSES = {"ls": lambda: LeastSquares(X, Y_REG), "logistic": lambda: Logistic(X, Y_CLS),
          "sqhinge": lambda: SquaredHinge(X, Y_CLS)}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("accelerated", [True, False])
def test_matches_cvxpy_optimum(case, accelerated):
    loss_name, penalty, omega = CASES[case]
    ref_value, ref_w = _cvx_reference(loss_name, omega)
    res = proximal_gradient(LOSSES[loss_name](), penalty, accelerated=accelerated, tol=1e-10, max_iter=50000)
    assert res.status is Status.OPTIMAL, res.message
    assert res.objective == pytest.approx(ref_value, rel=1e-5)
    assert res.objective >= ref_value - 1e-6 * abs(ref_value)  # cannot beat the optimum
    if np.isfinite(res.bound):  # a certified lower bound
        assert res.bound <= ref_value + 1e-7 * abs(ref_value)
    assert res.iterations > 0 and res.raw["criterion"] <= 1e-10


def test_criterion_kinds_and_result_fields():
    r = fista(LeastSquares(X, Y_REG), L1(0.1), tol=1e-9)
    assert r.raw["criterion_name"] == "relative_duality_gap" and r.gap == r.raw["criterion"]
    assert r.bound <= r.objective and r.backend == "fista" and r.solve_time > 0
    r = fista(LeastSquares(X, Y_REG), Facets(0.3), tol=1e-9)
    assert r.raw["criterion_name"] == "subgradient_distance" and np.isnan(r.bound)
    b = r.raw["intercept"]
    assert b == pytest.approx(np.mean(Y_REG - X @ r.x))


def test_budget_exhausted_is_feasible_not_optimal():
    r = ista(Logistic(X, Y_CLS), L1(1e-4), tol=1e-14, max_iter=5)
    assert r.status is Status.FEASIBLE and r.iterations == 5 and r.raw["criterion"] > 1e-14


def test_sklearn_lasso_agrees():
    from sklearn.linear_model import Lasso
    sk = Lasso(alpha=0.05, tol=1e-12, max_iter=100000).fit(X, Y_REG)
    loss = LeastSquares(X, Y_REG)
    r = fista(loss, L1(0.05), tol=1e-11)
    ref = loss.value(sk.coef_) + 0.05 * np.abs(sk.coef_).sum()
    assert r.objective == pytest.approx(ref, rel=1e-7)
    assert r.raw["intercept"] == pytest.approx(sk.intercept_, abs=1e-5)


def test_restart_happens_and_warm_start_helps():
    loss, pen = LeastSquares(X, Y_REG, gram=True), L1(0.01)
    cold = fista(loss, pen, tol=1e-10)
    assert cold.raw["restarts"] >= 1
    warm = fista(loss, pen, tol=1e-10, w0=cold.x)
    assert warm.iterations <= cold.iterations // 2


def test_ista_with_scf_converges_linearly_prop8():
    """Prop. 8: ||w_t - w*|| <= (1 + tau lam eps / mu^2)^-t ||w_0 - w*|| with tau = 1/L."""
    Xw = RNG.normal(size=(20, 40))  # p > n: the loss alone is not strongly convex
    yw = Xw[:, :3].sum(axis=1) + RNG.normal(size=20)
    loss = LeastSquares(Xw, yw)
    pen = StronglyConvexFacets(2.0, 1.0, 0.5)
    w_star = ista(loss, pen, tol=1e-15, max_iter=100000, check_every=100).x
    rate = 1.0 / (1.0 + pen.strong_convexity / loss.lipschitz)
    d0 = np.linalg.norm(w_star)
    for k in (10, 40, 160):
        wk = ista(loss, pen, tol=1e-300, max_iter=k, check_every=k).x
        assert np.linalg.norm(wk - w_star) <= rate ** k * d0 * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("bad", [dict(tol=0.0), dict(max_iter=0), dict(check_every=0), dict(w0=np.zeros(P + 1))])
def test_bad_options_raise(bad):
    with pytest.raises(ValueError):
        fista(LeastSquares(X, Y_REG), L1(0.1), **bad)


def test_penalty_type_checked():
    with pytest.raises(TypeError, match="Penalty"):
        fista(LeastSquares(X, Y_REG), lambda w: 0.0)


WS_CASES = {
    "ls-l1": (lambda: LeastSquares(X, Y_REG), L1(0.1)),
    "ls-gram-enet": (lambda: LeastSquares(X, Y_REG, gram=True), ElasticNet(0.2, 0.3)),
    "logistic-weighted": (lambda: Logistic(X, Y_CLS), WeightedL1(np.linspace(0.0, 0.05, P))),
    "logistic-facets": (lambda: Logistic(X, Y_CLS), Facets(0.05, mu=2.0)),
    "sqhinge-scf": (lambda: SquaredHinge(X, Y_CLS), StronglyConvexFacets(0.05, 1.0, 0.1)),
}


@pytest.mark.parametrize("case", WS_CASES)
def test_working_set_matches_cvxpy(case):
    from solvers.proximal.gradient import working_set_solve
    make_loss, penalty = WS_CASES[case]
    loss_name = {"ls": "ls", "logistic": "logistic", "sqhinge": "sqhinge"}[case.split("-")[0]]
    omega = {"ls-l1": CASES["ls-l1"][2], "ls-gram-enet": CASES["ls-enet"][2],
             "logistic-weighted": lambda w: cp.sum(cp.multiply(np.linspace(0.0, 0.05, P), cp.abs(w))),
             "logistic-facets": CASES["logistic-facets"][2], "sqhinge-scf": _facets_expr(0.05, 1.0, 0.1)}[case]
    ref_value, _ = _cvx_reference(loss_name, omega)
    res = working_set_solve(make_loss(), penalty, tol=1e-10, min_size=2)
    assert res.status is Status.OPTIMAL, res.message
    assert res.objective == pytest.approx(ref_value, rel=1e-5)
    assert 2 <= res.raw["working_set_size"] <= P


def test_working_set_falls_back_for_non_separable_penalties():
    from solvers.proximal.gradient import supports_working_set, working_set_solve
    loss, pen = Logistic(X, Y_CLS), EYE(np.array([1, 1, 0, 0, 0.5, 0]), 0.02)
    assert not supports_working_set(loss, pen)
    res = working_set_solve(loss, pen, tol=1e-9)
    assert "working_set_size" not in res.raw and res.status is Status.OPTIMAL
