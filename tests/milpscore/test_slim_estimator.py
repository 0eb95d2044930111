"""SLIMClassifier end to end on real data, and the score card it prints."""
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV

from milpscore.data.datasets import load_default
from milpscore.estimators.slim import SLIMClassifier
from milpscore.cards.scorecard import ScoreCard
from solvers.result import Status


def _check_card(model, X, y):
    card = model.scorecard_
    assert isinstance(card, ScoreCard)
    np.testing.assert_array_equal(card.table["points"], np.round(card.table["points"]))
    assert set(card.table["condition"]) == {c for c, w in zip(X.columns, model.coef_) if w != 0}
    # the card's rule reproduces predict() exactly
    total = card.total(X)
    card_pred = np.where(total > card.threshold, model.classes_[1], model.classes_[0])
    np.testing.assert_array_equal(card_pred, model.predict(X))
    text = str(card)
    # the printed card, read as a clinician reads it, reproduces predict(): the rows' points and the rule
    import re

    threshold = int(re.search(r"IF SCORE >= (-?\d+)", text).group(1))
    rows = [(c.removeprefix("per unit of "), p)  # a feature that is not 0/1 counts per unit of its value
            for c, p in re.findall(r"^\s+\d+\.\s+(.+?)\s+(-?\d+) points?\s+\.\.\.", text, flags=re.M)]
    assert [c for c, _ in rows] == list(card.table["condition"])
    score = sum(int(p) * X[c].to_numpy() for c, p in rows)
    np.testing.assert_array_equal(np.where(score >= threshold, model.classes_[1], model.classes_[0]),
                                  model.predict(X))
    html = card._repr_html_()
    assert "<table" in html and "ADD POINTS FROM ROWS" in html


@pytest.mark.parametrize("name, max_size", [("breastcancer_data.csv", 5), ("mammo_data.csv", 4)])
def test_slim_on_shared_data(shared_data, name, max_size):
    frame = pd.read_csv(shared_data / name)
    y, X = frame.iloc[:, 0], frame.iloc[:, 1:]
    model = SLIMClassifier(c0=0.005, max_size=max_size, coef_bound=5, time_limit=5, relaxed=True).fit(X, y)
    assert model.status_ in ("optimal", "feasible")
    assert np.count_nonzero(model.coef_) <= max_size
    assert model.bound_ <= model.objective_ + 1e-9
    assert model.relaxed_fit_.bound <= model.objective_ + 1e-9
    # never worse than the heuristic start
    from solvers.heuristics.slim import heuristic
    assert model.objective_ <= model.instance_.objective(heuristic(model.instance_)) + 1e-9
    # the reported objective is the true objective of the returned points, recomputed from the data
    v = model.instance_.weights
    err = v @ (model.instance_.y * (model.instance_.X @ model.coef_ + model.intercept_) < 1)
    assert model.objective_ == pytest.approx(err + 0.005 * np.count_nonzero(model.coef_)
                                             + model.fit_info_["epsilon"] * np.abs(model.coef_).sum(), abs=1e-12)
    assert model.score(X, y) > 0.75
    _check_card(model, X, y)


def test_slim_on_bundled_default_data():
    X, y = load_default()
    model = SLIMClassifier(c0=0.01, max_size=4, time_limit=3).fit(X, y)
    assert model.score(X, y) > 0.9
    assert model.classes_.tolist() == ["benign", "malignant"]
    _check_card(model, X, y)


def test_objective_matches_misclassification_rate():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 2, (120, 4)).astype(float), columns=list("abcd"))
    y = np.where(X["a"] + X["b"] - X["c"] + rng.normal(0, 0.4, 120) > 0.5, "yes", "no")
    model = SLIMClassifier(c0=0.0, coef_bound=3, time_limit=10).fit(X, y)
    assert model.status_ == Status.OPTIMAL.value
    error = np.mean(model.predict(X) != y)
    # objective = weighted margin error + eps * L1 (no L0 cost): error within eps part
    assert model.objective_ == pytest.approx(error, abs=model.fit_info_["epsilon"] * 3 * 4 + 1e-9)


def test_grid_search_cv_works():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, (80, 3)).astype(float)
    y = (X[:, 0] + rng.normal(0, 0.3, 80) > 0.5).astype(int)
    grid = GridSearchCV(SLIMClassifier(time_limit=2, coef_bound=2), {"c0": [0.001, 0.05]}, cv=2).fit(X, y)
    assert grid.best_score_ > 0.7
    assert set(grid.best_estimator_.get_params()) >= {"c0", "coef_bound", "max_size", "time_limit"}


def test_coefficient_set_in_another_column_order_gives_the_same_model():
    from formulations.coefficients import CoefficientSet

    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.integers(0, 2, (100, 3)).astype(float), columns=["a", "b", "c"])
    y = (X["a"] + X["b"] + rng.normal(0, 0.3, 100) > 0.8).astype(int)
    cs = CoefficientSet.uniform(["c", "b", "a"], 3).with_feature("b", lb=0, ub=0)
    model = SLIMClassifier(coefficients=cs, c0=0.001, time_limit=10).fit(X, y)
    assert model.coef_[1] == 0  # b is bounded to [0, 0] by name, whatever the order of the set


@pytest.mark.parametrize("kwargs", [{"c0": float("nan")}, {"c0": float("inf")}, {"class_weight": (float("inf"), 1)},
                                    {"class_weight": (float("nan"), 1)}, {"margin": float("inf")}, {"time_limit": 0},
                                    {"time_limit": -5}, {"mip_rel_gap": float("nan")}, {"threads": 0}])
def test_bad_hyper_parameters_are_named(kwargs):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], float)
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        SLIMClassifier(**kwargs).fit(X, [0, 1, 1, 0])


def test_write_program_names_the_points_after_the_features(tmp_path):
    import highspy

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.integers(0, 2, (40, 3)).astype(float), columns=["age >= 60", "smoker", "bmi >= 30"])
    y = (X["age >= 60"] + X["smoker"] + rng.normal(0, 0.5, 40) > 1).astype(int)
    model = SLIMClassifier(coef_bound=3, c0=0.01, time_limit=None, node_limit=10_000).fit(X, y)
    assert model.status_ == "optimal"
    path = model.write_program(str(tmp_path / "slim.lp"))
    text = open(path).read()
    assert "coef(age_ge_60)" in text and "coef(smoker)" in text and "coef(bmi_ge_30)" in text
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(path)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(model.objective_, abs=1e-9)
