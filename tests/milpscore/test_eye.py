"""EYE: properties from the paper (Wang et al., KDD 2018) as tests, the EYE program against
independent references (scikit-learn's Lasso, a cvxpy model written from eq. 2), EYEClassifier,
and the credibility metrics of section 4.1 on closed-form cases."""
import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Lasso

from formulations.base import Model
from formulations.penalized import PenalizedProgram
from formulations.penalties import EYE, L1
from milpscore.credibility import (average_precision, credibility_report, gini, group_sym_kl, integrity,
                                   magnitude, sparsity, sym_kl)
from milpscore.estimators.eye import EYEClassifier, known_factor_mask
from solvers.backends.ecos import solve_ecos

LAM = 0.02


def _data(n=200, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    theta = np.r_[1.5, -1.0, 0.5, np.zeros(d - 3)]
    y_real = X @ theta + 0.5 * rng.normal(size=n)
    y = np.where(X @ theta + rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, y_real


def _fit(penalty, X, y, loss="logistic"):
    inst = PenalizedProgram(penalty, loss=loss).instance(X, y)
    result = solve_ecos(inst.relaxed())
    assert result.status.value == "optimal"
    model = inst.decode(result.x)
    return inst, result, model.coef, model.intercept


# ------------------------------------------------------------------ paper properties
def test_r_zero_is_the_lasso_sklearn_reference():
    """r = 0: eye = 2 ||theta||_1, so EYE least squares is sklearn's Lasso with alpha = 2 lam."""
    X, _, y = _data()
    lam = 0.06
    spec, result, w, b = _fit(EYE(np.zeros(X.shape[1]), lam), X, y, loss="least_squares")
    lasso = Lasso(alpha=2 * lam, tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(w, lasso.coef_, atol=1e-4)
    assert b == pytest.approx(lasso.intercept_, abs=1e-4)
    assert result.objective == pytest.approx(spec.objective(Model(lasso.coef_, lasso.intercept_)), rel=1e-7)
    assert np.sum(np.abs(lasso.coef_) < 1e-12) >= 2  # the reference is genuinely sparse here


def test_r_zero_is_the_lasso_logistic():
    X, y, _ = _data()
    _, r_eye, w_eye, b_eye = _fit(EYE(np.zeros(X.shape[1]), LAM), X, y)
    _, r_l1, w_l1, b_l1 = _fit(L1(2 * LAM), X, y)
    assert r_eye.objective == pytest.approx(r_l1.objective, rel=1e-7)
    np.testing.assert_allclose(w_eye, w_l1, atol=1e-4)


@pytest.mark.parametrize("loss", ["logistic", "least_squares"])
def test_perfectly_correlated_unknown_feature_gets_zero_weight(loss):
    """Appendix 7.5: x_i = x_j, r_i = 1, r_j = 0 => theta_j = 0 (and theta_i carries the signal)."""
    X, y, y_real = _data()
    X2 = np.c_[X[:, 0], X]  # column 0 (known) duplicates column 1 (unknown)
    r = np.zeros(X2.shape[1])
    r[0] = 1.0
    _, _, w, _ = _fit(EYE(r, LAM), X2, y if loss == "logistic" else y_real, loss)
    assert abs(w[1]) < 1e-6 and abs(w[0]) > 0.5
    # the Lasso (r = 0) has no reason to prefer the known column: EYE is what makes the choice
    _, _, w_known_second, _ = _fit(EYE(np.r_[0.0, 1.0, np.zeros(X.shape[1] - 1)], LAM), X2,
                                   y if loss == "logistic" else y_real, loss)
    assert abs(w_known_second[0]) < 1e-6 and abs(w_known_second[1]) > 0.5


@pytest.mark.parametrize("loss", ["logistic", "least_squares"])
def test_two_known_equal_columns_get_equal_weights(loss):
    """Section 3.4: perfectly correlated known factors get the same weight."""
    X, y, y_real = _data(seed=1)
    X2 = np.c_[X[:, 0], X]
    r = np.zeros(X2.shape[1])
    r[:2] = 1.0
    _, _, w, _ = _fit(EYE(r, LAM), X2, y if loss == "logistic" else y_real, loss)
    assert w[0] == pytest.approx(w[1], abs=1e-6) and abs(w[0]) > 0.2


def _cvxpy_eye_logistic(X, y, r, lam):
    """The EYE logistic problem written directly from eq. 2 with cvxpy atoms (DCP form)."""
    theta, b = cp.Variable(X.shape[1]), cp.Variable()
    l1 = cp.norm1(cp.multiply(1 - r, theta))
    eye = l1 + cp.norm2(cp.hstack([l1, cp.norm2(cp.multiply(r, theta))]))
    loss = cp.sum(cp.logistic(cp.multiply(-y, X @ theta + b))) / y.size
    problem = cp.Problem(cp.Minimize(loss + lam * eye))
    problem.solve(solver="CLARABEL")
    return problem.value, theta.value, b.value


@pytest.mark.parametrize("r", [np.array([1, 1, 0, 0, 0, 0.0]), np.array([0.3, 1, 0.5, 0, 0.8, 0.0])])
def test_ecos_matches_cvxpy_oracle(r):
    X, y, _ = _data(seed=2)
    spec, result, w, b = _fit(EYE(r, LAM), X, y)
    value, theta, intercept = _cvxpy_eye_logistic(X, y, r.copy(), LAM)
    assert result.objective == pytest.approx(value, rel=1e-5)
    assert spec.objective(Model(w, b)) == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(w, theta, atol=5e-4)


def test_lift_reaches_the_same_objective():
    X, y, _ = _data(seed=3)
    inst = PenalizedProgram(EYE(np.array([1, 0, 1, 0, 0, 0.0]), LAM)).instance(X, y)
    program = inst.relaxed()
    model = Model(np.array([0.5, -0.2, 0.0, 1.0, 0.0, 0.3]), -0.1)
    x = inst.lift(model)
    assert program.is_feasible(x, tol=1e-9)
    value = np.mean(np.logaddexp(0, -y * (X @ model.coef + model.intercept))) + EYE(
        np.array([1, 0, 1, 0, 0, 0.0]), LAM).value(model.coef)  # eq. 2 by hand
    assert program.objective(x) == pytest.approx(value, rel=1e-12)
    assert inst.objective(model) == pytest.approx(value, rel=1e-12)


# ------------------------------------------------------------------------ estimator
@pytest.fixture(scope="module")
def breast(shared_data):
    frame = pd.read_csv(shared_data / "breastcancer_data.csv")
    return frame.iloc[:, 1:], frame.iloc[:, 0]


def test_classifier_on_breast_cancer(breast):
    X, y = breast
    known = ["ClumpThickness", "BareNuclei"]
    model = EYEClassifier(known=known, lam=0.05).fit(X, y)
    np.testing.assert_array_equal(model.known_mask_, np.isin(X.columns, known).astype(float))
    assert model.status_ == "optimal" and model.score(X, y) > 0.9
    assert set(model.scorecard_.table["variable"]) <= set(X.columns)
    assert model.coef_[list(X.columns).index("ClumpThickness")] > 0
    # same program through the generic builder and an independent cvxpy model
    Xa, ya = X.to_numpy(float), np.where(y.to_numpy() == 1, 1.0, -1.0)
    value, _, _ = _cvxpy_eye_logistic(Xa, ya, model.known_mask_.copy(), 0.05)
    assert model.fit_info_["objective"] == pytest.approx(value, rel=1e-5)
    assert 0 <= model.fit_info_["ap"] <= 1
    same = EYEClassifier(known=np.isin(X.columns, known), lam=0.05, solver="clarabel").fit(X, y)
    np.testing.assert_allclose(same.coef_, model.coef_, atol=1e-3)


def test_classifier_input_errors():
    X, y, _ = _data(n=40)
    with pytest.raises(ValueError, match="not feature names"):
        EYEClassifier(known=["age"]).fit(X, y)
    with pytest.raises(ValueError, match="one per feature"):
        EYEClassifier(known=[True, False]).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        EYEClassifier(solver="scs").fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        EYEClassifier(lam=-1.0).fit(X, y)
    assert known_factor_mask(None, ["a", "b"]).tolist() == [0.0, 0.0]
    assert known_factor_mask("b", ["a", "b"]).tolist() == [0.0, 1.0]


# ------------------------------------------------------------------------ credibility
def test_average_precision_closed_form():
    # ranking by |theta|: known, unknown, known, unknown -> AP = (1 + 2/3) / 2
    assert average_precision([3.0, -2.0, 1.0, 0.5], [1, 0, 1, 0]) == pytest.approx(5 / 6)
    assert average_precision([0.0, 1.0, 2.0], [0, 1, 1]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="binary"):
        average_precision([1.0, 2.0], [0.5, 1.0])


def test_sym_kl_closed_form():
    assert sym_kl([2.0, 2.0], [1.0, 1.0]) == pytest.approx(0.0, abs=1e-12)
    p, q = np.array([0.25, 0.75]), np.array([0.5, 0.5])
    expected = 0.5 * (np.sum(p * np.log(p / q)) + np.sum(q * np.log(q / p)))
    assert sym_kl(p, q, eps=1e-12) == pytest.approx(expected, rel=1e-9)
    assert sym_kl([1.0, 0.0], [0.0, 1.0]) > 10  # disjoint supports: large but finite


def test_group_sym_kl_known_and_unknown_groups():
    coef = np.array([1.0, 1.0, 0.0, 0.0, 5.0, 0.0, 0.0])
    r = np.array([1, 1, 0, 0, 0, 0, 0.0])
    groups = [[0, 1, 2, 3], [4, 5, 6]]
    kl = group_sym_kl(coef, r, groups)
    assert kl[0] == pytest.approx(0.0, abs=1e-9)  # weights match r'
    assert kl[1] == pytest.approx(0.0, abs=1e-4)  # unknown group, all weight on one feature
    dense = group_sym_kl(np.r_[coef[:4], 1.0, 1.0, 1.0], r, np.array([0, 0, 0, 0, 1, 1, 1]))
    assert dense[1] > 1.0 and dense[0] == pytest.approx(kl[0])


def test_sparsity_integrity_magnitude():
    assert sparsity([1.0, 0.005, 0.0, 0.02]) == pytest.approx(0.5)
    assert integrity([1.0, 2.0000001, 0.5]) == pytest.approx(2 / 3)
    assert integrity([0.5, 1.0, 0.75], unit=0.25) == pytest.approx(1.0)
    assert gini([2.0, 2.0, 2.0]) == pytest.approx(0.0) and gini([0, 0, 0, 5.0]) == pytest.approx(0.75)
    assert gini([1.0, 2.0, 3.0, 4.0]) == pytest.approx(0.25)  # 1 - 2 (1*3.5 + 2*2.5 + 3*1.5 + 4*.5) / 40
    assert magnitude([1.0, -3.0, 2.0]) == 3.0 and magnitude([1.0, -3.0], ord=1) == 4.0
    report = credibility_report([1.0, 0.0, -2.0], r=[1, 0, 0], groups=[[0, 1], [2]])
    assert set(report) == {"sparsity", "integrity", "magnitude", "n_nonzero", "ap", "sum_sym_kl"}


# ------------------------------------------------------------- proximal path (FISTA)
@pytest.mark.parametrize("loss", ["logistic", "least_squares"])
def test_ecos_prox_and_cvxpy_agree(loss):
    """EYE + logistic / least squares: ECOS, FISTA with the EYE prox, and the cvxpy oracle agree
    to 1e-5 relative objective (three independent algorithms and encodings)."""
    from formulations.losses import LeastSquares, Logistic
    from solvers.proximal.gradient import fista

    X, y, y_real = _data(seed=4)
    target = y if loss == "logistic" else y_real
    r = np.array([1.0, 0.5, 0, 1, 0, 0])
    spec, result, w, b = _fit(EYE(r, LAM), X, target, loss)
    smooth = Logistic(X, target) if loss == "logistic" else LeastSquares(X, target)
    prox = fista(smooth, EYE(r, LAM), tol=1e-10, max_iter=100_000)
    prox_b = prox.raw["intercept"] if loss == "logistic" else float(smooth.intercept(prox.x))
    prox_value = spec.objective(Model(prox.x, prox_b))
    assert result.objective == pytest.approx(prox_value, rel=1e-5)
    if loss == "logistic":
        assert _cvxpy_eye_logistic(X, target, r, LAM)[0] == pytest.approx(prox_value, rel=1e-5)
    np.testing.assert_allclose(w, prox.x, atol=1e-3)


def test_classifier_prox_solver_matches_ecos():
    X, y, _ = _data(seed=5)
    ecos_model = EYEClassifier(known=[0, 0, 1, 1, 0, 0], lam=LAM).fit(X, y)
    prox_model = EYEClassifier(known=[0, 0, 1, 1, 0, 0], lam=LAM, solver="prox").fit(X, y)
    assert prox_model.fit_info_["objective"] == pytest.approx(ecos_model.fit_info_["objective"], rel=1e-5)
    with pytest.raises(ValueError, match="sample weights"):
        EYEClassifier(solver="prox").fit(X, y, sample_weight=np.linspace(1, 2, y.size))
