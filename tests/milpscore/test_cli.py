"""CLI: prints a card and the exact-vs-relaxed table; bad CSVs exit 2 with one clear line."""
import re

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
