"""CLI: prints a card and the exact-vs-relaxed table (pipeline fits); raw columns are binarised by
default; bad CSVs exit 2 with one clear line naming the column and the flag that fixes it."""
import re

import numpy as np
import pandas as pd
import pytest

from milpscore.cli import main


def test_fit_on_shared_csv(shared_data, capsys):
    code = main(["fit", str(shared_data / "breastcancer_data.csv"), "--time-limit", "3", "--max-size", "3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "SLIM score card" in out and re.search(r"exact \(\w+\)", out) and "relaxed (highs)" in out
    assert "683 training rows" in out


def test_fit_default_data(capsys):
    assert main(["fit", "--time-limit", "3", "--max-size", "3"]) == 0
    out = capsys.readouterr().out
    assert "breast-cancer" in out and "PREDICT 'malignant' IF SCORE >=" in out


@pytest.mark.parametrize("frame, args, match", [
    (pd.DataFrame({"y": [0, 1, 0, 1], "a": [1, None, 2, 3]}), [], "column 'a' contains NaN.*--missing indicator"),
    (pd.DataFrame({"y": [1, 1, 1, 1], "a": [1, 2, 3, 4]}), [], "label column 'y' .* 1 distinct value"),
    (pd.DataFrame({"y": [0, 1, 0, 1], "a": [1, 2, 3, 4]}), ["--target", "label"], "--target 'label'"),
    (pd.DataFrame({"y": [0, 1, 0, 1], "a": [1, 2, 3, 4]}), ["--missing", "indicator", "--formulation", "fused"],
     "fused table bins its own columns"),
    (pd.DataFrame({"age": [30.0, 41, 52, 63, 74, 85], "event": [0, 1, 0, 1, 0, 1]}), [],
     r"label column 'age' \(the first column\) .* 6 distinct value\(s\) \(30.0, 41.0, .*--target NAME "
     r"\(two-valued columns: \['event'\]\)"),
    (pd.DataFrame({"y": [0, 1, None, 1], "a": [1, 2, 3, 4]}), [], "label column 'y' .* is empty in 1 row"),
    (pd.DataFrame({"y": [], "a": []}), [], r"has a header \(2 column\(s\)\) but no data rows"),
    (pd.DataFrame({"y": [0, 1, 0, 1]}), [], "only the label column 'y'"),
])
def test_bad_csv_exit_code_2(tmp_path, capsys, frame, args, match):
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--time-limit", "1", *args]) == 2
    err = capsys.readouterr().err
    assert "milpscore: error:" in err and "Traceback" not in err
    assert re.search(match, err), err


def test_repeated_header_names_are_refused_by_name(tmp_path, capsys):
    """pandas would rename the copy 'a.1' silently; the CLI refuses the file and names the column."""
    path = tmp_path / "dup.csv"
    path.write_text("y,a,a,b\n0,1,2,3\n1,2,3,4\n0,1,1,1\n1,3,3,3\n")
    assert main(["fit", str(path), "--time-limit", "1"]) == 2
    assert "repeats the column name(s) ['a']" in capsys.readouterr().err


def test_an_empty_card_is_a_note_without_a_warning_or_a_line_number(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.integers(0, 2, 40), "noise": rng.integers(0, 2, 40)})
    path = tmp_path / "noise.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--time-limit", "3", "--c0", "0.5"]) == 0
    captured = capsys.readouterr()
    assert "no points: every row gets the same class" in captured.out
    assert "milpscore: note:" in captured.err and "constant model" in captured.err
    assert "Warning" not in captured.err and "cli.py" not in captured.err and ".py:" not in captured.err


def test_raw_continuous_columns_are_binarised_by_default(tmp_path, capsys):
    rng = np.random.default_rng(0)
    age = rng.integers(20, 80, 60)
    frame = pd.DataFrame({"y": (age > 50).astype(int), "age": age, "flag": rng.integers(0, 2, 60)})
    path = tmp_path / "raw.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--time-limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "binarised 1 non-binary column(s) into 3 threshold indicators" in out
    assert out.index("binarised") < out.index("SLIM score card")  # the data summary comes before the solve
    assert re.search(r"age >= \d+", out)  # the card speaks in thresholds, not in raw ages
    assert main(["fit", str(path), "--time-limit", "3", "--binarize", "0"]) == 0
    assert "1 non-binary column(s) used as they are (--binarize 0): ['age']" in capsys.readouterr().out
    assert main(["fit", str(path), "--binarize", "-1"]) == 2
    assert "--binarize must be >= 0" in capsys.readouterr().err


def test_table_rows_are_the_pipeline_fits(shared_data):
    from milpscore.cli import comparison_table
    from milpscore.estimators.slim import SLIMClassifier

    frame = pd.read_csv(shared_data / "breastcancer_data.csv").head(120)
    X, y = (frame.iloc[:, 1:] >= 5).astype(float), frame.iloc[:, 0]
    model = SLIMClassifier(coef_bound=3, c0=0.01, max_size=2, time_limit=10, relaxed=True).fit(X, y)
    table = comparison_table(model, X, y).set_index("program")
    exact = f"exact ({model.result_.backend})"
    assert table.loc[exact, "objective"] == pytest.approx(model.fit_.objective)
    assert table.loc[exact, "train_accuracy"] == pytest.approx(model.score(X, y))
    assert table.loc["relaxed (highs)", "bound"] == pytest.approx(model.relaxed_fit_.bound)
    assert table.loc["relaxed (highs)", "objective"] <= table.loc[exact, "objective"] + 1e-9
    assert table.loc[exact, "violation"] == 0.0


# ------------------------------------------------------------------ save, predict, export, compare
def _tiny_csv(tmp_path, n=60, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 80, n), "bmi": np.round(rng.normal(27, 4, n), 1),
                          "smoker": rng.integers(0, 2, n)})
    frame.insert(0, "event", ((frame.age > 50) + frame.smoker + rng.normal(0, 0.7, n) > 1).astype(int))
    path = tmp_path / "tiny.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("formulation", ["riskslim", "fused", "slim", "facets"])
def test_fit_save_predict_round_trip(tmp_path, capsys, formulation):
    """The saved JSON predicts the same as the fitted model, from raw columns in any order; the
    ``points`` column is the card's total (points + card intercept > 0 is the prediction)."""
    from milpscore.model_files.persist import load_model

    path, frame = _tiny_csv(tmp_path)
    model_path = tmp_path / "model.json"
    assert main(["fit", str(path), "--formulation", formulation, "--time-limit", "5", "--test-size", "0.25",
                 "--output", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert "test accuracy" in out and "test auc" in out and f"model saved to {model_path}" in out
    model = load_model(model_path)
    assert model.data["format_version"] == 1 and model.data["solver"]["status"] in ("optimal", "feasible")
    shuffled = frame[["smoker", "bmi", "age"]]  # column order does not matter; the label is not needed
    pred_path = tmp_path / "pred.csv"
    shuffled.to_csv(pred_path, index=False)
    assert main(["predict", str(model_path), str(pred_path)]) == 0
    printed = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert list(printed.columns) == ["points", "prediction"] + (["probability"] if formulation == "riskslim" else [])
    card = model.scorecard
    unit = model.data["estimator"]["params"]["grid_unit"] if formulation == "facets" else 1.0
    np.testing.assert_allclose(printed["points"] + card.intercept, model.decision_function(frame) / unit, atol=1e-9)
    # the printed card's rule reproduces the predictions: points + base score > 0
    np.testing.assert_array_equal(printed["prediction"].astype(str),
                                  np.where(printed["points"] + card.intercept > 0, card.positive_label,
                                           card.negative_label).astype(str))
    if formulation == "riskslim":
        np.testing.assert_allclose(printed["probability"], 1 / (1 + np.exp(-(printed["points"] + card.intercept))))
    if formulation != "facets":
        assert printed["points"].dtype.kind == "i"  # integer cards print integer totals
    frame.rename(columns={"age": "age_years"}).to_csv(pred_path, index=False)  # the label column is there too
    assert main(["predict", str(model_path), str(pred_path)]) == 2
    err = capsys.readouterr().err
    assert "['age']" in err and "['age_years']" in err and "event" not in err  # the hint never proposes the label


def test_load_refuses_a_newer_format(tmp_path, capsys):
    import json

    from milpscore.model_files.persist import load_model

    path, _ = _tiny_csv(tmp_path)
    model_path = tmp_path / "model.json"
    assert main(["fit", str(path), "--time-limit", "3", "--output", str(model_path)]) == 0
    data = json.loads(model_path.read_text())
    data["format_version"] = 99
    model_path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="format 99.*upgrade"):
        load_model(model_path)


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_export_rereads_and_resolves_to_the_same_objective(tmp_path, capsys, suffix):
    import highspy

    from milpscore import SLIMClassifier
    from solvers.pipeline import solve_exact

    path, frame = _tiny_csv(tmp_path)
    target = tmp_path / f"model{suffix}"
    assert main(["export", str(path), "--to", str(target), "--time-limit", "10"]) == 0
    assert "exact program of slim" in capsys.readouterr().out
    text = target.read_text()
    assert "coef(age_ge_" in text  # readable names: the points of 'age >= t'
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(target))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    X = frame.drop(columns="event")
    from milpscore.data.binarize import ThresholdBinarizer

    Z = ThresholdBinarizer(3).fit_transform(X)
    instance = SLIMClassifier(c0=0.01).build_instance(Z, frame["event"])
    reference = solve_exact(instance)
    assert reference.status.value == "optimal"
    assert h.getInfo().objective_function_value == pytest.approx(reference.objective, abs=1e-9)


def test_export_pyomo_script_runs(tmp_path, capsys):
    import subprocess
    import sys

    path, _ = _tiny_csv(tmp_path)
    target = tmp_path / "model.py"
    assert main(["export", str(path), "--to", str(target), "--relaxed"]) == 0
    run = subprocess.run([sys.executable, str(target)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("objective")


def test_compare_command_and_version(tmp_path, capsys):
    path, _ = _tiny_csv(tmp_path)
    assert main(["compare", str(path), "--formulations", "slim,riskslim", "--methods", "exact,relaxed",
                 "--time-limit", "5", "--progress", "--c0", "0.01"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert out.count("exact") >= 1 and "relaxed" in out
    assert "riskslim" in out
    assert "settings" in out and "c0=0.01" in out  # the settings of each row are in the table
    assert "compare  4 rows in" in captured.err  # asked for: a progress line on stderr, none on stdout
    assert main(["compare", str(path), "--formulations", "nope", "--time-limit", "1"]) == 2
    assert "not in the catalog" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "milpscore 0." in capsys.readouterr().out


def test_json_and_html_formats(tmp_path, capsys):
    import json

    path, _ = _tiny_csv(tmp_path)
    assert main(["fit", str(path), "--time-limit", "3", "--format", "json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # stdout is the JSON document only
    assert set(data) == {"data", "metrics", "model"} and "train accuracy" in data["metrics"]
    assert data["model"]["schema"]["target"] == "event"
    assert captured.err.startswith("data: ")  # the summary, printed before the solve, on stderr
    assert main(["fit", str(path), "--time-limit", "3", "--format", "html"]) == 0
    captured = capsys.readouterr()
    assert "<table" in captured.out and "binarised" not in captured.out and captured.err.startswith("data: ")


def test_pos_label_chooses_the_class_the_points_score_for(tmp_path, capsys):
    from milpscore import SLIMClassifier

    path, frame = _tiny_csv(tmp_path)
    X, y = frame.drop(columns="event"), frame["event"].map({0: "no", 1: "yes"})
    Z = (X >= X.median()).astype(float)
    default = SLIMClassifier(c0=0.01, time_limit=5).fit(Z, y)
    flipped = SLIMClassifier(c0=0.01, time_limit=5, pos_label="no").fit(Z, y)
    assert list(default.classes_) == ["no", "yes"] and list(flipped.classes_) == ["yes", "no"]
    assert "PREDICT 'no' IF SCORE" in str(flipped.scorecard_)
    assert flipped.objective_ == pytest.approx(default.objective_, abs=1e-9)  # the same problem, mirrored
    np.testing.assert_array_equal(flipped.predict(Z)[flipped.decision_function(Z) > 0], "no")
    with pytest.raises(ValueError, match="pos_label 'maybe' is not a class"):
        SLIMClassifier(pos_label="maybe").fit(Z, y)
    assert main(["fit", str(path), "--time-limit", "3", "--pos-label", "0"]) == 0
    assert "PREDICT 0 IF SCORE" in capsys.readouterr().out


def test_riskscore_multiplier_reaches_the_saved_probabilities(tmp_path, capsys):
    path, frame = _tiny_csv(tmp_path)
    model_path = tmp_path / "model.json"
    assert main(["fit", str(path), "--formulation", "riskslim", "--multiplier", "2", "--time-limit", "5",
                 "--output", str(model_path)]) == 0
    assert "/ 2))" in capsys.readouterr().out  # the card states the risk formula it uses
    pred_path = tmp_path / "pred.csv"
    frame.to_csv(pred_path, index=False)
    assert main(["predict", str(model_path), str(pred_path)]) == 0
    printed = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    intercept = __import__("json").loads(model_path.read_text())["card"]["intercept"]
    np.testing.assert_allclose(printed["probability"], 1 / (1 + np.exp(-(printed["points"] + intercept) / 2)),
                               rtol=1e-9)


def test_multiplier_flag_takes_a_positive_number_or_auto():
    import argparse

    from milpscore.cli import _multiplier

    assert _multiplier("auto") == "auto" and _multiplier("2.5") == 2.5
    for bad in ("0", "-1", "nan", "best"):
        with pytest.raises(argparse.ArgumentTypeError, match="auto"):
            _multiplier(bad)


def test_n_jobs_reaches_the_estimator_and_zero_is_refused(capsys):
    """``--n-jobs N`` sets the estimator's bounding workers (slim, riskslim); 0 or a word is a usage
    error (exit 2) naming the flag; a riskslim fit with two workers prints the card of one."""
    from milpscore.cli import _parser, estimator

    for formulation, cls in (("slim", "SLIMClassifier"), ("riskslim", "RiskScoreClassifier")):
        args = _parser().parse_args(["fit", "--formulation", formulation, "--n-jobs", "-1"])
        est = estimator(args)
        assert type(est).__name__ == cls and est.n_jobs == -1
    for bad in ("0", "two"):
        with pytest.raises(SystemExit) as exit_info:
            main(["fit", "--n-jobs", bad])
        assert exit_info.value.code == 2 and "--n-jobs takes a non-zero integer" in capsys.readouterr().err
    cards = []
    for jobs in ("1", "2"):
        assert main(["fit", "--formulation", "riskslim", "--max-size", "2", "--time-limit", "20", "--n-jobs", jobs,
                     "--quiet"]) == 0
        cards.append(capsys.readouterr().out.split("exact")[0])
    assert cards[0] == cards[1] and "risk" in cards[0].lower()


@pytest.mark.parametrize("formulation", ["slim", "fused"])
def test_cross_validation_shares_the_command_budget(tmp_path, capsys, formulation):
    """``--cv 2``: the main fit and the two folds take shares of one budget started by the command
    (each fit handed its started share), so the command ends within its limit (plus what the
    folds' data preparation and the last step's look at the clock take)."""
    import time

    path, _ = _tiny_csv(tmp_path)
    started = time.perf_counter()
    assert main(["fit", str(path), "--formulation", formulation, "--time-limit", "4", "--cv", "2"]) == 0
    assert time.perf_counter() - started < 4 + 2.0
    out = capsys.readouterr().out
    assert "cv accuracy" in out and "(2 folds)" in out


def test_constraint_flags_resolve_variables_to_the_designs_columns_and_name_what_is_wrong():
    """``--increasing`` / ``--decreasing``: ``Monotone`` over a variable's thresholds, or over a column kept as
    it is; ``--at-most K:VARS``: ``AtMost`` over every indicator of those variables (a categorical's levels
    too). A variable not in the design, a bad count, or a formulation without constraints is an error naming
    the flag."""
    from formulations.constraints import AtMost, Monotone
    from milpscore.cli import _parser, cli_constraints, estimator

    columns = ["age >= 40", "age >= 60", "bmi >= 30", "color == red", "color == blue", "visits"]
    args = _parser().parse_args(["fit", "--increasing", "age,visits", "--decreasing", "bmi",
                                 "--at-most", "1:age,color", "--at-most", "2:bmi,visits"])
    assert cli_constraints(args, columns) == (
        Monotone(["age >= 40", "age >= 60"], "increasing"), Monotone(["visits"], "increasing"),
        Monotone(["bmi >= 30"], "decreasing"),
        AtMost(["age >= 40", "age >= 60", "color == red", "color == blue"], 1), AtMost(["bmi >= 30", "visits"], 2))
    assert estimator(args, columns).constraints == cli_constraints(args, columns)
    for flags, match in ((["--increasing", "weight"], r"--increasing: 'weight' is not a variable .*'age', 'bmi'"),
                         (["--at-most", "age,bmi"], "--at-most takes K:VARS"),
                         (["--at-most", "one:age"], "--at-most takes K:VARS"),
                         (["--decreasing", " , "], "--decreasing takes comma-separated variable names")):
        with pytest.raises(ValueError, match=match):
            cli_constraints(_parser().parse_args(["fit", *flags]), columns)
    fused = _parser().parse_args(["fit", "--formulation", "fused", "--increasing", "age"])
    with pytest.raises(ValueError, match="--increasing apply to slim, riskslim, facets, facets_logistic, not "
                                         "--formulation fused"):
        estimator(fused, columns)


def test_a_constrained_fit_from_the_terminal_obeys_its_flags_and_is_proven(capsys):
    """On the bundled data the unconstrained 3-feature card gives worst radius, worst texture and worst
    concave points positive points; with their points made non-increasing along worst radius and at most one
    of the three, the card obeys both and the route proves it."""
    import json

    flags = ["fit", "--max-size", "3", "--time-limit", "60", "--format", "json", "--quiet"]
    assert main(flags) == 0
    free = json.loads(capsys.readouterr().out)["model"]["card"]["rows"]
    three = ("worst radius", "worst texture", "worst concave points")
    assert sum(any(r["variable"].startswith(v + " >= ") for r in free) for v in three) > 1  # (the flags bind)
    assert main(flags + ["--decreasing", "worst radius", "--at-most", "1:" + ",".join(three)]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = data["model"]["card"]["rows"]
    assert all(r["points"] <= 0 for r in rows if r["variable"].startswith("worst radius >= "))
    assert sum(any(r["variable"].startswith(v + " >= ") for r in rows) for v in three) <= 1
    assert data["model"]["solver"]["status"] == "optimal"
    assert any("at most 1 of worst radius" in note for note in data["model"]["card"]["notes"])
