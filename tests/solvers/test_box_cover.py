"""The box search (solvers.exact.box_cover), checked by enumeration on tiny SLIM instances and by HiGHS
on real data.

The node bound (the maximum flow through the pair conflicts of a box) is checked against the least
error of every point vector in the box, each with its best free intercept, counted here without
the module's helpers; at a single point it must equal that error (Konig). A conflict test that
also counted pairs exactly at ``2 margin`` would overstate the bound, and the check catches that.
The search's bound at a node limit must stay below the enumerated optimum; its certified optimum
equals enumeration (``tests/solvers/test_slim_solver.py``) and, as the SLIM route's step, HiGHS's on a
sample of breastcancer. Which instances the route gives it is tested in ``tests/solvers/test_routes.py``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from formulations.slim import SLIM
from solvers.exact.box_cover import _pair_max, augment, box_cover
from solvers.exact.slim_route import ROUTE
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from solvers.result import Status
from tests.solvers.test_slim_solver import _enumerate, _random_case


def _least_error(X, y, w, coef, margin):
    """Least weighted error of the points ``coef`` over every real intercept: each row's own
    threshold is tried (the error is piecewise constant between them)."""
    s = X @ coef
    best = np.inf
    for b in np.concatenate([margin - s[y > 0], -margin - s[y < 0]]):
        wrong = y * (s + b) < margin - 1e-9
        best = min(best, float(w @ wrong))
    return best


def _flow(X, y, w, lo, hi, limit):
    """The node bound: max flow through the pairs with ``max_box lambda . (x_p - x_q) < limit``."""
    P, N = y > 0, y < 0
    Xp, Xn = np.ascontiguousarray(X[P]), np.ascontiguousarray(X[N])
    mx = np.empty((Xp.shape[0], Xn.shape[0]))
    _pair_max(Xp, Xn, lo, hi, mx)
    return augment(mx, limit, np.zeros_like(mx), w[P].copy(), w[N].copy(), 0.0, np.inf,
                    np.empty(Xn.shape[0], np.int64), np.empty(Xp.shape[0], np.int64), np.empty(Xp.shape[0], np.int64))


def _case(seed: int):
    rng = np.random.default_rng(4000 + seed)
    n, d = int(rng.integers(5, 18)), int(rng.integers(1, 4))
    X = (rng.integers(0, 4, (n, d)) if seed % 2 else np.round(rng.normal(size=(n, d)), 1)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    w = rng.integers(1, 4, n).astype(float) if seed % 3 else rng.random(n) + 0.1
    lo = rng.integers(-3, 2, d).astype(float)
    hi = lo + rng.integers(0, 4, d)
    return X, y, w, lo, hi, rng


@pytest.mark.parametrize("seed", range(200))
def test_flow_bound_is_below_every_model_in_the_box_and_exact_at_a_point(seed):
    X, y, w, lo, hi, rng = _case(seed)
    margin = 1.0
    least = min(_least_error(X, y, w, np.array(c, float), margin)
                for c in itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(lo, hi)]))
    assert _flow(X, y, w, lo, hi, 2 * margin - 1e-9) <= least + 1e-9
    point = rng.integers(-3, 4, lo.size).astype(float)
    assert _flow(X, y, w, point, point, 2 * margin - 1e-9) == pytest.approx(_least_error(X, y, w, point, margin))


def test_counting_pairs_on_the_margin_as_conflicts_would_overstate_the_bound():
    """The check above can fail: with integer data, pairs exactly ``2 margin`` apart can both be
    right, and counting them as conflicts puts the bound above the best model on some boxes."""
    over = 0
    for seed in range(1, 200, 2):  # integer features
        X, y, w, lo, hi, _ = _case(seed)
        least = min(_least_error(X, y, w, np.array(c, float), 1.0)
                    for c in itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(lo, hi)]))
        over += _flow(X, y, w, lo, hi, 2.0 + 1e-9) > least + 1e-9
    assert over >= 5


@pytest.mark.parametrize("seed", range(0, 240, 4))
def test_bound_at_a_node_limit_is_below_the_optimum(seed):
    """Stopped after a few nodes (no start), the bound is valid and the model is a real one."""
    X, y, sw, cw, cs, spec = _random_case(seed)
    inst = spec.instance(X, y, sw)
    problem = ZeroOneProgram.from_instance(inst)
    assert next(s for s in ROUTE if s.name == "box_search").applies(inst, Limits()) in (
        None, "every feature is 0/1 (the strengthened MILP does better there)")
    _, best_total = _enumerate(X, y, sw, cw, cs, spec, inst)
    found = box_cover(problem, Limits.untimed(node_limit=3, mip_rel_gap=1e-9))
    assert found.bound <= best_total + 1e-9
    if found.coef is not None:
        assert found.objective >= best_total - 1e-9
        assert found.objective == pytest.approx(problem.objective(np.arange(problem.d), found.coef, found.intercept))
    if found.finished:
        assert found.objective == pytest.approx(best_total, abs=1e-9)


def test_breastcancer_sample_equals_highs(shared_data):
    """Real data (150 rows of ``../shared/data`` breastcancer, 9 features valued 1-10, points
    -3..3): the SLIM route runs the box search, which searches to the end, and its certified
    optimum is HiGHS's (the plain MILP, outside the route)."""
    df = pd.read_csv(shared_data / "breastcancer_data.csv").sample(150, random_state=0)
    X, y = df.iloc[:, 1:].to_numpy(float), np.where(df.iloc[:, 0].to_numpy() > 0, 1.0, -1.0)
    inst = SLIM(c0=0.01, coef_bound=3).instance(X, y)
    route = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    highs = solve_exact(inst, "highs", limits=Limits(time_limit=120, mip_rel_gap=1e-9))
    assert route.status == Status.OPTIMAL and highs.status == Status.OPTIMAL, route.message
    steps = {r.step: r for r in route.steps}
    assert steps["bayes_supports"].reason == "some features take values other than 0 and 1"
    box = steps["box_search"]
    assert box.ran and "searched to the end" in box.message, route.message
    assert not steps["highs"].ran and "already proven optimal" in steps["highs"].reason
    assert route.objective == pytest.approx(highs.objective, abs=1e-9)
    assert route.bound <= highs.objective + 1e-9 and box.bound <= highs.objective + 1e-9
