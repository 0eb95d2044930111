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
(:func:`_screen_members`).

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

The column supports of each group support left are screened from its cells and their own sums, as
the group screen split them (:func:`_screen_members`: a search that merges one group's levels at a
time, each node's sum its parent's plus what its merges add, and stops where the sum reaches the
cutoff), so what a pass returns is what the screen of every column support returns, and no cell is
counted twice.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.blocked_entropy import _and_count, _blocked, _entropy, _insert, _next_combination, _patterns

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


def pair_blocks(bits_pos, n_pos, bits_neg, n_neg, start, columns, a, b) -> tuple:
    """Both labels' bit rows (rows ``0..n-1`` of each) blocked by the levels on the groups ``a`` and ``b``
    (:func:`solvers.exact.blocked_entropy._blocked`): ``(blocked, valid, starts)`` of the positives, then
    of the negatives, as :func:`screen_group_pair` takes them."""
    return _blocked(bits_pos, start, columns, n_pos, a, b) + _blocked(bits_neg, start, columns, n_neg, a, b)


@njit(cache=True, nogil=True)
def screen_group_pair(blocked_pos, valid_pos, starts_pos, unit_pos, blocked_neg, valid_neg, starts_neg, unit_neg, xlogx,
                      start, columns, a, b, size, cutoff, lead_only, survivors, middle, limit):
    """Screen every support ``(a, b, m_1 .. m_{size-3}, e)`` of groups ``a < b < m_1 < .. < e < G``
    (group ``g``: the bit rows ``columns[start[g]:start[g + 1]]``, each inside the one before; both
    labels' bit rows blocked by ``(a, b)``, :func:`pair_blocks`) at ``cutoff`` (module docstring;
    ``size >= 3``; ``xlogx`` as for
    :func:`solvers.exact.blocked_entropy.screen_pair`, :data:`~solvers.exact.blocked_entropy.BAYES` for
    Bayes errors), and the members of each one left (:func:`_screen_members`, from the cells the group
    screen split; with ``lead_only``, those holding a column of group 0). Returns ``(listed, kept,
    pruned_floor, finished)``: group supports listed; the members below the cutoff written to the first
    ``kept`` rows of ``survivors`` (``columns[c]`` of the positions ``c`` chosen; ``kept`` larger than its
    rows: it overflowed); the least sum of the pruned group supports and members (inf: none); whether the
    pair is finished. A call stops after the prefix at which it has listed ``limit`` group supports or
    more, and before a prefix (not its first) whose members might not all fit in the rows of
    ``survivors`` left (at most ``C(l K, K)`` per group support, ``l`` the most columns of a group), with
    ``middle`` moved to the next prefix (called again with it, it goes on from there)."""
    G = start.size - 1
    r = size - 3
    widest = 1
    for g in range(G):
        widest = max(widest, start[g + 1] - start[g] + 1)
    blocks = (start[a + 1] - start[a] + 1) * (start[b + 1] - start[b] + 1)
    words_pos, words_neg = valid_pos.size, valid_neg.size
    most = blocks * widest ** r
    pattern_pos = np.zeros((most, words_pos), np.uint64)
    pattern_neg = np.zeros((most, words_neg), np.uint64)
    count_pos = np.zeros(most, np.int64)
    count_neg = np.zeros(most, np.int64)
    order = np.empty(most, np.int64)
    heat = np.empty(most)
    hold_pos = np.empty((G, most * widest), np.int64)  # each last group's cells: a prefix pattern's levels of e
    hold_neg = np.empty((G, most * widest), np.int64)
    hold_sum = np.empty((G, most * widest))  # each of those cells' own sum
    search = _search_arrays(size, most * widest, widest)
    T = np.empty(size, np.int64)
    T[0], T[1] = a, b
    most_members = 1  # C((widest - 1) K, K)
    for i in range(size):
        most_members = most_members * ((widest - 1) * size - i) // (i + 1)
    last = np.empty(G, np.int64)
    floors = np.empty(G)
    listed = 0
    kept = 0
    pruned_floor = np.inf
    if G - b - 1 < r + 1:
        return listed, kept, pruned_floor, True
    while True:
        first = middle[r - 1] + 1 if r > 0 else b + 1
        if listed > 0 and kept + (G - first) * most_members > survivors.shape[0]:  # (the next prefix might not fit)
            return listed, kept, pruned_floor, False
        per = 1
        for t in range(r):
            per *= start[middle[t] + 1] - start[middle[t]] + 1
        _patterns(blocked_pos, valid_pos, starts_pos, blocks, start, middle, per, pattern_pos, count_pos)
        _patterns(blocked_neg, valid_neg, starts_neg, blocks, start, middle, per, pattern_neg, count_neg)
        mixed = 0  # the mixed patterns, the largest sum first
        for p in range(blocks * per):
            if count_pos[p] > 0 and count_neg[p] > 0:
                mixed = _insert(heat, order, mixed, _entropy(count_pos[p], count_neg[p], unit_pos, unit_neg, xlogx), p)
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
                base = p * (start[e + 1] - start[e] + 1) - start[e] + 1  # (the cell of column c's level)
                above_p, above_n = 0, 0  # rows of the levels above the one being summed
                for c in range(start[e + 1] - 1, start[e] - 1, -1):  # the last column's level, then down
                    ones_p = _and_count(pattern_pos[p, lo_p:hi_p], blocked_pos[c, lo_p:hi_p]) \
                        if count_pos[p] > above_p else above_p
                    ones_n = _and_count(pattern_neg[p, lo_n:hi_n], blocked_neg[c, lo_n:hi_n]) \
                        if count_neg[p] > above_n else above_n
                    hold_pos[e, base + c] = ones_p - above_p
                    hold_neg[e, base + c] = ones_n - above_n
                    cell = _entropy(ones_p - above_p, ones_n - above_n, unit_pos, unit_neg, xlogx)
                    hold_sum[e, base + c] = cell
                    floor += cell
                    above_p, above_n = ones_p, ones_n
                hold_pos[e, base + start[e] - 1] = count_pos[p] - above_p
                hold_neg[e, base + start[e] - 1] = count_neg[p] - above_n
                cell = _entropy(count_pos[p] - above_p, count_neg[p] - above_n, unit_pos, unit_neg, xlogx)
                hold_sum[e, base + start[e] - 1] = cell
                floor += cell
                if floor >= cutoff:
                    pruned_floor = min(pruned_floor, floor)
                else:
                    last[kept_e] = e
                    floors[kept_e] = floor
                    kept_e += 1
            alive = kept_e
            if alive == 0:
                break
        for u in range(r):
            T[2 + u] = middle[u]
        for t in range(alive if a == 0 or not lead_only else 0):  # the members of the group supports left
            e = last[t]
            T[size - 1] = e
            levels_e = start[e + 1] - start[e] + 1
            for p in range(blocks * per):  # the pure patterns' cells (the mixed ones' are split), each of sum 0
                if count_pos[p] == 0 or count_neg[p] == 0:
                    q = p // per
                    _split_levels(pattern_pos[p], blocked_pos, starts_pos[q], starts_pos[q + 1], count_pos[p],
                                  start[e], start[e + 1], hold_pos[e], p * levels_e)
                    _split_levels(pattern_neg[p], blocked_neg, starts_neg[q], starts_neg[q + 1], count_neg[p],
                                  start[e], start[e + 1], hold_neg[e], p * levels_e)
                    for v in range(levels_e):
                        hold_sum[e, p * levels_e + v] = 0.0
            kept, floor = _screen_members(search, T, hold_pos[e], hold_neg[e], hold_sum[e], floors[t], unit_pos,
                                          unit_neg, xlogx, start, columns, cutoff, lead_only, survivors, kept)
            pruned_floor = min(pruned_floor, floor)
        if r == 0 or not _next_combination(middle, G - 2):  # next middle of range(b + 1, G - 1)
            break
        if listed >= limit:
            return listed, kept, pruned_floor, False
    return listed, kept, pruned_floor, True


@njit(cache=True, nogil=True)
def _search_arrays(K, width, widest):
    """The work arrays of :func:`_screen_members` for supports of ``K`` groups of at most ``widest``
    levels, of at most ``width`` cells."""
    return (np.zeros((K + 1, width), np.int64), np.zeros((K + 1, width), np.int64),  # a node's cells at each depth
            np.zeros((K + 1, width)), np.zeros(K + 1),  # their own sums (depth 0's: the group support's), and total
            np.zeros(widest + 1, np.int64),  # the first level of each part of the group merged, and one past the last
            np.zeros((K + 1, K), np.int64),  # parts of each group's levels at each depth
            np.zeros(K + 1, np.int64),  # next subset of the depth's group to try
            np.zeros(K, np.int64),  # the subset chosen at each depth
            np.zeros(K + 1, np.int64),  # columns chosen above each depth
            np.zeros(K + 1, np.int64),  # columns of the groups from each depth on
            np.zeros(K + 1, np.int64))  # groups from each depth on that must take a column


@njit(cache=True, nogil=True)
def _screen_members(search, T, group_cells_pos, group_cells_neg, group_sums, group_total, unit_pos, unit_neg, xlogx,
                    start, columns, cutoff, lead_only, out, found):
    """Screen the column supports of ``K`` columns the group support ``T`` (ascending, its sum below
    the cutoff) stands for (its *members*; module docstring) at ``cutoff``, from its cells
    (``group_cells_pos`` and ``group_cells_neg``: its rows of each label at each of its groups' levels,
    the level on ``T[0]`` slowest; ``group_sums``: each cell's own sum; ``group_total``: theirs). A
    member of ``T`` takes a subset of each group's columns; its group support is ``T`` when the groups it
    leaves out are the lowest ones it misses (so a group left out sits at its own number's place in
    ``T``: every lower group is in ``T``); with ``lead_only`` it takes a column of group 0. Its cells are
    unions of ``T``'s (a group's levels merge into the parts its chosen columns tell apart), so the
    members are found by a search over the groups in ``T``'s order: each node merges one more group's
    levels, and since the sum only grows when cells merge, a node whose sum reaches the cutoff rules out
    every member below it. A node's sum is its parent's plus what each merged cell adds, ``F(merged) -
    sum of F(parts) >= 0`` (:func:`_merged_total`), counted until it uses up the parent's room below the
    cutoff; only a node kept makes its cells (:func:`_merge`). A node is not made when the columns it
    has taken, and one for each group after it that must take one (not at its own number's place, or the
    lead's), would pass ``K``, nor when all the columns left would not reach it. Members below the cutoff
    are written to the rows of ``out`` from row ``found`` on (``columns[c]`` of the positions ``c``
    chosen). Returns ``(found, least pruned sum)`` (``found`` larger than ``out``'s rows: it overflowed;
    inf: none pruned)."""
    K = T.size
    pruned = np.inf
    cells_pos, cells_neg, sums, totals, first, dims, option, chosen, used, capacity, needed = search
    totals[0] = group_total
    capacity[K] = 0
    needed[K] = 0
    for t in range(K - 1, -1, -1):
        dims[0, t] = start[T[t] + 1] - start[T[t]] + 1
        capacity[t] = capacity[t + 1] + dims[0, t] - 1
        needed[t] = needed[t + 1] + (1 if T[t] != t or (lead_only and t == 0) else 0)
    d = 0
    option[0] = 0
    while d >= 0:
        g = T[d]
        n_g = start[g + 1] - start[g]
        if option[d] >= 1 << n_g:
            d -= 1
            continue
        subset = option[d]
        option[d] += 1
        k = 0
        for j in range(n_g):
            k += (subset >> j) & 1
        if k == 0 and (T[d] != d or (lead_only and d == 0)):  # not T's own member, or not the lead's
            continue
        taken = used[d] + k
        if taken + needed[d + 1] > K or taken + capacity[d + 1] < K:
            continue
        first[0] = 0  # the levels holding q chosen columns (each inside the one before): first[q]..first[q + 1] - 1
        q = 0
        for level in range(1, n_g + 1):
            if (subset >> (level - 1)) & 1:
                q += 1
                first[q] = level
        first[k + 1] = n_g + 1
        outer, inner = 1, 1
        for t in range(K):
            dims[d + 1, t] = dims[d, t]
            if t < d:
                outer *= dims[d, t]
            elif t > d:
                inner *= dims[d, t]
        dims[d + 1, d] = k + 1
        if d == 0:  # (the group support's own cells, not copied)
            source_pos, source_neg, source_sums = group_cells_pos, group_cells_neg, group_sums
        else:
            source_pos, source_neg, source_sums = cells_pos[d], cells_neg[d], sums[d]
        total = _merged_total(source_pos, source_neg, source_sums, totals[d], first, k, outer, n_g + 1, inner,
                              unit_pos, unit_neg, xlogx, cutoff)
        if total >= cutoff:
            pruned = min(pruned, total)
            continue
        chosen[d] = subset
        used[d + 1] = taken
        if d + 1 < K:
            _merge(source_pos, source_neg, source_sums, cells_pos[d + 1], cells_neg[d + 1], sums[d + 1], first, k,
                   outer, n_g + 1, inner, unit_pos, unit_neg, xlogx)
            totals[d + 1] = total
            d += 1
            option[d] = 0
            continue
        if found < out.shape[0]:
            m = 0
            for t in range(K):
                for j in range(start[T[t] + 1] - start[T[t]]):
                    if (chosen[t] >> j) & 1:
                        out[found, m] = columns[start[T[t]] + j]
                        m += 1
        found += 1
    return found, pruned


@njit(cache=True, nogil=True)
def _merged_total(cells_pos, cells_neg, sums, total, first, k, outer, levels, inner, unit_pos, unit_neg, xlogx, cutoff):
    """The sum of the cells ``cells_pos``, ``cells_neg`` (of own sums ``sums``, their sum ``total``; ``outer``
    by ``levels`` by ``inner``) once the levels of each part ``first[q]..first[q + 1] - 1`` (``q <= k``)
    are merged: ``total`` plus, for each merged cell, its sum less its parts' (at least 0, the cell sums
    being subadditive), added until it reaches ``cutoff`` (what it has then is returned)."""
    for o in range(outer):
        for q in range(k + 1):
            if first[q + 1] - first[q] < 2:
                continue
            for i in range(inner):
                merged_pos, merged_neg, parts = 0, 0, 0.0
                for level in range(first[q], first[q + 1]):
                    source = (o * levels + level) * inner + i
                    merged_pos += cells_pos[source]
                    merged_neg += cells_neg[source]
                    parts += sums[source]
                total += _entropy(merged_pos, merged_neg, unit_pos, unit_neg, xlogx) - parts
                if total >= cutoff:
                    return total
    return total


@njit(cache=True, nogil=True)
def _merge(cells_pos, cells_neg, sums, into_pos, into_neg, into_sums, first, k, outer, levels, inner, unit_pos,
           unit_neg, xlogx) -> None:
    """``into_pos``, ``into_neg`` and ``into_sums``: the cells ``cells_pos``, ``cells_neg`` (``outer`` by
    ``levels`` by ``inner``) with the levels of each part ``first[q]..first[q + 1] - 1`` (``q <= k``)
    merged, and their own sums (``sums``: those of the cells given)."""
    for o in range(outer):
        for q in range(k + 1):
            target = (o * (k + 1) + q) * inner
            source = (o * levels + first[q]) * inner
            if first[q + 1] - first[q] == 1:
                for i in range(inner):
                    into_pos[target + i] = cells_pos[source + i]
                    into_neg[target + i] = cells_neg[source + i]
                    into_sums[target + i] = sums[source + i]
                continue
            for i in range(inner):
                merged_pos, merged_neg = 0, 0
                for level in range(first[q + 1] - first[q]):
                    merged_pos += cells_pos[source + level * inner + i]
                    merged_neg += cells_neg[source + level * inner + i]
                into_pos[target + i] = merged_pos
                into_neg[target + i] = merged_neg
                into_sums[target + i] = _entropy(merged_pos, merged_neg, unit_pos, unit_neg, xlogx)


@njit(cache=True, nogil=True, inline="always")
def _split_levels(pattern, blocked, lo, hi, count, first, last, cells, base) -> None:
    """``cells[base + v]``: the rows of ``pattern`` (over the words ``lo:hi``, ``count`` of them) at level
    ``v`` of the group of the bit rows ``first:last`` (each inside the one before)."""
    above = 0  # rows of the levels above the one being counted
    for c in range(last - 1, first - 1, -1):
        ones = _and_count(pattern[lo:hi], blocked[c, lo:hi]) if count > above else above
        cells[base + c - first + 1] = ones - above
        above = ones
    cells[base] = count - above
