"""Search one orthant of the orthant search: branch and bound on the box of the points' magnitudes.

In the orthant of support ``S`` and signs ``sigma``, a model's points are ``sigma_j m_j`` with
magnitudes ``m_j`` in ``1..top_j``. A box of magnitudes is bounded by a flow through the pairs of
patterns no model of the box gets both right plus its least costs (the margin counts, unlike the
orthant's monotone bound): the whole box by the maximum flow (:func:`box_flow`), a small one by a
greedy flow (:mod:`solvers.exact.box_greedy`). Boxes are split on the side that spreads the patterns'
scores most and, once small, enumerated (:func:`enumerate_box`: every vector with its best integer
intercept, exact).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.box_greedy import descending_order, greedy_box_flow, integer_scores
from solvers.exact.floor import ROUNDOFF
from solvers.exact.monotone_flows import flow_through

#: boxes of magnitudes of at most this many vectors are bounded by :func:`orthant_search` (larger ones
#: are split at once: their greedy flow seldom reaches the incumbent)
GREEDY_VECTORS = 800


@njit(cache=True, nogil=True)
def _box_conflicts(Sp: np.ndarray, SnT: np.ndarray, lo: np.ndarray, hi: np.ndarray, wp: np.ndarray, wn: np.ndarray,
                   margin: int, target: float) -> tuple[float, np.ndarray, np.ndarray]:
    """:func:`box_flow`'s conflicts, listed per positive pattern from the signed values ``Sp`` (one row
    per positive pattern) and ``SnT`` (one row per column), each pushing a greedy flow as it is listed:
    ``(greedy value, positive ends, negative ends)``, the ends empty when the greedy flow reaches
    ``target`` first. A conflict needs ``sum_j c_j (Sp_j - Sn_j) < 2 margin`` for every ``c`` in the
    box (the largest score difference is at least that of any one model), so with ``c = lo + hi``
    (doubled midpoints) and ``key = sum_j c_j S_j``, each positive pattern checks only the negative
    ones with ``key > key_p - 4 margin``. The greedy flow is that of
    :func:`solvers.exact.box_greedy.greedy_box_flow`: the positive patterns from the highest key down,
    each sent to its conflicts from the lowest key up. Integer arrays of one width (the narrower, the
    more pairs per instruction)."""
    r = Sp.shape[1]
    n_neg = SnT.shape[1]
    middle = (lo + hi).astype(np.int64)
    key, key_p = integer_scores(SnT.T, middle), integer_scores(Sp, middle)
    order = descending_order(key)
    least_key = -key[order]  # ascending: the first n of them are the n largest keys
    sortedT = np.empty_like(SnT)
    for j in range(r):
        for s in range(n_neg):
            sortedT[j, s] = SnT[j, order[s]]
    most = np.empty(n_neg, SnT.dtype)
    left_n = wn[order]
    greedy = 0.0
    size = 0
    edge_p, edge_q = np.empty(1024, np.int32), np.empty(1024, np.int32)
    for p in descending_order(key_p):
        # the negatives with key >= key_p - 4 margin + 1
        n_p = np.searchsorted(least_key, -(key_p[p] - 4 * margin + 1), side="right")
        most[:n_p] = 0
        for j in range(r):  # the largest score difference over the box, column by column
            a, column, up, down = Sp[p, j], sortedT[j], hi[j], lo[j]
            for s in range(n_p):
                delta = a - column[s]
                most[s] += max(delta, 0) * up + min(delta, 0) * down
        if size + n_p > edge_p.size:
            grown = max(2 * edge_p.size, size + n_p)
            grown_p, grown_q = np.empty(grown, np.int32), np.empty(grown, np.int32)
            grown_p[:size], grown_q[:size] = edge_p[:size], edge_q[:size]
            edge_p, edge_q = grown_p, grown_q
        send = wp[p]
        for s in range(n_p - 1, -1, -1):
            if most[s] < 2 * margin:
                edge_p[size], edge_q[size] = p, order[s]
                size += 1
                f = min(send, left_n[s])
                left_n[s] -= f
                send -= f
        greedy += wp[p] - send
        if greedy >= target:
            return greedy, edge_p[:0], edge_q[:0]
    return greedy, edge_p[:size], edge_q[:size]


@njit(cache=True, nogil=True)
def box_flow(Vp: np.ndarray, wp: np.ndarray, Vn: np.ndarray, wn: np.ndarray, sign: np.ndarray, lo: np.ndarray,
             hi: np.ndarray, margin: int, target: float) -> float:
    """A maximum flow through the conflicts of the models whose points are ``sign_j m_j`` with
    magnitudes ``m_j`` in ``[lo_j, hi_j]``, stopped at ``target``: a positive pattern ``p`` and a
    negative one ``q`` that no such model gets both right, ``max_m sum_j m_j sign_j (x_pj - x_qj) <
    2 margin`` (both right needs ``s_p - s_q >= 2 margin``, whatever the intercept; the pairs no
    monotone score separates are among them). Every model of the box errs on a vertex cover of these
    conflicts, so the value is a lower bound on its weighted error (Konig). The greedy flow of the
    listing first (:func:`_box_conflicts`, in 32-bit integers when every score difference fits); if it
    falls short of ``target``, the maximum flow through the conflicts listed
    (:func:`solvers.exact.monotone_flows.flow_through`: a greedy flow in the listing's order, then Dinic's)."""
    r = sign.size
    largest = 0
    for j in range(r):
        top = 0
        for p in range(Vp.shape[0]):
            top = max(top, abs(Vp[p, j]))
        for q in range(Vn.shape[0]):
            top = max(top, abs(Vn[q, j]))
        largest += 2 * top * max(abs(hi[j]), abs(lo[j]))
    Sp = np.empty(Vp.shape, np.int64)
    SnT = np.empty((r, Vn.shape[0]), np.int64)
    for j in range(r):
        for p in range(Vp.shape[0]):
            Sp[p, j] = sign[j] * Vp[p, j]
        for q in range(Vn.shape[0]):
            SnT[j, q] = sign[j] * Vn[q, j]
    if largest + 2 * margin < 2 ** 31:
        greedy, edge_p, edge_q = _box_conflicts(Sp.astype(np.int32), SnT.astype(np.int32), lo.astype(np.int32),
                                                hi.astype(np.int32), wp, wn, margin, target)
    else:
        greedy, edge_p, edge_q = _box_conflicts(Sp, SnT, lo, hi, wp, wn, margin, target)
    if greedy >= target:
        return greedy
    return flow_through(edge_p, edge_q, wp, wn, target)[0]


@njit(cache=True, nogil=True)
def orthant_flows(Vp: np.ndarray, wp: np.ndarray, Vn: np.ndarray, wn: np.ndarray, orthants: np.ndarray,
                  top_up: np.ndarray, top_down: np.ndarray, margin: int, target: float) -> np.ndarray:
    """Per sign pattern in ``orthants`` (bit ``j`` set: ``sigma_j = +1``) of one support's patterns
    (values ``V``, weights ``w``): the maximum flow of the orthant's whole box of magnitudes
    (:func:`box_flow`, stopped at ``target``: ``m_j`` in ``1..top_up[j]`` where ``sigma_j = +1``,
    ``1..top_down[j]`` where ``-1``; the margin counts, and the pairs no monotone score of the orthant
    separates are among its conflicts). Each is a lower bound on the weighted errors of every model
    of its orthant."""
    r = top_up.size
    out = np.empty(orthants.size)
    sign, low, top = np.empty(r, np.int64), np.ones(r, np.int64), np.empty(r, np.int64)
    for i in range(orthants.size):
        plus = orthants[i]
        for j in range(r):
            up = (plus >> j) & 1
            sign[j] = 1 if up else -1
            top[j] = top_up[j] if up else top_down[j]
        out[i] = box_flow(Vp, wp, Vn, wn, sign, low, top, margin, target)
    return out


@njit(cache=True, nogil=True)
def enumerate_box(Xs: np.ndarray, positive: np.ndarray, w: np.ndarray, low: np.ndarray, top: np.ndarray,
               sign: np.ndarray, cost: np.ndarray, eps: np.ndarray, margin: int, b_lo: int, b_hi: int,
               target: float) -> tuple[float, np.ndarray, int]:
    """Least objective of the point vectors ``sign_j * (low_j..top_j)`` on the columns ``Xs`` of the
    patterns (weights ``w``, labels ``positive``), each with its best integer intercept in
    ``[b_lo, b_hi]``; returns ``(objective, points, intercept)`` of the best one below ``target``
    (``target`` and zeros when none). The vectors are visited in mixed-radix order, the scores
    updated in place (the patterns reordered, positive ones first)."""
    m, k = Xs.shape
    # the positive patterns first, so the histograms are filled without a test per pattern; one
    # contiguous row of signed values per column, so a digit's step updates the scores in one sweep
    order = np.concatenate((np.flatnonzero(positive), np.flatnonzero(~positive)))
    w = w[order]
    signedT = np.empty((k, m), np.int64)
    for j in range(k):
        for i in range(m):
            signedT[j, i] = sign[j] * Xs[order[i], j]
    n_pos = int(positive.sum())
    span = 0
    for j in range(k):
        big = 0
        for i in range(m):
            big = max(big, abs(signedT[j, i]))
        span += top[j] * big
    size = 2 * span + 1
    hist_pos, hist_neg = np.zeros(size), np.zeros(size)
    cum_pos, cum_neg = np.zeros(size + 1), np.zeros(size + 1)
    w_neg = 0.0
    for i in range(n_pos, m):
        w_neg += w[i]
    mags = low.copy()
    scores = np.zeros(m, np.int64)
    for j in range(k):
        for i in range(m):
            scores[i] += low[j] * signedT[j, i]
    best, best_points, best_b = target, np.zeros(k, np.int64), 0
    while True:
        fixed = 0.0
        for j in range(k):
            fixed += cost[j] + eps[j] * mags[j]
        if fixed < best:
            lo_s, hi_s = span, -span
            for i in range(m):
                lo_s, hi_s = min(lo_s, scores[i]), max(hi_s, scores[i])
            for i in range(n_pos):
                hist_pos[scores[i] + span] += w[i]
            for i in range(n_pos, m):
                hist_neg[scores[i] + span] += w[i]
            if m == 0:
                lo_s, hi_s = 0, 0
            # cum_pos[t] / cum_neg[t]: weight of the positive / negative patterns scoring below lo_s + t
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
        # - (top - low) x for the digits reset to low
        j = 0
        while j < k:
            if mags[j] < top[j]:
                mags[j] += 1
                column = signedT[j]
                for i in range(m):
                    scores[i] += column[i]
                break
            column, back = signedT[j], top[j] - low[j]
            for i in range(m):
                scores[i] -= back * column[i]
            mags[j] = low[j]
            j += 1
        if j == k:
            break
    return best, best_points, best_b


@njit(cache=True, nogil=True)
def orthant_search(Vp: np.ndarray, wp: np.ndarray, Vn: np.ndarray, wn: np.ndarray, top: np.ndarray, sign: np.ndarray,
                    cost: np.ndarray, eps: np.ndarray, margin: int, b_lo: int, b_hi: int, target: float,
                    leaf: int, bounded: bool) -> tuple[float, np.ndarray, int, int]:
    """Least objective over the point vectors ``sign_j m_j``, ``m_j`` in ``1..top_j`` (each with its
    best intercept), below ``target``: branch and bound on the box of magnitudes, depth first, halving
    the side that spreads the patterns' scores most over the box (``sum_i w_i |x_ij| (hi_j - lo_j)``).
    The whole box is bounded by its conflicts' maximum flow (:func:`box_flow`) plus its least costs;
    with ``bounded``, that flow is known to leave it below ``target`` (the orthant's refinement,
    :func:`orthant_flows`, computed it) and it is split at once. A box of at most
    :data:`GREEDY_VECTORS` vectors is bounded by a greedy flow through its conflicts
    (:func:`solvers.exact.box_greedy.greedy_box_flow`: a pass over the patterns instead of the pattern
    pairs), and one of at most ``leaf`` vectors is enumerated (:func:`enumerate_box`). Returns
    ``(objective, points, intercept, boxes)``: ``target`` and zeros when nothing is below it."""
    r = sign.size
    Xs = np.empty((wp.size + wn.size, r), np.int64)
    Xs[:wp.size] = Vp
    Xs[wp.size:] = Vn
    positive = np.zeros(wp.size + wn.size, np.bool_)
    positive[:wp.size] = True
    w = np.concatenate((wp, wn))
    Sp, Sn = Vp * sign, Vn * sign
    spread = np.zeros(r)
    for j in range(r):
        for p in range(wp.size):
            spread[j] += abs(Vp[p, j]) * wp[p]
        for q in range(wn.size):
            spread[j] += abs(Vn[q, j]) * wn[q]
    depth = 1
    for j in range(r):
        depth += int(np.ceil(np.log2(top[j] + 1.0))) + 1
    lows, highs = np.empty((depth + 1, r), np.int64), np.empty((depth + 1, r), np.int64)
    lows[0], highs[0] = 1, top
    size = 1
    best, best_points, best_b, boxes = target, np.zeros(r, np.int64), 0, 0
    while size > 0:
        size -= 1
        lo, hi = lows[size].copy(), highs[size].copy()
        boxes += 1
        fixed = 0.0
        vectors = 1
        for j in range(r):
            fixed += cost[j] + eps[j] * lo[j]
            vectors *= hi[j] - lo[j] + 1
        if fixed >= best:
            continue
        if vectors <= leaf:
            value, points, b = enumerate_box(Xs, positive, w, lo, hi, sign, cost, eps, margin, b_lo, b_hi, best)
            if value < best:
                best, best_points, best_b = value, points, b
            continue
        flow = -np.inf  # a lower bound on the box's objective
        if boxes == 1 and not bounded:  # the whole box: its maximum flow, unless the refinement computed it
            flow = box_flow(Vp, wp, Vn, wn, sign, lo, hi, margin, best - fixed) + fixed
        elif boxes > 1 and vectors <= GREEDY_VECTORS:
            flow = greedy_box_flow(Sp, wp, Sn, wn, lo, hi, margin, best - fixed) + fixed
        if flow * (1.0 - ROUNDOFF) >= best:
            continue
        # the side that spreads the patterns' scores over the box most: sum_i w_i |x_ij| (hi_j - lo_j)
        widest = 0
        for j in range(r):
            if (hi[j] - lo[j]) * spread[j] > (hi[widest] - lo[widest]) * spread[widest]:
                widest = j
        mid = (lo[widest] + hi[widest]) // 2
        lows[size], highs[size] = lo, hi
        highs[size, widest] = mid
        lows[size + 1], highs[size + 1] = lo, hi
        lows[size + 1, widest] = mid + 1
        size += 2
    return best, best_points, best_b, boxes
