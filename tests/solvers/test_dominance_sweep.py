"""The sweep of :mod:`solvers.exact.dominance_sweep` against Dinic's maximum flow (and brute force on
the rows' pairs): per tail of a prefix and per sign of the last two columns, it equals the maximum
flow through the conflicts of rows equal on the first ``r - 2`` columns; with targets it still tells
which flows reach them; and the near flows it feeds (:func:`solvers.exact.tail_screen.near_tails`)
stay below every orthant's maximum flow."""
from __future__ import annotations

import math

import numpy as np
import pytest

from solvers.exact import dominance_sweep as ds
from solvers.exact import monotone_flows as mf
from solvers.exact import pattern_groups as pg
from solvers.exact import tail_screen as ts
from tests.solvers.test_monotone_supports import _box_flow, _orthant_flow, _support


def _table(seed: int):
    rng = np.random.default_rng(7100 + seed)
    n, d = int(rng.integers(10, 160)), int(rng.integers(3, 7))
    X = rng.integers(0, int(rng.integers(2, 7)), (n, d)).astype(np.int64)
    positive = rng.random(n) < rng.uniform(0.2, 0.8)
    positive[:2] = [True, False]
    w = rng.integers(1, 6, n) / 17.0
    r = int(rng.integers(3, d + 1))
    return rng, X, positive, w, r


def _prefix_sweep(X, positive, w, prefix, tails, needed=None, targets=None):
    ranks, levels = pg.value_ranks(X)
    ranksT = np.ascontiguousarray(ranks.T)
    rows, start, _, group = pg.prefix_order(ranksT, levels, prefix, np.argsort(positive, kind="stable"))
    middle = ds.run_middles(rows, start, positive)
    needed = np.ones((tails.size, 4), bool) if needed is None else needed
    targets = np.full(tails.size, math.inf) if targets is None else targets
    return ds.sweep_tails(ranksT, levels, rows, start, middle, group, tails, w[rows], needed, targets)


def _max_flow(X, positive, w, columns, d_up: bool, e_up: bool) -> float:
    """Dinic's maximum flow through the pairs of a positive and a negative row equal on all of
    ``columns`` but the last two, and ordered on those as the signs say."""
    P, N = np.flatnonzero(positive), np.flatnonzero(~positive)
    A, B = X[P][:, columns], X[N][:, columns]
    same = np.all(A[:, None, :-2] == B[None, :, :-2], axis=2)
    sd, se = (1 if d_up else -1), (1 if e_up else -1)
    ordered = (sd * A[:, None, -2] <= sd * B[None, :, -2]) & (se * A[:, None, -1] <= se * B[None, :, -1])
    p, q = np.nonzero(same & ordered)
    return mf.flow_through(p, q, w[P], w[N], math.inf)[0]


@pytest.mark.parametrize("seed", range(30))
def test_the_sweep_is_the_maximum_flow_of_the_first_grouping(seed):
    _, X, positive, w, r = _table(seed)
    d = X.shape[1]
    prefix = np.arange(r - 1)
    tails = np.arange(r - 1, d)
    flows = _prefix_sweep(X, positive, w, prefix, tails)
    for t, e in enumerate(tails):
        columns = np.append(prefix, e)
        for c in range(4):
            assert flows[t, c] == pytest.approx(_max_flow(X, positive, w, columns, bool(c & 1), bool(c & 2)), abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_with_targets_the_sweep_still_says_which_flows_reach_them(seed):
    """Stopped early (a flow at its target, or a tail that cannot get there), every flow is at most
    the maximum one, and a tail has all its needed flows at their target exactly when the maximum
    flows are; flows not needed are left at 0."""
    rng, X, positive, w, r = _table(seed)
    d = X.shape[1]
    prefix, tails = np.arange(r - 1), np.arange(r - 1, d)
    exact = _prefix_sweep(X, positive, w, prefix, tails)
    needed = rng.random((tails.size, 4)) < 0.8
    targets = exact.min(axis=1) + rng.uniform(-0.05, 0.05, tails.size)
    flows = _prefix_sweep(X, positive, w, prefix, tails, needed, targets)
    assert np.all(flows <= exact + 1e-12) and np.all(flows[~needed] == 0.0)
    for t in range(tails.size):
        reach = np.all(flows[t, needed[t]] >= targets[t])
        assert reach == np.all(exact[t, needed[t]] >= targets[t] - 1e-12)


def test_columns_of_up_to_64_ranks_are_swept_and_the_last_rank_is_a_bucket():
    rng = np.random.default_rng(7300)
    n = 400
    X = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 2, n), rng.permutation(np.arange(n) % 64)])
    positive = rng.random(n) < 0.5
    w = np.full(n, 1.0 / n)
    flows = _prefix_sweep(X, positive, w, np.arange(2), np.array([2]))
    for c in range(4):
        assert flows[0, c] == pytest.approx(_max_flow(X, positive, w, np.arange(3), bool(c & 1), bool(c & 2)), abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_the_near_flows_after_the_sweep_bound_every_orthant(seed):
    """Whatever the targets, each orthant's value (the sweep's, or the larger of it and the near
    flows) is at most its maximum flow through all the conflicts of its box; a tail the sweep closes reports no
    pattern pairs, and its orthants are at their target."""
    rng, X, positive, w, r = _table(seed)
    d = X.shape[1]
    prefix, tails = np.arange(r - 1), np.arange(r - 1, d)
    ranks, levels = pg.value_ranks(X)
    allowed = rng.random((tails.size, 2 ** r)) < 0.9
    allowed[:, 0] = True
    targets = rng.uniform(0.0, 0.4, tails.size)
    ranksT = np.ascontiguousarray(ranks.T)
    up, down, margin = rng.integers(1, 4, d), rng.integers(1, 4, d), int(rng.integers(1, 3))
    near, pairs = ts.near_tails(ranksT, levels, *ts.PrefixOrders(ranksT, levels, positive)(prefix), prefix, tails,
                                positive, w, np.full(4096, -1, np.int64), allowed, targets,
                                pg.rank_values(X, ranks, levels), up, down, margin)
    for t, e in enumerate(tails):
        columns = np.append(prefix, e)
        support = _support(X[:, columns], positive, w)
        for plus in range(2 ** r):
            if not allowed[t, plus]:
                assert near[t, plus] == -1.0
                continue
            assert near[t, plus] <= _box_flow(support, plus, up[columns], down[columns], margin) + 1e-12
        if pairs[t] == 0 and positive.any() and not positive.all():
            assert np.all(near[t, allowed[t]] >= targets[t])

