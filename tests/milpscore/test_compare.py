"""compare(): one row per (formulation, method) of the catalog, consistent bounds, brute-force checks."""
import itertools

import numpy as np
import pandas as pd
import pytest

from milpscore.compare import COLUMNS, compare, list_formulations, method_label
from solvers.catalog import CATALOG

TOL = 1e-6


def _tiny(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    w = np.array([2.0, -1.0, 1.0, 0.0])[:d]
    y = np.where(X @ w - 0.5 + rng.normal(0, 0.8, n) > 0, 1, 0)
    return X, y


def _needs(name):
    if name not in CATALOG:
        pytest.skip(f"{name!r} is not in solvers.catalog.CATALOG yet")


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


def _ternary_brute_force(X, y_pm1, margin):
    """min over c in {-1,0,1}^d and real b of sum_t max(0, margin - y_t(<c,x_t> + b)) / margin."""
    best = np.inf
    for c in itertools.product((-1.0, 0.0, 1.0), repeat=X.shape[1]):
        s = X @ np.array(c)
        cands = y_pm1 * margin - s  # breakpoints of the convex piecewise-linear function of b
        losses = np.maximum(0, margin - y_pm1[None, :] * (s[None, :] + cands[:, None])).sum(axis=1) / margin
        best = min(best, losses.min())
    return best


# ------------------------------------------------------------------ every catalog formulation
@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_catalog_formulation_gives_consistent_rows(name):
    """No per-formulation code: each entry's methods, with relaxed <= exact bound <= exact objective."""
    entry = CATALOG[name]
    X, y = _tiny()
    if hasattr(entry.spec_class, "design"):
        X = pd.DataFrame(X, columns=["a", "b", "c"])
    df = compare(X, y, [name], time_limit=20, test_size=0.25, progress=False)
    assert list(df.columns) == list(COLUMNS)
    assert tuple(df["method"]) == entry.method_names
    assert list(df["label"]) == [method_label(m) for m in entry.method_names]
    rows = df.set_index("method")
    # the relaxation is a lower bound of every model of the exact program
    relaxed = rows.loc["relaxed"]
    assert relaxed["status"] == "optimal"
    assert relaxed["bound"] <= relaxed["objective"] + TOL * max(1.0, abs(relaxed["objective"])) or np.isnan(relaxed["bound"])
    if entry.exact_backend is not None:
        exact = rows.loc["exact"]
        assert exact["status"] == "optimal"
        assert exact["violation"] == 0.0
        scale = max(1.0, abs(exact["objective"]))
        assert relaxed["objective"] <= exact["bound"] + TOL * scale
        assert exact["bound"] <= exact["objective"] + TOL * scale
        gap = (exact["objective"] - relaxed["objective"]) / max(abs(exact["objective"]), 1e-10)
        assert df["integrality_gap"].to_numpy() == pytest.approx(np.full(len(df), max(gap, 0.0)), abs=1e-9)
        # every feasible heuristic model is a model of the exact program: never below its optimum
        feasible = df[(df["method"] != "relaxed") & (df["violation"] <= TOL) & df["objective"].notna()]
        assert (feasible["objective"] >= exact["objective"] - TOL * scale).all()
    # rows that start from the relaxation carry its value as their bound
    for method in entry.method_names:
        if method not in ("exact", "relaxed", "heuristic"):
            assert rows.loc[method, "bound"] == pytest.approx(relaxed["bound"], nan_ok=True)
            assert rows.loc[method, "total_time"] >= relaxed["total_time"]  # the relaxation is part of it
    # a method may decline a configuration (e.g. a proximal method on a non-smooth loss): no model,
    # a status saying so and the reason; every row with a model has all its metrics
    declined = df["train_accuracy"].isna()
    assert df.loc[declined, "status"].isin(["no_solution_found"]).all() and (df.loc[declined, "message"] != "").all()
    assert set(df.loc[declined, "method"]).isdisjoint({"exact", "relaxed", "rounding"})
    assert not df.loc[~declined, ["size", "train_auc", "test_auc", "integrity", "magnitude"]].isna().any().any()
    assert not df[["build_time", "solve_time", "total_time"]].isna().any().any()
    assert (df["total_time"] >= df["solve_time"]).all()


def test_slim_exact_matches_enumeration():
    X, y = _tiny(d=4)
    df = compare(X, y, ["slim"], time_limit=20, test_size=None, params={"slim": {"coef_bound": 2, "c0": 0.02}},
                 progress=False)
    rows = df.set_index("method")
    assert rows.loc["exact", "status"] == "optimal"
    y_pm1 = np.where(y == 1, 1.0, -1.0)
    assert rows.loc["exact", "objective"] == pytest.approx(_slim_brute_force(X, y_pm1, 0.02, 2), abs=1e-9)
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-9
    assert rows.loc["rounding", "objective"] >= rows.loc["exact", "objective"] - 1e-9
    assert rows.loc["rounding", "bound"] == pytest.approx(rows.loc["relaxed", "objective"])
    assert rows.loc["exact", "integrity"] == 1.0 and rows.loc["rounding", "integrity"] == 1.0
    assert df[["test_accuracy", "test_auc"]].isna().all().all()  # no test split asked for


def test_convex_rounding_rows_match_ternary_enumeration_and_are_seeded():
    X, y = _tiny(seed=3, n=50, d=4)
    kw = dict(time_limit=20, test_size=0.3, seed=7, params={"convex_rounding": {"margin": 1.0, "n_draws": 50}},
              progress=False)
    df = compare(X, y, ["convex_rounding"], **kw)
    rows = df.set_index("method")
    from sklearn.model_selection import train_test_split

    y_pm1 = np.where(y == 1, 1.0, -1.0)
    tr, _ = train_test_split(np.arange(len(y)), test_size=0.3, random_state=7, stratify=y_pm1)
    assert rows.loc["exact", "status"] == "optimal"
    assert rows.loc["exact", "objective"] == pytest.approx(_ternary_brute_force(X[tr], y_pm1[tr], 1.0), abs=1e-7)
    for heuristic in ("rounding", "randomized_rounding", "local_search"):
        assert rows.loc[heuristic, "objective"] >= rows.loc["exact", "objective"] - 1e-7
        assert rows.loc[heuristic, "magnitude"] <= 1.0 and rows.loc[heuristic, "integrity"] == 1.0
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-7
    again = compare(X, y, ["convex_rounding"], **kw)
    cols = ["objective", "train_accuracy", "test_accuracy", "size"]
    pd.testing.assert_frame_equal(df[cols], again[cols])


def test_fused_exact_and_relaxed_on_raw_columns():
    _needs("fused")
    rng = np.random.default_rng(1)
    age = rng.integers(20, 80, 80)
    y = (age + rng.normal(0, 10, 80) > 50).astype(int)
    X = pd.DataFrame({"age": age, "noise": rng.normal(size=80)})
    df = compare(X, y, ["fused"], methods=["exact", "relaxed"], time_limit=20, progress=False)
    rows = df.set_index("method")
    assert rows.loc["exact", "status"] == "optimal"
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-7
    assert rows.loc["exact", "train_accuracy"] > 0.7


def test_facets_logistic_exact_between_relaxation_and_roundings(shared_data):
    _needs("facets_logistic")
    frame = pd.read_csv(shared_data / "mammo_data.csv").sample(200, random_state=0)
    df = compare(frame.iloc[:, 1:], frame.iloc[:, 0], ["facets_logistic"], time_limit=20, progress=False)
    rows = df.set_index("method")
    assert rows.loc["exact", "status"] == "optimal" and rows.loc["exact", "integrity"] == 1.0
    assert rows.loc["relaxed", "objective"] <= rows.loc["exact", "objective"] + 1e-6
    for method in CATALOG["facets_logistic"].method_names:
        if method not in ("exact", "relaxed", "heuristic") and rows.loc[method, "violation"] <= TOL:
            assert rows.loc[method, "objective"] >= rows.loc["exact", "objective"] - 1e-6
            assert rows.loc[method, "bound"] == pytest.approx(rows.loc["relaxed", "bound"], abs=1e-6)
    assert not df[["objective", "train_accuracy", "test_accuracy", "integrality_gap"]].isna().any().any()


@pytest.mark.parametrize("name", ["slim", "facets", "facets_logistic"])
def test_rounding_row_on_breastcancer_is_not_the_empty_model(shared_data, name):
    """The rounded relaxation must keep some features (it returned size 0, AUC 0.5).

    The relaxations are right (optimal, test AUC 0.99 on these data): breast-cancer features run
    from 1 to 10, so every relaxed coefficient is below half a grid unit of 1, and rounding each
    to the nearest grid point gave the empty model. Rounding now also tries the relaxed model
    rescaled along its ray (solvers.pipeline.solve_rounded) and keeps the best feasible rounding.
    """
    _needs(name)
    frame = pd.read_csv(shared_data / "breastcancer_data.csv")
    df = compare(frame.iloc[:, 1:], frame.iloc[:, 0], [name], methods=["relaxed", "rounding"], time_limit=20,
                 progress=False)
    rows = df.set_index("method")
    assert rows.loc["relaxed", "size"] > 0
    assert rows.loc["rounding", "size"] > 0
    assert rows.loc["rounding", "test_auc"] > 0.5


def test_methods_filter_and_errors():
    X, y = _tiny()
    df = compare(X, y, ["slim", "convex_rounding"], methods=["exact"], time_limit=10, progress=False)
    assert list(df["method"]) == ["exact", "exact"] and list(df["formulation"]) == ["slim", "convex_rounding"]
    only = compare(X, y, ["slim", "convex_rounding"], methods=["local_search"], time_limit=10, progress=False)
    assert list(only["formulation"]) == ["convex_rounding"]  # slim has no local search: no row, no error
    assert list_formulations() == {name: entry.method_names for name, entry in CATALOG.items()}
    with pytest.raises(ValueError, match="not in the catalog"):
        compare(X, y, ["nope"], progress=False)
    with pytest.raises(ValueError, match="unknown"):
        compare(X, y, ["slim"], methods=["magic"], progress=False)
    with pytest.raises(ValueError, match="supports"):
        compare(X, y, ["slim"], methods=["local_search"], progress=False)
    with pytest.raises(ValueError, match="params given"):
        compare(X, y, ["slim"], params={"convex_rounding": {}}, progress=False)
    with pytest.raises(ValueError, match="rows"):
        compare(X[:10], y, ["slim"], progress=False)
    with pytest.raises(ValueError, match="time_limit"):
        compare(X, y, ["slim"], time_limit=0, progress=False)
    with pytest.raises(ValueError, match="c0"):
        compare(X, y, ["slim"], params={"slim": {"c0": -1.0}}, progress=False)


def test_the_budget_is_per_call_and_defaults_are_the_specs():
    """time_limit bounds each (formulation, method) call; no params means the spec's own defaults."""
    X, y = _tiny()
    df = compare(X, y, ["slim"], time_limit=5, progress=False)
    assert (df["total_time"] - df["build_time"] < 5 + 1.0).all()
    from formulations.slim import SLIM
    from solvers.limits import Limits
    from solvers.pipeline import run
    from sklearn.model_selection import train_test_split

    y_pm1 = np.where(y == 1, 1.0, -1.0)
    tr, _ = train_test_split(np.arange(len(y)), test_size=0.3, random_state=0, stratify=y_pm1)
    fit = run(SLIM().instance(X[tr], y_pm1[tr]), "exact", limits=Limits(time_limit=5))
    assert df.set_index("method").loc["exact", "objective"] == pytest.approx(fit.objective, abs=1e-12)


def test_every_row_has_its_own_budget_and_its_settings(capsys):
    """An exact solve that runs to its limit leaves the other rows their whole budget (each row has a
    model); the settings of each row are in the table; asked for, a progress line goes to stderr only."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(400, 24)).astype(float)
    y = (X[:, :12].sum(axis=1) + rng.normal(0, 2.5, 400) > 6).astype(int)  # no small exact card: slim runs out
    df = compare(X, y, ["slim", "convex_rounding"], methods=["exact", "relaxed", "rounding"], time_limit=1.0,
                 progress=True, params={"slim": {"c0": 0.002}})
    captured = capsys.readouterr()
    assert captured.out == "" and "compare  6 rows in" in captured.err and "compare  1/6  slim" in captured.err
    assert list(df["formulation"]) == ["slim"] * 3 + ["convex_rounding"] * 3
    assert df.set_index(["formulation", "method"]).loc[("slim", "exact"), "status"] == "feasible"
    assert (df["status"] != "no_solution_found").all() and np.isfinite(df["objective"]).all()
    assert (df["total_time"] - df["build_time"] < 2 * 1.0 + 1.0).all()  # a rounding row counts its relaxation
    slim_settings = set(df.loc[df["formulation"] == "slim", "settings"])
    assert slim_settings == {"c0=0.002 coef_bound=10"}
    assert df.loc[df["formulation"] == "convex_rounding", "settings"].iloc[0] == "weights=ternary"
    quiet = compare(X[:60], y[:60], ["riskslim"], methods=["relaxed"], time_limit=5)  # progress: only on a terminal
    assert list(quiet["formulation"]) == ["riskslim"] and capsys.readouterr().err == ""


def test_top_level_exports_and_compare_is_the_function():
    """``from milpscore import ...`` gives the public names; ``compare`` stays the function even when
    the module ``milpscore.compare`` was imported first (a fresh interpreter, so the order is real)."""
    import subprocess
    import sys

    code = ("import milpscore.compare, milpscore.cli\n"
            "from milpscore import (SLIMClassifier, ConvexRoundingClassifier, LocalSearchClassifier, FacetsClassifier,"
            " EYEClassifier, FusedScoreClassifier, IntegerLinearClassifier, compare, ScoreCard, solve, Limits,"
            " solve_exact, solve_relaxed, solve_rounded)\n"
            "import milpscore, solvers.pipeline, solvers.registry\n"
            "assert callable(compare) and compare.__name__ == 'compare' and milpscore.compare is compare\n"
            "assert solve is solvers.registry.solve and solve_exact is solvers.pipeline.solve_exact\n"
            "assert SLIMClassifier.__module__ == 'milpscore.estimators.slim'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    light = subprocess.run([sys.executable, "-c", "import sys, milpscore; print('sklearn' in sys.modules)"],
                           capture_output=True, text=True)
    assert light.stdout.strip() == "False", light.stderr[-2000:]  # import milpscore stays light


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
