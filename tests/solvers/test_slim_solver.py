"""SLIM solved by HiGHS equals brute-force enumeration; heuristic start; time limits."""
import itertools

import numpy as np
import pytest

from formulations.slim import SLIM
from solvers.highs import solve_highs
from solvers.result import Status
from solvers.slim import best_intercept, heuristic, solve_slim


def _tiny(seed, n=30, d=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, d)).astype(float)
    w = rng.integers(-2, 3, d)
    y = np.where(X @ w + rng.normal(0, 1.0, n) > np.median(X @ w), 1.0, -1.0)
    return X, y


def _brute_force(inst):
    """Minimum of the SLIM objective over every integer model in the box (intercept enumerated)."""
    lo, hi = inst.intercept_bounds
    cs = inst.coefficients
    ranges = [range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in range(cs.d)]
    best = np.inf
    for coef in itertools.product(*ranges):
        coef = np.array(coef, dtype=float)
        if inst.spec.max_size is not None and np.count_nonzero(coef) > inst.spec.max_size:
            continue
        for b in range(int(lo), int(hi) + 1):
            best = min(best, inst.objective(coef, float(b)))
    return best


@pytest.mark.parametrize("seed, max_size, c0", [(0, None, 0.01), (1, 2, 0.005), (2, None, 0.05), (3, 1, 0.0)])
def test_milp_equals_brute_force(seed, max_size, c0):
    X, y = _tiny(seed, n=20 + 5 * seed)
    inst = SLIM(coef_bound=2, c0=c0, max_size=max_size).instance(X, y)
    reference = _brute_force(inst)
    plain = solve_highs(inst.exact())
    assert plain.status == Status.OPTIMAL
    assert plain.objective == pytest.approx(reference, abs=1e-9)
    coef, b, r = solve_slim(inst, time_limit=30)
    assert inst.objective(coef, b) == pytest.approx(reference, abs=1e-9)
    relaxed = solve_highs(inst.relaxed())
    assert relaxed.objective <= reference + 1e-9


def test_best_intercept_matches_enumeration():
    rng = np.random.default_rng(5)
    s = rng.integers(-6, 7, 50).astype(float)
    y = rng.choice([-1.0, 1.0], 50)
    w = rng.random(50)
    b, loss = best_intercept(s, y, w, 1.0, (-10, 10), integer=True)
    losses = [w @ (y * (s + c) < 1.0) for c in range(-10, 11)]
    assert loss == pytest.approx(min(losses))
    assert w @ (y * (s + b) < 1.0) == pytest.approx(loss)


def test_heuristic_is_consistent_and_beats_trivial():
    X, y = _tiny(7, n=200, d=6)
    inst = SLIM(coef_bound=5, c0=0.005).instance(X, y)
    coef, b, obj = heuristic(inst)
    assert obj == pytest.approx(inst.objective(coef, b))
    _, trivial = best_intercept(np.zeros(inst.n_rows_kept), inst.y, inst.weights, 1.0, inst.intercept_bounds, True)
    assert obj < trivial


def test_time_limit_returns_incumbent_at_least_as_good_as_start():
    rng = np.random.default_rng(11)
    n, d = 3000, 25
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1.5, n) > 0, 1.0, -1.0)
    inst = SLIM(coef_bound=10, c0=1e-3).instance(X, y)
    coef, b, r = solve_slim(inst, time_limit=2.0)
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert r.x is not None and np.isfinite(r.bound)
    assert r.bound <= r.objective + 1e-9
    assert inst.objective(coef, b) <= r.raw["heuristic_objective"] + 1e-9
    assert r.gap == pytest.approx((r.objective - r.bound) / r.objective, rel=1e-6)
