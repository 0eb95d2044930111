"""A greedy flow through the conflicts of a small box of magnitudes: the cheap bound of the box search.

In an orthant of the orthant search, a model's points are ``sigma_j m_j`` with magnitudes ``m`` in a
box ``[lo, hi]``; with the signed values ``S_ij = sigma_j x_ij``, a pattern's score is
``sum_j m_j S_ij``. A positive pattern ``p`` and a negative one ``q`` *conflict* in the box when no
model of it gets both right: with ``d = S_p - S_q``,

    max_{m in [lo, hi]} m . d = sum_j lo_j d_j + sum_j (hi_j - lo_j) max(d_j, 0)  <  2 margin

(both right needs ``s_p - s_q >= 2 margin``, whatever the intercept). Every model of the box errs on
a vertex cover of the conflicts, so any flow through them (capacities the patterns' weights) bounds
its weighted error from below (Konig); :func:`solvers.exact.orthant_boxes.box_flow` finds the
maximum one through every conflict, listed pair by pair.

On a small box the conflicts are nearly those of its middle model: ``q`` scores above ``p``. With
the doubled middle scores ``k_i = sum_j (lo_j + hi_j) S_ij``, the left side above is
``(k_p - k_q + sum_j (hi_j - lo_j) |d_j|) / 2``, so a conflict needs ``k_q > k_p - 4 margin``. The
greedy flow takes the positive patterns from the highest key down (the fewest conflicts first) and
sends each to its conflicting negative patterns from the lowest key up (those the later positive
patterns are least likely to reach), skipping the saturated ones. On the nested conflicts of one
model this greedy flow is a maximum one; on a small box it is close, for a pass over the patterns
and the pairs near each positive pattern's key instead of every pair.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def descending_order(key: np.ndarray) -> np.ndarray:
    """The indices of ``key`` (integers) from the largest key down: a counting sort when the keys'
    range is within a few times their number, else ``argsort``."""
    n = key.size
    if n == 0:
        return np.empty(0, np.int64)
    least, most = key.min(), key.max()
    if most - least > 8 * n + 1024:
        return np.argsort(-key)
    count = np.zeros(most - least + 2, np.int64)
    for i in range(n):
        count[most - key[i] + 1] += 1
    for t in range(most - least + 1):
        count[t + 1] += count[t]
    order = np.empty(n, np.int64)
    for i in range(n):
        v = most - key[i]
        order[count[v]] = i
        count[v] += 1
    return order


@njit(cache=True, nogil=True)
def integer_scores(S: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``S @ m`` for integer arrays (numba's ``@`` takes floats only)."""
    out = np.zeros(S.shape[0], np.int64)
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            out[i] += S[i, j] * m[j]
    return out


@njit(cache=True, nogil=True)
def greedy_box_flow(Sp: np.ndarray, wp: np.ndarray, Sn: np.ndarray, wn: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    margin: int, target: float) -> float:
    """The value of a greedy flow through the conflicts of the box ``[lo, hi]`` (module docstring) of
    the positive patterns ``Sp`` (signed values, one row per pattern; weights ``wp``) and the negative
    ones ``Sn`` (``wn``), stopped once it reaches ``target`` or once the positive weight left cannot
    take a finite ``target`` there. A lower bound on the weighted error of every model of the box."""
    n_neg = Sn.shape[0]
    wide = np.flatnonzero(hi > lo)
    span = (hi - lo)[wide]
    key_p, key_n = integer_scores(Sp, lo + hi), integer_scores(Sn, lo + hi)
    order_p, order_n = descending_order(key_p), descending_order(key_n)
    # the negative patterns from the highest key: their key, lowest score and values on the wide
    # columns, the weight each has left, and the next one up not known saturated (-1: none)
    sorted_key = key_n[order_n]
    low_n = integer_scores(Sn, lo)[order_n]
    wide_n = np.empty((n_neg, wide.size), Sn.dtype)
    for s in range(n_neg):
        for t in range(wide.size):
            wide_n[s, t] = Sn[order_n[s], wide[t]]
    left = wn[order_n].copy()
    up = np.arange(n_neg) - 1
    low_p = integer_scores(Sp, lo)
    unsent = wp.sum()
    flow, reach = 0.0, 0
    for p in order_p:
        if flow + unsent < target < np.inf:
            break
        unsent -= wp[p]
        send = wp[p]
        while reach < n_neg and sorted_key[reach] > key_p[p] - 4 * margin:
            reach += 1
        s = reach - 1
        while s >= 0 and send > 0:
            if left[s] <= 0:  # skip the saturated ones, shortening the links as it goes
                t = up[s]
                while t >= 0 and left[t] <= 0:
                    t = up[t]
                up[s] = t
                s = t
                continue
            most = low_p[p] - low_n[s]
            for t in range(wide.size):
                d = Sp[p, wide[t]] - wide_n[s, t]
                if d > 0:
                    most += d * span[t]
            if most < 2 * margin:
                f = min(send, left[s])
                left[s] -= f
                send -= f
            s = up[s]
        flow += wp[p] - send
        if flow >= target:
            break
    return flow
