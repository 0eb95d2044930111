"""ConvexRoundingClassifier, LocalSearchClassifier and gamma_study on real and enumerable data."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import check_estimator

from formulations.rounding import cumulative_hinge_loss
from milpscore.estimators.rounding import ConvexRoundingClassifier, LocalSearchClassifier
from milpscore.gamma_study import gamma_study
from milpscore.scorecard import ScoreCard


@pytest.fixture(scope="module")
def breast(shared_data):
    frame = pd.read_csv(shared_data / "breastcancer_data.csv").iloc[:200]
    return frame.iloc[:, 1:], frame.iloc[:, 0]


def _pm1(y):
    return np.where(np.asarray(y) == 1, 1.0, -1.0)


def _check_model(model, X, y, *, gamma, ternary=True):
    values = {-1.0, 0.0, 1.0} if ternary else {0.0, 1.0}
    assert set(np.unique(model.coef_)) <= values
    loss = cumulative_hinge_loss(model.coef_, X.to_numpy(float), _pm1(y), gamma=gamma, intercept=model.intercept_)
    assert model.result_.objective == pytest.approx(loss)
    card = model.scorecard_
    assert isinstance(card, ScoreCard)
    assert set(card.table["points"]) <= values - {0.0}
    total = card.total(X)
    np.testing.assert_array_equal(np.where(total > card.threshold, model.classes_[1], model.classes_[0]),
                                  model.predict(X))


@pytest.mark.parametrize("rounding", ["randomized", "deterministic"])
def test_convex_rounding_on_real_data(breast, rounding):
    X, y = breast
    model = ConvexRoundingClassifier(gamma=3.0, rounding=rounding, n_draws=200, random_state=0).fit(X, y)
    _check_model(model, X, y, gamma=3.0)
    assert model.relaxed_result_.status.value == "optimal"
    assert model.result_.bound == pytest.approx(model.relaxed_result_.objective)
    assert model.result_.bound <= model.result_.objective + 1e-9
    assert model.status_ == "feasible" and model.intercept_ == 0.0
    info = model.fit_info_
    assert info["n_weights"] == 18 and 0 <= info["n_binary_weights"] <= 18
    np.testing.assert_allclose(np.abs(info["relaxed_coef"]) <= 1 + 1e-9, True)
    if rounding == "randomized":
        assert info["rounding"]["best_loss"] == pytest.approx(model.result_.objective)
        assert info["rounding"]["mean_loss"] <= info["rounding"]["bound_prop1"]
    assert model.score(X, y) > 0.8


def test_exact_ilp_beats_rounding_and_learned_threshold(breast):
    X, y = breast
    exact = ConvexRoundingClassifier(gamma=3.0, rounding="exact", time_limit=20).fit(X, y)
    rounded = ConvexRoundingClassifier(gamma=3.0, n_draws=50, random_state=1).fit(X, y)
    _check_model(exact, X, y, gamma=3.0)
    assert exact.status_ == "optimal"
    assert exact.relaxed_result_.objective <= exact.result_.objective + 1e-7
    assert exact.result_.objective <= rounded.result_.objective + 1e-7
    learned = ConvexRoundingClassifier(gamma=3.0, threshold=None, random_state=0).fit(X, y)
    _check_model(learned, X, y, gamma=3.0)
    assert learned.relaxed_result_.objective <= exact.relaxed_result_.objective + 1e-7  # r = 0 is one choice


def test_exact_estimator_matches_enumeration():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.poisson(1.0, (40, 5)).astype(float), columns=list("abcde"))
    y = np.where(X.to_numpy() @ [1, -1, 1, 0, 0] + rng.normal(0, 0.7, 40) > 0.5, "yes", "no")
    model = ConvexRoundingClassifier(gamma=2.0, threshold=1.0, rounding="exact").fit(X, y)
    yy = np.where(y == "yes", 1.0, -1.0)
    best = min(cumulative_hinge_loss(np.array(c, float), X.to_numpy(), yy, gamma=2.0, intercept=-1.0)
               for c in itertools.product((-1, 0, 1), repeat=5))
    assert model.result_.objective == pytest.approx(best, abs=1e-7)
    assert list(model.classes_) == ["no", "yes"]
    sparse = ConvexRoundingClassifier(gamma=2.0, threshold=1.0, sparsity=1, random_state=0).fit(X, y)
    assert np.count_nonzero(sparse.coef_) <= 1


def test_local_search_classifier(breast):
    X, y = breast
    ternary = LocalSearchClassifier(gamma=3.0, n_restarts=3, start_nonzeros=3, random_state=0).fit(X, y)
    _check_model(ternary, X, y, gamma=3.0)
    zero = cumulative_hinge_loss(np.zeros(9), X.to_numpy(float), _pm1(y), gamma=3.0)
    assert ternary.result_.objective <= zero
    assert ternary.fit_info_["restart_losses"].shape == (4,)
    again = LocalSearchClassifier(gamma=3.0, n_restarts=3, start_nonzeros=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(ternary.coef_, again.coef_)
    binary = LocalSearchClassifier(gamma=3.0, weights="binary", threshold=20.0, sparsity=4).fit(X, y)
    _check_model(binary, X, y, gamma=3.0, ternary=False)
    assert binary.intercept_ == -20.0 and np.count_nonzero(binary.coef_) <= 4
    assert binary.score(X, y) > 0.8


def test_grid_search_clones_the_estimators(breast):
    X, y = breast
    search = GridSearchCV(LocalSearchClassifier(n_restarts=0), {"gamma": [1.0, 3.0]}, cv=3).fit(X, y)
    assert search.best_params_["gamma"] in (1.0, 3.0)


@pytest.mark.parametrize("model, match", [
    (ConvexRoundingClassifier(gamma=0.0), "gamma"), (ConvexRoundingClassifier(weights="real"), "weights"),
    (ConvexRoundingClassifier(rounding="nearest"), "rounding"), (ConvexRoundingClassifier(lp_solver="cg"), "lp_solver"),
    (ConvexRoundingClassifier(sparsity=-2), "sparsity"),
    (LocalSearchClassifier(threshold=None), "fixed threshold"), (LocalSearchClassifier(n_restarts=-1), "n_restarts"),
])
def test_bad_parameters_fail_at_fit_with_a_clear_message(breast, model, match):
    X, y = breast
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)


# Failures of sklearn's check_estimator that come from the shared base class / milpscore.data
# (input validation messages, sparse input, NotFittedError, multiclass message), not from these
# estimators; any other failing check is a defect of this module.
BASE_CLASS_FAILURES = {
    "check_classifier_not_supporting_multiclass", "check_classifiers_regression_target", "check_complex_data",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_estimator_sparse_tag",
    "check_estimators_empty_data_messages", "check_estimators_unfitted", "check_fit2d_predict1d",
    "check_n_features_in_after_fitting", "check_requires_y_none", "check_supervised_y_2d",
    # integer weights vs repeated rows give the same LP value, but HiGHS may return another optimal
    # vertex of the (degenerate) LP and so round to another model of equal LP value
    "check_sample_weight_equivalence_on_dense_data",
}


@pytest.mark.parametrize("model", [ConvexRoundingClassifier(random_state=0, time_limit=10),
                                   LocalSearchClassifier(random_state=0)])
def test_sklearn_checks(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(model, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= BASE_CLASS_FAILURES, failed - BASE_CLASS_FAILURES


# ---------------------------------------------------------------------------------- gamma study
def test_gamma_study_shows_the_papers_findings(breast):
    X, y = breast
    gammas = (0.1, 1.0, 10.0)
    table = gamma_study(X, y, gammas, n_draws=100, ilp_time_limit=5.0, n_restarts=2)
    assert list(table["gamma"]) == list(gammas) and len(table) == 3
    for column in ("lp_objective", "frac_binary", "error_relaxed", "error_rounded_mean", "ilp_objective",
                   "ilp_gap", "local_search_error", "lp_time", "ilp_time", "local_search_time", "bound_prop1"):
        assert column in table and table[column].notna().all(), column
    assert (table["lp_objective"] <= table["rounded_loss_best"] + 1e-7).all()
    assert (table["lp_objective"] <= table["ilp_objective"] + 1e-7).all()
    assert (table["rounded_loss_mean"] <= table["bound_prop1"]).all()
    optimal = table["ilp_status"] == "optimal"
    assert (table.loc[optimal, "ilp_objective"] <= table.loc[optimal, "rounded_loss_best"] + 1e-7).all()
    assert (table.loc[optimal, "ilp_objective"] <= table.loc[optimal, "local_search_loss"] + 1e-7).all()
    small, large = table.iloc[0], table.iloc[-1]
    # Figure 3: most LP weights are already binary at large gamma
    assert large["frac_binary"] >= 0.8 and large["frac_binary"] > small["frac_binary"]
    # Figure 7: rounding hurts at small gamma, hardly at large gamma
    hurt_small = small["error_rounded_mean"] - small["error_relaxed"]
    hurt_large = large["error_rounded_mean"] - large["error_relaxed"]
    assert hurt_small > 0.1 and hurt_small > hurt_large + 0.05


def test_gamma_study_rejects_bad_grids(breast):
    X, y = breast
    with pytest.raises(ValueError, match="gammas"):
        gamma_study(X, y, [1.0, -1.0])
    with pytest.raises(ValueError, match="fixed threshold"):
        gamma_study(X, y, [1.0], threshold=None)
