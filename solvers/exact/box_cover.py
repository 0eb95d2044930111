"""SLIM exactly by branch and bound on the points' integer box, with a pair-conflict bound (max flow).

A plain SLIM instance (:mod:`formulations.slim`: 0-1 loss, L0 and L1 costs, a box of integer
points, at most ``K`` features; as :class:`solvers.exact.zero_one_supports.ZeroOneProgram`)
is searched over boxes ``B = [l, u]`` of points. A positive row ``p`` and a negative row ``q`` are
both right only if ``lambda . (x_p - x_q) >= 2 margin`` (subtract the two margin rows; the
intercept cancels), so for every point vector in ``B`` they are in *conflict* when

.. math::

    \\max_{\\lambda \\in B} \\lambda \\cdot (x_p - x_q)
    = \\sum_j \\max(l_j d_j, u_j d_j) \\;<\\; 2\\,\\mathrm{margin}, \\qquad d = x_p - x_q,

and every model in ``B`` gets one row of each conflicting pair wrong. The weighted 0-1 error of
every model in ``B`` is therefore at least the least weight of a vertex cover of the bipartite
conflict graph, which by Konig's theorem (weighted form: max-flow min-cut) is the maximum flow from
the positive rows (capacity their weight) through the conflicts to the negative rows. Adding the
costs the box already decides (the L0 cost of each feature whose range excludes 0, the L1
tie-breaker at the smallest magnitude in the range) gives the node's lower bound. At a point
``B = {lambda}`` the bound is exact when the intercept is free: rows left after removing a vertex
cover have ``min_p s_p - max_q s_q >= 2 margin``, so an intercept puts all of them right. With the
intercept's box it is a lower bound, and each such leaf is evaluated exactly (best intercept in
the box) as an incumbent.

At the root (the whole box) only rows equal on every feature conflict (the Bayes error); with the
signs fixed the conflicts are the sign-cover cuts of :mod:`solvers.exact.sign_cover` at integer values
(the monotone bound); as the boxes shrink, the bound learns the linear form. Branching splits off
``lambda_j = 0`` first (three children: negative, zero, positive), then halves the range of the
feature with the widest ``(u_j - l_j) * spread(x_j)``; a box that reaches ``K`` features fixes the
others at 0. The search is depth first; a child inherits its parent's conflict margins (one
feature's term changes, ``O(|P| |N|)``) and its flow (the conflicts only grow, so the parent's flow
stays feasible), and the flow stops as soon as it prunes.

The bound reported at any stop (time or node limit) is the least of the incumbent, of every pruned
node's bound and of every open node's parent bound: valid for every model. Measurements against
HiGHS, SCIP and Gurobi are in ``docs/benchmarks.md`` (``benchmarks/slim_certify.py``).

With several joblib workers (``n_jobs``) the root box is first split at 0 on its widest features
(:func:`split_box`: every model lies in exactly one box) and the boxes are searched as tasks, each
from the best objective known when it is sent; the bound is the least of the boxes' bounds.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, parallel_config
from numba import njit

from formulations.intercept import margin_error_intercept
from formulations.slim import MARGIN_ROUNDOFF
from solvers import progress
from solvers.exact.support_workers import bounding_workers, workers_started
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits

#: pair terms (``|P| |N|`` per node) the search works through between two looks at the clock (at
#: least one node, at most 2000 per look)
PAIRS_PER_LOOK = 2 * 10**6
#: the search splits every free feature's range at 0 (up to ``3^d`` sign patterns): beyond this many
#: free features it is not used
MAX_FEATURES = 16
#: the parallel search splits the root box into about this many boxes (tasks) per worker
BOXES_PER_WORKER = 8


@dataclass
class BoxCoverResult:
    """What the search found: the best point vector and intercept (the start's, or None without one,
    if it found nothing better), their objective, the bound (valid for every model; objective units,
    offset included), whether the search finished (the bound then reaches the objective within the tolerance), the
    nodes and the seconds."""

    coef: np.ndarray | None
    intercept: float
    objective: float
    bound: float
    finished: bool
    nodes: int
    seconds: float


def box_cover_memory(problem: ZeroOneProgram) -> int:
    """Bytes the search's per-depth matrices take on ``problem``."""
    positive = problem.y > 0
    return 16 * int(positive.sum()) * int((~positive).sum()) * _depth_cap(problem.lo, problem.hi)


def _depth_cap(lo: np.ndarray, hi: np.ndarray) -> int:
    """Deepest node: per feature a split at 0 and the halvings of its wider side, plus the root."""
    width = np.maximum(np.maximum(hi, 0) - np.maximum(lo, 0), np.minimum(hi, 0) - np.minimum(lo, 0))
    return int(np.sum(2 + np.ceil(np.log2(width + 1)))) + 2


@njit(cache=True, nogil=True)
def _pair_max(Xp, Xn, lo, hi, out):
    """``out[p, q] = max over the box of lambda . (x_p - x_q)``."""
    npos, d = Xp.shape
    for p in range(npos):
        for q in range(Xn.shape[0]):
            s = 0.0
            for j in range(d):
                diff = Xp[p, j] - Xn[q, j]
                a = lo[j] * diff
                b = hi[j] * diff
                s += a if a > b else b
            out[p, q] = s


@njit(cache=True, nogil=True)
def _pair_max_update(Xp, Xn, j, lo0, hi0, lo1, hi1, out):
    """Feature ``j``'s range went from ``[lo0, hi0]`` to ``[lo1, hi1]``: update its term."""
    for p in range(Xp.shape[0]):
        xp = Xp[p, j]
        for q in range(Xn.shape[0]):
            diff = xp - Xn[q, j]
            a = lo0 * diff
            b = hi0 * diff
            old = a if a > b else b
            a = lo1 * diff
            b = hi1 * diff
            out[p, q] += (a if a > b else b) - old


@njit(cache=True, nogil=True)
def augment(mx, limit, flow, rest_pos, rest_neg, total, need, prev_neg, prev_pos, queue):
    """Raise ``total``, the flow from positive rows (residual capacities ``rest_pos``) through the
    conflicts ``mx < limit`` to negative rows (``rest_neg``), until it reaches ``need`` or no
    augmenting path is left (then it is the maximum flow). Greedy first, then shortest augmenting
    paths (breadth first, backward along edges that carry flow). The greedy pass runs only from a
    zero flow: on a parent's flow it costs more than the paths it saves."""
    npos, nneg = mx.shape
    for p in range(npos if total == 0.0 else 0):
        if rest_pos[p] <= 0.0:
            continue
        for q in range(nneg):
            if rest_neg[q] > 0.0 and mx[p, q] < limit:
                f = min(rest_pos[p], rest_neg[q])
                flow[p, q] += f
                rest_pos[p] -= f
                rest_neg[q] -= f
                total += f
                if rest_pos[p] <= 0.0:
                    break
    while total < need:
        prev_neg[:] = -2
        prev_pos[:] = -2
        head = 0
        tail = 0
        for p in range(npos):
            if rest_pos[p] > 0.0:
                prev_pos[p] = -1
                queue[tail] = p
                tail += 1
        end = -1
        while head < tail and end < 0:
            p = queue[head]
            head += 1
            for q in range(nneg):
                if prev_neg[q] == -2 and mx[p, q] < limit:
                    prev_neg[q] = p
                    if rest_neg[q] > 0.0:
                        end = q
                        break
                    for p2 in range(npos):
                        if prev_pos[p2] == -2 and flow[p2, q] > 0.0:
                            prev_pos[p2] = q
                            queue[tail] = p2
                            tail += 1
        if end < 0:
            break
        f = rest_neg[end]
        q = end
        while True:
            p = prev_neg[q]
            if prev_pos[p] == -1:
                f = min(f, rest_pos[p])
                break
            q = prev_pos[p]
            f = min(f, flow[p, q])
        rest_neg[end] -= f
        q = end
        while True:
            p = prev_neg[q]
            flow[p, q] += f
            if prev_pos[p] == -1:
                rest_pos[p] -= f
                break
            q2 = prev_pos[p]
            flow[p, q2] -= f
            q = q2
        total += f
    return total


@njit(cache=True, nogil=True)
def _advance(Xp, Xn, wp, wn, limit, cost, epsilon, forced, max_size, floor, spread, guide, incumbent, tolerance,
             max_nodes, stack_lo, stack_hi, stack_depth, stack_bound, depth_lo, depth_hi, margins, flows,
             rest_pos, rest_neg, totals, counters, least_pruned, leaf):
    """Search until a leaf below ``incumbent - tolerance`` (copied to ``leaf``; returns 1), the node
    budget (returns 2) or the end (returns 0). ``counters = [open nodes, nodes]``; ``least_pruned[0]``
    the least bound of a node pruned within the tolerance."""
    d = Xp.shape[1]
    npos, nneg = Xp.shape[0], Xn.shape[0]
    prev_neg = np.empty(nneg, np.int64)
    prev_pos = np.empty(npos, np.int64)
    queue = np.empty(npos, np.int64)
    done = 0
    while counters[0] > 0:
        if done >= max_nodes:
            return 2
        counters[0] -= 1
        top = counters[0]
        lo = stack_lo[top].copy()
        hi = stack_hi[top].copy()
        k = stack_depth[top]
        counters[1] += 1
        done += 1
        used = 0
        for j in range(d):
            if forced[j] or lo[j] > 0 or hi[j] < 0:
                used += 1
        if used > max_size:
            continue
        if used == max_size:  # no further feature fits: the free ranges shrink to 0
            for j in range(d):
                if not forced[j] and lo[j] <= 0 <= hi[j]:
                    lo[j] = 0.0
                    hi[j] = 0.0
        fixed = floor
        for j in range(d):
            if not forced[j] and (lo[j] > 0 or hi[j] < 0):
                fixed += cost[j]
            if lo[j] > 0:
                fixed += epsilon[j] * lo[j]
            elif hi[j] < 0:
                fixed -= epsilon[j] * hi[j]
        need = incumbent - tolerance - fixed
        if need <= 0.0:
            if fixed < least_pruned[0]:
                least_pruned[0] = fixed
            continue
        if k == 0:
            _pair_max(Xp, Xn, lo, hi, margins[0])
            flows[0][:] = 0.0
            rest_pos[0][:] = wp
            rest_neg[0][:] = wn
            totals[0] = 0.0
        else:
            margins[k][:] = margins[k - 1]
            flows[k][:] = flows[k - 1]
            rest_pos[k][:] = rest_pos[k - 1]
            rest_neg[k][:] = rest_neg[k - 1]
            totals[k] = totals[k - 1]
            for j in range(d):
                if lo[j] != depth_lo[k - 1, j] or hi[j] != depth_hi[k - 1, j]:
                    _pair_max_update(Xp, Xn, j, depth_lo[k - 1, j], depth_hi[k - 1, j], lo[j], hi[j], margins[k])
        depth_lo[k] = lo
        depth_hi[k] = hi
        total = augment(margins[k], limit, flows[k], rest_pos[k], rest_neg[k], totals[k], need, prev_neg,
                         prev_pos, queue)
        totals[k] = total
        bound = fixed + total
        if total >= need:
            if bound < least_pruned[0]:
                least_pruned[0] = bound
            continue
        branch = -1
        widest = -1.0
        for j in range(d):
            w = (hi[j] - lo[j]) * spread[j]
            if hi[j] > lo[j] and w > widest:
                widest = w
                branch = j
        if branch < 0:  # a point: the caller evaluates it with the intercept's box
            leaf[:] = lo
            return 1
        j = branch
        if lo[j] < 0.0 < hi[j]:  # zero last pushed, first searched
            pieces = ((lo[j], -1.0), (1.0, hi[j]), (0.0, 0.0))
        elif lo[j] == 0.0:
            pieces = ((1.0, hi[j]), (0.0, 0.0), (1.0, 0.0))
        elif hi[j] == 0.0:
            pieces = ((lo[j], -1.0), (0.0, 0.0), (1.0, 0.0))
        else:
            mid = math.floor((lo[j] + hi[j]) / 2.0)
            pieces = ((lo[j], mid), (mid + 1.0, hi[j]), (1.0, 0.0))  # (1, 0): no third child
        first = -1  # the piece holding the guide is pushed last: searched first
        for i in range(3):
            if pieces[i][0] <= guide[j] <= pieces[i][1]:
                first = i
        for i in range(3):
            if i != first:
                _push(stack_lo, stack_hi, stack_depth, stack_bound, counters, lo, hi, j, pieces[i], k + 1, bound)
        if first >= 0:
            _push(stack_lo, stack_hi, stack_depth, stack_bound, counters, lo, hi, j, pieces[first], k + 1, bound)
    return 0


@njit(cache=True, nogil=True)
def _push(stack_lo, stack_hi, stack_depth, stack_bound, counters, lo, hi, j, piece, depth, bound):
    """Open the child of box ``[lo, hi]`` whose feature ``j`` ranges over ``piece`` (none if empty)."""
    if piece[0] > piece[1]:
        return
    top = counters[0]
    stack_lo[top] = lo
    stack_hi[top] = hi
    stack_lo[top, j] = piece[0]
    stack_hi[top, j] = piece[1]
    stack_depth[top] = depth
    stack_bound[top] = bound
    counters[0] += 1


def box_cover(problem: ZeroOneProgram, limits: Limits, *, incumbent: float = math.inf,
              start: tuple[np.ndarray, float] | None = None) -> BoxCoverResult:
    """The branch and bound of the module docstring on ``problem``, from the incumbent objective
    ``incumbent`` (of the model ``start = (coef, intercept)`` if given: the search visits the
    ranges holding its points first), until it proves the best model it knows within the budget's
    ``mip_rel_gap``, or the budget ``limits`` ends (time or ``node_limit``; started here if not yet).

    With ``limits.n_jobs`` joblib workers (-1: all cores; the active joblib backend, e.g. a dask cluster)
    and no node limit, the root box is split at 0 on its widest features (:func:`split_box`) into
    boxes searched as tasks, in order; each task starts from the best objective known when it is
    sent, and the results are combined in task order (a model replaces the incumbent only when it
    is strictly better, as in the serial search). The bound is the least of the tasks' bounds
    (each valid on its box) and the incumbent."""
    limits = limits.started()
    lo, hi = np.ceil(problem.lo - 1e-9), np.floor(problem.hi + 1e-9)
    workers = bounding_workers(limits.n_jobs)
    boxes = split_box(problem, lo, hi, BOXES_PER_WORKER * workers, None if start is None else start[0]) \
        if workers > 1 and limits.node_limit is None else []
    if len(boxes) < 2 or not workers_started(limits):  # (the workers' start-up call first: see there)
        return _search(problem, lo, hi, incumbent, start, limits)
    t0 = time.perf_counter()
    best = [incumbent, None if start is None else start[0], math.nan if start is None else start[1]]

    left_open = [False]  # boxes not sent before the deadline: no bound on them

    def tasks():
        for box_lo, box_hi in boxes:
            if limits.expired():
                left_open[0] = True
                return
            inside = best[1] is not None and _holds(box_lo, box_hi, best[1])
            yield delayed(_search)(problem, box_lo, box_hi, best[0], (best[1], best[2]) if inside else None, limits)

    bound, finished, nodes = math.inf, True, 0
    with parallel_config(n_jobs=limits.n_jobs):
        for found in Parallel(return_as="generator", batch_size=1)(tasks()):
            nodes += found.nodes
            finished &= found.finished
            bound = min(bound, found.bound)
            if found.coef is not None and found.objective < best[0]:
                best[:] = [found.objective, found.coef, found.intercept]
    if left_open[0]:
        bound, finished = -math.inf, False
    return BoxCoverResult(best[1], best[2], best[0], min(bound, best[0]), finished, nodes, time.perf_counter() - t0)


def split_box(problem: ZeroOneProgram, lo: np.ndarray, hi: np.ndarray, count: int,
              guide: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Boxes covering the integer points of ``[lo, hi]`` that use at most ``problem.max_size``
    features: the box split at 0 (``[l, -1]``, ``{0}``, ``[1, u]``) on one free feature after
    another, widest ``(u - l) * spread(x)`` first, until there are ``count`` boxes or no range
    holds 0 and another value. Boxes fixing more features away from 0 than ``max_size`` hold no
    model and are left out. Those holding ``guide`` (the start's points) come first, then the
    sparser ones."""
    spread = np.ptp(problem.X, axis=0) if problem.X.size else np.zeros(problem.d)
    order = np.argsort(-(hi - lo) * spread, kind="stable")
    boxes = [(lo.copy(), hi.copy())]
    for j in order:
        if len(boxes) >= count:
            break
        if problem.forced[j] or not (lo[j] <= 0 <= hi[j]) or lo[j] == hi[j]:
            continue
        pieces = [(a, b) for a, b in ((lo[j], -1.0), (0.0, 0.0), (1.0, hi[j])) if a <= b]
        split = []
        for box_lo, box_hi in boxes:
            for a, b in pieces:
                child_lo, child_hi = box_lo.copy(), box_hi.copy()
                child_lo[j], child_hi[j] = a, b
                split.append((child_lo, child_hi))
        boxes = split
    used = [int(np.sum(problem.forced | (b_lo > 0) | (b_hi < 0))) for b_lo, b_hi in boxes]
    holds = [guide is not None and _holds(b_lo, b_hi, guide) for b_lo, b_hi in boxes]
    ranked = sorted(range(len(boxes)), key=lambda i: (not holds[i], used[i]))
    return [boxes[i] for i in ranked if used[i] <= problem.max_size]


def _holds(lo: np.ndarray, hi: np.ndarray, point: np.ndarray) -> bool:
    """Whether the box ``[lo, hi]`` holds ``point``."""
    return bool(np.all((lo <= point) & (point <= hi)))


def _search(problem: ZeroOneProgram, lo: np.ndarray, hi: np.ndarray, incumbent: float,
            start: tuple[np.ndarray, float] | None, limits: Limits) -> BoxCoverResult:
    """:func:`box_cover` in this process (a worker's, for a box task: ``limits`` keeps its deadline
    across processes) on the box ``[lo, hi]`` (integer ends) of ``problem``."""
    t0 = time.perf_counter()
    node_limit, mip_rel_gap = limits.node_limit, limits.mip_rel_gap
    positive = problem.y > 0
    Xp = np.ascontiguousarray(problem.X[positive])
    Xn = np.ascontiguousarray(problem.X[~positive])
    wp, wn = problem.weights[positive].copy(), problem.weights[~positive].copy()
    d = problem.d
    depth = _depth_cap(lo, hi)
    stack_size = 2 * depth + 3
    stack_lo, stack_hi = np.empty((stack_size, d)), np.empty((stack_size, d))
    stack_depth, stack_bound = np.zeros(stack_size, np.int64), np.full(stack_size, -np.inf)
    stack_lo[0], stack_hi[0] = lo, hi
    depth_lo, depth_hi = np.empty((depth, d)), np.empty((depth, d))
    margins, flows = np.empty((depth, Xp.shape[0], Xn.shape[0])), np.empty((depth, Xp.shape[0], Xn.shape[0]))
    rest_pos, rest_neg, totals = np.empty((depth, Xp.shape[0])), np.empty((depth, Xn.shape[0])), np.zeros(depth)
    counters = np.array([1, 0], np.int64)
    least_pruned = np.array([np.inf])
    leaf = np.empty(d)
    spread = np.ptp(problem.X, axis=0) if problem.X.size else np.zeros(d)
    limit = 2.0 * problem.margin * (1.0 - MARGIN_ROUNDOFF) - MARGIN_ROUNDOFF  # conflict: strictly below
    best_coef, best_intercept_value = (None, math.nan) if start is None else start
    guide = np.zeros(d) if start is None else np.asarray(start[0], dtype=float)
    per_look = int(min(2000, max(1, PAIRS_PER_LOOK // max(Xp.shape[0] * Xn.shape[0], 1))))
    report = progress.current()
    finished = False
    while True:
        tolerance = mip_rel_gap * max(abs(incumbent), 1e-10) if math.isfinite(incumbent) else 0.0
        budget = per_look if node_limit is None else min(per_look, node_limit - int(counters[1]))
        if budget <= 0 or limits.expired():
            break
        code = _advance(Xp, Xn, wp, wn, limit, problem.cost, problem.epsilon, problem.forced, problem.max_size,
                        problem.floor(), spread, guide, incumbent, tolerance, budget, stack_lo, stack_hi, stack_depth,
                        stack_bound, depth_lo, depth_hi, margins, flows, rest_pos, rest_neg, totals, counters,
                        least_pruned, leaf)
        if code == 1:
            intercept, _ = margin_error_intercept(problem.X @ leaf, problem.y, problem.weights, problem.margin,
                                                  (problem.intercept_lo, problem.intercept_hi),
                                                  problem.intercept_integer)
            value = problem.objective(np.arange(d), leaf, intercept)
            least_pruned[0] = min(least_pruned[0], value)
            if value < incumbent:
                incumbent, best_coef, best_intercept_value = value, leaf.copy(), intercept
        elif code == 0:
            finished = True
            break
        if report is not None:
            report(time.perf_counter() - t0, incumbent, _bound(incumbent, least_pruned, stack_bound, counters),
                   math.nan)
    bound = _bound(incumbent, least_pruned, stack_bound, counters)
    return BoxCoverResult(best_coef, best_intercept_value, incumbent, bound, finished, int(counters[1]),
                          time.perf_counter() - t0)


def _bound(incumbent: float, least_pruned: np.ndarray, stack_bound: np.ndarray, counters: np.ndarray) -> float:
    """Least of the incumbent, the pruned nodes' bounds and the open nodes' parent bounds."""
    open_bound = float(stack_bound[:counters[0]].min()) if counters[0] else math.inf
    return min(incumbent, float(least_pruned[0]), open_bound)
