"""FusedScoreClassifier: points table from a mixed DataFrame, ranges applied to raw values.

References: the one-hot model (points per bin from the solver, scored on the binned matrix) for
the merged ranges; a closed-form property of exact optima (total variation non-increasing in
lambda); duplicated rows for sample weights; the shared breast-cancer data for a real run.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from milpscore.estimators.fused import FusedScoreClassifier


def diarem_like(n: int = 240, seed: int = 0):
    """Synthetic DiaRem-shaped data: age, HbA1c, insulin (yes/no), other drugs (bool)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(25, 80, n),
        "hba1c": np.round(rng.normal(7.2, 1.2, n), 1),
        "insulin": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
        "other_drugs": rng.random(n) < 0.4,
    })
    score = ((df.age >= 40).astype(int) + (df.age >= 50) + (df.age >= 60) + 2 * (df.hba1c >= 6.5)
             + 2 * (df.hba1c >= 7) + 2 * (df.hba1c >= 9) + 10 * (df.insulin == "yes") + 3 * df.other_drugs)
    y = np.where(score + rng.normal(0, 1.5, n) >= 7, "non-remission", "remission")
    return df, y


def unseen_rows() -> pd.DataFrame:
    return pd.DataFrame({"age": [-5, 18, 24.5, 39.9, 40, 61.5, 120, 1e6],
                         "hba1c": [-1e3, 0.0, 6.45, 6.5, 7.05, 8.999, 15.0, 1e9],
                         "insulin": ["yes", "no"] * 4,
                         "other_drugs": [True, False, False, True, True, False, True, False]})


@pytest.fixture(scope="module")
def fitted():
    df, y = diarem_like()
    clf = FusedScoreClassifier(n_bins=6, lam=0.5, points_range=(0, 10), mip_rel_gap=0.0, time_limit=30)
    return clf.fit(df, y), df, y


def test_merged_ranges_reproduce_the_one_hot_model(fitted):
    clf, df, y = fitted
    for X in (df, unseen_rows()):
        onehot_scores = clf.points_.scores(clf.binner_.transform(X))
        ranges_scores = clf.decision_function(X)
        # same points from the card's ranges as from the bins; intercept only rounded up
        np.testing.assert_allclose(ranges_scores - clf.intercept_, onehot_scores - clf.points_.intercept, atol=1e-12)
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[(onehot_scores > 0).astype(int)])
    assert clf.points_.n_ranges() < clf.coef_.size  # bins were merged


def test_card_rows_are_merged_ranges_with_distinct_neighbouring_points(fitted):
    clf, _, _ = fitted
    card = clf.scorecard_.to_frame()
    assert list(card.columns) == ["variable", "condition", "points"]
    for name, rows in card.groupby("variable", sort=False):
        pts = rows["points"].to_numpy()
        assert len(pts) >= 2 and np.all(np.diff(pts) != 0) and pts.min() == 0  # reference: min = 0
    text = str(clf.scorecard_)
    assert "insulin" in text and "PREDICT" in text and "IF SCORE >=" in text
    ranges = clf.ranges_
    numeric = ranges[ranges["variable"] == "age"]
    assert numeric["lower"].iloc[0] == -np.inf and numeric["upper"].iloc[-1] == np.inf
    np.testing.assert_array_equal(numeric["lower"].to_numpy()[1:], numeric["upper"].to_numpy()[:-1])


def test_learns_the_planted_signal(fitted):
    clf, df, y = fitted
    assert clf.score(df, y) > 0.85
    assert clf.status_ == "optimal"
    insulin = clf.ranges_[clf.ranges_["variable"] == "insulin"].set_index("condition")["points"]
    assert insulin["yes"] > insulin["no"] or clf.classes_[1] == "remission" and insulin["yes"] < insulin["no"]


def test_large_lambda_gives_one_range_per_variable():
    df, y = diarem_like(120, seed=1)
    clf = FusedScoreClassifier(n_bins=5, lam=1e4, time_limit=30).fit(df, y)
    assert (clf.ranges_.groupby("variable").size() == 1).all()
    assert clf.scorecard_.to_frame().empty
    assert len(np.unique(clf.predict(df))) == 1


def test_total_variation_does_not_increase_with_lambda():
    """For exact optima, lambda1 < lambda2 implies TV(theta_2) <= TV(theta_1); lambda = 0 merges least."""
    df, y = diarem_like(150, seed=2)
    tv = []
    for lam in (0.0, 0.5, 3.0):
        clf = FusedScoreClassifier(n_bins=5, lam=lam, points_range=(0, 6), mip_rel_gap=0.0).fit(df, y)
        assert clf.status_ == "optimal"
        tv.append(sum(np.abs(np.diff(clf.points_.block_points(j))).sum() for j in range(4)))
    assert tv[0] >= tv[1] >= tv[2]
    assert tv[0] > tv[2]


def test_monotone_ranges_hold():
    df, y = diarem_like(150, seed=3)
    clf = FusedScoreClassifier(n_bins=6, lam=0.1, monotone={"age": "increasing", "hba1c": -1}).fit(df, y)
    assert np.all(np.diff(clf.points_.block_points(0)) >= 0)
    assert np.all(np.diff(clf.points_.block_points(1)) <= 0)


def test_max_size_and_must_include_by_name():
    df, y = diarem_like(150, seed=4)
    clf = FusedScoreClassifier(n_bins=4, lam=0.2, max_size=1, must_include=["age"]).fit(df, y)
    assert set(clf.scorecard_.to_frame()["variable"]) <= {"age"}
    free = FusedScoreClassifier(n_bins=4, lam=0.2, max_size=1).fit(df, y)
    assert set(free.scorecard_.to_frame()["variable"]) == {"insulin"}  # the strongest variable


def test_sample_weight_equals_duplicated_rows():
    df, y = diarem_like(60, seed=5)
    df = df.assign(age=df.age // 10 * 10, hba1c=np.round(df.hba1c))  # few values: one bin each, both fits
    w = np.random.default_rng(0).integers(1, 4, 60)
    a = FusedScoreClassifier(n_bins=12, lam=0.3, mip_rel_gap=0.0).fit(df, y, sample_weight=w)
    rep = np.repeat(np.arange(60), w)
    b = FusedScoreClassifier(n_bins=12, lam=0.3, mip_rel_gap=0.0).fit(df.iloc[rep], y[rep])
    assert a.coef_.size == b.coef_.size
    assert a.result_.objective == pytest.approx(b.result_.objective, abs=1e-6)


def test_lp_solver_and_relaxed_bound():
    df, y = diarem_like(120, seed=6)
    exact = FusedScoreClassifier(n_bins=4, lam=0.5, relaxed=True, mip_rel_gap=0.0).fit(df, y)
    lp = FusedScoreClassifier(n_bins=4, lam=0.5, solver="lp").fit(df, y)
    assert exact.relaxed_fit_.result.objective <= exact.result_.objective + 1e-9
    assert lp.result_.objective == pytest.approx(exact.relaxed_fit_.result.objective, rel=1e-7)
    assert lp.objective_ == pytest.approx(lp.result_.objective, rel=1e-7)  # true objective at the LP point
    assert lp.predict(df).shape == (120,)


def test_prox_points_are_within_the_smoothing_bound_of_the_lp_optimum():
    """Huberised hinge: hinge - delta/2 <= h_delta <= hinge, so the binarsity prox solution's exact
    objective (eq. 1) lies in [F*, F* + N delta / 2] with F* the LP optimum (continuous points,
    sum-to-zero reference, box wide enough to be inactive)."""
    df, y = diarem_like(120, seed=9)
    delta = 0.1
    params = dict(n_bins=4, lam=0.5, reference="sum_to_zero", points_range=(-50, 50), prox_smoothing=delta)
    lp = FusedScoreClassifier(solver="lp", **params).fit(df, y)
    prox = FusedScoreClassifier(solver="prox", **params).fit(df, y)
    f_star, f_prox = lp.result_.objective, prox.objective_
    assert f_star - 1e-6 <= f_prox <= f_star + 120 * delta / 2
    assert prox.result_.status.value == "optimal"
    sums = [prox.points_.block_points(j).sum() for j in range(4)]
    np.testing.assert_allclose(sums, 0.0, atol=1e-9)  # binarsity centring
    assert prox.score(df, y) > 0.8
    assert "continuous" in prox.scorecard_.title


def test_prox_warm_start_reaches_the_same_optimum():
    df, y = diarem_like(120, seed=10)
    cold = FusedScoreClassifier(n_bins=4, lam=0.5, mip_rel_gap=0.0).fit(df, y)
    warm = FusedScoreClassifier(n_bins=4, lam=0.5, mip_rel_gap=0.0, mip_start="prox").fit(df, y)
    assert warm.result_.objective == pytest.approx(cold.result_.objective, abs=1e-7)
    assert warm.start_fit_.violation == 0.0 and "start rejected" not in warm.fit_.message
    assert warm.start_fit_.objective >= warm.objective_ - 1e-7
    with pytest.raises(ValueError, match="sample weights"):
        FusedScoreClassifier(solver="prox").fit(df, y, sample_weight=np.arange(1, 121))


def test_plot_scores_draws_per_class_histograms(fitted):
    import matplotlib.pyplot as plt

    clf, df, y = fitted
    ax = clf.plot_scores(df, y)
    assert len(ax.patches) > 0 and ax.get_xlabel() == "total score"
    plt.close(ax.figure)


def test_clone_and_params():
    clf = FusedScoreClassifier(lam=2.0, monotone={"age": "increasing"})
    assert clone(clf).get_params()["lam"] == 2.0


@pytest.mark.parametrize("change,match", [
    (lambda df, y: (df.assign(age=df.age.astype(float).where(df.index != 3)), y), "'age' contains NaN"),
    (lambda df, y: (df.assign(hba1c=df.hba1c.where(df.index != 3, np.inf)), y), "'hba1c' contains inf"),
    (lambda df, y: (df, y[:-1]), "rows but y has"),
    (lambda df, y: (df, np.full(len(y), "remission")), "only one class"),
    (lambda df, y: (df.iloc[:, :0], y), "empty"),
])
def test_bad_training_inputs(change, match):
    df, y = diarem_like(40, seed=7)
    X, yy = change(df, y)
    with pytest.raises(ValueError, match=match):
        FusedScoreClassifier().fit(X, yy)


@pytest.mark.parametrize("params,match", [
    (dict(solver="gurobi"), "solver"),
    (dict(monotone={"weight": "increasing"}), "monotone names unknown"),
    (dict(monotone={"age": "up"}), "monotone"),
    (dict(must_include=["weight"]), "must_include"),
    (dict(points_range=(0, 2.5)), "points_range"),
    (dict(points_range={"weight": (0, 3)}), "points_range"),
    (dict(lam=-1.0), "lam"),
    (dict(mip_start="lp"), "mip_start"),
])
def test_bad_parameters(params, match):
    df, y = diarem_like(40, seed=8)
    with pytest.raises(ValueError, match=match):
        FusedScoreClassifier(**params).fit(df, y)


def test_bad_prediction_inputs(fitted):
    clf, df, _ = fitted
    with pytest.raises(ValueError, match="missing from X"):
        clf.predict(df.drop(columns=["insulin"]))
    with pytest.raises(ValueError, match="not seen in fit"):
        clf.predict(df.head(2).assign(insulin=["maybe", "yes"]))
    with pytest.raises(ValueError, match="contains NaN"):
        clf.predict(df.head(2).assign(age=[np.nan, 40.0]))
    with pytest.raises(ValueError, match="X has 3 features, but OrderedBinner is expecting 4"):
        clf.predict(np.zeros((2, 3)))
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="missing from X"):  # a sparse matrix has no column names: x0, x1, ...
        clf.predict(sp.csr_matrix(np.ones((2, 4))))
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        FusedScoreClassifier().predict(df)


def test_breast_cancer_real_data(shared_data):
    data = pd.read_csv(shared_data / "breastcancer_data.csv")
    y = data.pop("Benign")
    clf = FusedScoreClassifier(n_bins=3, lam=1.0, points_range=(0, 3), time_limit=20).fit(data, y)
    assert clf.score(data, y) > 0.93
    onehot = clf.points_.scores(clf.binner_.transform(data))
    np.testing.assert_array_equal(clf.predict(data), clf.classes_[(onehot > 0).astype(int)])


def _apply_condition(condition: str, values: pd.Series) -> np.ndarray:
    """A card row's condition applied to raw values, read from its printed text only."""
    if condition == "any value":
        return np.ones(len(values), bool)
    if condition.startswith("< "):
        return values.to_numpy(float) < float(condition[2:])
    if condition.startswith(">= "):
        return values.to_numpy(float) >= float(condition[3:])
    if " to < " in condition:
        lo, hi = condition.split(" to < ")
        v = values.to_numpy(float)
        return (v >= float(lo)) & (v < float(hi))
    return values.astype(str).isin(condition.split(", ")).to_numpy()


def test_card_applied_by_hand_reproduces_predict_on_any_value():
    """The printed card is a complete, exact rule: thresholds printed exactly (income 45728.3 is not
    4.573e+04) and the ranges of integer columns cover non-integers (70.5, -3.9) and far values."""
    rng = np.random.default_rng(11)
    n = 300
    df = pd.DataFrame({"age": rng.integers(20, 90, n), "income": np.round(rng.lognormal(10.7, 0.5, n), 1),
                       "delta": rng.integers(-8, 4, n)})
    y = np.where(df.age / 15 + df.income / 1.5e4 - df.delta / 3 + rng.normal(0, 1, n) > 8, 1, 0)
    clf = FusedScoreClassifier(n_bins=6, lam=0.05, points_range=(0, 4), time_limit=20).fit(df, y)
    card = clf.scorecard_
    printed = str(card)
    assert all(c.startswith(("<", ">=")) or " to < " in c for c in card.table["condition"])
    assert set(card.table["variable"]) == {"age", "income", "delta"}
    income = clf.binner_.variables_[1].cuts
    from formulations.bins import cut_points  # short thresholds (milpscore.cards.card_text.readable_cuts), same training bins
    data_cuts = cut_points(df.income.to_numpy(float), 5)
    np.testing.assert_array_equal(np.searchsorted(income, df.income, side="right"),
                                  np.searchsorted(data_cuts, df.income, side="right"))
    held_out = pd.DataFrame({"age": rng.uniform(0, 120, 400), "income": rng.uniform(0, 2e5, 400),
                             "delta": rng.uniform(-12, 8, 400)})
    held_out.loc[:3, ["age", "delta"]] = [[70.5, -3.9], [19.99, -100], [89.5, 3.5], [1e6, -6.5]]
    for frame in (df, held_out):
        total = np.full(len(frame), card.intercept)
        for name, rows in card.table.groupby("variable", sort=False):
            hits = np.column_stack([_apply_condition(c, frame[name]) for c in rows["condition"]])
            assert np.all(hits.sum(axis=1) == 1), f"{name}: ranges overlap or leave values uncovered"
            total += hits.astype(float) @ rows["points"].to_numpy(float)
            for c in rows["condition"]:
                assert c in printed
        np.testing.assert_allclose(total, clf.decision_function(frame), atol=1e-9)
        np.testing.assert_array_equal(clf.classes_[(total > 0).astype(int)], clf.predict(frame))


def test_an_exact_fit_stopped_before_highs_finds_a_model_keeps_the_start():
    """The ILP's start (solvers.heuristics.fused): with a budget HiGHS cannot use, the fit still
    returns a points table, feasible and unproven, never worse than the flat table; with time, the
    start is the relaxation rounded along its ray, at most the flat table's objective."""
    from formulations.base import Model
    from solvers.heuristics.fused import heuristic
    from solvers.limits import Limits
    from solvers.pipeline import solve_relaxed

    df, y = diarem_like(20000, seed=4)  # HiGHS finds no table within 0.2 s here (no start: "found no model")
    for j in range(6):
        df[f"z{j}"] = np.random.default_rng(j).normal(size=len(df))
    tiny = FusedScoreClassifier(n_bins=10, time_limit=0.2).fit(df, y)
    flat = tiny.instance_.round(Model(np.zeros(tiny.instance_.X.shape[1]), 0.0))
    assert tiny.status_ == "feasible" and tiny.objective_ <= tiny.instance_.objective(flat) + 1e-9
    inst, limits = tiny.instance_, Limits(time_limit=30).started()
    relaxed = solve_relaxed(inst, limits=limits)
    start = heuristic(inst, limits, 0, relaxed=lambda: relaxed)
    assert inst.objective(start) < inst.objective(flat)  # the data carry signal: the rounded LP beats flat
    assert inst.objective(start) >= relaxed.bound - 1e-6  # the LP value bounds every table from below
