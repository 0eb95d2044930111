"""Regularisation paths against scikit-learn (lasso_path, enet_path, liblinear L1-logistic),
lambda_max, the Facets (alpha, beta) grid, and the HiGHS warm start from a path point."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, enet_path, lasso_path

from formulations.encodings import add_abs, add_hinge
from formulations.losses import LeastSquares, Logistic
from formulations.penalties import L1, ElasticNet, Facets, StronglyConvexFacets
from formulations.program import ProgramBuilder
from solvers.backends.highs import solve_highs
from solvers.proximal.path import facets_path, lambda_grid, lambda_max, regularisation_path, warm_start_from_path
from solvers.result import Status

RNG = np.random.default_rng(11)
N, P = 150, 12
X = RNG.normal(size=(N, P)) + 0.5 * RNG.normal(size=(N, 1))
W = np.zeros(P)
W[:4] = [1.5, -2.0, 1.0, 0.5]
Y_REG = X @ W + 1.0 + RNG.normal(size=N)
Y_CLS = np.where(X @ W + RNG.normal(size=N) > 0, 1.0, -1.0)


def test_lasso_path_matches_sklearn_at_every_point():
    loss = LeastSquares(X, Y_REG)
    path = regularisation_path(loss, L1, n_lambdas=20, ratio=1e-3, tol=1e-9)
    lambdas = np.array([pt.lam for pt in path])
    Xc, yc = X - X.mean(axis=0), Y_REG - Y_REG.mean()
    _, coefs, _ = lasso_path(Xc, yc, alphas=lambdas, tol=1e-12, max_iter=100000)
    for k, pt in enumerate(path):
        ref = loss.value(coefs[:, k]) + pt.lam * np.abs(coefs[:, k]).sum()
        assert pt.objective == pytest.approx(ref, rel=1e-5)
        assert pt.objective <= ref * (1 + 1e-6)
        assert pt.result.status is Status.OPTIMAL
    assert path[0].sparsity == 1.0 and path[-1].sparsity < 0.5
    assert np.all(np.diff(lambdas) < 0)


def test_enet_path_matches_sklearn():
    loss = LeastSquares(X, Y_REG, gram=True)
    family = lambda lam: ElasticNet(lam, 0.4)  # noqa: E731
    path = regularisation_path(loss, family, n_lambdas=12, tol=1e-10)
    Xc, yc = X - X.mean(axis=0), Y_REG - Y_REG.mean()
    lambdas = np.array([pt.lam for pt in path])
    _, coefs, _ = enet_path(Xc, yc, l1_ratio=0.4, alphas=lambdas, tol=1e-13, max_iter=100000)
    for k, pt in enumerate(path):
        ref = loss.value(coefs[:, k]) + family(pt.lam).value(coefs[:, k])
        assert pt.objective == pytest.approx(ref, rel=1e-5)


def test_logistic_l1_path_matches_liblinear():
    loss = Logistic(X, Y_CLS, fit_intercept=False)
    path = regularisation_path(loss, L1, n_lambdas=8, ratio=1e-2, tol=1e-10)
    for pt in path[1:]:
        sk = LogisticRegression(C=1.0 / (pt.lam * N), l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                tol=1e-12, max_iter=100000).fit(X, Y_CLS)
        w = sk.coef_.ravel()
        ref = loss.value(w) + pt.lam * np.abs(w).sum()
        assert pt.objective == pytest.approx(ref, rel=1e-5)
        assert pt.objective <= ref * (1 + 1e-7)


@pytest.mark.parametrize("loss", [LeastSquares(X, Y_REG), Logistic(X, Y_CLS)])
@pytest.mark.parametrize("family", [L1, lambda lam: Facets(lam, mu=0.5)])
def test_lambda_max_is_the_zero_threshold(loss, family):
    lam = lambda_max(loss, family)
    from solvers.proximal.gradient import fista
    assert np.all(fista(loss, family(lam * 1.001), tol=1e-10).x == 0)
    assert np.any(fista(loss, family(lam * 0.95), tol=1e-10).x != 0)


def test_lambda_grid_validation():
    g = lambda_grid(2.0, 5, 1e-2)
    assert g[0] == 2.0 and g[-1] == pytest.approx(0.02) and np.all(np.diff(g) < 0)
    with pytest.raises(ValueError, match="lam_max"):
        lambda_grid(0.0)


def test_facets_path_grid_records():
    loss = Logistic(X, Y_CLS)
    alphas, betas = [0.5, 0.05, 0.01], [0.02, 0.2]
    pts = facets_path(loss, alphas, betas, eps=0.01, tol=1e-7)
    assert len(pts) == 6
    for pt, (beta, alpha) in zip(pts, [(b, a) for b in betas for a in sorted(alphas, reverse=True)]):
        assert pt.gamma == pytest.approx(alpha / beta) and pt.lam == pytest.approx(alpha ** 2 / beta)
        w = pt.coef / pt.gamma
        assert pt.integrity == pytest.approx(np.mean(np.abs(w - np.round(w)) <= 1e-6))
        assert pt.magnitude == pytest.approx(np.abs(w).max())
        assert pt.result.status is Status.OPTIMAL
        scf = StronglyConvexFacets(pt.lam, pt.gamma, 0.01)
        assert pt.objective == pytest.approx(loss.value(pt.coef, pt.intercept) + scf.value(pt.coef))
    assert pts[0].sparsity == 1.0  # strongest penalty: null model
    assert max(pt.integrity for pt in pts) > 0.5  # Facets puts many coefficients on the grid


def _hinge_program(Xs, ys, c0, bound=3):
    """A SLIM-like MILP: integer w in [-bound, bound], integer b, hinge/n + c0 ||w||_1."""
    n, p = Xs.shape
    b = ProgramBuilder()
    b.add_variables("w", p, lb=-bound, ub=bound, integer=True)
    b.add_variables("b", 1, lb=-10, ub=10, integer=True)
    add_hinge(b, Xs, ys, weights="w", intercept="b", scale=1.0 / n)
    add_abs(b, "w", name="w_abs", cost=c0)
    prog = b.build()

    def lift(w, intercept):
        x = np.zeros(prog.n_variables)
        x[prog.blocks["w"]] = w
        x[prog.blocks["b"]] = intercept
        x[prog.blocks["hinge"]] = np.maximum(0.0, 1.0 - ys * (Xs @ w + intercept))
        x[prog.blocks["w_abs"]] = np.abs(w)
        return x

    return prog, lift


def test_warm_start_from_path_lifts_a_feasible_highs_start():
    Xs, ys = np.round(X[:60, :4]), Y_CLS[:60]
    c0 = 0.01
    prog, lift = _hinge_program(Xs, ys, c0)
    loss = Logistic(Xs, ys)
    point = facets_path(loss, [0.05], [0.05], tol=1e-7)[0]
    x = warm_start_from_path(point, lift)
    assert prog.is_feasible(x)
    w_int = np.round(point.coef / point.gamma)
    b_int = np.round(point.intercept / point.gamma)
    expected = np.mean(np.maximum(0, 1 - ys * (Xs @ w_int + b_int))) + c0 * np.abs(w_int).sum()
    assert prog.objective(x) == pytest.approx(expected)
    res = solve_highs(prog, warm_start=x, time_limit=20)
    assert res.status is Status.OPTIMAL
    assert res.objective <= prog.objective(x) + 1e-9
    # independent check of the MILP optimum on this tiny box: enumerate all integer models
    grid = np.array(np.meshgrid(*[np.arange(-3, 4)] * 4)).reshape(4, -1).T
    scores = Xs @ grid.T
    best = min(np.mean(np.maximum(0, 1 - ys[:, None] * (scores + bb)), axis=0).__add__(c0 * np.abs(grid).sum(1)).min()
               for bb in range(-10, 11))
    assert res.objective == pytest.approx(best, abs=1e-9)

    class Builder:  # a builder-like object exposing lift(coef, intercept)
        pass
    builder = Builder()
    builder.lift = lift
    assert np.array_equal(warm_start_from_path(point, builder), x)


def test_warm_start_rejects_bad_gamma():
    pt = regularisation_path(LeastSquares(X, Y_REG), L1, lambdas=[1.0])[0]
    with pytest.raises(ValueError, match="gamma"):
        warm_start_from_path(pt, lambda w, b: np.append(w, b), gamma=0.0)
    with pytest.raises(TypeError, match="lift"):
        warm_start_from_path(pt, object())
