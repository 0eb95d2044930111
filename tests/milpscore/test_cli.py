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
    assert "SLIM score card" in out and "exact (MILP)" in out and "relaxed (LP)" in out
    assert "683 rows" in out


def test_fit_default_data(capsys):
    assert main(["fit", "--time-limit", "3", "--max-size", "3"]) == 0
    out = capsys.readouterr().out
    assert "breast-cancer" in out and "predict 'malignant' if total score >=" in out


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
    assert table.loc["exact (MILP)", "objective"] == pytest.approx(model.fit_.objective)
    assert table.loc["exact (MILP)", "train_accuracy"] == pytest.approx(model.score(X, y))
    assert table.loc["relaxed (LP)", "bound"] == pytest.approx(model.relaxed_fit_.bound)
    assert table.loc["relaxed (LP)", "objective"] <= table.loc["exact (MILP)", "objective"] + 1e-9
    assert table.loc["exact (MILP)", "violation"] == 0.0
