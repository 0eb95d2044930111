"""Bayes error of the rows restricted to supports of features, from bit sets (numba).

For a support ``T`` the rows fall into *patterns*, the distinct value vectors ``x_T``. Any rule
that sees only ``x_T`` (in particular every linear classifier whose points are zero off ``T``)
gives all rows of a pattern one class, so its weighted 0-1 error is at least

.. math::

    E(T) = \\sum_{p} \\min(W_+(p), W_-(p))

(``W_±`` the weights of the positive / negative rows of ``p``): the Bayes error of ``T`` on the
training rows, a lower bound used by :mod:`solvers.exact.zero_one_supports` (SLIM, Ustun & Rudin 2016).

Rows are held as bit sets, one per (feature, value): :func:`value_bits` repeats each row by its
weight over the least weight (weights that are integer multiples of one unit), so a count of set
bits is a weight. A pattern of a prefix of the support is a bit set of rows; adding a feature
splits it into one part per value (AND with that value's bit set, popcount). Supports listed in
lexicographic order share prefixes, whose levels are kept; a part holding one label only is
dropped (its sub-parts hold one label too and add no error), and the last feature is only counted,
stopping once the sum reaches a cutoff (a support already above it is pruned whatever the rest).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.box_logistic import _popcount, column_codes, pack_rows
from solvers.exact.loops import copy_into, stable_argsort


@njit(cache=True, nogil=True, inline="always")
def _split(lev_pos, lev_neg, t, p, m, bits_pos, bits_neg, row):
    """Part ``m`` of level ``t + 1``: the rows of part ``p`` of level ``t`` in bit row ``row``;
    returns its counts ``(positive, negative)``."""
    a = 0
    for w in range(lev_pos.shape[2]):
        x = lev_pos[t, p, w] & bits_pos[row, w]
        lev_pos[t + 1, m, w] = x
        a += _popcount(x)
    b = 0
    for w in range(lev_neg.shape[2]):
        x = lev_neg[t, p, w] & bits_neg[row, w]
        lev_neg[t + 1, m, w] = x
        b += _popcount(x)
    return a, b


@njit(cache=True, nogil=True, inline="always")
def _count(lev_pos, lev_neg, t, p, bits_pos, bits_neg, row):
    """Counts ``(positive, negative)`` of the rows of part ``p`` of level ``t`` in bit row ``row``."""
    a = 0
    for w in range(lev_pos.shape[2]):
        a += _popcount(lev_pos[t, p, w] & bits_pos[row, w])
    b = 0
    for w in range(lev_neg.shape[2]):
        b += _popcount(lev_neg[t, p, w] & bits_neg[row, w])
    return a, b


def value_bits(X: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> tuple | None:
    """Bit sets of the rows, per label: ``(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg,
    unit_neg, offset, radix)``; ``bits_*[offset[j] + v]`` holds the rows whose feature ``j`` takes
    its ``v``-th distinct value (of ``radix[j]``), each row repeated ``weight / unit`` times
    (:func:`solvers.exact.box_logistic.pack_rows`). None when the weights of a label are not integer
    multiples of one unit, or there are too many copies."""
    codes, radix, _ = column_codes(X)
    offset = np.concatenate([[0], np.cumsum(radix)[:-1]]).astype(np.int64)
    one_hot = np.zeros((X.shape[0], int(radix.sum())), dtype=bool)
    one_hot[np.arange(X.shape[0])[:, None], offset[None, :] + codes] = True
    parts = []
    for side in (positive, ~positive):
        packed = pack_rows(one_hot[side], weights[side])
        if packed is None:
            return None
        parts.extend(packed)
    return (*parts, offset, radix.astype(np.int64))


@njit(cache=True, nogil=True)
def bayes_errors(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, offset, radix, supports, cutoff):
    """``E(T)`` (module docstring) of each row ``T`` of ``supports`` (lexicographic order is
    fastest), stopped once it reaches ``cutoff`` (the value returned is then >= ``cutoff``)."""
    ns, k = supports.shape
    wp_, wn_ = valid_pos.size, valid_neg.size
    out = np.empty(ns)
    total_pos = 0
    for w in range(wp_):
        total_pos += _popcount(valid_pos[w])
    total_neg = 0
    for w in range(wn_):
        total_neg += _popcount(valid_neg[w])
    if k == 0 or total_pos == 0 or total_neg == 0:
        out.fill(min(total_pos * unit_pos, total_neg * unit_neg))
        return out
    # a kept (mixed) part holds rows of both labels, and level t has at most prod(t radixes) parts
    cap = min(total_pos, total_neg)
    parts = 1  # the product of the k - 1 largest radixes (at most cap)
    taken = np.zeros(radix.size, np.bool_)
    for t in range(min(k - 1, radix.size)):
        largest = -1
        for j in range(radix.size):
            if not taken[j] and (largest < 0 or radix[j] > radix[largest]):
                largest = j
        taken[largest] = True
        parts *= radix[largest]
        if parts >= cap:
            break
    cap = min(cap, parts)
    lev_pos = np.zeros((k, cap, wp_), np.uint64)
    lev_neg = np.zeros((k, cap, wn_), np.uint64)
    cnt_pos = np.zeros((k, cap), np.int64)
    cnt_neg = np.zeros((k, cap), np.int64)
    size = np.zeros(k, np.int64)
    order = np.arange(cap)
    scratch = np.empty(cap, np.int64)
    heat = np.zeros(cap)
    copy_into(lev_pos[0, 0], valid_pos)
    copy_into(lev_neg[0, 0], valid_neg)
    cnt_pos[0, 0], cnt_neg[0, 0], size[0] = total_pos, total_neg, 1
    built = 0  # levels 0..built are valid for the previous support
    previous = np.full(k, -1, np.int64)
    for s in range(ns):
        first = 0
        while first < built and supports[s, first] == previous[first]:
            first += 1
        built = first
        for t in range(first, k - 1):  # split the parts of level t by feature j into level t + 1
            j = supports[s, t]
            previous[t] = j
            m = 0
            if radix[j] == 2:  # 0/1 features: the 1s split off, the 0s kept only if mixed
                row = offset[j] + 1
                for p in range(size[t]):
                    a, b = _split(lev_pos, lev_neg, t, p, m, bits_pos, bits_neg, row)
                    a0, b0 = cnt_pos[t, p] - a, cnt_neg[t, p] - b
                    if a > 0 and b > 0:
                        cnt_pos[t + 1, m], cnt_neg[t + 1, m] = a, b
                        m += 1
                    if a0 > 0 and b0 > 0:
                        for w in range(wp_):
                            lev_pos[t + 1, m, w] = lev_pos[t, p, w] & ~bits_pos[row, w]
                        for w in range(wn_):
                            lev_neg[t + 1, m, w] = lev_neg[t, p, w] & ~bits_neg[row, w]
                        cnt_pos[t + 1, m], cnt_neg[t + 1, m] = a0, b0
                        m += 1
                size[t + 1] = m
                built = t + 1
                continue
            for p in range(size[t]):
                rest_pos, rest_neg = cnt_pos[t, p], cnt_neg[t, p]
                for u in range(radix[j]):  # values from the largest: 0/1 features split off their 1s first
                    v = radix[j] - 1 - u
                    row = offset[j] + v
                    if v == 0:  # the least value takes the rest: no count needed
                        a, b = rest_pos, rest_neg
                        for w in range(wp_):
                            lev_pos[t + 1, m, w] = lev_pos[t, p, w] & bits_pos[row, w]
                        for w in range(wn_):
                            lev_neg[t + 1, m, w] = lev_neg[t, p, w] & bits_neg[row, w]
                    else:
                        a, b = _split(lev_pos, lev_neg, t, p, m, bits_pos, bits_neg, row)
                    rest_pos -= a
                    rest_neg -= b
                    if a > 0 and b > 0:  # mixed: kept (else overwritten by the next part)
                        cnt_pos[t + 1, m], cnt_neg[t + 1, m] = a, b
                        m += 1
                    if rest_pos == 0 or rest_neg == 0:  # the remaining parts hold one label only
                        break
            size[t + 1] = m
            built = t + 1
        if first < k - 1 or s == 0:  # level k - 1 rebuilt: its parts by decreasing error, so the
            # sum below reaches the cutoff in few parts
            for p in range(size[k - 1]):
                heat[p] = -min(cnt_pos[k - 1, p] * unit_pos, cnt_neg[k - 1, p] * unit_neg)
            stable_argsort(heat, size[k - 1], order, scratch)
        j = supports[s, k - 1]  # last feature: counts only, summed until the cutoff
        previous[k - 1] = j
        total = 0.0
        if radix[j] == 2:  # the common case (0/1 features), without the loop over values
            row = offset[j] + 1
            for i in range(size[k - 1]):
                p = order[i]
                a, b = _count(lev_pos, lev_neg, k - 1, p, bits_pos, bits_neg, row)
                total += min(a * unit_pos, b * unit_neg) + min((cnt_pos[k - 1, p] - a) * unit_pos,
                                                               (cnt_neg[k - 1, p] - b) * unit_neg)
                if total >= cutoff:
                    break
            out[s] = total
            continue
        for i in range(size[k - 1]):
            p = order[i]
            rest_pos, rest_neg = cnt_pos[k - 1, p], cnt_neg[k - 1, p]
            for v in range(radix[j] - 1, 0, -1):
                a, b = _count(lev_pos, lev_neg, k - 1, p, bits_pos, bits_neg, offset[j] + v)
                total += min(a * unit_pos, b * unit_neg)
                rest_pos -= a
                rest_neg -= b
                if rest_pos == 0 or rest_neg == 0:
                    break
            total += min(rest_pos * unit_pos, rest_neg * unit_neg)
            if total >= cutoff:
                break
        out[s] = total
    return out
