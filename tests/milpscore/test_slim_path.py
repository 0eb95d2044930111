"""slim_path: each size's model is the best model of that size (checked by enumeration)."""
import itertools

import numpy as np
import pytest

from milpscore.studies.slim_path import slim_path


def test_each_size_is_optimal_by_enumeration():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (40, 4)).astype(float)
    y = np.where(X @ np.array([2.0, -1.0, 1.0, 0.5]) + rng.normal(0, 0.6, 40) > 1.0, 1, 0)
    path = slim_path(X, y, sizes=[1, 2, 3], c0=1e-4, coef_bound=2, time_limit=30)
    assert list(path.table["status"]) == ["optimal"] * 3
    yy = np.where(y == 1, 1.0, -1.0)
    for k, row in path.table.set_index("max_size").iterrows():
        best = np.inf
        for coef in itertools.product(range(-2, 3), repeat=4):
            coef = np.array(coef, float)
            if np.count_nonzero(coef) > k:
                continue
            s = X @ coef
            for b in range(-9, 10):
                best = min(best, np.mean(yy * (s + b) < 1) + 1e-4 * np.count_nonzero(coef))
        assert row["objective"] == pytest.approx(best, abs=1e-4 * 0.5)  # up to the tiny L1 tie-breaker
        assert row["size"] <= k
    assert path.table["train_error"].is_monotonic_decreasing or np.all(np.diff(path.table["train_error"]) <= 1e-12)
    assert set(path.cards) == {1, 2, 3}


def test_sizes_must_increase():
    with pytest.raises(ValueError, match="increasing"):
        slim_path(np.eye(3), [0, 1, 1], sizes=[2, 1])
