"""SLIM exactly on few rows of integer features: every support's sign orthants screened by a monotone
bound, the orthants left enumerated point by point.

A plain SLIM instance (:class:`solvers.exact.zero_one_supports.ZeroOneProgram`: 0-1 loss with an
integer ``margin``, integer features, integer points in ``[L_j, U_j]``, an integer intercept, at most
``K`` features, none forced) is split into *orthants* ``(S, sigma)``: a support ``S`` of at most ``K``
free features and a sign ``sigma_j = +-1`` per feature of ``S``, holding the models whose non-zero
points are exactly those of ``S``, with those signs. Every model lies in exactly one orthant, so the
optimum is the least optimum over the orthants (supports listed smallest first; the empty one is the
constant model).

*Screen.* A model of ``(S, sigma)`` scores ``s = sum_{j in S} lambda_j x_j`` with
``sigma_j lambda_j > 0``: its score is monotone non-decreasing in each ``sigma_j x_j``. A positive row
``p`` and a negative row ``q`` with ``sigma_j x_pj <= sigma_j x_qj`` for every ``j`` in ``S`` get
``s_p <= s_q``, so they are not both right (``s_p + b >= margin`` and ``s_q + b <= -margin`` would
need ``s_p - s_q >= 2 margin > 0``). Every model of the orthant thus errs on a vertex cover of the
bipartite conflict graph of these pairs, whose least weight is at least the value of any flow from
the positive rows (capacity their weights) through the conflicts to the negative rows (weak LP
duality, Konig): the *monotone bound*. A greedy flow (each positive row, in order, sends what it
can to its conflicting negative rows) is such a flow; an orthant whose greedy flow plus the costs
every model of it pays (``sum_{j in S} C_0 c_{0,j} + epsilon_j``: each point is at least 1 in
magnitude) reaches the incumbent's objective (with a relative margin of
:data:`solvers.exact.floor.ROUNDOFF` for the sums' round-off) holds no better model and is pruned;
one it leaves gets a maximum flow (augmenting paths) before it is searched.
The pairs' sign requirements are computed once per support (bit masks: ``x_pj < x_qj`` needs
``sigma_j = +1``, ``x_pj > x_qj`` needs ``-1``), and each of its ``2^K`` orthants reads them.

*Search.* An orthant the screen leaves is enumerated: every point vector with ``sigma_j lambda_j`` in
``1..|bound|``, each with its best integer intercept from the cumulative weights
of the rows per score (exact: ``y_i (s_i + b) >= margin`` is an integer comparison). The objective
is SLIM's: weighted errors, plus ``C_0 c_{0,j}`` per non-zero point and the tie-breaker
``epsilon_j |lambda_j|``.

When every orthant is pruned or enumerated, the incumbent is optimal: each pruned orthant's bound
is at least the incumbent at its time (which only decreases), each enumerated one's least value is
at least the final incumbent. At a time limit no bound is claimed (``-inf``). The screen's work is
about ``C(d, K) |P| |N| (K + 2^K)`` pair terms (the supports of ``K`` features dominate); the route runs the step only on few rows
(:data:`solvers.exact.slim_route.MONOTONE_PAIRS`) when that projects within its time.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from solvers.exact.box_cover import augment
from solvers.exact.floor import ROUNDOFF
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits

#: most features per support (the sign requirements are bytes)
MAX_SIZE = 8
#: nanoseconds per pair term of the screen (:func:`work`), for the route's projection: calibrated on one
#: core with 271 rows x 22 columns and K = 5
NS_PER_PAIR_TERM = 1.5


@dataclass(frozen=True)
class MonotoneSupports:
    """The best model found (None if none beat the start), its objective, the bound (the objective
    when finished, else ``-inf``), whether every orthant was screened or searched, and the counts."""

    coef: np.ndarray | None
    intercept: float
    objective: float
    bound: float
    finished: bool
    orthants: int
    searched: int
    seconds: float

    @property
    def message(self) -> str:
        state = "every orthant screened or searched" if self.finished else "stopped at a limit"
        return f"{state}: {self.orthants} orthants, {self.searched} enumerated"


def applies(problem: ZeroOneProgram) -> str | None:
    """The reason the search cannot take ``problem`` (module docstring), or None."""
    if problem.forced.any():
        return "some features are forced"
    if not (problem.integer.all() and problem.intercept_integer):
        return "the points or the intercept are not integers"
    if problem.margin != round(problem.margin):
        return "the margin is not an integer"
    if not np.array_equal(problem.X, np.round(problem.X)):
        return "the features are not integers"
    if min(problem.max_size, problem.free.size) > MAX_SIZE:
        return f"supports of more than {MAX_SIZE} features"
    return None


def work(problem: ZeroOneProgram) -> float:
    """Pair terms of the screen: ``C(d, K) |P| |N| (K + 2^K)`` (module docstring)."""
    k = min(problem.max_size, problem.free.size)
    pairs = float(np.sum(problem.y > 0)) * float(np.sum(problem.y < 0))
    return math.comb(problem.free.size, k) * pairs * (k + 2 ** k)


@njit(cache=True, nogil=True)
def _requirements(Xp: np.ndarray, Xn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (positive row, negative row): the features (bits, columns of the support) where the
    positive row is below (needs ``sigma = +1`` for a conflict) and above (needs ``-1``)."""
    n_pos, n_neg, k = Xp.shape[0], Xn.shape[0], Xp.shape[1]
    up = np.zeros((n_pos, n_neg), np.uint8)
    down = np.zeros((n_pos, n_neg), np.uint8)
    for j in range(k):  # feature by feature, without branches
        bit = np.uint8(1 << j)
        for p in range(n_pos):
            a = Xp[p, j]
            for q in range(n_neg):
                b = Xn[q, j]
                up[p, q] |= bit * np.uint8(a < b)
                down[p, q] |= bit * np.uint8(a > b)
    return up, down


@njit(cache=True, nogil=True)
def _greedy_flows(up: np.ndarray, down: np.ndarray, wp: np.ndarray, wn: np.ndarray, allowed: np.ndarray,
                  target: float) -> np.ndarray:
    """For each sign pattern ``plus`` (bit ``j`` set: ``sigma_j = +1``) with ``allowed[plus]``, the value
    of a greedy flow through its conflicts (stopped once it reaches ``target``); ``-1`` elsewhere."""
    n_pos, n_neg = up.shape
    out = np.full(allowed.size, -1.0)
    left = np.empty(n_neg)
    for plus in range(allowed.size):
        if not allowed[plus]:
            continue
        left[:] = wn
        total = 0.0
        for p in range(n_pos):
            send = wp[p]
            for q in range(n_neg):
                if left[q] > 0.0 and (up[p, q] & ~plus) == 0 and (down[p, q] & plus) == 0:
                    t = min(send, left[q])
                    left[q] -= t
                    send -= t
                    if send <= 0.0:
                        break
            total += wp[p] - send
            if total >= target:
                break
        out[plus] = total
    return out


@njit(cache=True, nogil=True)
def _max_flow(up: np.ndarray, down: np.ndarray, wp: np.ndarray, wn: np.ndarray, plus: int, target: float) -> float:
    """The value of a maximum flow through the conflicts of sign pattern ``plus`` (a greedy flow, then
    shortest augmenting paths, Edmonds-Karp), stopped once it reaches ``target``: every flow's value
    is a lower bound on the least weight of a vertex cover."""
    n_pos, n_neg = up.shape
    apart = np.ones((n_pos, n_neg))  # 0 on the conflicts: the edges of the box search's flow below 0.5
    for p in range(n_pos):
        for q in range(n_neg):
            if (up[p, q] & ~plus) == 0 and (down[p, q] & plus) == 0:
                apart[p, q] = 0.0
    return augment(apart, 0.5, np.zeros((n_pos, n_neg)), wp.copy(), wn.copy(), 0.0, target,
                   np.empty(n_neg, np.int64), np.empty(n_pos, np.int64), np.empty(n_pos, np.int64))


@njit(cache=True, nogil=True)
def _enumerate(Xs: np.ndarray, positive: np.ndarray, w: np.ndarray, top: np.ndarray, sign: np.ndarray,
               cost: np.ndarray, eps: np.ndarray, margin: int, b_lo: int, b_hi: int,
               target: float) -> tuple[float, np.ndarray, int]:
    """Least objective of the point vectors ``sign_j * (1..top_j)`` on the support's columns ``Xs``,
    each with its best integer intercept in ``[b_lo, b_hi]``; returns ``(objective, points,
    intercept)`` of the best one below ``target`` (``target`` and zeros when none). The vectors are
    visited in mixed-radix order, the scores updated in place."""
    m, k = Xs.shape
    span = 0
    for j in range(k):
        big = 0
        for i in range(m):
            big = max(big, abs(Xs[i, j]))
        span += top[j] * big
    size = 2 * span + 1
    hist_pos, hist_neg = np.zeros(size), np.zeros(size)
    cum_pos, cum_neg = np.zeros(size + 1), np.zeros(size + 1)
    w_neg = 0.0
    for i in range(m):
        if not positive[i]:
            w_neg += w[i]
    mags = np.ones(k, np.int64)
    scores = np.zeros(m, np.int64)
    for i in range(m):
        for j in range(k):
            scores[i] += sign[j] * Xs[i, j]
    best, best_points, best_b = target, np.zeros(k, np.int64), 0
    while True:
        fixed = 0.0
        for j in range(k):
            fixed += cost[j] + eps[j] * mags[j]
        if fixed < best:
            lo_s, hi_s = span, -span
            for i in range(m):
                s = scores[i]
                lo_s, hi_s = min(lo_s, s), max(hi_s, s)
                if positive[i]:
                    hist_pos[s + span] += w[i]
                else:
                    hist_neg[s + span] += w[i]
            if m == 0:
                lo_s, hi_s = 0, 0
            # cum_pos[t] / cum_neg[t]: weight of the positive / negative rows scoring below lo_s + t
            length = hi_s - lo_s + 1
            for t in range(length):
                cum_pos[t + 1] = cum_pos[t] + hist_pos[lo_s + t + span]
                cum_neg[t + 1] = cum_neg[t] + hist_neg[lo_s + t + span]
                hist_pos[lo_s + t + span] = 0.0
                hist_neg[lo_s + t + span] = 0.0
            # the errors change only for intercepts in [-hi_s - margin, -lo_s + margin] (within the box)
            first, last = max(b_lo, -hi_s - margin), min(b_hi, -lo_s + margin)
            if first > last:
                first = last = b_lo if b_lo > -lo_s + margin else b_hi
            err_best, b_best = np.inf, 0
            for b in range(first, last + 1):
                # positive right iff s >= margin - b; negative right iff s <= -margin - b
                below = min(max(margin - b - lo_s, 0), length)
                upto = min(max(-margin - b - lo_s + 1, 0), length)
                e = cum_pos[below] + (w_neg - cum_neg[upto])
                if e < err_best:
                    err_best, b_best = e, b
            value = err_best + fixed
            if value < best:
                best, best_b = value, b_best
                for j in range(k):
                    best_points[j] = sign[j] * mags[j]
        # next magnitude vector (mixed radix); the scores follow: + x_j for the digit raised,
        # - (top - 1) x for the digits reset to 1
        j = 0
        while j < k:
            if mags[j] < top[j]:
                mags[j] += 1
                for i in range(m):
                    scores[i] += sign[j] * Xs[i, j]
                break
            for i in range(m):
                scores[i] -= sign[j] * (top[j] - 1) * Xs[i, j]
            mags[j] = 1
            j += 1
        if j == k:
            break
    return best, best_points, best_b


def monotone_supports(problem: ZeroOneProgram, limits: Limits, incumbent: float = math.inf,
                      start: tuple[np.ndarray, float] | None = None) -> MonotoneSupports:
    """The optimum of ``problem`` by screened orthants (module docstring), pruning at ``incumbent``
    (and at the objective of ``start``'s model, which it returns if nothing beats it)."""
    t0 = time.perf_counter()
    free = problem.free
    k = min(problem.max_size, free.size)
    positive = problem.y > 0
    X = np.asarray(problem.X, dtype=np.int64)
    P, N = np.flatnonzero(positive), np.flatnonzero(~positive)
    wp, wn = np.ascontiguousarray(problem.weights[P]), np.ascontiguousarray(problem.weights[N])
    coef, intercept = None, 0.0
    best = incumbent - problem.offset  # objective without the constant offset
    if start is not None:
        coef, intercept = np.asarray(start[0], dtype=float).copy(), float(start[1])
    margin = int(round(problem.margin))
    b_lo, b_hi = int(math.ceil(problem.intercept_lo - 1e-9)), int(math.floor(problem.intercept_hi + 1e-9))
    orthants, searched, finished = 0, 0, True
    supports = itertools.chain.from_iterable(itertools.combinations(free.tolist(), r) for r in range(k + 1))
    for support in supports:
        if not finished or limits.expired():
            finished = False
            break
        S = np.array(support, dtype=np.int64)
        r = S.size
        Xs = np.ascontiguousarray(X[:, S])
        up, down = _requirements(np.ascontiguousarray(Xs[P]), np.ascontiguousarray(Xs[N]))
        patterns = np.arange(2 ** r)
        bits = (patterns[:, None] >> np.arange(r)[None, :]) & 1
        allowed = np.all(np.where(bits == 1, (problem.hi[S] >= 1)[None, :], (problem.lo[S] <= -1)[None, :]), axis=1)
        # every model of the orthant pays the L0 costs of S and the tie-breaker at magnitude 1
        least = float(problem.cost[S].sum() + problem.epsilon[S].sum())
        flows = _greedy_flows(up, down, wp, wn, allowed, best - least)
        orthants += int(allowed.sum())
        for plus in np.flatnonzero(allowed & ((flows + least) * (1.0 - ROUNDOFF) < best)):
            if limits.expired():
                finished = False
                break
            if (_max_flow(up, down, wp, wn, int(plus), best - least) + least) * (1.0 - ROUNDOFF) >= best:
                continue
            sign = np.where(bits[plus] == 1, 1, -1).astype(np.int64)
            top = np.where(sign > 0, np.floor(problem.hi[S] + 1e-9), np.floor(-problem.lo[S] + 1e-9)).astype(np.int64)
            value, points, b = _enumerate(Xs, positive, problem.weights, top, sign, problem.cost[S],
                                          problem.epsilon[S], margin, b_lo, b_hi, best)
            searched += 1
            if value < best:
                best = value
                coef = np.zeros(problem.d)
                coef[S] = points
                intercept = float(b)
    best += problem.offset
    bound = best if finished else -math.inf
    return MonotoneSupports(coef, intercept, best, bound, finished, orthants, searched, time.perf_counter() - t0)
