"""The saturated-loss screen of every support of ``K`` 0/1 features, on rows blocked by its first two (numba).

Every linear model on a support ``S`` scores the rows of one pattern of ``S`` (one cell of the
partition of the rows by their values on ``S``) alike, so its logistic loss is at least the
*saturated loss* of ``S``, the weighted conditional entropy of the label given ``x_S``
(:func:`solvers.exact.box_logistic.saturated_loss`; Ustun & Rudin 2019's loss, eq. 1, with one free
score per cell):

.. math::

    H(S) = \\sum_{c} F(a_c, b_c), \\qquad F(a, b) = a \\log\\frac{a + b}{a} + b \\log\\frac{a + b}{b},

``a_c``, ``b_c`` the positive and negative weights of cell ``c``. ``F`` is non-negative and increasing
in both arguments, so a partial sum over some of the cells is a lower bound too, and a support whose
partial sum reaches the prune level holds no model below it.

:func:`screen_pair` bounds, for one pair ``a < b`` of columns, all the supports
``{a, b} + M + {e}`` (``M`` ``K - 3`` middle columns, ``a < b < M < e``), listing them itself in
lexicographic order. The rows of each label are first *blocked*: reordered by their pattern on
``(a, b)`` (four blocks, each starting at a 64-row word), and every later column is repacked in that
order (:func:`_blocked`). A prefix ``{a, b} + M`` has ``2^(K-1)`` patterns, each inside one block, so
splitting a pattern by the last column ``e`` takes popcounts over that block's words only — about a
quarter of the words of all the rows. The prefix's mixed patterns (both labels present; a pure
pattern's cells are pure and add nothing) are split in decreasing order of their own entropy, and a
support stops at the first partial sum that reaches the cutoff: it is *pruned*, with that partial sum
as its bound. A support whose whole sum stays below the cutoff *survives* (it needs a fit).

With ``K = 5`` (two middle columns ``m_1 < m_2``) a pattern's split needs one popcount per block, not
four: the pair's tables (:func:`_pair_counts`, once per call) hold, per block ``q``, the rows with
``x_j = 1`` and those with ``x_j = x_e = 1`` for every later ``j < e``, so with ``A_q`` the rows of
block ``q`` with ``x_{m_1} = x_{m_2} = x_e = 1`` (the one popcount) inclusion-exclusion gives the rows
with ``x_e = 1`` of its four patterns: ``A_q``, ``N_q(m_1, e) - A_q``, ``N_q(m_2, e) - A_q`` and
``N_q(e) - N_q(m_1, e) - N_q(m_2, e) + A_q``. The blocks holding a mixed pattern are split in
decreasing order of their patterns' entropy, with the same stop.

Weights are integer multiples of a unit per label (:func:`solvers.exact.box_logistic.copy_counts`):
each row is repeated ``weight / unit`` times in the bit sets, so a popcount times the unit is a weight.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.box_logistic import _cell_entropy, _popcount

#: counts up to which ``c log c`` is tabulated (both labels of the same unit)
XLOGX_TABLE = 1 << 20
#: supports one call of :func:`screen_pair` lists before it returns (between calls the caller looks at
#: its clock)
CALL_SUPPORTS = 1 << 17
#: the support size whose splits come from the pair's tables (two middle columns, module docstring)
TABLED_SIZE = 5


def table_bytes(d: int, size: int) -> float:
    """Bytes of the pair's tables of one call of :func:`screen_pair` on ``d`` columns (both labels)."""
    return 2.0 * 8.0 * (4 * d * d + 4 * d) if size == TABLED_SIZE else 0.0


#: seconds per support below any measured rate of the screen (several times faster): a pass projected
#: longer than the time left even at this rate is not started
FASTEST = 2e-8


@njit(cache=True, nogil=True)
def _bit(bits, j, i) -> int:
    return int((bits[j, i >> 6] >> np.uint64(i & 63)) & np.uint64(1))


@njit(cache=True, nogil=True)
def _level(bits, start, columns, g, i) -> int:
    """Row ``i``'s level on group ``g`` (the bit rows ``columns[start[g]:start[g + 1]]``): how many of
    them hold a one (a column alone: its bit)."""
    level = 0
    for c in range(start[g], start[g + 1]):
        level += _bit(bits, columns[c], i)
    return level


@njit(cache=True, nogil=True)
def _blocked(bits, start, columns, n, a, b):
    """Rows ``0..n-1`` of one label reordered by their block ``q = level_a (l_b + 1) + level_b`` on the
    groups ``a`` and ``b`` (group ``g``: the bit rows ``columns[start[g]:start[g + 1]]``, ``l_g`` of
    them; with ``start = 0, 1, ..`` each column is a group and ``q = 2 x_a + x_b``), block ``q`` in the
    words ``starts[q]:starts[q + 1]`` (each block starts a word). Returns ``(out, valid, starts)``:
    ``out[c]`` holds the bits of ``columns[c]`` in that order for every ``c`` past group ``b``'s,
    ``valid`` the rows present (both with room for every block to start a new word)."""
    levels_b = start[b + 1] - start[b] + 1
    blocks = (start[a + 1] - start[a] + 1) * levels_b
    out = np.empty((columns.size, bits.shape[1] + blocks), np.uint64)
    valid = np.empty(bits.shape[1] + blocks, np.uint64)
    starts = np.empty(blocks + 1, np.int64)
    block = np.empty(n, np.int64)
    sizes = np.zeros(blocks, np.int64)
    for i in range(n):
        q = _level(bits, start, columns, a, i) * levels_b + _level(bits, start, columns, b, i)
        block[i] = q
        sizes[q] += 1
    starts[0] = 0
    for q in range(blocks):
        starts[q + 1] = starts[q] + (sizes[q] + 63) // 64
    words = starts[blocks]
    next_row = np.empty(blocks, np.int64)
    for q in range(blocks):
        next_row[q] = 64 * starts[q]
    position = np.empty(n, np.int64)
    for i in range(n):
        position[i] = next_row[block[i]]
        next_row[block[i]] += 1
    valid[:words] = 0
    for i in range(n):
        p = position[i]
        valid[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    for c in range(start[b + 1], columns.size):
        out[c, :words] = 0
        row = columns[c]
        for w in range(bits.shape[1]):
            word = bits[row, w]
            while word != 0:
                low = word & (~word + np.uint64(1))  # lowest set bit
                i = 64 * w + _popcount(low - np.uint64(1))
                word ^= low
                if i < n:
                    p = position[i]
                    out[c, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    return out, valid, starts


@njit(cache=True, nogil=True, inline="always")
def _next_combination(pick, last) -> bool:
    """Move the increasing values ``pick`` (each at most ``last``) to the next such combination in
    lexicographic order; False when they were the last one (then ``pick`` is unchanged)."""
    r = pick.size
    i = r - 1
    while i >= 0 and pick[i] == last - (r - 1 - i):
        i -= 1
    if i < 0:
        return False
    pick[i] += 1
    for t in range(i + 1, r):
        pick[t] = pick[t - 1] + 1
    return True


@njit(cache=True, nogil=True)
def _patterns(blocked, valid, starts, blocks, start, middle, per, pattern, counts) -> None:
    """``pattern[q * per + k]``: the rows of block ``q`` (of ``blocks``) whose levels on the groups
    ``middle`` (as for :func:`_blocked`) spell ``k`` (mixed radix, the last group fastest; ``per`` the
    product of their level counts; columns alone: ``middle[t]`` is bit ``r - 1 - t`` of ``k``), over
    that block's words; ``counts``: how many."""
    for q in range(blocks):
        lo, hi = starts[q], starts[q + 1]
        base = q * per
        for w in range(lo, hi):
            pattern[base, w] = valid[w]
        size = 1
        for t in range(middle.size):
            g = middle[t]
            first, last = start[g], start[g + 1]
            levels = last - first + 1
            for k in range(size - 1, -1, -1):  # k -> k * levels + v, the level v of group g
                for w in range(lo, hi):
                    rest = pattern[base + k, w]
                    for v in range(levels - 1, 0, -1):  # level v: column first + v - 1, not the next
                        ones = rest & blocked[first + v - 1, w]
                        pattern[base + k * levels + v, w] = ones
                        rest &= ~ones
                    pattern[base + k * levels, w] = rest
            size *= levels
        for k in range(per):
            c = 0
            for w in range(lo, hi):
                c += _popcount(pattern[base + k, w])
            counts[base + k] = c


@njit(cache=True, nogil=True)
def _pair_counts(blocked, starts, first, d, table, ones) -> None:
    """For the listing's columns ``first <= j < e < d`` and each block ``q``: ``ones[j, q]`` the rows of
    block ``q`` with ``x_j = 1``, ``table[j, e, q]`` those with ``x_j = x_e = 1`` (module docstring)."""
    for j in range(first, d):
        for q in range(4):
            lo, hi = starts[q], starts[q + 1]
            c = 0
            for w in range(lo, hi):
                c += _popcount(blocked[j, w])
            ones[j, q] = c
            for e in range(j + 1, d):
                table[j, e, q] = _and_count(blocked[j, lo:hi], blocked[e, lo:hi])


@njit(cache=True, nogil=True, inline="always")
def _insert(heat, order, filled, h, item) -> int:
    """Insert ``item`` of entropy ``h`` into the first ``filled`` entries of ``order`` (``heat`` their
    entropies, largest first; insertion sort of a few dozen at most); returns the new count."""
    i = filled
    while i > 0 and heat[i - 1] < h:
        heat[i], order[i] = heat[i - 1], order[i - 1]
        i -= 1
    heat[i], order[i] = h, item
    return filled + 1


@njit(cache=True, nogil=True, inline="always")
def _and_count(x, y) -> int:
    """Set bits of ``x & y`` (1-d word arrays of one size: a loop the compiler vectorises)."""
    c = 0
    for w in range(x.size):
        c += _popcount(x[w] & y[w])
    return c


@njit(cache=True, nogil=True, inline="always")
def _entropy(cp, cn, unit_pos, unit_neg, xlogx) -> float:
    """``F(cp unit_pos, cn unit_neg)`` (module docstring), from the ``c log c`` table when it has them;
    with an empty table (``xlogx.size == 0``) the Bayes error ``min(cp unit_pos, cn unit_neg)`` instead."""
    if cp == 0 or cn == 0:
        return 0.0
    if xlogx.size == 0:
        return min(cp * unit_pos, cn * unit_neg)
    if xlogx.size > 1 and cp + cn < xlogx.size:
        return unit_pos * (xlogx[cp + cn] - xlogx[cp] - xlogx[cn])
    return _cell_entropy(cp * unit_pos, cn * unit_neg)


#: the table that makes :func:`screen_pair` sum Bayes errors instead of entropies
BAYES = np.zeros(0)


def xlogx_table(n_pos: int, n_neg: int, unit_pos: float, unit_neg: float) -> np.ndarray:
    """``c log c`` for ``c`` up to the rows of both labels (capped at :data:`XLOGX_TABLE`); one zero
    entry (no table) when the labels' units differ."""
    if unit_pos != unit_neg:
        return np.zeros(1)
    c = np.arange(min(n_pos + n_neg + 1, XLOGX_TABLE), dtype=float)
    out = np.zeros_like(c)
    out[1:] = c[1:] * np.log(c[1:])
    return out


@njit(cache=True, nogil=True)
def screen_pair(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx, columns, a, b, size, cutoff, survivors,
                shrink, middle, limit):
    """Screen every support ``(a, b, m_1 .. m_{size-3}, e)`` with ``a < b < m_1 < .. < e < d`` of the
    listing's columns (``columns[j]``: the row of ``bits_pos`` and ``bits_neg`` of column ``j``; ``d``
    its size; the supports are written as positions in it) (module
    docstring; ``size >= 2``, and with ``size == 2`` the one support ``(a, b)``) at ``cutoff`` (loss units;
    with ``xlogx`` :data:`BAYES`, the cells' Bayes errors ``min(a_c, b_c)`` in weight units instead of
    their entropies: the least weighted 0-1 error of any classifier constant on each cell). Returns
    ``(listed, kept, pruned_floor, least_kept)``: supports listed; survivors written to the first
    ``kept`` rows of ``survivors`` (columns ``size``) — ``kept`` larger than its rows means it
    overflowed (the rows past them are lost); the least bound of the pruned ones (inf: none); the
    least full sum of a survivor (inf: none); whether the pair is finished. With ``shrink`` each
    survivor lowers the cutoff to its sum, so ``min(least_kept, pruned_floor)`` is the least sum over
    all the supports (a pruned one's sum is at least the cutoff of its time).

    A call stops after the prefix at which it has listed ``limit`` supports or more, with ``middle``
    (the ``size - 3`` middle columns, start: :func:`first_middle`) moved to the next prefix: called
    again with it, it goes on from there (so no call runs long)."""
    d = columns.size
    r = max(size - 3, 0)
    half = 4 << r
    singles = np.arange(d + 1)  # each column its own group
    blocked_pos, valid_pos, starts_pos = _blocked(bits_pos, singles, columns, n_pos, a, b)
    blocked_neg, valid_neg, starts_neg = _blocked(bits_neg, singles, columns, n_neg, a, b)
    words_pos, words_neg = valid_pos.size, valid_neg.size
    pattern_pos = np.zeros((half, words_pos), np.uint64)
    pattern_neg = np.zeros((half, words_neg), np.uint64)
    count_pos = np.zeros(half, np.int64)
    count_neg = np.zeros(half, np.int64)
    order = np.empty(half, np.int64)
    heat = np.empty(half)
    listed = 0
    kept = 0
    pruned_floor = np.inf
    least_kept = np.inf
    if size == 2:  # the support is the pair: its cells are the blocks
        floor = 0.0
        for q in range(4):
            floor += _entropy(_and_count(valid_pos[starts_pos[q]:starts_pos[q + 1]],
                                         valid_pos[starts_pos[q]:starts_pos[q + 1]]),
                              _and_count(valid_neg[starts_neg[q]:starts_neg[q + 1]],
                                         valid_neg[starts_neg[q]:starts_neg[q + 1]]), unit_pos, unit_neg, xlogx)
        if floor >= cutoff:
            return 1, 0, floor, least_kept, True
        survivors[0, 0], survivors[0, 1] = a, b
        return 1, 1, pruned_floor, floor, True
    if d - b - 1 < r + 1:
        return listed, kept, pruned_floor, least_kept, True
    tabled = size == TABLED_SIZE  # (module docstring: one popcount per block and label)
    t = d if tabled else 0
    table_pos = np.empty((t, t, 4), np.int64)
    table_neg = np.empty((t, t, 4), np.int64)
    ones_pos = np.empty((t, 4), np.int64)
    ones_neg = np.empty((t, 4), np.int64)
    if tabled:
        _pair_counts(blocked_pos, starts_pos, b + 1, d, table_pos, ones_pos)
        _pair_counts(blocked_neg, starts_neg, b + 1, d, table_neg, ones_neg)
    block_order = np.empty(4, np.int64)
    block_heat = np.empty(4)
    split_pos = np.empty(4, np.int64)  # rows with x_e = 1 of a block's four patterns
    split_neg = np.empty(4, np.int64)
    while True:
        _patterns(blocked_pos, valid_pos, starts_pos, 4, singles, middle, 1 << r, pattern_pos, count_pos)
        _patterns(blocked_neg, valid_neg, starts_neg, 4, singles, middle, 1 << r, pattern_neg, count_neg)
        mixed = 0  # the mixed patterns, the largest entropy first
        for p in range(0 if tabled else half):
            if count_pos[p] > 0 and count_neg[p] > 0:
                mixed = _insert(heat, order, mixed, _entropy(count_pos[p], count_neg[p], unit_pos, unit_neg, xlogx), p)
        first = middle[r - 1] + 1 if r > 0 else b + 1
        blocks = 0
        if tabled:  # the blocks holding a mixed pattern, the largest entropy first
            for q in range(4):
                h = 0.0
                for k in range(4):
                    p = 4 * q + k
                    if count_pos[p] > 0 and count_neg[p] > 0:
                        h += _entropy(count_pos[p], count_neg[p], unit_pos, unit_neg, xlogx)
                if h > 0.0:
                    blocks = _insert(block_heat, block_order, blocks, h, q)
        for e in range(first, d):
            listed += 1
            column_pos = blocked_pos[e]
            column_neg = blocked_neg[e]
            floor = 0.0
            for i in range(blocks):
                q = block_order[i]
                m1, m2, base = middle[0], middle[1], 4 * q
                lo, hi = starts_pos[q], starts_pos[q + 1]
                a_pos = _and_count(pattern_pos[base + 3, lo:hi], column_pos[lo:hi]) if count_pos[base + 3] else 0
                lo, hi = starts_neg[q], starts_neg[q + 1]
                a_neg = _and_count(pattern_neg[base + 3, lo:hi], column_neg[lo:hi]) if count_neg[base + 3] else 0
                split_pos[3], split_neg[3] = a_pos, a_neg
                split_pos[2], split_neg[2] = table_pos[m1, e, q] - a_pos, table_neg[m1, e, q] - a_neg
                split_pos[1], split_neg[1] = table_pos[m2, e, q] - a_pos, table_neg[m2, e, q] - a_neg
                split_pos[0] = ones_pos[e, q] - table_pos[m1, e, q] - table_pos[m2, e, q] + a_pos
                split_neg[0] = ones_neg[e, q] - table_neg[m1, e, q] - table_neg[m2, e, q] + a_neg
                for k in range(4):
                    p = base + k
                    if count_pos[p] > 0 and count_neg[p] > 0:
                        floor += _entropy(split_pos[k], split_neg[k], unit_pos, unit_neg, xlogx) + \
                            _entropy(count_pos[p] - split_pos[k], count_neg[p] - split_neg[k], unit_pos, unit_neg,
                                     xlogx)
                if floor >= cutoff:
                    break
            for i in range(0 if tabled else mixed):
                p = order[i]
                q = p >> r
                lo, hi = starts_pos[q], starts_pos[q + 1]
                c1p = _and_count(pattern_pos[p, lo:hi], column_pos[lo:hi])
                lo, hi = starts_neg[q], starts_neg[q + 1]
                c1n = _and_count(pattern_neg[p, lo:hi], column_neg[lo:hi])
                floor += _entropy(c1p, c1n, unit_pos, unit_neg, xlogx) + \
                    _entropy(count_pos[p] - c1p, count_neg[p] - c1n, unit_pos, unit_neg, xlogx)
                if floor >= cutoff:
                    break
            if floor >= cutoff:
                pruned_floor = min(pruned_floor, floor)
            else:
                least_kept = min(least_kept, floor)
                if shrink:
                    cutoff = floor
                if kept < survivors.shape[0]:
                    survivors[kept, 0] = a
                    survivors[kept, 1] = b
                    for t in range(r):
                        survivors[kept, 2 + t] = middle[t]
                    survivors[kept, size - 1] = e
                kept += 1
        if r == 0 or not _next_combination(middle, d - 2):  # next middle of range(b + 1, d - 1)
            break
        if listed >= limit:
            return listed, kept, pruned_floor, least_kept, False
    return listed, kept, pruned_floor, least_kept, True


def first_middle(b: int, size: int) -> np.ndarray:
    """The first middle columns of the supports whose first two are ``(a, b)`` (:func:`screen_pair`)."""
    return np.arange(b + 1, b + 1 + max(size - 3, 0), dtype=np.int64)


def screen_all(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx, columns, a, b, size, cutoff, survivors,
               shrink, limit):
    """:func:`screen_pair` over all the supports of the pair ``(a, b)`` of the listing's ``columns`` as a
    generator of the results of calls of at most about ``limit`` supports each (the caller looks at its
    clock between them; survivors of each call in ``survivors``, as positions in ``columns``)."""
    middle = first_middle(b, size)
    while True:
        out = screen_pair(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx, columns, a, b, size, cutoff,
                          survivors, shrink, middle, limit)
        yield out[:4]
        if out[4]:
            return
        if shrink:
            cutoff = min(cutoff, out[3])
