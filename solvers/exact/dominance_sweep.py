"""The maximum flow of the first grouping of the near flows, for every tail of a prefix, by a sweep.

Supports ``prefix + (e,)`` of ``r`` columns (:mod:`solvers.exact.tail_screen`): the rows sorted by
the prefix (:func:`solvers.exact.pattern_groups.prefix_order`) come in *blocks* of equal ranks on
the prefix's first ``r - 2`` columns, each block in runs of equal rank ``d`` on the prefix's last
column. In the orthants of signs ``s_d`` on that column and ``s_e`` on the tail, a positive row ``p``
and a negative row ``q`` of one block conflict (:mod:`solvers.exact.monotone_flows`) exactly when
``s_d d_p <= s_d d_q`` and ``s_e e_p <= s_e e_q``: within a block, a two-dimensional dominance.
Blocks share no rows, so the maximum flow through these conflicts is the sum of the blocks' ones,
and it is the same in all ``2^(r - 2)`` orthants of the first columns' signs: four flows per tail.

The sweep (:func:`sweep_tails`): per block, the runs in decreasing ``s_d d``; each run's negative
rows are added to buckets by their tail rank, then each of its positive rows takes what the buckets
of ``s_e e >= s_e e_p`` hold, least ``s_e e`` first. Every unit it moves joins a positive and a
negative row that conflict (the negatives in the buckets come from runs of ``s_d d`` at least the
positive's), and no row gives more than its weight: a flow, so a lower bound on every orthant's
errors whatever the order. It is also a maximum one (the test checks it against Dinic's):
positives met later see every bucket the earlier ones saw, and taking the least ``s_e e`` first
leaves the buckets any later positive can use. Per tail it reads each row once per sign of ``d``;
the non-empty buckets are the bits of a word (a tail of at most :data:`MAX_LEVELS` ranks).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.loops import lowest_bit

#: most ranks of a tail the sweep takes (the buckets' bits in one 64-bit word)
MAX_LEVELS = 64

@njit(cache=True, nogil=True, inline="always")
def _take(buckets: np.ndarray, full: np.uint64, v: int, need: float) -> tuple[float, np.uint64]:
    """Take up to ``need`` from the buckets of index at least ``v``, lowest first (``full``: the
    non-empty ones' bits, updated; an emptied bucket is set to 0). Returns ``(taken, full)``."""
    one = np.uint64(1)
    candidates = full & ~((one << np.uint64(v)) - one)
    taken = 0.0
    while candidates != 0:
        u = lowest_bit(candidates)
        if buckets[u] > need:
            buckets[u] -= need
            return taken + need, full
        need -= buckets[u]
        taken += buckets[u]
        buckets[u] = 0.0
        bit = one << np.uint64(u)
        full &= ~bit
        candidates &= ~bit
    return taken, full


@njit(cache=True, nogil=True)
def run_middles(rows: np.ndarray, start: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """For runs ``rows[start[g]:start[g + 1]]`` with their negative rows first, the index of each
    run's first positive row."""
    middle = np.empty(start.size - 1, np.int64)
    for g in range(start.size - 1):
        s = start[g]
        while s < start[g + 1] and not positive[rows[s]]:
            s += 1
        middle[g] = s
    return middle


@njit(cache=True, nogil=True)
def _blocks(start: np.ndarray, middle: np.ndarray, group: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                               np.ndarray]:
    """The blocks (runs of equal ``group``), largest potential first: ``(first run, end run, rest)``
    per block, ``rest[b]`` the potentials of blocks ``b, b + 1, ...`` summed; a block's potential is
    the lesser of its positive and its negative weight (most its flow can carry)."""
    runs = start.size - 1
    first = np.empty(runs, np.int64)
    end = np.empty(runs, np.int64)
    potential = np.empty(runs)
    count = 0
    for g in range(runs):
        if g == 0 or group[g] != group[g - 1]:
            if count:
                end[count - 1] = g
            first[count] = g
            count += 1
    if count:
        end[count - 1] = runs
    for b in range(count):
        negative, positive = 0.0, 0.0
        for g in range(first[b], end[b]):
            for s in range(start[g], middle[g]):
                negative += w[s]
            for s in range(middle[g], start[g + 1]):
                positive += w[s]
        potential[b] = min(negative, positive)
    order = np.argsort(-potential[:count])
    rest = np.zeros(count + 1)
    for b in range(count - 1, -1, -1):
        rest[b] = rest[b + 1] + potential[order[b]]
    return first[order], end[order], rest


@njit(cache=True, nogil=True)
def sweep_tails(ranksT: np.ndarray, levels: np.ndarray, rows: np.ndarray, start: np.ndarray, middle: np.ndarray,
                group: np.ndarray, tails: np.ndarray, w: np.ndarray, needed: np.ndarray,
                targets: np.ndarray) -> np.ndarray:
    """Per tail (row ``t``), flows through the first grouping's conflicts (module docstring), column
    ``c = [s_d > 0] + 2 [s_e > 0]``: the maximum flow, or less where that does not change whether
    it reaches ``targets[t]``. Only the flows ``needed[t, c]`` are computed (0 elsewhere); blocks
    are swept largest potential first, a flow stops growing once at its target, and a tail is
    left (its flows so far kept) once one of its flows cannot reach its target with what the blocks
    not yet swept could carry (with an infinite target: the maximum flows). ``rows``, ``start``, ``group``: the prefix order
    (:func:`solvers.exact.pattern_groups.prefix_order`) with each run's negative rows first and
    ``middle`` its first positive (:func:`run_middles`); ``w``: the weights in the order of
    ``rows``; ``ranksT``: the value ranks, one row per feature; every tail of at most
    :data:`MAX_LEVELS` ranks."""
    m = rows.size
    out = np.zeros((tails.size, 4))
    ranks = np.empty(m, np.int64)
    up, down = np.zeros(MAX_LEVELS), np.zeros(MAX_LEVELS)  # buckets by e, and by top - e
    one = np.uint64(1)
    first, end, rest = _blocks(start, middle, group, w)
    for t in range(tails.size):
        column, top, target = ranksT[tails[t]], levels[tails[t]] - 1, targets[t]
        for s in range(m):
            ranks[s] = column[rows[s]]
        given_up, finite = False, target < np.inf
        for d_up in range(1, -1, -1):
            want_up, want_down = needed[t, d_up + 2], needed[t, d_up]
            sent_up, sent_down = 0.0, 0.0
            for b in range(first.size):
                if not (want_up or want_down):
                    break
                if finite and ((want_up and sent_up + rest[b] < target) or (want_down and sent_down + rest[b] < target)):
                    given_up = True
                    break
                full_up, full_down = np.uint64(0), np.uint64(0)
                for i in range(end[b] - first[b]):
                    g = end[b] - 1 - i if d_up else first[b] + i
                    for s in range(start[g], middle[g]):
                        v, x = ranks[s], w[s]
                        up[v] += x
                        full_up |= one << np.uint64(v)
                        down[top - v] += x
                        full_down |= one << np.uint64(top - v)
                    for s in range(middle[g], start[g + 1]):
                        if want_up and full_up != 0:
                            got, full_up = _take(up, full_up, ranks[s], w[s])
                            sent_up += got
                        if want_down and full_down != 0:
                            got, full_down = _take(down, full_down, top - ranks[s], w[s])
                            sent_down += got
                for u in range(top + 1):
                    up[u], down[u] = 0.0, 0.0
                want_up = want_up and sent_up < target
                want_down = want_down and sent_down < target
            out[t, d_up + 2] = sent_up
            out[t, d_up] = sent_down
            if given_up or (finite and (want_up or want_down)):  # a flow short of its target: the tail is open
                break
    return out
