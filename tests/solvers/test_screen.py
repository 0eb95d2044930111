"""The saturated-loss screen shared between RiskSLIM fits of the same rows (several multipliers):
what it keeps, when it applies, and the certified optimum over the multipliers against brute force."""
import math

import numpy as np
import pytest

from formulations.riskslim import RiskSLIM
from milpscore.estimators import RiskScoreClassifier
from solvers.exact.screen import SupportScreen
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.supports import enumerate_supports
from solvers.limits import Limits
from tests.solvers.test_supports import brute_force


def _rows(seed, n=120, d=9):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < rng.uniform(0.2, 0.6, d)).astype(float)
    w = np.zeros(d)
    w[:3] = rng.choice([-2.0, -1.0, 1.0, 2.0], 3)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X @ w - 0.3))), 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def _problem(X, y, multiplier, **kw):
    return SparseLogistic.from_instance(RiskSLIM(coef_bound=2, c0=0.01, max_size=3, multiplier=multiplier,
                                                 **kw).instance(X, y))


@pytest.mark.parametrize("seed", range(8))
def test_a_later_multiplier_bounds_only_the_survivors_and_finds_what_a_full_enumeration_finds(seed):
    X, y = _rows(seed)
    screen = SupportScreen()
    start = enumerate_supports(_problem(X, y, 1.0), Limits.untimed(mip_rel_gap=1e-9)).objective * 1.02  # an incumbent
    first = enumerate_supports(_problem(X, y, 1.0), Limits.untimed(mip_rel_gap=1e-9, screen=screen), incumbent=start)
    assert first.finished and first.objective <= screen.level <= start
    ruled = math.comb(9, 3) - screen.supports.shape[0]  # the supports the screen ruled out
    assert ruled > 0 or seed != 0
    second = _problem(X, y, 2.0)
    limit = first.objective
    with_screen = enumerate_supports(second, Limits.untimed(mip_rel_gap=1e-9, screen=screen), incumbent=limit)
    without = enumerate_supports(second, Limits.untimed(mip_rel_gap=1e-9), incumbent=limit)
    if without.message.startswith("0 of") or not ruled:  # nothing bounded, or nothing ruled out
        assert "ruled out" not in with_screen.message
    else:
        assert f"({ruled} ruled out by the screen" in with_screen.message and "ruled out" not in without.message
    assert with_screen.finished and without.finished
    assert with_screen.objective == without.objective  # the model below the limit, if any
    if with_screen.model is not None:
        np.testing.assert_array_equal(with_screen.model[0], without.model[0])
    optimum = enumerate_supports(second, Limits.untimed(mip_rel_gap=1e-9)).objective  # no screen (brute-force tested)
    assert with_screen.bound <= min(optimum, limit) + 1e-9


def test_the_screen_applies_only_to_the_same_rows_costs_and_a_level_it_covers():
    X, y = _rows(0)
    screen = SupportScreen()
    enumerate_supports(_problem(X, y, 1.0), Limits.untimed(mip_rel_gap=1e-9, screen=screen), incumbent=0.7)
    kept = screen.supports
    assert kept is not None
    same = _problem(X, y, 3.0)
    (lister,) = same.listers()
    assert screen.survivors(same, lister, screen.level) is kept
    assert screen.survivors(same, lister, screen.level + 1e-6) is None  # a higher level: not proven
    other_rows = _problem(X[1:], y[1:], 1.0)
    assert screen.survivors(other_rows, other_rows.listers()[0], screen.level) is None
    other_cost = SparseLogistic.from_instance(RiskSLIM(coef_bound=2, c0=0.02, max_size=3).instance(X, y))
    assert screen.survivors(other_cost, other_cost.listers()[0], screen.level) is None


def test_an_enumeration_stopped_by_its_deadline_leaves_no_screen():
    X, y = _rows(1, n=400, d=14)
    screen = SupportScreen()
    spent = Limits(1.0, mip_rel_gap=1e-9, screen=screen).ending_earlier(1.0)
    found = enumerate_supports(_problem(X, y, 1.0), spent, incumbent=0.7)
    assert not found.finished and screen.supports is None


@pytest.mark.parametrize("seed", range(6))
def test_several_multipliers_certify_the_brute_force_optimum_over_all_of_them(seed):
    """The estimator with multipliers (1, 2, 3): its objective is the least brute-force optimum over
    them and its certificate holds, while the later fits used the first one's screen."""
    rng = np.random.default_rng(seed)
    n, d = 60, 4
    X = (rng.random((n, d)) < 0.5).astype(float)
    y = np.where(X @ np.array([1.5, -1.0, 0.7, 0.0]) + rng.normal(0, 0.8, n) > 0.4, 1, -1)
    y[:2] = [1, -1]
    fit = RiskScoreClassifier(coef_bound=2, c0=0.01, max_size=2, multiplier=[1.0, 2.0, 3.0], time_limit=None,
                              mip_rel_gap=1e-9).fit(X, y)
    optima = [brute_force(RiskSLIM(coef_bound=2, c0=0.01, max_size=2, multiplier=m).instance(X, y))
              for m in (1.0, 2.0, 3.0)]
    assert fit.objective_ == pytest.approx(min(optima), abs=1e-9)
    assert fit.status_ == "optimal" and fit.bound_ <= min(optima) + 1e-9
