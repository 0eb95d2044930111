"""RiskScoreClassifier: certified fit, probabilities from the integer score, risk table, calibration."""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from milpscore.estimators.riskscore import RiskScoreClassifier
from milpscore.cards.risk_table import attainable_totals, calibration, predicted_risk, risk_table


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.integers(0, 2, (n, 3)).astype(float), columns=["age>60", "smoker", "bp_high"])
    y = np.where(X.to_numpy() @ [1.5, 1.0, -0.5] - 1.0 + rng.normal(0, 1, n) > 0, "sick", "well")
    return X, y


def test_fit_is_certified_and_proba_is_logistic_of_the_integer_score():
    X, y = _data()
    est = RiskScoreClassifier(coef_bound=3, max_size=2, time_limit=30).fit(X, y)
    assert est.status_ == "optimal" and est.gap_ <= 1e-4
    assert np.array_equal(est.coef_, np.rint(est.coef_)) and np.count_nonzero(est.coef_) <= 2
    proba = est.predict_proba(X)
    scores = est.decision_function(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(est.classes_) == {"sick", "well"}
    assert "total points" in str(est.scorecard_) and "calibration" in str(est.scorecard_)
    assert est.calibration_.ece >= 0 and len(est.calibration_.curve) >= 1


def test_risk_table_probabilities_are_the_logistic_of_each_score():
    X, y = _data(1)
    est = RiskScoreClassifier(coef_bound=3, time_limit=30).fit(X, y)
    table = est.risk_table_
    np.testing.assert_allclose(table["predicted_risk"], 1 / (1 + np.exp(-table["score"])), rtol=1e-12)
    np.testing.assert_allclose(table["score"] - table["points"], est.intercept_)
    seen = est.decision_function(X)
    assert set(np.round(seen, 9)) <= set(np.round(table["score"], 9))
    assert table["count"].sum() == len(y)
    events = (y == est.classes_[1])
    for row in table[table["count"] > 0].itertuples():
        mask = np.isclose(seen, row.score)
        assert row.observed_risk == pytest.approx(events[mask].mean())


def test_multiplier_scales_probabilities_table_card_and_saved_model(tmp_path):
    from milpscore.model_files.persist import load_model, save_model

    X, y = _data(3, n=80)
    est = RiskScoreClassifier(coef_bound=3, max_size=2, time_limit=30, multiplier=2.5).fit(X, y)
    assert est.status_ == "optimal"
    scores = est.decision_function(X)
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], 1 / (1 + np.exp(-scores / 2.5)), rtol=1e-12)
    table = est.risk_table_
    np.testing.assert_allclose(table["predicted_risk"], 1 / (1 + np.exp(-table["score"] / 2.5)), rtol=1e-12)
    assert "/ 2.5))" in str(est.scorecard_)
    # the objective is the mean weighted logistic loss of score / 2.5 (plus the tiny L0 term)
    loss = np.mean(np.logaddexp(0.0, -np.where(y == est.classes_[1], 1.0, -1.0) * scores / 2.5))
    assert est.objective_ == pytest.approx(loss + 1e-6 * np.count_nonzero(est.coef_), rel=1e-9)
    path = tmp_path / "card.json"
    save_model(est, path)
    np.testing.assert_allclose(load_model(path).predict_proba(X), est.predict_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="multiplier"):
        RiskScoreClassifier(multiplier=-1.0).fit(X, y)


def test_attainable_totals_and_ece_by_hand():
    X = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    coef = np.array([2.0, -1.0])
    np.testing.assert_allclose(attainable_totals(coef, -1.0, X), [-2.0, -1.0, 0.0, 1.0])
    y = np.array([0, 1, 1, 0])
    table = risk_table(coef, -1.0, X, y)
    assert len(table) == 4 and table["count"].tolist() == [1, 1, 1, 1]
    cal = calibration(coef, -1.0, X, y)
    expected = np.mean(np.abs(np.array([0, 0, 1, 1]) - predicted_risk(np.array([-2.0, -1.0, 0.0, 1.0]))))
    assert cal.ece == pytest.approx(expected)


def test_clone_params_and_heuristic_method():
    X, y = _data(2)
    est = RiskScoreClassifier(max_size=1, method="heuristic", time_limit=10)
    params = clone(est).get_params()
    assert params["max_size"] == 1 and params["backend"] is None and params["time_limit"] == 10
    est.fit(X, y)
    assert est.status_ == "feasible" and np.count_nonzero(est.coef_) <= 1


def test_plot_risk_table():
    X, y = _data(3)
    est = RiskScoreClassifier(coef_bound=2, time_limit=20).fit(X, y)
    ax = est.plot_risk_table()
    assert ax.get_xlabel().startswith("SCORE")
    # the x values are the card's SCORE (total points), the same numbers the risk table prints
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), est.risk_table_["points"])


def test_several_multipliers_keep_the_least_objective_and_certify_over_all():
    """Each multiplier alone is solved to optimality as a reference; with the grid, every start is
    found first and each multiplier is solved against the least objective known (its objective_limit:
    the starts' and the fits' before it, so finite from the first, never rising, at most every earlier
    row's objective and at least the least optimum): the kept one has the least optimum of all, no row
    beats its multiplier's optimum, a row certified on its own is that optimum, the certificate's bound
    is valid (at most every optimum) and proves the kept model, and its probabilities, table and saved
    model use its multiplier."""
    X, y = _data(4, n=80)
    grid = [1.0, 2.0, 3.0]
    est = RiskScoreClassifier(coef_bound=3, max_size=2, time_limit=60, multiplier=grid).fit(X, y)
    singles = [RiskScoreClassifier(coef_bound=3, max_size=2, time_limit=30, multiplier=m).fit(X, y) for m in grid]
    objectives = np.array([s.objective_ for s in singles])
    assert all(s.status_ == "optimal" for s in singles)
    best = int(np.argmin(objectives))
    assert est.multiplier_ == grid[best]
    assert est.objective_ == pytest.approx(objectives[best], abs=1e-12)
    rows = est.multipliers_
    assert np.all(rows["objective"].to_numpy() >= objectives - 1e-12)
    own = (rows["status"] == "optimal").to_numpy()
    np.testing.assert_allclose(rows["objective"].to_numpy()[own], objectives[own], atol=1e-9)
    limits = rows["objective_limit"].to_numpy()
    assert np.isfinite(limits[0]) and np.all(np.diff(limits) <= 1e-12) and np.all(limits >= objectives.min() - 1e-12)
    assert np.all(limits[1:] <= np.minimum.accumulate(rows["objective"].to_numpy())[:-1] + 1e-12)
    assert est.bound_ <= objectives.min() + 1e-12
    assert est.status_ == "optimal" and est.bound_ <= est.objective_ + 1e-12
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], 1 / (1 + np.exp(-est.decision_function(X) / est.multiplier_)))
    assert f"/ {est.multiplier_:g}" in str(est.scorecard_) or est.multiplier_ == 1
    assert clone(est).get_params()["multiplier"] == grid
    with pytest.raises(ValueError, match="multiplier"):
        RiskScoreClassifier(multiplier="best").fit(X, y)
    with pytest.raises(ValueError, match="multiplier"):
        RiskScoreClassifier(multiplier=[1.0, 0.0]).fit(X, y)


def test_each_multiplier_fits_within_the_call_limits(monkeypatch):
    """The multipliers share one started budget: each fit runs with the call's memory, threads and
    seed, ending no later than the call (it used to restart a budget from seconds)."""
    import solvers.multipliers as base

    seen, real, real_exact = [], base.run, base.solve_exact

    def recording(instance, method, backend=None, *, limits=None, **kwargs):
        seen.append(limits)
        return real(instance, method, backend, limits=limits, **kwargs)

    def recording_exact(instance, backend=None, *, limits=None, **kwargs):  # (a later multiplier after a kept screen)
        seen.append(limits)
        return real_exact(instance, backend, limits=limits, **kwargs)

    monkeypatch.setattr(base, "run", recording)
    monkeypatch.setattr(base, "solve_exact", recording_exact)
    X, y = _data()
    model = RiskScoreClassifier(multiplier=(1.0, 2.0), time_limit=60, memory_limit=300, seed=3).fit(X, y)
    assert len(model.multipliers_) == 2 and len(seen) == 2
    assert all(s.memory == 300 * 2**20 and s.seed == 3 and s.deadline is not None for s in seen)
    assert seen[0].deadline < seen[1].deadline  # the second starts with the time the first left
