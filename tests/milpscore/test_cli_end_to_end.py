"""The command line end to end, as an analyst runs it, on a generated CSV with a text column, a
numeric code column, missing values and special codes: fit -> JSON -> predict -> export -> compare.

Each command runs in its own process, so anything a solver library writes to the process's
stdout (not only Python's ``sys.stdout``) is seen. The card is read off the printed text and
applied by hand to the raw CSV, independently of :class:`milpscore.data.binarize.ThresholdBinarizer`;
the exported program is re-solved by highspy.
"""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

SPECIAL = (-7.0, -8.0)
FLAGS = ["--target", "event", "--missing", "indicator", "--special-values", "-7,-8", "--max-categories", "3",
         "--categorical", "region", "--binarize", "2"]


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 90, n)
    inquiry = rng.integers(0, 24, n).astype(float)
    inquiry[rng.random(n) < 0.15] = -7  # "no inquiry on record"
    inquiry[rng.random(n) < 0.05] = -8
    bmi = np.round(rng.normal(27, 4, n), 1)
    bmi[rng.random(n) < 0.1] = np.nan
    city = rng.choice(["paris", "lyon", "nice", "lille", "metz"], n, p=[0.4, 0.25, 0.15, 0.12, 0.08])
    smoker = rng.choice(["yes", "no"], n)
    region = rng.choice([1, 2, 3], n)
    risk = (age > 55) * 1.5 + (smoker == "yes") * 1.2 + (inquiry == -7) * 1.0 + np.isnan(bmi) * 0.8 + (city == "nice")
    event = (risk + rng.logistic(0, 0.6, n) > 1.8).astype(int)
    return pd.DataFrame({"age": age, "months_since_inquiry": inquiry, "bmi": bmi, "city": city, "smoker": smoker,
                         "region": region, "event": event})


def _run(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-m", "milpscore.cli", *args], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    assert (run.returncode == 0) == ok, run.stderr
    for banner in ("Running HiGHS", "Copyright", "Includes third-party"):  # stdout carries only the document
        assert banner not in run.stdout
    assert "Traceback" not in run.stderr
    return run


def _predict(capsys, *args: str, ok: bool = True) -> str:
    """``milpscore predict`` in this process (no solver runs): stdout, or stderr when it fails."""
    from milpscore.cli import main

    assert (main(["predict", *args]) == 0) == ok
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.out if ok else captured.err


def _card(text: str) -> tuple[list[tuple[str, float]], str]:
    """``[(condition, points)]`` and the rule line of a card printed by ``milpscore fit``."""
    rows = [(m.group(1), float(m.group(2))) for m in
            re.finditer(r"(?m)^\s*\d+\.\s+(.+?)\s{2,}([-+]?\d+(?:\.\d+)?) points?\b", text)]
    rule = re.search(r"(?m)^PREDICT .*$", text).group(0)
    return rows, rule


def _by_hand(frame: pd.DataFrame, train: pd.DataFrame, condition: str) -> np.ndarray:
    """One card condition on the raw rows, from the text of the condition and the flags alone."""
    if m := re.fullmatch(r"(.+) is missing", condition):
        return frame[m.group(1)].isna().to_numpy()
    if m := re.fullmatch(r"(.+): other levels", condition):
        col = m.group(1)
        counts = train[col].astype(str).value_counts()
        top = sorted(counts.index, key=lambda v: (-counts[v], v))[:3]  # --max-categories 3
        return (~frame[col].astype(str).isin(top) & frame[col].notna()).to_numpy()
    if m := re.fullmatch(r"(.+) >= (\S+)", condition):
        values = frame[m.group(1)].to_numpy(dtype=float)
        return (values >= float(m.group(2))) & ~np.isin(values, SPECIAL)  # NaN >= t is False
    if m := re.fullmatch(r"(.+) == (\S+)", condition):
        col, level = m.groups()
        if col == "months_since_inquiry":  # a special code
            return frame[col].to_numpy(dtype=float) == float(level)
        return (frame[col].astype(str) == level).to_numpy()
    return frame[condition].to_numpy() == 1


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("e2e")
    train, new = _table(100, 0), _table(40, 1).drop(columns="event")
    new.loc[0, "city"] = "brest"  # a level never seen in fit: one of the 'other levels'
    new.loc[1, "bmi"] = np.nan
    new.loc[2, "months_since_inquiry"] = -8
    train.to_csv(folder / "train.csv", index=False)
    new.to_csv(folder / "new.csv", index=False)
    return folder, train, new


def test_fit_json_predict_export_compare(files, capsys):
    import highspy

    folder, train, new = files
    model_path = folder / "model.json"
    fit = _run("fit", str(folder / "train.csv"), *FLAGS, "--max-size", "4", "--time-limit", "20",
               "--output", str(model_path))
    assert fit.stdout.startswith("data: ") and "missing-value indicators for ['bmi']" in fit.stdout
    assert fit.stdout.index("data: ") < fit.stdout.index("SLIM score card")
    rows, rule = _card(fit.stdout)
    saved = json.loads(model_path.read_text())
    assert saved["solver"]["status"] == "optimal" and len(rows) == len(saved["card"]["rows"]) > 0
    prep = saved["preprocessor"]  # the model file carries the transformation predict applies
    assert prep["missing"] == "indicator" and prep["special_values"] == list(SPECIAL)
    assert prep["max_categories"] == 3 and prep["categorical"] == ["region"]
    assert ["months_since_inquiry", "special", -7.0] in prep["rules"] and ["city", "other", None] in prep["rules"]

    # predict: the points column is the printed card applied by hand; the rule gives the class
    predicted = pd.read_csv(io.StringIO(_predict(capsys, str(model_path), str(folder / "train.csv"))))
    assert list(predicted.columns) == ["points", "prediction"]
    by_hand = sum(points * _by_hand(train, train, condition) for condition, points in rows)
    np.testing.assert_array_equal(predicted["points"].to_numpy(), by_hand)
    threshold = int(re.search(r"SCORE >= (-?\d+)", rule).group(1))
    np.testing.assert_array_equal(predicted["prediction"].to_numpy(), np.where(by_hand >= threshold, 1, 0))
    # rows the fit never saw: an unseen level, missing values and special codes go through the same rules
    fresh = pd.read_csv(io.StringIO(_predict(capsys, str(model_path), str(folder / "new.csv"))))
    np.testing.assert_array_equal(fresh["points"].to_numpy(),
                                  sum(points * _by_hand(new, train, condition) for condition, points in rows))
    # text where fit saw numbers, and an empty file
    bad = new.astype({"age": object})
    bad.loc[3, "age"] = "unknown"
    bad.to_csv(folder / "bad.csv", index=False)
    err = _predict(capsys, str(model_path), str(folder / "bad.csv"), ok=False)
    assert "column 'age' holds text ('unknown'" in err
    new.iloc[:0].to_csv(folder / "empty.csv", index=False)
    assert _predict(capsys, str(model_path), str(folder / "empty.csv")).strip() == "points,prediction"

    # JSON on stdout (json.load reads it whole; the data summary goes to stderr, before the solve), and
    # the exported program re-solved by highspy to the objective the JSON states (30 rows: plain HiGHS
    # proves SLIM's big-M program only on small tables)
    _table(30, 2).to_csv(folder / "small.csv", index=False)
    as_json = _run("fit", str(folder / "small.csv"), *FLAGS, "--max-size", "4", "--time-limit", "20", "--format",
                   "json")
    document = json.load(io.StringIO(as_json.stdout))
    assert as_json.stderr.startswith("data: ") and document["model"]["solver"]["status"] == "optimal"
    lp = folder / "model.lp"
    export = _run("export", str(folder / "small.csv"), *FLAGS, "--max-size", "4", "--to", str(lp))
    assert "program of slim" in export.stdout
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("time_limit", 60.0)
    h.readModel(str(lp))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(document["model"]["solver"]["objective"], abs=1e-7)

    # compare: catalog names, the settings of each row, no progress line off a terminal
    table = _run("compare", str(folder / "train.csv"), *FLAGS, "--formulations", "slim,riskslim", "--methods",
                 "exact,relaxed,rounding", "--time-limit", "5", "--max-size", "4")
    assert table.stdout.startswith("data: ") and "riskslim" in table.stdout and "max_size=4" in table.stdout
    assert "no_solution_found" not in table.stdout and "compare " not in table.stderr
