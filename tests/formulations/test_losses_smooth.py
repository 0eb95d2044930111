"""Smooth losses: values against direct formulas, gradients against finite differences,
Lipschitz constants against dense eigenvalues, intercept handling, weak duality."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import approx_fprime, minimize_scalar

from formulations.losses import LeastSquares, Logistic, SmoothedHinge, SquaredHinge
from formulations.penalties import L1, ElasticNet
from solvers.proximal.gradient import duality_gap

RNG = np.random.default_rng(0)
N, P = 60, 5
X = RNG.normal(size=(N, P))
Y_REG = X @ RNG.normal(size=P) + 0.5 + RNG.normal(size=N)
Y_CLS = np.where(X[:, 0] + 0.5 * RNG.normal(size=N) > 0, 1.0, -1.0)

MARGIN = {"logistic": (Logistic, lambda m: np.logaddexp(0, -m), 0.25),
          "squared_hinge": (SquaredHinge, lambda m: np.maximum(0, 1 - m) ** 2, 2.0),
          "smoothed_hinge": (lambda X, y, fit_intercept=True: SmoothedHinge(X, y, fit_intercept, smoothing=0.5),
                             lambda m: np.where(m >= 1, 0, np.where(m >= 0.5, (1 - m) ** 2, 1 - m - 0.25)), 2.0)}


@pytest.mark.parametrize("name", MARGIN)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_margin_loss_value_gradient_lipschitz(name, fit_intercept):
    cls, phi, curvature = MARGIN[name]
    loss = cls(X, Y_CLS, fit_intercept=fit_intercept)
    w, b = RNG.normal(size=P), 0.3
    bb = b if fit_intercept else 0.0
    assert loss.value(w, b) == pytest.approx(np.mean(phi(Y_CLS * (X @ w + bb))))
    joint = lambda v: loss.value(v[:P], v[P])  # noqa: E731
    num = approx_fprime(np.append(w, b), joint, 1e-7)
    gw, gb = loss.gradient(w, b)
    assert np.allclose(gw, num[:P], atol=1e-5)
    assert gb == pytest.approx(num[P] if fit_intercept else 0.0, abs=1e-5)
    Z = np.hstack([X, np.ones((N, 1))]) if fit_intercept else X
    assert loss.lipschitz == pytest.approx(curvature * np.linalg.eigvalsh(Z.T @ Z)[-1] / N, rel=1e-8)
    for _ in range(20):  # the gradient really is L-Lipschitz
        a, c = RNG.normal(scale=2, size=(2, P + 1))
        ga, gc = np.append(*loss.gradient(a[:P], a[P])), np.append(*loss.gradient(c[:P], c[P]))
        da = a - c if fit_intercept else np.append(a[:P] - c[:P], 0)
        assert np.linalg.norm(ga - gc) <= loss.lipschitz * np.linalg.norm(da) + 1e-12


@pytest.mark.parametrize("name", MARGIN)
def test_intercept_at_zero_minimises_the_null_model(name):
    loss = MARGIN[name][0](X, Y_CLS)
    ref = minimize_scalar(lambda b: loss.value(np.zeros(P), b), bounds=(-3, 3), method="bounded",
                          options={"xatol": 1e-10}).x
    assert loss.intercept_at_zero() == pytest.approx(ref, abs=1e-6)


def test_labels_in_zero_one_are_accepted_and_others_rejected():
    a = Logistic(X, (Y_CLS > 0).astype(int))
    b = Logistic(X, Y_CLS)
    assert a.value(np.ones(P)) == b.value(np.ones(P))
    with pytest.raises(ValueError, match="two classes"):
        Logistic(X, np.arange(N) % 3)
    with pytest.raises(ValueError, match="rows"):
        Logistic(X, Y_CLS[:-1])
    with pytest.raises(ValueError, match="2-D"):
        LeastSquares(X[:, 0], Y_REG)


@pytest.mark.parametrize("gram", [False, True])
def test_least_squares_profiled_intercept(gram):
    loss = LeastSquares(X, Y_REG, gram=gram)
    w = RNG.normal(size=P)
    b = loss.intercept(w)
    assert b == pytest.approx(np.mean(Y_REG - X @ w))
    assert loss.value(w) == pytest.approx(np.sum((Y_REG - X @ w - b) ** 2) / (2 * N))
    num = approx_fprime(w, loss.value, 1e-7)
    assert np.allclose(loss.gradient(w)[0], num, atol=1e-5)
    Xc = X - X.mean(axis=0)
    assert loss.lipschitz == pytest.approx(np.linalg.eigvalsh(Xc.T @ Xc)[-1] / N, rel=1e-8)


def test_sparse_design_matches_dense():
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    w = RNG.normal(size=P)
    for cls, y in ((LeastSquares, Y_REG), (Logistic, Y_CLS)):
        dense, sparse = cls(Xs.toarray(), y), cls(Xs, y)
        assert sparse.value(w, 0.1) == pytest.approx(dense.value(w, 0.1))
        assert np.allclose(sparse.gradient(w, 0.1)[0], dense.gradient(w, 0.1)[0])
        assert sparse.lipschitz == pytest.approx(dense.lipschitz)


@pytest.mark.parametrize("loss", [LeastSquares(X, Y_REG), LeastSquares(X, Y_REG, gram=True),
                                  LeastSquares(X, Y_REG, fit_intercept=False),
                                  Logistic(X, Y_CLS, fit_intercept=False)])
@pytest.mark.parametrize("penalty", [L1(0.05), ElasticNet(0.05, 0.5)])
def test_weak_duality_at_random_points(loss, penalty):
    for _ in range(10):
        w = RNG.normal(size=P)
        state = loss.state(w, 0.0)
        value = loss.value_state(w, 0.0, state)
        dual, gap = duality_gap(loss, penalty, w, 0.0, state, value, loss.gradient_state(state)[0],
                                value + penalty.value(w))
        assert np.isfinite(dual) and gap >= -1e-12


def test_logistic_with_intercept_dual_is_certified_at_the_optimum():
    """Centring theta can leave the conjugate's domain far from the optimum, never near it."""
    from solvers.proximal.gradient import fista
    loss = Logistic(X, Y_CLS)
    res = fista(loss, L1(0.02), tol=1e-9)
    assert res.raw["criterion_name"] == "relative_duality_gap"
    assert res.bound <= res.objective and res.gap <= 1e-9


@pytest.mark.parametrize("make", [lambda: LeastSquares(X, Y_REG), lambda: LeastSquares(X, Y_REG, gram=True),
                                  lambda: Logistic(X, Y_CLS), lambda: SmoothedHinge(X, Y_CLS, smoothing=0.3)])
def test_restrict_is_the_loss_on_a_column_subset(make):
    loss = make()
    cols = np.array([0, 2, 3])
    sub = loss.restrict(cols)
    w = np.zeros(P)
    w[cols] = RNG.normal(size=3)
    assert sub.p == 3
    assert sub.value(w[cols], 0.2) == pytest.approx(loss.value(w, 0.2))
    assert np.allclose(sub.gradient(w[cols], 0.2)[0], loss.gradient(w, 0.2)[0][cols])
    Z = X[:, cols] - (X[:, cols].mean(axis=0) if isinstance(loss, LeastSquares) else 0.0)
    if not isinstance(loss, LeastSquares):
        Z = np.hstack([Z, np.ones((N, 1))])
    curvature = loss.lipschitz / (np.linalg.eigvalsh(
        (X - X.mean(0) if isinstance(loss, LeastSquares) else np.hstack([X, np.ones((N, 1))])).T
        @ (X - X.mean(0) if isinstance(loss, LeastSquares) else np.hstack([X, np.ones((N, 1))])))[-1] / N)
    true_sub = curvature * np.linalg.eigvalsh(Z.T @ Z)[-1] / N
    assert true_sub * (1 - 1e-9) <= sub.lipschitz <= loss.lipschitz * (1 + 1e-9)
