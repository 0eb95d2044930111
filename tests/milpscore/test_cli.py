"""CLI: prints a card and the exact-vs-relaxed table (pipeline fits); raw columns are binarised by
default; bad CSVs exit 2 with one clear line."""
import re

import numpy as np
import pandas as pd
import pytest

from milpscore.cli import main


def test_fit_on_shared_csv(shared_data, capsys):
    code = main(["fit", str(shared_data / "breastcancer_data.csv"), "--time-limit", "3", "--max-size", "3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "SLIM score card" in out and "exact (sign_cover)" in out and "relaxed (highs)" in out
    assert "683 training rows" in out


def test_fit_default_data(capsys):
    assert main(["fit", "--time-limit", "3", "--max-size", "3"]) == 0
    out = capsys.readouterr().out
    assert "breast-cancer" in out and "PREDICT 'malignant' IF SCORE >=" in out


@pytest.mark.parametrize("frame, args, match", [
    (pd.DataFrame({"y": [0, 1, 0, 1], "a": [1, None, 2, 3]}), [], "column 'a' contains NaN"),
    (pd.DataFrame({"y": [0, 1, 0, 1], "a": ["x", "y", "x", "z"]}), [], "column 'a' is not numeric"),
    (pd.DataFrame({"y": [1, 1, 1, 1], "a": [1, 2, 3, 4]}), [], "only one class"),
    (pd.DataFrame({"y": [0, 1, 0, 1], "a": [1, 2, 3, 4]}), ["--target", "label"], "--target 'label'"),
])
def test_bad_csv_exit_code_2(tmp_path, capsys, frame, args, match):
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--time-limit", "1", *args]) == 2
    err = capsys.readouterr().err
    assert "milpscore: error:" in err and "Traceback" not in err
    assert re.search(match, err)


def test_raw_continuous_columns_are_binarised_by_default(tmp_path, capsys):
    rng = np.random.default_rng(0)
    age = rng.integers(20, 80, 60)
    frame = pd.DataFrame({"y": (age > 50).astype(int), "age": age, "flag": rng.integers(0, 2, 60)})
    path = tmp_path / "raw.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--time-limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "binarised 1 non-binary column(s) into 3 threshold indicators" in out
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
    assert table.loc["exact (sign_cover)", "objective"] == pytest.approx(model.fit_.objective)
    assert table.loc["exact (sign_cover)", "train_accuracy"] == pytest.approx(model.score(X, y))
    assert table.loc["relaxed (highs)", "bound"] == pytest.approx(model.relaxed_fit_.bound)
    assert table.loc["relaxed (highs)", "objective"] <= table.loc["exact (sign_cover)", "objective"] + 1e-9
    assert table.loc["exact (sign_cover)", "violation"] == 0.0


# ------------------------------------------------------------------ save, predict, export, compare
def _tiny_csv(tmp_path, n=60, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 80, n), "bmi": np.round(rng.normal(27, 4, n), 1),
                          "smoker": rng.integers(0, 2, n)})
    frame.insert(0, "event", ((frame.age > 50) + frame.smoker + rng.normal(0, 0.7, n) > 1).astype(int))
    path = tmp_path / "tiny.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("formulation", ["riskscore", "fused", "slim"])
def test_fit_save_predict_round_trip(tmp_path, capsys, formulation):
    """The saved JSON predicts the same as the fitted model, from raw columns in any order."""
    from milpscore.persist import load_model

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
    np.testing.assert_allclose(printed["score"], model.decision_function(frame))
    # the printed card's rule reproduces the predictions: score + base score > 0
    card = model.scorecard
    np.testing.assert_array_equal(printed["prediction"].astype(str),
                                  np.where(printed["score"] > 0, card.positive_label, card.negative_label).astype(str))
    if formulation == "riskscore":
        np.testing.assert_allclose(printed["probability"], 1 / (1 + np.exp(-printed["score"])))
    shuffled.drop(columns="age").to_csv(pred_path, index=False)
    assert main(["predict", str(model_path), str(pred_path)]) == 2
    assert "['age']" in capsys.readouterr().err


def test_load_refuses_a_newer_format(tmp_path, capsys):
    import json

    from milpscore.persist import load_model

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
    from milpscore.binarize import ThresholdBinarizer

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
    assert run.stdout.startswith("objective")


def test_compare_command_and_version(tmp_path, capsys):
    path, _ = _tiny_csv(tmp_path)
    assert main(["compare", str(path), "--formulations", "slim,riskslim", "--methods", "exact,relaxed",
                 "--time-limit", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("exact") >= 1 and "relaxed" in out
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "milpscore 0." in capsys.readouterr().out


def test_json_and_html_formats(tmp_path, capsys):
    import json

    path, _ = _tiny_csv(tmp_path)
    assert main(["fit", str(path), "--time-limit", "3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"data", "metrics", "model"} and "train accuracy" in data["metrics"]
    assert main(["fit", str(path), "--time-limit", "3", "--format", "html"]) == 0
    assert "<table" in capsys.readouterr().out


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
    assert main(["fit", str(path), "--formulation", "riskscore", "--multiplier", "2", "--time-limit", "5",
                 "--output", str(model_path)]) == 0
    assert "/ 2))" in capsys.readouterr().out  # the card states the risk formula it uses
    pred_path = tmp_path / "pred.csv"
    frame.to_csv(pred_path, index=False)
    assert main(["predict", str(model_path), str(pred_path)]) == 0
    printed = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    np.testing.assert_allclose(printed["probability"], 1 / (1 + np.exp(-printed["score"] / 2)), rtol=1e-9)


def test_multiplier_flag_takes_a_positive_number_or_auto():
    import argparse

    from milpscore.cli import _multiplier

    assert _multiplier("auto") == "auto" and _multiplier("2.5") == 2.5
    for bad in ("0", "-1", "nan", "best"):
        with pytest.raises(argparse.ArgumentTypeError, match="auto"):
            _multiplier(bad)
