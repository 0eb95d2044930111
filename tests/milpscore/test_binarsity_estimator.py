"""BinarsityLogisticClassifier: certified path, block support, points tables, integer card, inputs.

References: the model is the last point of a path whose certificate is checked against cvxpy in
``tests/solvers/test_binarsity_path.py``; here the estimator's own products are checked by their
definitions (block sums 0, card points = the rounded table, predictions = the table's sums), the
support against columns built to be pure noise, and the same model from dense, CSR, CSC and
pandas-sparse raw tables.
"""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from milpscore.estimators import BinarsityLogisticClassifier


def _table(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.integers(20, 80, n).astype(float), "bmi": rng.normal(25, 4, n),
                      "noise": rng.normal(size=n), "sex": rng.choice(["f", "m"], n)})
    z = 0.06 * (X.age - 50) + 1.2 * (X.bmi > 30) + 0.6 * (X.sex == "m")
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), "ill", "well")
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _table()
    return BinarsityLogisticClassifier(n_bins=8, strength=0.5, pos_label="ill").fit(X, y), X, y


def test_path_is_certified_and_blocks_sum_to_zero(fitted):
    clf, X, y = fitted
    table = clf.path_table_
    assert list(table["strength"]) == sorted(table["strength"], reverse=True)
    assert table["strength"].iloc[-1] == pytest.approx(0.5)
    assert (table["status"] == "optimal").all() and (table["gap"] <= clf.tol).all()
    assert (table["bound"] <= table["objective"] + 1e-12).all()
    assert table["n_used"].iloc[0] == 0  # the path starts at the null model
    assert clf.status_ == "optimal" and clf.gap_ <= clf.tol
    for block in clf.binner_.blocks_:
        assert abs(clf.coef_[block].sum()) <= 1e-12
    # the objective reported is the program's: mean logistic loss + penalty at the fitted strength
    margin = np.where(y == "ill", 1.0, -1.0) * clf.decision_function(X)
    assert clf.objective_ == pytest.approx(np.mean(np.logaddexp(0, -margin)) + clf.penalty_.value(clf.coef_),
                                           rel=1e-12)


def test_block_support_drops_the_noise_column(fitted):
    clf, _, _ = fitted
    np.testing.assert_array_equal(clf.support_, [True, True, False, True])
    assert clf.used_features_ == ["age", "bmi", "sex"]
    assert not set(clf.scorecard_.table["variable"]) & {"noise"}
    assert np.all(np.abs(clf.coef_[clf.binner_.blocks_[2]]) <= 1e-12)


def test_integer_card_is_the_rounded_table(fitted):
    clf, X, _ = fitted
    pts = clf.integer_points_
    spreads = [np.ptp(pts.theta[s]) for s in clf.binner_.blocks_]
    assert max(spreads) == clf.max_points
    for s in clf.binner_.blocks_:
        block = pts.theta[s]
        assert block.min() == 0 and np.array_equal(block, np.round(block))
        np.testing.assert_allclose(block, np.round(clf.points_scale_ * clf.coef_[s])
                                   - np.round(clf.points_scale_ * clf.coef_[s]).min())
    # the card's rows are the integer ranges of the used columns; its base score is the table's intercept
    card = clf.scorecard_
    assert card.is_integral and card.intercept == pytest.approx(pts.intercept)
    # predictions of the card = total points of each row's ranges + base score, summed by hand
    total = np.zeros(len(X))
    for var, cond, points in card.table.itertuples(index=False):
        rng = clf.integer_ranges_[(clf.integer_ranges_.variable == var) & (clf.integer_ranges_.condition == cond)]
        codes = clf.binner_.codes(X)[:, list(clf.binner_.feature_names_in_).index(var)]
        total += points * ((codes >= rng.first_bin.iloc[0]) & (codes <= rng.last_bin.iloc[0]))
    np.testing.assert_allclose(clf.points_decision_function(X), total + card.intercept, atol=1e-9)
    expected = np.where(total + card.intercept > 0, "ill", "well")
    np.testing.assert_array_equal(clf.predict_points(X), expected)
    # the rounded card predicts (nearly) as the certified model it rounds
    assert np.mean(clf.predict_points(X) == clf.predict(X)) >= 0.97


def test_dense_csr_csc_and_pandas_sparse_tables_give_the_same_model():
    rng = np.random.default_rng(4)
    n = 1500
    counts = rng.poisson(0.7, size=(n, 5)).astype(float) * (rng.random((n, 5)) < 0.5)  # sparse counts
    y = (counts[:, 0] + 0.5 * counts[:, 1] + rng.normal(size=n) > 0.8).astype(int)
    ref = BinarsityLogisticClassifier(n_bins=4, strength=0.5, tol=1e-10).fit(counts, y)
    csr = sp.csr_matrix(counts)
    for X in (csr, csr.tocsc(), sp.csr_array(csr), pd.DataFrame.sparse.from_spmatrix(csr)):
        other = BinarsityLogisticClassifier(n_bins=4, strength=0.5, tol=1e-10).fit(X, y)
        np.testing.assert_allclose(other.coef_, ref.coef_, atol=1e-8)
        assert other.intercept_ == pytest.approx(ref.intercept_, abs=1e-8)
        np.testing.assert_allclose(other.decision_function(X), ref.decision_function(counts), atol=1e-8)


@pytest.mark.parametrize("params, match", [({"strength": 0.0}, "strength"), ({"strength": np.inf}, "strength"),
                                           ({"tol": -1.0}, "tol"), ({"max_points": 0}, "max_points"),
                                           ({"n_strengths": 0}, "n_strengths")])
def test_bad_parameters_are_named(params, match):
    X, y = _table(200)
    with pytest.raises(ValueError, match=match):
        BinarsityLogisticClassifier(**params).fit(X, y)


def test_prediction_input_errors(fitted):
    clf, X, _ = fitted
    with pytest.raises(ValueError, match="missing from X"):
        clf.predict(X.drop(columns=["bmi"]))
    with pytest.raises(ValueError, match="contains NaN"):
        clf.predict(X.head(2).assign(age=[np.nan, 40.0]))


@pytest.mark.slow
@parametrize_with_checks([BinarsityLogisticClassifier(n_bins=3, n_strengths=3)], expected_failed_checks=lambda est: {
    "check_dtype_object": "object columns are categorical variables by design (as FusedScoreClassifier)"})
def test_sklearn_compatible(estimator, check):
    check(estimator)
