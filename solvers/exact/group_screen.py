"""The screen of every support of ``K`` *groups* of nested 0/1 columns, on rows blocked by its first two (numba).

A binarised variable cut at thresholds ``t_1 < t_2 < ...`` gives a chain of nested columns
(:mod:`solvers.exact.nested_columns`). Cut such chains into *groups* of at most a few consecutive
columns ``c_1 ⊇ c_2 ⊇ ... ⊇ c_l``: a row's values on a group are fixed by its *level*, how many of
the group's columns hold a one (``l + 1`` levels, not ``2^l`` patterns). For a support ``T`` of
``K`` groups, the rows fall into the cells of their levels on ``T``; a support ``S`` of columns
lying in those groups splits the rows no finer (its pattern is a function of the levels), so
every sum over cells that only grows when cells merge bounds ``S`` by ``T``:

.. math::

    H(S) \\ge H(T) = \\sum_{c} F(a_c, b_c),

with ``F`` the saturated loss of a cell (:mod:`solvers.exact.blocked_entropy`) or its Bayes error
``min(a_c, b_c)`` (both are subadditive: ``F(a + a', b + b') >= F(a, b) + F(a', b')``). Every
support of ``K`` columns lies in some support of ``K`` groups (its own groups, and others to make
``K``), so a group support whose sum reaches the cutoff rules out every column support inside it,
and only the column supports of the group supports left need a look of their own
(:func:`members`).

:func:`screen_group_pair` does for groups what :func:`solvers.exact.blocked_entropy.screen_pair`
does for columns: for one pair ``a < b`` of groups it lists the group supports ``{a, b} + M +
{e}`` (``M`` ``K - 3`` middle groups) in lexicographic order; the rows of each label are reordered
by their levels on ``(a, b)`` (one block per pair of levels, each starting at a 64-row word); a
prefix ``{a, b} + M`` has one pattern per block and levels of ``M``, and splitting a pattern by the
last group ``e`` takes one popcount per column of ``e`` over its block's words (with ``n_v`` the
pattern's rows with ``x_{e_v} = 1``, level ``v`` holds ``n_v - n_{v+1}`` rows). The mixed patterns
are split in decreasing order of their own sum, and a support stops at the first partial sum that
reaches the cutoff; the splits go pattern by pattern across all the last groups still below it (the
pattern's words stay at hand while the last groups' stream by).

The column supports of the group supports left get their own sums (:func:`member_sums`), so what a
pass returns is what the screen of every column support returns.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.blocked_entropy import _and_count, _blocked, _entropy, _insert, _next_combination, _patterns
from solvers.exact.box_logistic import _prefix_patterns, _split_pattern

#: most columns per group (levels per group: one more)
GROUP_COLUMNS = 2


def groups_of(chains: list[np.ndarray], d: int, width: int = GROUP_COLUMNS) -> tuple[np.ndarray, np.ndarray]:
    """The groups of ``d`` columns (positions ``0..d-1``): each chain (positions, each column inside the
    one before) cut into runs of at most ``width`` consecutive columns, and every column in no chain
    alone; as ``(start, columns)``: group ``g`` holds ``columns[start[g]:start[g + 1]]``, most ones
    first. Groups are numbered by their first column."""
    runs = [chain[i:i + width] for chain in chains for i in range(0, len(chain), width)]
    taken = np.zeros(d, bool)
    for run in runs:
        taken[run] = True
    runs += [np.array([j]) for j in np.flatnonzero(~taken)]
    runs.sort(key=lambda run: int(run.min()))
    start = np.zeros(len(runs) + 1, np.int64)
    start[1:] = np.cumsum([len(run) for run in runs])
    return start, np.concatenate(runs).astype(np.int64) if runs else np.zeros(0, np.int64)


@njit(cache=True, nogil=True)
def screen_group_pair(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx, start, columns, a, b, size,
                      cutoff, survivors, middle, limit):
    """Screen every support ``(a, b, m_1 .. m_{size-3}, e)`` of groups ``a < b < m_1 < .. < e < G``
    (group ``g``: the bit rows ``columns[start[g]:start[g + 1]]``, each inside the one before) at
    ``cutoff`` (module docstring; ``size >= 3``; ``xlogx`` as for
    :func:`solvers.exact.blocked_entropy.screen_pair`, :data:`~solvers.exact.blocked_entropy.BAYES` for
    Bayes errors). Returns ``(listed, kept, pruned_floor, finished)``: group supports listed;
    survivors written to the first ``kept`` rows of ``survivors`` (``kept`` larger than its rows: it
    overflowed); the least sum of the pruned ones (inf: none); whether the pair is finished. A call
    stops after the prefix at which it has listed ``limit`` supports or more, with ``middle`` moved to
    the next prefix (called again with it, it goes on from there)."""
    G = start.size - 1
    r = size - 3
    widest = 1
    for g in range(G):
        widest = max(widest, start[g + 1] - start[g] + 1)
    blocks = (start[a + 1] - start[a] + 1) * (start[b + 1] - start[b] + 1)
    blocked_pos, valid_pos, starts_pos = _blocked(bits_pos, start, columns, n_pos, a, b)
    blocked_neg, valid_neg, starts_neg = _blocked(bits_neg, start, columns, n_neg, a, b)
    words_pos, words_neg = valid_pos.size, valid_neg.size
    most = blocks * widest ** r
    pattern_pos = np.zeros((most, words_pos), np.uint64)
    pattern_neg = np.zeros((most, words_neg), np.uint64)
    count_pos = np.zeros(most, np.int64)
    count_neg = np.zeros(most, np.int64)
    order = np.empty(most, np.int64)
    heat = np.empty(most)
    last = np.empty(G, np.int64)
    floors = np.empty(G)
    listed = 0
    kept = 0
    pruned_floor = np.inf
    if G - b - 1 < r + 1:
        return listed, kept, pruned_floor, True
    while True:
        per = 1
        for t in range(r):
            per *= start[middle[t] + 1] - start[middle[t]] + 1
        _patterns(blocked_pos, valid_pos, starts_pos, blocks, start, middle, per, pattern_pos, count_pos)
        _patterns(blocked_neg, valid_neg, starts_neg, blocks, start, middle, per, pattern_neg, count_neg)
        mixed = 0  # the mixed patterns, the largest sum first
        for p in range(blocks * per):
            if count_pos[p] > 0 and count_neg[p] > 0:
                mixed = _insert(heat, order, mixed, _entropy(count_pos[p], count_neg[p], unit_pos, unit_neg, xlogx), p)
        first = middle[r - 1] + 1 if r > 0 else b + 1
        alive = G - first  # the last groups e still below the cutoff, all the prefix's patterns split so far
        for t in range(alive):
            last[t] = first + t
            floors[t] = 0.0
        listed += alive
        for i in range(mixed):  # pattern by pattern, the largest first, across the last groups left
            p = order[i]
            q = p // per
            lo_p, hi_p = starts_pos[q], starts_pos[q + 1]
            lo_n, hi_n = starts_neg[q], starts_neg[q + 1]
            kept_e = 0
            for t in range(alive):
                e = last[t]
                floor = floors[t]
                above_p, above_n = 0, 0  # rows of the levels above the one being summed
                for c in range(start[e + 1] - 1, start[e] - 1, -1):  # the last column's level, then down
                    ones_p = _and_count(pattern_pos[p, lo_p:hi_p], blocked_pos[c, lo_p:hi_p]) \
                        if count_pos[p] > above_p else above_p
                    ones_n = _and_count(pattern_neg[p, lo_n:hi_n], blocked_neg[c, lo_n:hi_n]) \
                        if count_neg[p] > above_n else above_n
                    floor += _entropy(ones_p - above_p, ones_n - above_n, unit_pos, unit_neg, xlogx)
                    above_p, above_n = ones_p, ones_n
                floor += _entropy(count_pos[p] - above_p, count_neg[p] - above_n, unit_pos, unit_neg, xlogx)
                if floor >= cutoff:
                    pruned_floor = min(pruned_floor, floor)
                else:
                    last[kept_e] = e
                    floors[kept_e] = floor
                    kept_e += 1
            alive = kept_e
            if alive == 0:
                break
        for t in range(alive):
            if kept < survivors.shape[0]:
                survivors[kept, 0] = a
                survivors[kept, 1] = b
                for u in range(r):
                    survivors[kept, 2 + u] = middle[u]
                survivors[kept, size - 1] = last[t]
            kept += 1
        if r == 0 or not _next_combination(middle, G - 2):  # next middle of range(b + 1, G - 1)
            break
        if listed >= limit:
            return listed, kept, pruned_floor, False
    return listed, kept, pruned_floor, True


@njit(cache=True, nogil=True)
def members(group_supports, start, columns, group_of, size, out) -> int:
    """The column supports of ``size`` columns each group support (a row of ``group_supports``,
    ascending groups) stands for: those inside its groups whose own groups, completed by the
    lowest-numbered groups they miss, are that row (so each column support has one group support).
    Written to the rows of ``out`` as ``columns[c]`` of the positions ``c`` (``group_of[c]``: the group
    of position ``c``); returns how many (more than ``out``'s rows: it overflowed)."""
    found = 0
    pool = np.empty(columns.size, np.int64)
    pick = np.empty(size, np.int64)
    used = np.zeros(start.size - 1, np.bool_)
    for s in range(group_supports.shape[0]):
        m = 0
        for t in range(size):
            g = group_supports[s, t]
            for c in range(start[g], start[g + 1]):
                pool[m] = c
                m += 1
        # combinations of size columns of pool[:m] (pool ascending by group, and by column inside one)
        for t in range(size):
            pick[t] = t
        while m >= size:
            for t in range(size):
                used[group_of[pool[pick[t]]]] = True
            missing = 0
            for t in range(size):
                if not used[group_supports[s, t]]:
                    missing += 1
            # the lowest groups missed: exactly the row's groups it does not use
            canonical = True
            g, taken = 0, 0
            while taken < missing:
                if not used[g]:
                    inside = False
                    for t in range(size):
                        if group_supports[s, t] == g:
                            inside = True
                    if not inside:
                        canonical = False
                        break
                    taken += 1
                g += 1
            for t in range(size):
                used[group_of[pool[pick[t]]]] = False
            if canonical:
                if found < out.shape[0]:
                    for t in range(size):
                        out[found, t] = columns[pool[pick[t]]]
                found += 1
            if not _next_combination(pick, m - 1):
                break
    return found


@njit(cache=True, nogil=True)
def _first_rows(n, words):
    """The bit set of rows ``0..n-1`` over ``words`` 64-bit words."""
    rows = np.zeros(words, np.uint64)
    for w in range(min(n // 64, words)):
        rows[w] = np.uint64(0xFFFFFFFFFFFFFFFF)
    if n % 64 and n // 64 < words:
        rows[n // 64] = (np.uint64(1) << np.uint64(n % 64)) - np.uint64(1)
    return rows


@njit(cache=True, nogil=True)
def member_sums(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx, supports, cutoff, sums) -> None:
    """``sums[s]``: the sum over the cells of the column support ``supports[s]`` (bit rows of both
    labels, rows ``0..n-1``; ``xlogx`` as for :func:`screen_group_pair`), stopped once it reaches
    ``cutoff`` (the value written is then at least ``cutoff``). As the saturated bound of
    :func:`solvers.exact.box_logistic.binary_support_bounds`: the patterns of all but the last column
    (once per prefix; consecutive supports share it), the mixed ones split by the last column in
    decreasing order of their own sum (a pattern of one label splits into cells of one label, which
    add nothing)."""
    ns, k = supports.shape
    half = 1 << (k - 1)
    valid_pos, valid_neg = _first_rows(n_pos, bits_pos.shape[1]), _first_rows(n_neg, bits_neg.shape[1])
    pref_pos = np.empty((half, valid_pos.size), np.uint64)
    pref_neg = np.empty((half, valid_neg.size), np.uint64)
    count_pos = np.zeros(half, np.int64)
    count_neg = np.zeros(half, np.int64)
    cell_pos = np.zeros(2 * half, np.int64)
    cell_neg = np.zeros(2 * half, np.int64)
    order = np.empty(half, np.int64)
    heat = np.empty(half)
    mixed = 0
    for s in range(ns):
        same = s > 0
        for t in range(k - 1):
            same = same and supports[s, t] == supports[s - 1, t]
        if not same:
            _prefix_patterns(bits_pos, valid_pos, supports[s, :k - 1], pref_pos, count_pos)
            _prefix_patterns(bits_neg, valid_neg, supports[s, :k - 1], pref_neg, count_neg)
            mixed = 0
            for p in range(half):
                if count_pos[p] > 0 and count_neg[p] > 0:
                    mixed = _insert(heat, order, mixed, _entropy(count_pos[p], count_neg[p], unit_pos, unit_neg,
                                                                 xlogx), p)
        total = 0.0
        for i in range(mixed):
            p = order[i]
            _split_pattern(p, k, pref_pos, pref_neg, count_pos, count_neg, bits_pos[supports[s, k - 1]],
                           bits_neg[supports[s, k - 1]], cell_pos, cell_neg)
            total += _entropy(cell_pos[2 * p], cell_neg[2 * p], unit_pos, unit_neg, xlogx) + \
                _entropy(cell_pos[2 * p + 1], cell_neg[2 * p + 1], unit_pos, unit_neg, xlogx)
            if total >= cutoff:
                break
        sums[s] = total
