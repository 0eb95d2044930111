"""The orthant search (:mod:`solvers.exact.monotone_supports` and its kernels in
:mod:`solvers.exact.pattern_groups`, :mod:`solvers.exact.monotone_flows`,
:mod:`solvers.exact.orthant_boxes`) against brute force and HiGHS: its optimum is the least objective
over every point vector of at most ``max_size`` features (each with its best intercept), its flows
never exceed the least error of a model in their orthant or box (1-D orthants: they equal it; the
maximum flow equals the least vertex cover), and with an incumbent below the optimum it proves
that no model beats it."""
from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.slim import SLIM
from solvers import progress
from solvers.backends.highs import solve_highs
from solvers.exact import monotone_flows as mf
from solvers.exact import monotone_supports as ms
from solvers.exact import orthant_boxes as ob
from solvers.exact import pattern_groups as pg
from solvers.exact import slim_route
from solvers.exact import tail_screen as ts
from solvers.exact.zero_one_supports import zero_one
from solvers.limits import MIN_MEMORY, Limits
from solvers.pipeline import solve_exact
from solvers.result import Status
from tests.solvers.test_box_wide import _brute_force


def _support(X: np.ndarray, positive: np.ndarray, w: np.ndarray) -> ms._Support:
    """The support of every column of ``X``: its patterns and their pairs by class."""
    ranks, levels = pg.value_ranks(X)
    columns = np.arange(X.shape[1])
    patterns = pg.patterns(X.T.copy(), ranks.T.copy(), levels, columns, positive, w, np.full(4096, -1, np.int64))
    return ms._Support(columns, *patterns)


def _conflicts(support: ms._Support, plus: int) -> tuple[np.ndarray, np.ndarray]:
    """The conflicts of orthant ``plus`` of ``support`` by brute force, the pairs no monotone score
    with its signs separates (``sigma_j x_pj <= sigma_j x_qj`` on every column): (positive ends,
    negative ends)."""
    sign = np.array([1 if plus >> j & 1 else -1 for j in range(support.columns.size)])
    below = np.all((support.Vp[:, None, :] - support.Vn[None, :, :]) * sign <= 0, axis=2)
    ends_p, ends_q = np.nonzero(below)
    return ends_p.astype(np.int32), ends_q.astype(np.int32)


def _maximum_flow(ends_p: np.ndarray, ends_n: np.ndarray, wp: np.ndarray, wn: np.ndarray) -> float:
    """The value of a maximum flow through the conflicts ``(ends_p, ends_n)`` (greedy, then Dinic's)."""
    return mf.flow_through(ends_p, ends_n, wp, wn, math.inf)[0]


def _orthant_flow(support: ms._Support, plus: int) -> float:
    """A maximum flow through the conflicts of orthant ``plus`` of ``support`` (Dinic's)."""
    return _maximum_flow(*_conflicts(support, plus), support.wp, support.wn)


def _box_conflicts(Vp: np.ndarray, Vn: np.ndarray, plus: int, up: np.ndarray, down: np.ndarray,
                   margin: int) -> np.ndarray:
    """Which pairs (positive x negative patterns of values ``Vp``, ``Vn``) no model of orthant
    ``plus``'s whole box (magnitudes ``1..up[j]`` where ``sigma_j = +1``, ``1..down[j]`` where ``-1``)
    gets both right: the most a box model separates them by, column by column, under ``2 margin``."""
    sign = np.array([1 if plus >> j & 1 else -1 for j in range(Vp.shape[1])], np.int64)
    top = np.where(sign > 0, up, down)
    d = (Vp[:, None, :] - Vn[None, :, :]) * sign
    return np.where(d > 0, d * top, d).sum(axis=2) < 2 * margin


def _box_flow(support: ms._Support, plus: int, up: np.ndarray, down: np.ndarray, margin: int) -> float:
    """A maximum flow through the conflicts of orthant ``plus``'s whole box (:func:`_box_conflicts`)."""
    ends_p, ends_n = np.nonzero(_box_conflicts(support.Vp, support.Vn, plus, up, down, margin))
    return _maximum_flow(ends_p.astype(np.int32), ends_n.astype(np.int32), support.wp, support.wn)


def _near_flows(Vp, wp, Rp, Vn, wn, Rn, levels, up, down, margin, allowed, target, slot):
    """:func:`solvers.exact.monotone_flows.near_flows` of a support's patterns, the box's terms from
    their values."""
    values = pg.rank_values(np.vstack((Vp, Vn)), np.vstack((Rp, Rn)), levels)
    terms = mf.box_terms(values, levels, up, down)
    return mf.near_flows(Rp, wp, Rn, wn, levels, terms, 2 * margin, allowed, target, slot, np.empty(0, np.int64), -1)


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


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", range(24))
def test_the_orthant_search_finds_the_brute_force_optimum(seed, threads):
    inst, k, bound = _case(seed)
    problem = zero_one(inst)
    assert ms.applies(problem) is None
    found = ms.monotone_supports(problem, Limits(time_limit=None).started(), threads=threads)
    best = _brute_force(inst, k, bound)
    assert found.finished and found.bound == pytest.approx(best, abs=1e-12)
    assert found.objective == pytest.approx(best, abs=1e-12)
    assert inst.objective(Model(found.coef, found.intercept)) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_columns_searched_fewest_values_first_give_the_optimum_in_the_callers_order(seed):
    """The search reorders the columns (fewest distinct values first); with per-feature bounds, signs
    and L0 costs, its model, read in the caller's column order, is the brute-force optimum."""
    rng = np.random.default_rng(5250 + seed)
    n, levels = int(rng.integers(15, 40)), [5, 2, 4, 3]
    X = np.column_stack([rng.integers(0, v, n) for v in levels]).astype(float)
    y = np.where(X @ rng.normal(size=4) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    lb, ub = np.array([0.0, -2.0, -1.0, -2.0]), np.array([2.0, 2.0, 1.0, 0.0])
    c0 = np.array([1.0, 3.0, 0.5, 2.0])
    names = ("a", "b", "c", "d")
    cs = CoefficientSet(lb, ub, np.ones(4, bool), c0, np.zeros(4, bool), names)
    inst = SLIM(coefficients=cs, c0=0.02, max_size=3).instance(X, y)
    problem = zero_one(inst)
    assert list(ms.fewest_values_first(problem)) == [1, 3, 2, 0]
    found = ms.monotone_supports(problem, Limits(time_limit=None).started())
    best = inst.objective(inst.with_best_intercept(np.zeros(4)))
    for coef in itertools.product(*(range(int(lo), int(hi) + 1) for lo, hi in zip(lb, ub))):
        if np.count_nonzero(coef) <= 3:
            best = min(best, inst.objective(inst.with_best_intercept(np.array(coef, float))))
    assert found.finished and found.objective == pytest.approx(best, abs=1e-12)
    assert inst.objective(Model(found.coef, found.intercept)) == pytest.approx(best, abs=1e-12)
    assert np.all((found.coef >= lb) & (found.coef <= ub))


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
    support = _support(X, positive, w)
    # the patterns are the distinct rows of each label, with their weights
    for V, weights, side in ((support.Vp, support.wp, positive), (support.Vn, support.wn, ~positive)):
        assert np.array_equal(np.unique(X[side], axis=0), np.unique(V, axis=0)) and len(V) == len(np.unique(V, axis=0))
        assert np.allclose([w[side][np.all(X[side] == v, axis=1)].sum() for v in V], weights)
    zero = np.zeros(k)
    for plus in range(2 ** k):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        # the orthant's conflicts are exactly the pattern pairs no score monotone in these signs separates
        below = np.all(support.Vp[:, None, :] * sign <= support.Vn[None, :, :] * sign, axis=2)
        listed = np.zeros_like(below)
        ends_p, ends_n = _conflicts(support, plus)
        listed[ends_p, ends_n] = True
        assert np.array_equal(listed, below) and ends_p.size == below.sum()  # each conflict listed once
        flow = _orthant_flow(support, plus)
        # the least weighted error over points 0..3 of these signs (margin 1, any intercept)
        least, _, _ = ob.enumerate_box(X, positive, w, np.ones(k, np.int64), np.full(k, 3, np.int64), sign, zero, zero, 1, -60, 60,
                                    math.inf)
        assert flow <= least + 1e-12
        if k == 1:  # a threshold on one integer feature is a point of 2 (no tie) and an intercept
            assert flow == pytest.approx(least, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_the_max_flow_equals_the_least_vertex_cover(seed):
    """Dinic's value against the least weighted vertex cover of the conflicts, by brute force over the
    positive patterns left uncovered (Konig: they force every negative neighbour into the cover)."""
    rng = np.random.default_rng(5500 + seed)
    n, k = int(rng.integers(8, 40)), int(rng.integers(1, 4))
    X = rng.integers(0, 3 if k <= 2 else 2, (n, k)).astype(np.int64)  # at most 9 patterns
    positive = rng.random(n) < 0.5
    positive[:2] = [True, False]
    w = rng.integers(1, 5, n) / 7.0
    support = _support(X, positive, w)
    for plus in range(2 ** k):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        below = np.all(support.Vp[:, None, :] * sign <= support.Vn[None, :, :] * sign, axis=2)
        cover = min(support.wp[~keep].sum() + support.wn[below[keep].any(axis=0)].sum()
                    for keep in (np.array([m >> i & 1 for i in range(support.wp.size)], bool)
                                 for m in range(2 ** support.wp.size)))
        assert _orthant_flow(support, plus) == pytest.approx(cover, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_near_pairs_give_a_flow_of_the_pairs_that_differ_on_at_most_two_columns(seed):
    """The screen's first flow uses only box conflicts between patterns equal on all but two columns:
    it never exceeds the maximum flow through those (brute-force vertex cover, Konig) nor the box's."""
    rng = np.random.default_rng(5600 + seed)
    n, k = int(rng.integers(10, 60)), int(rng.integers(3, 6))
    X = rng.integers(0, 3, (n, k)).astype(np.int64) * int(rng.choice([1, 5]))
    positive = rng.random(n) < 0.4
    positive[:2] = [True, False]
    w = rng.integers(1, 5, n) / 9.0
    up, down, margin = rng.integers(1, 4, k), rng.integers(1, 4, k), int(rng.integers(1, 3))
    ranks, levels = pg.value_ranks(X)
    slot = np.full(int(rng.choice([4, 4096])), -1, np.int64)  # a comparison sort where the slots are too few
    Vp, wp, Rp, Vn, wn, Rn = pg.patterns(X.T.copy(), ranks.T.copy(), levels, np.arange(k), positive, w, slot)
    assert np.all(slot == -1)  # the scratch is left as found
    allowed = np.ones(2 ** k, bool)
    near = _near_flows(Vp, wp, Rp, Vn, wn, Rn, levels, up, down, margin, allowed, math.inf, slot)
    assert np.all(slot == -1)
    support = ms._Support(np.arange(k), Vp, wp, Rp, Vn, wn, Rn)
    close = (Vp[:, None, :] != Vn[None, :, :]).sum(axis=2) <= 2
    for plus in range(2 ** k):
        edges = _box_conflicts(Vp, Vn, plus, up, down, margin) & close
        used = np.flatnonzero(edges.any(axis=1))[:12]  # brute force over at most 12 positive patterns
        cover = min(wp[used][~keep].sum() + wn[edges[used][keep].any(axis=0)].sum()
                    for keep in (np.array([m >> i & 1 for i in range(used.size)], bool) for m in range(2 ** used.size)))
        if np.flatnonzero(edges.any(axis=1)).size <= 12:
            assert near[plus] <= cover + 1e-12
        assert 0 < near[plus] <= _box_flow(support, plus, up, down, margin) + 1e-12 or not edges.any()


def _scipy_maximum_flow(edges: np.ndarray, wp: np.ndarray, wn: np.ndarray, scale: int) -> float:
    """The maximum flow through the conflicts ``edges`` (positive x negative patterns, boolean), by
    scipy's push-relabel on capacities ``scale * w`` (integers): a second, independent solver."""
    n_pos, n_neg = edges.shape
    source, sink = n_pos + n_neg, n_pos + n_neg + 1
    ends_p, ends_n = np.nonzero(edges)
    big = int(np.rint(scale * (wp.sum() + wn.sum()))) + 1
    rows = np.concatenate([np.full(n_pos, source), ends_p, n_pos + np.arange(n_neg)])
    cols = np.concatenate([np.arange(n_pos), n_pos + ends_n, np.full(n_neg, sink)])
    caps = np.concatenate([np.rint(scale * wp), np.full(ends_p.size, big), np.rint(scale * wn)]).astype(np.int32)
    graph = csr_matrix((caps, (rows, cols)), shape=(sink + 1, sink + 1))
    return maximum_flow(graph, source, sink, method="dinic").flow_value / scale


@pytest.mark.parametrize("seed", range(12))
def test_the_near_flows_are_the_maximum_flow_through_the_pairs_that_differ_on_at_most_two_columns(seed):
    """Past the greedy flow, an orthant below its target gets the maximum flow through every box
    conflict of patterns equal on all but two columns (each pair kept once): equal to scipy's maximum
    flow through those conflicts, each checked by enumerating the box (no model gets both right).
    Stopped at a finite target: at least the target where that flow reaches it from within
    ``NEAR_DEFICIT`` of it, else at most that flow (the greedy one). With the margin, the box's
    conflicts give more than the monotone ones in some orthant."""
    rng = np.random.default_rng(5700 + seed)
    n, k = int(rng.integers(40, 200)), int(rng.integers(3, 6))
    X = np.column_stack([rng.integers(0, int(rng.integers(2, 7)), n) for _ in range(k)]).astype(np.int64)
    positive = rng.random(n) < 0.45
    positive[:2] = [True, False]
    w = rng.integers(1, 5, n) / 9.0
    up, down, margin = rng.integers(1, 4, k), rng.integers(1, 4, k), int(rng.integers(1, 3))
    ranks, levels = pg.value_ranks(X)
    slot = np.full(4096, -1, np.int64)
    Vp, wp, Rp, Vn, wn, Rn = pg.patterns(X.T.copy(), ranks.T.copy(), levels, np.arange(k), positive, w, slot)
    allowed = rng.random(2 ** k) < 0.8
    close = (Vp[:, None, :] != Vn[None, :, :]).sum(axis=2) <= 2
    exact, monotone = np.full(2 ** k, -1.0), np.full(2 ** k, -1.0)
    for plus in np.flatnonzero(allowed):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        edges = _box_conflicts(Vp, Vn, plus, up, down, margin) & close
        if plus == np.flatnonzero(allowed)[0]:  # the conflicts by the box's every model, on one orthant
            boxes = itertools.product(*(range(1, (up[j] if sign[j] > 0 else down[j]) + 1) for j in range(k)))
            separated = np.zeros(edges.shape, bool)
            for m in boxes:
                separated |= (Vp @ (sign * m))[:, None] - (Vn @ (sign * m))[None, :] >= 2 * margin
            assert np.array_equal(edges, ~separated & close)
        exact[plus] = _scipy_maximum_flow(edges, wp, wn, 9)
        ordered = np.all(Vp[:, None, :] * sign <= Vn[None, :, :] * sign, axis=2) & close
        monotone[plus] = _scipy_maximum_flow(ordered, wp, wn, 9)
    near = _near_flows(Vp, wp, Rp, Vn, wn, Rn, levels, up, down, margin, allowed, math.inf, slot)
    assert near == pytest.approx(exact, abs=1e-9)
    assert np.any(near[allowed] > 0)
    exercised = False
    for target in np.quantile(exact[allowed], [0.25, 0.5, 0.75]):
        stopped = _near_flows(Vp, wp, Rp, Vn, wn, Rn, levels, up, down, margin, allowed, float(target), slot)
        assert np.all(stopped[~allowed] == -1.0)
        value, most = stopped[allowed], exact[allowed]
        assert np.all(value <= most + 1e-9)
        augmented = value >= (1.0 - mf.NEAR_DEFICIT) * target
        assert np.all(value[augmented & (most >= target)] >= target - 1e-12)
        assert value[augmented & (most < target)] == pytest.approx(most[augmented & (most < target)], abs=1e-9)
        exercised |= bool(np.any(augmented))
    assert exercised
    assert np.all(slot == -1)
    if seed < 6:
        assert np.any(exact[allowed] > monotone[allowed] + 1e-9)


def _patterns_of(rng, n: int, k: int):
    X = rng.integers(0, 4, (n, k)).astype(np.int64) * int(rng.choice([1, 2]))
    positive = rng.random(n) < 0.5
    positive[:2] = [True, False]
    w = rng.integers(1, 5, n) / 11.0
    support = _support(X, positive, w)
    return X, positive, w, support


@pytest.mark.parametrize("seed", range(12))
def test_box_flows_bound_the_least_error_of_their_box_and_the_orthant_flow_bounds_them(seed):
    """A box's conflicts (pairs no model of the box gets both right, margin included) give a flow at
    most the least weighted error over the box's vectors (enumerated), and at least the orthant's
    monotone flow (its conflicts are among them)."""
    rng = np.random.default_rng(5800 + seed)
    n, k = int(rng.integers(10, 40)), int(rng.integers(1, 4))
    X, positive, w, support = _patterns_of(rng, n, k)
    margin = int(rng.choice([1, 2]))
    zero = np.zeros(k)
    for plus in range(2 ** k):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        lo = rng.integers(1, 3, k)
        hi = lo + rng.integers(0, 3, k)
        flow = ob.box_flow(support.Vp, support.wp, support.Vn, support.wn, sign, lo, hi, margin, math.inf)
        least, _, _ = ob.enumerate_box(X, positive, w, lo, hi, sign, zero, zero, margin, -99, 99, math.inf)
        assert flow <= least + 1e-12
        whole = ob.box_flow(support.Vp, support.wp, support.Vn, support.wn, sign, np.ones(k, np.int64),
                             np.full(k, 4, np.int64), margin, math.inf)
        assert _orthant_flow(support, plus) <= whole + 1e-12


@pytest.mark.parametrize("seed", range(12))
def test_flow_through_is_a_maximum_flow_and_the_box_flow_is_the_maximum_flow_of_its_conflicts(seed):
    """``flow_through`` returns a flow (each conflict's flow non-negative, no pattern sending or
    receiving more than its weight, the sum the value) of the value of the least vertex cover, found by
    brute force on small graphs, whatever the order of the conflicts (its greedy flow's); the box flow
    (its listing's greedy flow, then Dinic's) is the maximum flow through the box's conflicts listed by
    brute force, and at least the orthant's monotone flow; stopped at a target, it reaches the target
    or that maximum."""
    rng = np.random.default_rng(5830 + seed)
    n_pos, n_neg = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    pairs = [(p, q) for p in range(n_pos) for q in range(n_neg) if rng.random() < 0.4]
    wp, wn = rng.integers(1, 6, n_pos) / 7.0, rng.integers(1, 6, n_neg) / 7.0
    # the least vertex cover (Konig: the maximum flow), by brute force over the positive side's covers
    cover = min(sum(wp[p] for p in range(n_pos) if p in chosen)
                + sum(wn[q] for q in {q for p, q in pairs if p not in chosen})
                for size in range(n_pos + 1) for chosen in map(set, itertools.combinations(range(n_pos), size)))
    for order in (np.arange(len(pairs)), rng.permutation(len(pairs)), np.arange(len(pairs))[::-1]):
        edge_p = np.array([pairs[i][0] for i in order], np.int32)
        edge_q = np.array([pairs[i][1] for i in order], np.int32)
        value, flows = mf.flow_through(edge_p, edge_q, wp, wn, math.inf)
        assert value == pytest.approx(cover, abs=1e-12)
        assert np.all(flows >= 0.0) and flows.sum() == pytest.approx(value, abs=1e-12)
        assert np.all(np.bincount(edge_p, flows, n_pos) <= wp + 1e-12)
        assert np.all(np.bincount(edge_q, flows, n_neg) <= wn + 1e-12)
    n, k = int(rng.integers(10, 40)), int(rng.integers(1, 4))
    X, positive, w, support = _patterns_of(rng, n, k)
    margin, top = int(rng.choice([1, 2])), rng.integers(1, 4, k)
    for plus in range(2 ** k):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        box = (support.Vp, support.wp, support.Vn, support.wn, sign, np.ones(k, np.int64), top, margin)
        whole = _box_flow(support, plus, top, top, margin)
        assert ob.box_flow(*box, math.inf) == pytest.approx(whole, abs=1e-12)
        assert whole >= _orthant_flow(support, plus) - 1e-12
        assert ob.box_flow(*box, 0.6 * whole) >= 0.6 * whole - 1e-12


@pytest.mark.parametrize("seed", range(12))
def test_a_boxs_conflicts_are_every_pair_no_model_of_the_box_gets_both_right(seed):
    """The listing (negatives sorted by a key, each positive checking only those above its own key
    less the margin) returns exactly the pairs whose largest score difference over the box, from the
    definition, is below twice the margin, each once; its greedy flow is a flow through them."""
    rng = np.random.default_rng(5850 + seed)
    n_pos, n_neg, r = int(rng.integers(1, 40)), int(rng.integers(1, 60)), int(rng.integers(1, 6))
    Sp = rng.integers(-10, 11, (n_pos, r)).astype(np.int32)
    Sn = rng.integers(-10, 11, (n_neg, r)).astype(np.int32)
    lo = rng.integers(1, 4, r).astype(np.int32)
    hi = (lo + rng.integers(0, 4, r)).astype(np.int32)
    margin = int(rng.choice([1, 2, 3]))
    wp, wn = rng.random(n_pos), rng.random(n_neg)
    delta = Sp[:, None, :].astype(np.int64) - Sn[None, :, :]
    largest = np.where(delta > 0, delta * hi, delta * lo).sum(axis=2)
    greedy, ends_p, ends_n = ob._box_conflicts(Sp, np.ascontiguousarray(Sn.T), lo, hi, wp.copy(), wn.copy(), margin,
                                               math.inf)
    expected = sorted(zip(*np.nonzero(largest < 2 * margin)))
    assert sorted(zip(ends_p.tolist(), ends_n.tolist())) == [(int(p), int(q)) for p, q in expected]
    assert greedy <= _maximum_flow(ends_p, ends_n, wp, wn) + 1e-12


@pytest.mark.parametrize("seed", range(8))
def test_the_enumeration_of_a_box_is_the_least_objective_of_every_vector_and_intercept(seed):
    """Brute force: every magnitude vector of the box ``low..top`` (signed), every integer intercept in the
    range, the weighted errors at the margin plus the costs; below ``target`` only (else ``target``)."""
    rng = np.random.default_rng(6100 + seed)
    m, k, margin = int(rng.integers(1, 40)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    X = rng.integers(0, 5, (m, k)).astype(np.int64)
    positive, w = rng.random(m) < 0.4, rng.random(m)
    low = rng.integers(1, 3, k)
    top = low + rng.integers(0, 3, k)
    sign = rng.choice([-1, 1], k).astype(np.int64)
    cost, eps = rng.choice([0.0, 0.3], k), np.full(k, 1e-3)
    best = math.inf
    for magnitudes in itertools.product(*[range(a, b + 1) for a, b in zip(low, top)]):
        points = sign * np.array(magnitudes)
        for b in range(-15, 16):
            scores = X @ points + b
            errors = w[positive & (scores < margin)].sum() + w[~positive & (scores > -margin)].sum()
            best = min(best, errors + cost.sum() + eps @ np.abs(points))
    least, points, b = ob.enumerate_box(X, positive, w, low, top, sign, cost, eps, margin, -15, 15, math.inf)
    assert least == pytest.approx(best, abs=1e-12)
    scores = X @ points + b
    assert (w[positive & (scores < margin)].sum() + w[~positive & (scores > -margin)].sum() + cost.sum()
            + eps @ np.abs(points)) == pytest.approx(least, abs=1e-12)
    assert ob.enumerate_box(X, positive, w, low, top, sign, cost, eps, margin, -15, 15, best - 1e-9)[0] == best - 1e-9


@pytest.mark.parametrize("seed", range(12))
def test_the_branch_and_bound_in_an_orthant_finds_what_enumeration_finds(seed):
    rng = np.random.default_rng(5900 + seed)
    n, k = int(rng.integers(10, 50)), int(rng.integers(1, 4))
    X, positive, w, support = _patterns_of(rng, n, k)
    cost, eps = rng.choice([0.0, 0.02], k), np.full(k, 1e-3)
    top = rng.integers(2, 6, k)
    for plus in range(2 ** k):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        least, points, b = ob.enumerate_box(X, positive, w, np.ones(k, np.int64), top, sign, cost, eps, 1, -99, 99, math.inf)
        for leaf, bounded in ((1, False), (4, False), (1, True)):
            value, found, intercept, boxes = ob.orthant_search(support.Vp, support.wp, support.Vn, support.wn, top,
                                                                sign, cost, eps, 1, -99, 99, math.inf, leaf, bounded)
            assert value == pytest.approx(least, abs=1e-12) and boxes >= 1
            # the model it returns has that objective
            scores = X @ found + intercept
            errors = w[positive & (scores < 1)].sum() + w[~positive & (scores > -1)].sum()
            assert errors + cost.sum() + eps @ np.abs(found) == pytest.approx(value, abs=1e-12)
            # below the optimum it finds nothing
            nothing = ob.orthant_search(support.Vp, support.wp, support.Vn, support.wn, top, sign, cost, eps, 1,
                                         -99, 99, least - 1e-6, leaf, bounded)
            assert nothing[0] == least - 1e-6 and not nothing[1].any()


def test_groups_number_keys_by_first_appearance_and_sort_by_group():
    rng = np.random.default_rng(5700)
    keys = rng.integers(0, 50, 300)
    slot, ids = np.full(64, -1, np.int64), np.empty(300, np.int64)
    groups = pg.group_ids(keys, slot, ids, 0)
    _, first = np.unique(keys, return_index=True)
    assert groups == first.size and np.array_equal(np.sort(ids[np.sort(first)]), np.arange(groups))
    assert all(len(set(keys[ids == g])) == 1 for g in range(groups))
    pg.forget(keys, slot)
    assert np.all(slot == -1)
    start, items = pg.by_group(ids, groups)
    assert np.array_equal(ids[items], np.sort(ids)) and start[-1] == 300
    dense = pg.dense_keys(keys * 1000)
    assert np.array_equal(dense, np.unique(keys, return_inverse=True)[1].ravel())


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


def _three_features(seed: int, n: int, d: int):
    """A SLIM instance of ``n`` rows of ``d`` integer columns 0..3 with supports of up to three features
    and points -2..2 (the orthant search's runs of tails), and its optimum by brute force."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    inst = SLIM(c0=0.01, coef_bound=2, max_size=3).instance(X, y)
    return inst, _brute_force(inst, 3, 2)


def test_the_first_pass_leaves_orthants_unrefined_and_each_refinement_keeps_a_true_rising_bound(monkeypatch):
    """The screen's first pass keeps the open orthants of supports of three features with their
    near flows, unrefined (every support's: none counts as few pattern pairs here); taken one at a
    time, an unrefined orthant comes back refined with a bound at least its first one, the least
    bound left stays below the optimum (brute force) at every step, and the search ends at the
    optimum (six tables; refinements happen on some)."""
    monkeypatch.setattr(ms, "REFINED_AT_ONCE", 0)
    refinements = 0
    for seed in range(6):
        inst, best = _three_features(5950 + seed, 20 + 5 * seed, 4 + seed % 3)
        problem = zero_one(inst)
        search = ms._Search(problem, math.inf, None, math.inf)
        for unit in ms._units(problem.free, search.k):
            for support, tails in unit:
                assert search.screen(support) if tails is None else search.screen_tails(support, tails)
        assert any(not refined for *_, refined in search.left)
        while search.left and search.left[0][0] < search.best:
            assert search.bound + problem.offset <= best + 1e-12
            bound, support, plus, refined = search.left[0]
            assert search.search_left(Limits(time_limit=None).started(), most=1)
            if not refined:
                refinements += 1
                again = [entry for entry in search.left if entry[1:3] == (support, plus)]
                assert all(entry[3] and entry[0] >= bound for entry in again)
        assert search.best + problem.offset == pytest.approx(best, abs=1e-12)
    assert refinements > 0


def test_the_rest_of_the_search_is_projected_from_its_rates_so_far():
    """Each unrefined orthant left a refinement, the share of them kept so far and every refined one a search,
    at the seconds each took so far, on the threads that share them (closed form)."""
    rates = ms.SearchRates(refinements=4, refine_seconds=2.0, kept=1, searches=2, search_seconds=6.0)
    assert rates.rest(8, 3) == pytest.approx(8 * 0.5 + (3 + 8 * 0.25) * 3.0)
    assert rates.rest(8, 3, threads=2) == pytest.approx(19.0 / 2)
    assert rates.rest(0, 0) == 0.0
    assert math.isnan(ms.SearchRates(refinements=3, refine_seconds=1.0).rest(2, 1))  # (no search timed yet)
    assert ms.SearchRates(refinements=3, refine_seconds=1.5).rest(2, 0) == pytest.approx(1.0)  # (none kept)


def test_stopped_in_the_search_it_projects_the_rest_and_at_a_memory_stop_nothing(monkeypatch):
    """A search stopped by its time limit after a few orthants of the search returns its seconds plus the
    rest at the rates of those orthants (:meth:`SearchRates.rest`); stopped otherwise, no projection. The
    limit expires on cue (after those orthants), not by the clock."""
    monkeypatch.setattr(ms, "REFINED_AT_ONCE", 0)  # (the first pass leaves orthants unrefined,
    monkeypatch.setattr(ms, "SEARCH_EVERY", 10**9)  # and searches none: from no incumbent, it leaves them all)
    rng = np.random.default_rng(2)  # (a table whose search takes several orthants)
    X = rng.integers(0, 5, (150, 6)).astype(float)
    y = np.where(X @ rng.normal(size=6) + rng.normal(0, 3, 150) > 0, 1.0, -1.0)
    inst = SLIM(c0=1e-4, coef_bound=3, max_size=3).instance(X, y)
    # the optimum, found before the patch (solve_exact's own search would overwrite what the patch saw)
    best = solve_exact(inst, limits=Limits(time_limit=30)).objective
    original = ms._Search.search_left
    seen = {}

    class ExpiresOnCue(Limits):
        """No time limit until the cue, then none left."""
        cue = False

        def seconds_left(self) -> float:
            return 0.0 if ExpiresOnCue.cue else super().seconds_left()

    def few_then_stop(self, limits, most=math.inf, scratch=None):
        if most < math.inf:  # (the searches between supports of the screen)
            return original(self, limits, most, scratch)
        assert original(self, Limits(time_limit=None).started(), 3, scratch)
        seen["rates"], seen["left"], seen["flying"] = replace(self.rates), list(self.left), len(self.flying)
        ExpiresOnCue.cue = True
        return False

    monkeypatch.setattr(ms._Search, "search_left", few_then_stop)
    found = ms.monotone_supports(zero_one(inst), ExpiresOnCue(time_limit=None).started())
    assert not found.finished and found.bound <= best + 1e-12
    rates, left = seen["rates"], seen["left"]
    assert rates.refinements + rates.searches == 3 and rates.searches and left
    unrefined = sum(1 for *_, refined in left if not refined)
    rest = rates.rest(unrefined, len(left) - unrefined + seen["flying"])  # (those being searched counted)
    assert math.isfinite(rest) and found.projected == pytest.approx(found.seconds + rest, rel=1e-12, abs=1e-12), \
        (found.projected, found.seconds, rest)
    monkeypatch.setattr(ms._Search, "search_left", lambda self, limits, most=math.inf, scratch=None:
                        original(self, limits, most, scratch) if most < math.inf else False)
    stopped = ms.monotone_supports(zero_one(inst), Limits(time_limit=30.0).started())
    assert not stopped.finished and math.isnan(stopped.projected)


def test_once_screened_the_search_reports_true_bounds_to_the_progress_line(monkeypatch):
    """After the first pass, the refinement and search report the incumbent and the least bound
    left: every report's bound is at most the optimum (brute force) and its incumbent at least."""
    reports = 0
    for seed in range(4):
        inst, best = _three_features(5970 + seed, 40, 5)
        # supports refined in the first pass as the search decides, and every orthant refined by the search
        for at_once in (ms.REFINED_AT_ONCE, 0):
            monkeypatch.setattr(ms, "REFINED_AT_ONCE", at_once)
            with progress.reporting(trace := progress.Trace()):
                found = ms.monotone_supports(zero_one(inst), Limits(time_limit=None).started())
            assert found.finished and found.objective == pytest.approx(best, abs=1e-12)
            for _, incumbent, bound in trace.rows:
                assert bound <= best + 1e-12 <= incumbent + 2e-12
            reports += len(trace.rows)
    assert reports > 0


@pytest.mark.parametrize("seed", range(6))
def test_the_orthants_left_bound_the_optimum_and_their_search_reaches_it(seed):
    """Screened without an incumbent, every orthant is left; the least bound left is a lower bound
    (what a search stopped at a limit returns), and searching them lowest first finds the optimum."""
    inst, k, bound = _case(seed)
    best = _brute_force(inst, k, bound)
    problem = zero_one(inst)
    search = ms._Search(problem, math.inf, None, math.inf)
    for unit in ms._units(problem.free, search.k):
        for support, tails in unit:
            assert search.screen(support) if tails is None else search.screen_tails(support, tails)
    assert search.left and search.bound + problem.offset <= best + 1e-12
    assert not search.search_left(Limits(time_limit=1e-9).started()) and search.left
    assert search.search_left(Limits(time_limit=None).started()) and not search.left
    assert search.best + problem.offset == pytest.approx(best, abs=1e-12)


def test_threads_share_the_search_and_reach_the_optimum_of_one_thread():
    """Two threads (units of a head each, a shared heap and incumbent) on 300 rows x 12 features of
    up to 7 values, supports of 4: the same optimum as one thread, every orthant screened once."""
    rng = np.random.default_rng(6200)
    X = rng.integers(0, 7, (300, 12)).astype(float)
    y = np.where(X[:, :4] @ np.array([1.0, -1.0, 0.5, 0.5]) + rng.normal(0, 3, 300) > 3.0, 1.0, -1.0)
    inst = SLIM(c0=0.001, coef_bound=3, max_size=4).instance(X, y)
    one = ms.monotone_supports(zero_one(inst), Limits(time_limit=None).started())
    two = ms.monotone_supports(zero_one(inst), Limits(time_limit=None).started(), threads=2)
    assert one.finished and two.finished and two.orthants == one.orthants
    assert two.objective == pytest.approx(one.objective, abs=1e-12) and two.bound == two.objective
    assert inst.objective(Model(two.coef, two.intercept)) == pytest.approx(two.objective, abs=1e-12)


def test_the_route_runs_as_many_threads_as_n_jobs_asks_and_the_memory_budget_holds():
    inst, _, _ = _case(0)
    shared, per_thread = slim_route._monotone_bytes(inst)
    assert slim_route._monotone_threads(inst, Limits(n_jobs=4, memory=int(shared + 9 * per_thread))) == 4
    assert slim_route._monotone_threads(inst, Limits(n_jobs=4, memory=int(shared + 2.5 * per_thread))) == 2
    tight = Limits(n_jobs=4, memory=max(int(shared + 1.9 * per_thread), MIN_MEMORY))
    assert tight.memory < shared + 2 * per_thread and slim_route._monotone_threads(inst, tight) == 1
    assert slim_route._monotone_memory(inst, tight) == shared + per_thread <= tight.memory


def test_an_orthant_being_searched_counts_in_the_bound_and_a_thread_error_is_raised():
    inst, _, _ = _case(4)
    search = ms._Search(zero_one(inst), math.inf, None, math.inf)
    for unit in ms._units(search.problem.free, search.k):
        assert search.screen_unit(search.main, unit, Limits(time_limit=None).started())
    lowest = search.left[0][0]
    flying = heapq.heappop(search.left)  # as a thread searching it holds it
    search.flying[0] = flying[0]
    assert search.bound == lowest
    del search.flying[0]
    assert search.bound >= lowest

    def fails(scratch, unit):
        raise ValueError("in a thread")

    with pytest.raises(ValueError, match="in a thread"):
        search.run(range(4), fails, 2)


@pytest.mark.parametrize("seed", [1, 2])
def test_it_agrees_with_highs_on_the_milp_of_150_rows(seed):
    """A second solver: HiGHS proves the SLIM MILP (150 rows, 6 features of up to 7 values, supports of
    3, points -5..5: the near pairs screen supports and the orthants' boxes are branched)."""
    rng = np.random.default_rng(6000 + seed)
    n, d = 150, 6
    X = (rng.integers(0, 4, (n, d)) * rng.choice([1, 2], d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 2, n) > np.median(X @ rng.normal(size=d)), 1.0, -1.0)
    inst = SLIM(c0=0.01, coef_bound=5, max_size=3).instance(X, y)
    milp = solve_highs(inst.exact(), time_limit=120, mip_rel_gap=0.0)
    assert milp.status == Status.OPTIMAL
    found = ms.monotone_supports(zero_one(inst), Limits(time_limit=None).started())
    assert found.finished and found.objective == pytest.approx(milp.objective, abs=1e-9)
    assert inst.objective(Model(found.coef, found.intercept)) == pytest.approx(milp.objective, abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_tail_patterns_are_the_supports_patterns_in_lexicographic_order(seed):
    """The rows sorted once by a prefix, then split by each tail's rank, give each support's patterns
    (against :func:`pattern_groups.patterns`: same patterns, same weights), sorted, with the groups
    of the near flows' first grouping (equal ranks on all columns but the last two)."""
    rng = np.random.default_rng(6100 + seed)
    n, d, r = int(rng.integers(20, 200)), 6, int(rng.integers(2, 5))
    X = rng.integers(0, int(rng.integers(2, 6)), (n, d)).astype(np.int64) * int(rng.choice([1, 3]))
    positive = rng.random(n) < 0.4
    w = rng.integers(1, 5, n) / 13.0
    ranks, levels = pg.value_ranks(X)
    ranksT = np.ascontiguousarray(ranks.T)
    prefix = np.sort(rng.choice(d - 1, r - 1, replace=False))
    rows, start, run_ranks, group = pg.prefix_order(ranksT, levels, prefix, np.arange(n))
    assert np.array_equal(np.sort(rows), np.arange(n))
    assert all(np.array_equal(ranks[rows[a:b]][:, prefix], np.tile(run_ranks[g], (b - a, 1)))
               for g, (a, b) in enumerate(zip(start[:-1], start[1:])))
    keyed = ranks[rows][:, prefix]
    assert all(tuple(a) <= tuple(b) for a, b in zip(keyed[:-1], keyed[1:]))
    slot = np.full(4096, -1, np.int64)
    for last in range(prefix[-1] + 1, d):
        S = np.append(prefix, last)
        Rp, Rn = np.empty((n, r), np.int64), np.empty((n, r), np.int64)
        wp, wn, ids = np.empty(n), np.empty(n), np.empty(2 * n, np.int64)
        n_pos, n_neg, groups = pg.tail_patterns(ranksT, rows, start, run_ranks, group, last, levels[last], positive[rows],
                                                w[rows], Rp, wp, Rn, wn, ids)
        _, wp0, Rp0, _, wn0, Rn0 = pg.patterns(X.T.copy(), ranksT, levels, S, positive, w, slot)
        for R, weights, R0, w0, count in ((Rp, wp, Rp0, wp0, n_pos), (Rn, wn, Rn0, wn0, n_neg)):
            order = np.lexsort(R0.T[::-1])
            assert count == len(R0) and np.array_equal(R[:count], R0[order]) and np.allclose(weights[:count], w0[order])
        both = np.vstack([Rp[:n_pos], Rn[:n_neg]])
        _, expected = np.unique(both[:, :r - 2], axis=0, return_inverse=True)
        got = ids[:n_pos + n_neg]
        assert groups == expected.max() + 1 and len(set(zip(got, expected.ravel()))) == groups


@pytest.mark.parametrize("seed", range(8))
def test_a_prefix_order_split_from_its_heads_is_the_prefix_order(seed):
    """:class:`tail_screen.PrefixOrders` (the head's sort kept, each prefix's runs split from it) gives
    the arrays :func:`pattern_groups.prefix_order` gives for the whole prefix, for prefixes met in
    lexicographic order: rows (negative rows first within a run), runs, their ranks and groups."""
    rng = np.random.default_rng(6150 + seed)
    n, d = int(rng.integers(20, 200)), 6
    X = rng.integers(0, int(rng.integers(2, 6)), (n, d)).astype(np.int64)
    positive = rng.random(n) < 0.4
    ranks, levels = pg.value_ranks(X)
    ranksT = np.ascontiguousarray(ranks.T)
    orders = ts.PrefixOrders(ranksT, levels, positive)
    r = int(rng.integers(2, 5))
    for prefix in itertools.combinations(range(d), r):
        prefix = np.array(prefix)
        got = orders(prefix)
        expected = pg.prefix_order(ranksT, levels, prefix, np.argsort(positive, kind="stable"))
        assert all(np.array_equal(a, b) for a, b in zip(got, expected))
        rows, start = got[0], got[1]
        assert all(np.all(np.diff(positive[rows[a:b]].astype(int)) >= 0) for a, b in zip(start[:-1], start[1:]))


@pytest.mark.parametrize("seed", range(6))
def test_the_near_flows_of_a_prefix_bound_each_supports_orthants(seed):
    """The batched near flows (one sort per prefix) are flows: at most each orthant's maximum flow
    through all the conflicts of its box, and positive where the first grouping holds a conflict."""
    rng = np.random.default_rng(6200 + seed)
    n, d, r = int(rng.integers(30, 150)), 6, int(rng.integers(3, 5))
    X = rng.integers(0, 3, (n, d)).astype(np.int64)
    positive = rng.random(n) < 0.5
    w = rng.integers(1, 5, n) / 11.0
    ranks, levels = pg.value_ranks(X)
    prefix = np.arange(r - 1)
    tails = np.arange(r - 1, d)
    allowed = np.ones((tails.size, 2 ** r), bool)
    slot = np.full(4096, -1, np.int64)
    ranksT = np.ascontiguousarray(ranks.T)
    up, down, margin = rng.integers(1, 4, d), rng.integers(1, 4, d), int(rng.integers(1, 3))
    near, pairs = ts.near_tails(ranksT, levels, *ts.PrefixOrders(ranksT, levels, positive)(prefix), prefix, tails,
                                positive, w, slot, allowed, np.full(tails.size, math.inf),
                                pg.rank_values(X, ranks, levels), up, down, margin)
    for t, last in enumerate(tails):
        columns = np.append(prefix, last)
        support = _support(X[:, columns], positive, w)
        assert pairs[t] == support.wp.size * support.wn.size
        for plus in range(2 ** r):
            assert near[t, plus] <= _box_flow(support, plus, up[columns], down[columns], margin) + 1e-12
            sign = np.array([1 if plus >> j & 1 else -1 for j in range(r)], np.int64)
            close = np.all(support.Vp[:, None, :r - 2] == support.Vn[None, :, :r - 2], axis=2)
            edges = close & np.all(support.Vp[:, None, :] * sign <= support.Vn[None, :, :] * sign, axis=2)
            assert near[t, plus] > 0 or not edges.any()


@pytest.mark.parametrize("seed", range(8))
def test_the_conflicts_of_an_orthant_are_every_dominated_pair_of_wider_supports(seed):
    """On 4-6 columns of 2-7 values (the two columns of most ranks bucket the negative patterns, the
    others are checked): every orthant's listed conflicts are exactly its dominated pairs, once each."""
    rng = np.random.default_rng(5350 + seed)
    n, k = int(rng.integers(20, 120)), int(rng.integers(4, 7))
    X = np.column_stack([rng.integers(0, int(rng.integers(2, 8)), n) for _ in range(k)]).astype(np.int64)
    positive = rng.random(n) < 0.5
    positive[:2] = [True, False]
    support = _support(X, positive, np.full(n, 1.0 / n))
    for plus in rng.choice(2 ** k, 6, replace=False):
        sign = np.array([1 if plus >> j & 1 else -1 for j in range(k)], np.int64)
        below = np.all(support.Rp[:, None, :] * sign <= support.Rn[None, :, :] * sign, axis=2)
        ends_p, ends_n = _conflicts(support, int(plus))
        listed = np.zeros_like(below)
        listed[ends_p, ends_n] = True
        assert np.array_equal(listed, below) and ends_p.size == below.sum()
