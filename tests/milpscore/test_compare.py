"""compare(): consistent rows, checked against brute-force enumeration on tiny instances."""
import itertools

import numpy as np
import pandas as pd
import pytest

from milpscore.compare import COLUMNS, METHOD_LABELS, compare, list_formulations


def _tiny(seed=0, n=40, d=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    w = np.array([2.0, -1.0, 1.0, 0.0])[:d]
    y = np.where(X @ w - 0.5 + rng.normal(0, 0.8, n) > 0, 1, 0)
    return X, y


def _slim_brute_force(X, y_pm1, c0, U):
    """min over integer points in [-U, U]^d and integer intercepts of error rate + c0 * size + eps * L1."""
    from formulations.slim import SLIM

    inst = SLIM(coef_bound=U, c0=c0).instance(X, y_pm1)
    lo, hi = inst.intercept_bounds
    best = np.inf
    for coef in itertools.product(range(-U, U + 1), repeat=X.shape[1]):
        coef = np.array(coef, float)
        for b in range(int(np.ceil(lo)), int(np.floor(hi)) + 1):
            err = np.mean(y_pm1 * (X @ coef + b) < 1)  # margin 1 on integer scores = 0-1 loss, ties wrong
            best = min(best, err + c0 * np.count_nonzero(coef) + inst.epsilon * np.abs(coef).sum())
    return best


def _ternary_brute_force(X, y_pm1, gamma):
    """min over c in {-1,0,1}^d and real b of sum_t max(0, gamma - y_t(<c,x_t> + b)) / gamma."""
    best = np.inf
    for c in itertools.product((-1.0, 0.0, 1.0), repeat=X.shape[1]):
        s = X @ np.array(c)
        cands = y_pm1 * gamma - s  # breakpoints of the convex piecewise-linear function of b
        losses = np.maximum(0, gamma - y_pm1[None, :] * (s[None, :] + cands[:, None])).sum(axis=1) / gamma
        best = min(best, losses.min())
    return best


def test_slim_rows_consistent_and_exact_matches_enumeration():
    X, y = _tiny()
    df = compare(X, y, ["slim"], time_limit=20, test_size=None, params={"slim": {"coef_bound": 2, "c0": 0.02}},
                 progress=False)
    assert list(df.columns) == list(COLUMNS)
    assert list(df["method"]) == ["exact", "relaxed", "rounding"]
    rows = df.set_index("method")
    assert rows.loc["exact", "status"] == "optimal"
    y_pm1 = np.where(y == 1, 1.0, -1.0)
    assert rows.loc["exact", "objective"] == pytest.approx(_slim_brute_force(X, y_pm1, 0.02, 2), abs=1e-9)
    # the relaxation bounds the exact optimum; rounding is feasible, so never below it
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-9
    assert rows.loc["rounding", "objective"] >= rows.loc["exact", "objective"] - 1e-9
    assert rows.loc["rounding", "bound"] == pytest.approx(rows.loc["relaxed", "objective"])
    gap = (rows.loc["exact", "objective"] - rows.loc["relaxed", "objective"]) / rows.loc["exact", "objective"]
    assert df["integrality_gap"].to_numpy() == pytest.approx(np.full(3, gap))
    # exact model's train accuracy agrees with its 0-1 objective part
    assert rows.loc["exact", "integrity"] == 1.0 and rows.loc["rounding", "integrity"] == 1.0
    numeric = ["objective", "bound", "gap", "build_time", "solve_time", "train_accuracy", "train_auc", "size",
               "integrity", "magnitude", "integrality_gap"]
    assert not df[numeric].isna().any().any()
    assert df[["test_accuracy", "test_auc"]].isna().all().all()  # no test split asked for
    assert set(df["label"]) == {METHOD_LABELS[m] for m in df["method"]}


def test_convex_rounding_rows_match_ternary_enumeration_and_are_seeded():
    X, y = _tiny(seed=3, n=50)
    kw = dict(time_limit=20, test_size=0.3, seed=7, params={"convex_rounding": {"gamma": 1.0, "n_draws": 50}},
              progress=False)
    df = compare(X, y, ["convex_rounding"], **kw)
    rows = df.set_index("method")
    assert list(rows.index) == ["exact", "relaxed", "rounding", "local_search"]
    from sklearn.model_selection import train_test_split

    y_pm1 = np.where(y == 1, 1.0, -1.0)
    tr, _ = train_test_split(np.arange(len(y)), test_size=0.3, random_state=7, stratify=y_pm1)
    assert rows.loc["exact", "status"] == "optimal"
    assert rows.loc["exact", "objective"] == pytest.approx(_ternary_brute_force(X[tr], y_pm1[tr], 1.0), abs=1e-7)
    for heuristic in ("rounding", "local_search"):
        assert rows.loc[heuristic, "objective"] >= rows.loc["exact", "objective"] - 1e-7
        assert rows.loc[heuristic, "magnitude"] <= 1.0 and rows.loc[heuristic, "integrity"] == 1.0
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-7
    assert not df[["train_accuracy", "test_accuracy", "train_auc", "test_auc"]].isna().any().any()
    again = compare(X, y, ["convex_rounding"], **kw)
    cols = ["objective", "train_accuracy", "test_accuracy", "size"]
    pd.testing.assert_frame_equal(df[cols], again[cols])


def test_facets_rows_relaxed_below_exact_below_rounded():
    X, y = _tiny(seed=5, n=60)
    df = compare(X, y, ["facets"], time_limit=20, params={"facets": {"lam": 0.05, "gamma": 0.5, "bound": 4}},
                 progress=False)
    rows = df.set_index("method")
    assert rows.loc["exact", "status"] == "optimal"
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-6
    assert rows.loc["rounding", "objective"] >= rows.loc["exact", "objective"] - 1e-6
    assert rows.loc["exact", "integrity"] == 1.0  # points on the gamma grid
    assert rows.loc["exact", "magnitude"] <= 4 + 1e-9


def test_fused_exact_and_relaxed_on_raw_columns():
    rng = np.random.default_rng(1)
    age = rng.integers(20, 80, 80)
    y = (age + rng.normal(0, 10, 80) > 50).astype(int)
    X = pd.DataFrame({"age": age, "noise": rng.normal(size=80)})
    df = compare(X, y, ["fused"], time_limit=20, params={"fused": {"n_bins": 4, "penalty": 0.5}}, progress=False)
    rows = df.set_index("method")
    assert rows.loc["exact", "status"] == "optimal"
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-7
    assert rows.loc["exact", "train_accuracy"] > 0.7


def test_methods_filter_and_errors():
    X, y = _tiny()
    df = compare(X, y, ["slim", "convex_rounding"], methods=["exact"], time_limit=10, progress=False)
    assert list(df["method"]) == ["exact", "exact"]
    assert "slim" in list_formulations()
    with pytest.raises(ValueError, match="not registered"):
        compare(X, y, ["nope"], progress=False)
    with pytest.raises(ValueError, match="unknown"):
        compare(X, y, ["slim"], methods=["magic"], progress=False)
    with pytest.raises(ValueError, match="supports"):
        compare(X, y, ["slim"], methods=["local_search"], progress=False)
    with pytest.raises(ValueError, match="params given"):
        compare(X, y, ["slim"], params={"facets": {}}, progress=False)
    with pytest.raises(ValueError, match="rows"):
        compare(X[:10], y, ["slim"], progress=False)


def test_facets_logistic_exact_outer_approximation_between_relaxation_and_roundings(shared_data):
    frame = pd.read_csv(shared_data / "mammo_data.csv").sample(200, random_state=0)
    df = compare(frame.iloc[:, 1:], frame.iloc[:, 0], ["facets_logistic"], time_limit=20,
                 params={"facets_logistic": {"lam": 0.01, "gamma": 0.5}}, progress=False)
    rows = df.set_index("method")
    assert list(rows.index) == ["exact", "relaxed", "rounding", "prox_rounding"]
    assert rows.loc["exact", "status"] == "optimal" and rows.loc["exact", "integrity"] == 1.0
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-6
    for rounded in ("rounding", "prox_rounding"):
        assert rows.loc[rounded, "objective"] >= rows.loc["exact", "objective"] - 1e-6
        assert rows.loc[rounded, "bound"] == pytest.approx(rows.loc["relaxed", "objective"], abs=1e-6)
    assert not df[["objective", "bound", "train_accuracy", "test_accuracy", "integrality_gap"]].isna().any().any()


def test_metrics_against_hand_counts():
    from milpscore.metrics import accuracy, auc, integrity, magnitude, model_metrics, model_size

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    y = np.array([1, 0, 1, 0])
    coef, b = np.array([2.0, -1.0]), -1.0  # scores 1, -2, 0, -1: row 3 ties at 0 -> negative -> wrong
    assert accuracy(X, y, coef, b) == 0.75
    # AUC by counting positive/negative pairs: (1 > -2), (1 > -1), (0 > -2), (0 > -1) -> 4 of 4
    assert auc(X, y, coef, b) == 1.0
    assert integrity([0.5, 1.0, -2.0, 0.25], unit=0.5) == 0.75
    assert magnitude([0.5, -1.5], unit=0.5) == 3.0
    assert model_size([0.0, 1e-12, 2.0]) == 1
    out = model_metrics(coef, b, X_train=X, y_train=y)
    assert out == {"train_accuracy": 0.75, "train_auc": 1.0, "size": 2, "integrity": 1.0, "magnitude": 2.0}
    with pytest.raises(ValueError, match="unit"):
        magnitude([1.0], unit=0.0)
    with pytest.raises(ValueError, match="must match"):
        accuracy(X, y, np.ones(3), 0.0)
