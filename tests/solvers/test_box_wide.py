"""The SLIM route's ``box_search_wide`` step: the box search on more than ``box_cover.MAX_FEATURES``
integer features when the rows are few, checked against brute force over every model of at most
``max_size`` features (each with its best intercept)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from formulations.slim import SLIM
from solvers.exact import slim_route
from solvers.exact.box_cover import MAX_FEATURES
from solvers.exact.route import Incumbent
from solvers.limits import Limits


def _case(seed: int, d: int = MAX_FEATURES + 2, n: int = 24):
    rng = np.random.default_rng(4100 + seed)
    X = rng.integers(0, 4, (n, d)).astype(float)
    y = np.where(X[:, :3] @ np.array([1.0, -1.0, 0.5]) - 1.0 + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def _brute_force(inst, max_size: int, bound: int) -> float:
    """Least objective over every point vector with at most ``max_size`` non-zero points in
    ``-bound..bound``, each with its exactly best intercept."""
    d = inst.X.shape[1]
    best = inst.objective(inst.with_best_intercept(np.zeros(d)))
    values = [v for v in range(-bound, bound + 1) if v != 0]
    for k in range(1, max_size + 1):
        for support in itertools.combinations(range(d), k):
            for points in itertools.product(values, repeat=k):
                coef = np.zeros(d)
                coef[list(support)] = points
                best = min(best, inst.objective(inst.with_best_intercept(coef)))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_wide_box_search_runs_past_max_features_and_proves_the_brute_force_optimum(seed):
    """The step itself (in the route, the orthant search proves these tiny tables first)."""
    X, y = _case(seed)
    max_size, bound = 1 + seed % 2, 2
    inst = SLIM(c0=0.01, coef_bound=bound, max_size=max_size).instance(X, y)
    assert slim_route._box_applies(inst, Limits()) is not None  # too many features for the box search
    assert slim_route._box_wide_applies(inst, Limits()) is None
    step = next(s for s in slim_route.ROUTE if s.name == "box_search_wide")
    out = step.run(inst, Incumbent(None), Limits(time_limit=30).started(), {})
    best = _brute_force(inst, max_size, bound)
    assert "searched to the end" in out.message
    assert inst.objective(out.model) == pytest.approx(best, abs=1e-9)
    assert best - 1e-6 <= out.bound <= best + 1e-9


def test_wide_box_search_gives_way_on_many_pairs():
    """Past the pair budget (slow nodes) the MILP keeps the instance, with the reason said."""
    X, y = _case(0, n=2 * int(np.sqrt(slim_route.WIDE_BOX_PAIRS)) + 40)
    inst = SLIM(c0=0.01, coef_bound=2, max_size=2).instance(X, y)
    reason = slim_route._box_wide_applies(inst, Limits())
    assert reason is not None and "pairs of a positive and a negative row" in reason
