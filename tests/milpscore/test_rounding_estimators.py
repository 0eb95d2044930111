"""ConvexRoundingClassifier, LocalSearchClassifier and gamma_study on real and enumerable data."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import check_estimator

from formulations.rounding import cumulative_hinge_loss
from milpscore.estimators.rounding import ConvexRoundingClassifier, LocalSearchClassifier
from milpscore.studies.gamma_study import gamma_study
from milpscore.cards.scorecard import ScoreCard


@pytest.fixture(scope="module")
def breast(shared_data):
    frame = pd.read_csv(shared_data / "breastcancer_data.csv").iloc[:200]
    return frame.iloc[:, 1:], frame.iloc[:, 0]


def _pm1(y):
    return np.where(np.asarray(y) == 1, 1.0, -1.0)


def _check_model(model, X, y, *, margin, ternary=True):
    values = {-1.0, 0.0, 1.0} if ternary else {0.0, 1.0}
    assert set(np.unique(model.coef_)) <= values
    loss = cumulative_hinge_loss(model.coef_, X.to_numpy(float), _pm1(y), margin=margin, intercept=model.intercept_)
    assert model.objective_ == pytest.approx(loss)
    card = model.scorecard_
    assert isinstance(card, ScoreCard)
    assert set(card.table["points"]) <= values - {0.0}
    total = card.total(X)
    np.testing.assert_array_equal(np.where(total > card.threshold, model.classes_[1], model.classes_[0]),
                                  model.predict(X))


@pytest.mark.parametrize("rounding", ["randomized", "deterministic"])
def test_convex_rounding_on_real_data(breast, rounding):
    X, y = breast
    model = ConvexRoundingClassifier(margin=3.0, threshold=0.0, rounding=rounding, n_draws=200,
                                     random_state=0).fit(X, y)
    _check_model(model, X, y, margin=3.0)
    assert model.fit_.method == {"randomized": "randomized_rounding", "deterministic": "rounding"}[rounding]
    assert np.isfinite(model.bound_)  # the LP value
    assert model.bound_ <= model.objective_ + 1e-9
    assert model.status_ == "feasible" and model.intercept_ == 0.0
    info = model.fit_info_
    assert info["n_weights"] == 18
    if rounding == "randomized":
        assert 0 <= info["n_binary_weights"] <= 18
        np.testing.assert_allclose(np.abs(info["relaxed_coef"]) <= 1 + 1e-9, True)
        assert info["rounding"]["best_loss"] == pytest.approx(model.objective_)
        assert info["rounding"]["mean_loss"] <= info["rounding"]["bound_prop1"]
    assert model.score(X, y) > 0.8


def test_exact_ilp_beats_rounding_and_learned_threshold(breast):
    X, y = breast
    exact = ConvexRoundingClassifier(margin=3.0, threshold=0.0, rounding="exact", time_limit=20).fit(X, y)
    rounded = ConvexRoundingClassifier(margin=3.0, threshold=0.0, n_draws=50, random_state=1).fit(X, y)
    _check_model(exact, X, y, margin=3.0)
    assert exact.status_ == "optimal"
    assert rounded.bound_ <= exact.objective_ + 1e-7  # LP <= ILP
    assert exact.objective_ <= rounded.objective_ + 1e-7
    learned = ConvexRoundingClassifier(margin=3.0, random_state=0).fit(X, y)  # threshold=None by default
    _check_model(learned, X, y, margin=3.0)
    assert learned.bound_ <= rounded.bound_ + 1e-7  # r = 0 is one choice of the learned threshold
    learned_exact = ConvexRoundingClassifier(margin=3.0, rounding="exact", time_limit=20).fit(X, y)
    assert learned_exact.status_ == "optimal" and learned_exact.objective_ <= exact.objective_ + 1e-7


def test_exact_estimator_matches_enumeration():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.poisson(1.0, (40, 5)).astype(float), columns=list("abcde"))
    y = np.where(X.to_numpy() @ [1, -1, 1, 0, 0] + rng.normal(0, 0.7, 40) > 0.5, "yes", "no")
    model = ConvexRoundingClassifier(margin=2.0, threshold=1.0, rounding="exact").fit(X, y)
    yy = np.where(y == "yes", 1.0, -1.0)
    best = min(cumulative_hinge_loss(np.array(c, float), X.to_numpy(), yy, margin=2.0, intercept=-1.0)
               for c in itertools.product((-1, 0, 1), repeat=5))
    assert model.objective_ == pytest.approx(best, abs=1e-7)
    assert list(model.classes_) == ["no", "yes"]
    sparse = ConvexRoundingClassifier(margin=2.0, threshold=1.0, max_size=1, random_state=0).fit(X, y)
    assert np.count_nonzero(sparse.coef_) <= 1


def test_local_search_classifier(breast):
    X, y = breast
    ternary = LocalSearchClassifier(margin=3.0, threshold=0.0, n_restarts=3, start_nonzeros=3,
                                    random_state=0).fit(X, y)
    _check_model(ternary, X, y, margin=3.0)
    zero = cumulative_hinge_loss(np.zeros(9), X.to_numpy(float), _pm1(y), margin=3.0)
    assert ternary.objective_ <= zero
    assert ternary.fit_info_["restart_losses"].shape == (4,)
    again = LocalSearchClassifier(margin=3.0, threshold=0.0, n_restarts=3, start_nonzeros=3,
                                  random_state=0).fit(X, y)
    np.testing.assert_array_equal(ternary.coef_, again.coef_)
    binary = LocalSearchClassifier(margin=3.0, weights="binary", threshold=20.0, max_size=4).fit(X, y)
    _check_model(binary, X, y, margin=3.0, ternary=False)
    assert binary.intercept_ == -20.0 and np.count_nonzero(binary.coef_) <= 4
    assert binary.score(X, y) > 0.8
    learned = LocalSearchClassifier(margin=3.0, n_restarts=3, random_state=0).fit(X, y)  # learned intercept
    _check_model(learned, X, y, margin=3.0)
    assert learned.score(X, y) > 0.8 and np.isfinite(learned.bound_)


@pytest.mark.parametrize("name", ["mammo", "breastcancer"])
@pytest.mark.parametrize("estimator", [ConvexRoundingClassifier, LocalSearchClassifier])
def test_defaults_beat_the_majority_class_on_real_data(shared_data, name, estimator):
    """Regression: with a zero threshold by default both estimators returned constant models."""
    frame = pd.read_csv(shared_data / f"{name}_data.csv")
    X, y = frame.iloc[:, 1:], frame.iloc[:, 0]
    majority = max(np.mean(y == 1), np.mean(y == 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # no constant-model warning
        model = estimator(random_state=0, time_limit=30).fit(X, y)
    assert np.count_nonzero(model.coef_) > 0
    assert model.score(X, y) > majority + 0.05


def test_constant_models_are_warned_about(breast):
    X, y = breast
    with pytest.warns(ConvergenceWarning, match="constant model"):
        ConvexRoundingClassifier(margin=3.0, max_size=0, rounding="deterministic").fit(X, y)


def test_grid_search_clones_the_estimators(breast):
    X, y = breast
    search = GridSearchCV(LocalSearchClassifier(n_restarts=0), {"margin": [1.0, 3.0]}, cv=3).fit(X, y)
    assert search.best_params_["margin"] in (1.0, 3.0)


@pytest.mark.parametrize("model, match", [
    (ConvexRoundingClassifier(margin=0.0), "margin"), (ConvexRoundingClassifier(weights="real"), "weights"),
    (ConvexRoundingClassifier(rounding="nearest"), "rounding"), (ConvexRoundingClassifier(lp_solver="cg"), "lp_solver"),
    (ConvexRoundingClassifier(max_size=-2), "max_size"), (LocalSearchClassifier(threshold=float("inf")), "threshold"),
    (LocalSearchClassifier(n_restarts=-1), "n_restarts"), (LocalSearchClassifier(epsilon=0), "epsilon"),
])
def test_bad_parameters_fail_at_fit_with_a_clear_message(breast, model, match):
    X, y = breast
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)


# Failures of sklearn's check_estimator that come from the shared base class / milpscore.data.validation
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
    margins = (0.1, 1.0, 10.0)
    table = gamma_study(X, y, margins, n_draws=100, ilp_time_limit=5.0, n_restarts=2)
    assert list(table["margin"]) == list(margins) and len(table) == 3
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
    # Figure 3: most LP weights are already binary at large margins
    assert large["frac_binary"] >= 0.8 and large["frac_binary"] > small["frac_binary"]
    # Figure 7: rounding hurts at small margins, hardly at large margins
    hurt_small = small["error_rounded_mean"] - small["error_relaxed"]
    hurt_large = large["error_rounded_mean"] - large["error_relaxed"]
    assert hurt_small > 0.1 and hurt_small > hurt_large + 0.05


def test_gamma_study_with_a_learned_threshold(breast):
    X, y = breast
    table = gamma_study(X, y, margins=[1.0], threshold=None, n_draws=20, ilp_time_limit=5.0, n_restarts=1)
    assert list(table["margin"]) == [1.0]
    assert table["lp_objective"].iloc[0] <= table["local_search_loss"].iloc[0] + 1e-7


def test_gamma_study_rejects_bad_grids(breast):
    X, y = breast
    with pytest.raises(ValueError, match="margins"):
        gamma_study(X, y, [1.0, -1.0])


@pytest.mark.parametrize("weights", ["binary", "ternary"])
def test_exact_rounding_gives_the_same_model_twice_in_one_process(weights):
    """Ties among optimal points used to be broken by a fresh solver seed per fit."""
    rng = np.random.default_rng(1)
    for n, d in ((60, 6), (100, 8)):
        X = rng.integers(0, 2, size=(n, d)).astype(float)
        y = np.where(X[:, :3].sum(1) + rng.normal(0, 1, n) > 1.5, 1, 0)
        fits = [ConvexRoundingClassifier(rounding="exact", weights=weights).fit(X, y) for _ in range(3)]
        for other in fits[1:]:
            np.testing.assert_array_equal(other.coef_, fits[0].coef_)
            assert other.intercept_ == fits[0].intercept_
