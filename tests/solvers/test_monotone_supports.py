"""The orthant search (:mod:`solvers.exact.monotone_supports`) against brute force: its optimum is the
least objective over every point vector of at most ``max_size`` features (each with its best intercept),
its flows never exceed the least error of a model in their orthant (1-D orthants: they equal it), and
with an incumbent below the optimum it proves that no model beats it."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from formulations.base import Model
from formulations.slim import SLIM
from solvers.exact import monotone_supports as ms
from solvers.exact import slim_route
from solvers.exact.slim_route import zero_one
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from solvers.result import Status
from tests.solvers.test_box_wide import _brute_force


def _case(seed: int):
    rng = np.random.default_rng(5200 + seed)
    n, d = int(rng.integers(8, 30)), int(rng.integers(2, 6))
    X = rng.integers(0, 4, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    k, bound = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    spec = SLIM(c0=float(rng.choice([0.0, 0.01, 0.05])), coef_bound=bound, max_size=k,
                margin=float(rng.choice([1.0, 2.0])), class_weight=(1.0, float(rng.choice([1.0, 2.0]))))
    return spec.instance(X, y), min(k, d), bound


@pytest.mark.parametrize("seed", range(24))
def test_the_orthant_search_finds_the_brute_force_optimum(seed):
    inst, k, bound = _case(seed)
    problem = zero_one(inst)
    assert ms.applies(problem) is None
    found = ms.monotone_supports(problem, Limits(time_limit=None).started())
    best = _brute_force(inst, k, bound)
    assert found.finished and found.bound == pytest.approx(best, abs=1e-12)
    assert found.objective == pytest.approx(best, abs=1e-12)
    assert inst.objective(Model(found.coef, found.intercept)) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_below_the_optimum_it_proves_no_model_beats_the_incumbent(seed):
    inst, k, bound = _case(seed)
    best = _brute_force(inst, k, bound)
    found = ms.monotone_supports(zero_one(inst), Limits(time_limit=None).started(), incumbent=best - 1e-3)
    assert found.finished and found.coef is None and found.bound == pytest.approx(best - 1e-3)
    found = ms.monotone_supports(zero_one(inst), Limits(time_limit=None).started(), incumbent=best + 1e-9)
    assert found.finished and found.objective == pytest.approx(best, abs=1e-12)  # found again below it


@pytest.mark.parametrize("seed", range(12))
def test_flows_bound_the_least_error_of_their_orthant_and_equal_it_in_one_dimension(seed):
    rng = np.random.default_rng(5300 + seed)
    n, k = int(rng.integers(6, 30)), int(rng.integers(1, 4))
    X = rng.integers(0, 4, (n, k)).astype(np.int64)
    positive = rng.random(n) < 0.5
    positive[:2] = [True, False]
    w = rng.integers(1, 4, n) / 10.0
    P, N = np.flatnonzero(positive), np.flatnonzero(~positive)
    up, down = ms._requirements(np.ascontiguousarray(X[P]), np.ascontiguousarray(X[N]))
    allowed = np.ones(2 ** k, bool)
    greedy = ms._greedy_flows(up, down, w[P], w[N], allowed, math.inf)
    zero = np.zeros(k)
    for plus in range(2 ** k):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        # the orthant's pairs are exactly those no score monotone in these signs separates
        below = np.all(X[P][:, None, :] * sign <= X[N][None, :, :] * sign, axis=2)
        assert np.array_equal(((up & (255 ^ plus)) == 0) & ((down & plus) == 0), below)
        flow = ms._max_flow(up, down, w[P], w[N], plus, math.inf)
        # the least weighted error over points 0..3 of these signs (margin 1, any intercept)
        least, _, _ = ms._enumerate(X, positive, w, np.full(k, 3, np.int64), sign, zero, zero, 1, -60, 60, math.inf)
        assert greedy[plus] <= flow + 1e-12 and flow <= least + 1e-12
        if k == 1:  # a threshold on one integer feature is a point of 2 (no tie) and an intercept
            assert flow == pytest.approx(least, abs=1e-12)


def test_the_route_runs_it_on_few_rows_and_proves_the_optimum():
    rng = np.random.default_rng(5400)
    X = rng.integers(0, 5, (40, 7)).astype(float)
    y = np.where(X[:, :3] @ np.array([1.0, -1.0, 0.5]) - 1.0 + rng.normal(0, 1, 40) > 0, 1.0, -1.0)
    inst = SLIM(c0=0.01, coef_bound=2, max_size=2).instance(X, y)
    assert slim_route._monotone_applies(inst, Limits()) is None
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    steps = {r.step: r for r in fit.steps}
    best = _brute_force(inst, 2, 2)
    assert fit.status == Status.OPTIMAL and fit.objective == pytest.approx(best, abs=1e-12), fit.message
    assert steps["monotone_supports"].ran and "every orthant" in steps["monotone_supports"].message, fit.message
    assert fit.bound <= best + 1e-12


def test_it_refuses_what_it_cannot_take():
    inst, _, _ = _case(0)
    problem = zero_one(inst)
    assert "margin" in ms.applies(replace(problem, margin=1.5))
    assert "forced" in ms.applies(replace(problem, forced=np.ones(problem.d, bool)))
    assert "not integers" in ms.applies(replace(problem, X=problem.X + 0.5))


def test_at_its_time_limit_it_claims_no_bound_and_keeps_the_start():
    inst, _, _ = _case(3)
    start = (np.zeros(inst.X.shape[1]), 1.0)
    found = ms.monotone_supports(zero_one(inst), Limits(time_limit=1e-9).started(), incumbent=0.5, start=start)
    assert not found.finished and found.bound == -math.inf
    assert np.array_equal(found.coef, start[0]) and found.intercept == 1.0 and found.objective == 0.5
