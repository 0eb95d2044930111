"""The greedy flow through a box's conflicts (:mod:`solvers.exact.box_greedy`) against brute force:
it never exceeds the least weighted error of a model of its box (every vector, every intercept), nor
the box's maximum flow; on a box of one vector (nested conflicts) it equals that vector's least
error; and the orthant search that bounds its boxes with it finds what enumeration finds."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from solvers.exact import orthant_boxes as ob
from solvers.exact.box_greedy import descending_order, greedy_box_flow


def _table(rng, n: int, k: int):
    """Rows of ``k`` small integer columns (repeats and both labels on one pattern allowed), weights in
    units of 1/7."""
    X = rng.integers(0, 5, (n, k)).astype(np.int64)
    positive = rng.random(n) < 0.45
    positive[:2] = [True, False]
    w = rng.integers(1, 4, n) / 7.0
    return X, positive, w


def _least_error(X, positive, w, lo, hi, sign, margin) -> float:
    """Brute force: the least weighted error over every magnitude vector of ``[lo, hi]`` and every
    integer intercept that can matter."""
    best = math.inf
    for magnitudes in itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi)]):
        scores = X @ (sign * np.array(magnitudes))
        for b in range(-int(np.abs(scores).max()) - margin - 1, int(np.abs(scores).max()) + margin + 2):
            s = scores + b
            best = min(best, w[positive & (s < margin)].sum() + w[~positive & (s > -margin)].sum())
    return best


def _signed(X, positive, w, sign):
    return X[positive] * sign, w[positive], X[~positive] * sign, w[~positive]


@pytest.mark.parametrize("seed", range(16))
def test_the_greedy_flow_bounds_the_least_error_of_its_box_and_the_maximum_flow(seed):
    rng = np.random.default_rng(7100 + seed)
    n, k = int(rng.integers(8, 40)), int(rng.integers(1, 4))
    X, positive, w = _table(rng, n, k)
    margin = int(rng.choice([1, 2]))
    for _ in range(4):
        sign = rng.choice([-1, 1], k).astype(np.int64)
        lo = rng.integers(1, 4, k).astype(np.int64)
        hi = lo + rng.integers(0, 3, k)
        Sp, wp, Sn, wn = _signed(X, positive, w, sign)
        greedy = greedy_box_flow(Sp, wp, Sn, wn, lo, hi, margin, math.inf)
        most = ob.box_flow(X[positive], wp, X[~positive], wn, sign, lo, hi, margin, math.inf)
        assert greedy <= most + 1e-12
        assert greedy <= _least_error(X, positive, w, lo, hi, sign, margin) + 1e-12
        # stopped at half its full value, it still reaches that half
        target = 0.5 * greedy
        assert greedy_box_flow(Sp, wp, Sn, wn, lo, hi, margin, target) >= target - 1e-12


@pytest.mark.parametrize("seed", range(16))
def test_on_one_vector_the_greedy_flow_is_its_least_error(seed):
    """One model's conflicts are nested (``q`` conflicts with ``p`` when ``s_q > s_p - 2 margin``):
    taking the positive patterns from the highest score, the greedy flow is a maximum one, and the
    least vertex cover is the errors at the best intercept."""
    rng = np.random.default_rng(7200 + seed)
    n, k = int(rng.integers(8, 60)), int(rng.integers(1, 5))
    X, positive, w = _table(rng, n, k)
    margin = int(rng.choice([1, 2]))
    sign = rng.choice([-1, 1], k).astype(np.int64)
    m = rng.integers(1, 5, k).astype(np.int64)
    Sp, wp, Sn, wn = _signed(X, positive, w, sign)
    greedy = greedy_box_flow(Sp, wp, Sn, wn, m, m, margin, math.inf)
    assert greedy == pytest.approx(_least_error(X, positive, w, m, m, sign, margin), abs=1e-12)


def test_a_hopeless_target_stops_the_greedy_flow_early_and_below_it():
    rng = np.random.default_rng(7300)
    X, positive, w = _table(rng, 40, 3)
    sign, lo, hi = np.array([1, -1, 1]), np.ones(3, np.int64), np.full(3, 2, np.int64)
    Sp, wp, Sn, wn = _signed(X, positive, w, sign)
    full = greedy_box_flow(Sp, wp, Sn, wn, lo, hi, 1, math.inf)
    # more than all the positive weight: no flow reaches it, and it gives up at once
    assert greedy_box_flow(Sp, wp, Sn, wn, lo, hi, 1, wp.sum() + 1.0) == 0.0
    assert 0 < full <= wp.sum()


@pytest.mark.parametrize("seed", range(8))
def test_the_orthant_search_with_greedy_bounds_finds_what_enumeration_finds(seed):
    """Boxes of up to ``GREEDY_VECTORS`` vectors bounded by the greedy flow, large ones split; the
    optimum over the whole box (and nothing below it) as enumeration finds it."""
    rng = np.random.default_rng(7400 + seed)
    n, k = int(rng.integers(20, 80)), int(rng.integers(2, 5))
    X, positive, w = _table(rng, n, k)
    # one row per distinct pattern and label, as the orthant search gets them
    keys = {}
    for x, label, weight in zip(map(tuple, X), positive, w):
        keys[(x, label)] = keys.get((x, label), 0.0) + weight
    X = np.array([key[0] for key in keys], np.int64)
    positive = np.array([key[1] for key in keys])
    w = np.array(list(keys.values()))
    cost, eps = rng.choice([0.0, 0.02], k), np.full(k, 1e-3)
    top = rng.integers(3, 7, k).astype(np.int64)
    sign = rng.choice([-1, 1], k).astype(np.int64)
    least, _, _ = ob.enumerate_box(X, positive, w, np.ones(k, np.int64), top, sign, cost, eps, 1, -99, 99, math.inf)
    for leaf in (1, 8):
        value, found, b, boxes = ob.orthant_search(X[positive], w[positive], X[~positive], w[~positive], top, sign,
                                                   cost, eps, 1, -99, 99, math.inf, leaf, True)
        assert value == pytest.approx(least, abs=1e-12) and boxes > 1
        scores = X @ found + b
        errors = w[positive & (scores < 1)].sum() + w[~positive & (scores > -1)].sum()
        assert errors + cost.sum() + eps @ np.abs(found) == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("spread", [5, 10**6])
def test_descending_order_is_a_permutation_by_key_from_the_largest(spread):
    """Both ways: the counting sort (keys within a small range) and argsort (a wide range)."""
    rng = np.random.default_rng(7500 + spread)
    key = rng.integers(-spread, spread, 300)
    order = descending_order(key)
    assert sorted(order.tolist()) == list(range(300))
    assert np.all(np.diff(key[order]) <= 0)
    assert descending_order(key[:0]).size == 0
