"""Supervised thresholds (formulations.bins.supervised_cut_points, ThresholdBinarizer, CLI)."""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from formulations.bins import boundary_points, supervised_cut_points
from milpscore.data.binarize import ThresholdBinarizer


def test_a_clean_step_is_found_exactly():
    x = np.arange(20.0)
    cuts, n = supervised_cut_points(x, x >= 7, 3)
    assert cuts.tolist() == [7.0] and n == 1  # one boundary point, and no further split helps


@pytest.mark.parametrize("seed", range(60))
def test_the_best_single_threshold_is_a_boundary_point(seed):
    """Brute force over every threshold: the least 0-1 error of a one-threshold rule (either
    direction) is reached at a boundary point, and every chosen cut is one."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 12, 80).astype(float)
    y = (x + rng.normal(0, 3, 80) > 6) if seed % 2 else rng.random(80) < 0.4
    w = rng.random(80) + 0.1

    def best_error(thresholds):
        errs = [min(w @ ((x >= t) != y), w @ ((x >= t) == y)) for t in thresholds]
        return min(errs, default=np.inf)

    uniq, _, _, boundary = boundary_points(x, y, w)
    if boundary.size:
        assert best_error(uniq[boundary]) == pytest.approx(best_error(uniq[1:]))
    cuts, n = supervised_cut_points(x, y, 4, w)
    assert n == boundary.size and set(cuts) <= set(uniq[boundary])
    assert np.all(np.diff(cuts) > 0) and cuts.size <= 4


def test_binarizer_supervised_needs_labels_and_round_trips():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"age": rng.integers(20, 90, 300), "flag": rng.integers(0, 2, 300)})
    y = np.where(X["age"] >= 61, 1, -1)
    with pytest.raises(ValueError, match="fit\\(X, y\\)"):
        ThresholdBinarizer(thresholds="supervised").fit(X)
    with pytest.raises(ValueError, match="'quantile' or 'supervised'"):
        ThresholdBinarizer(thresholds="tree").fit(X, y)
    b = ThresholdBinarizer(max_cuts=2, thresholds="supervised").fit(X, y)
    assert "age >= 61" in b.get_feature_names_out() and b.boundary_points_["age"] == 1
    again = ThresholdBinarizer.from_dict(b.to_dict())
    assert again.thresholds == "supervised"
    pd.testing.assert_frame_equal(again.transform(X), b.transform(X))


def test_cli_supervised_thresholds(tmp_path):
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"y": 0, "age": rng.integers(20, 90, 400), "bmi": rng.normal(27, 4, 400).round(1)})
    df["y"] = ((df["age"] >= 55) ^ (rng.random(400) < 0.05)).astype(int)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    run = subprocess.run([sys.executable, "-m", "milpscore.cli", "fit", str(path), "--thresholds", "supervised",
                          "--time-limit", "5", "--quiet"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "boundary points" in run.stdout + run.stderr and "age >= 55" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "milpscore.cli", "compare", str(path), "--thresholds", "supervised"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "use it with fit" in bad.stderr
