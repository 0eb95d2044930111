"""Flows through the conflicts of a support's patterns: the monotone bound of the orthant search.

For a support ``S`` and signs ``sigma`` (bit ``j`` of ``plus`` set: ``sigma_j = +1``), a positive
pattern ``p`` and a negative pattern ``q`` *conflict* when ``sigma_j x_pj <= sigma_j x_qj`` on every
column of ``S``: no model with those signs gets both right (:mod:`solvers.exact.monotone_supports`).
Every model errs on a vertex cover of the conflicts, whose least weight is the value of a maximum
flow from the positive patterns (capacities their weights) to the negative ones (Konig); any flow
is a lower bound. A pair's *comparison class* (digit ``j`` in base 3: 0 equal, 1 the positive
pattern below, 2 above) says in which orthants it conflicts: those whose signs agree with it on
every column where the two differ.

Two flows: :func:`near_flows` (through only the pairs equal on all but two columns, found by
grouping, for every orthant at once: greedy, then a maximum flow where the greedy one falls a little
short; there the margin counts, a pair being a conflict when no model of the orthant's whole box of
magnitudes gets both right, :func:`box_terms`) and :func:`flow_through` (a maximum flow through
listed conflicts, greedy first: those of an orthant's whole box in
:func:`solvers.exact.orthant_boxes.box_flow`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.loops import copy_into
from solvers.exact.pattern_groups import by_group, dense_keys, forget, group_ids

#: a flow amount below this is no flow (the weights are positive fractions of one)
_TINY = 1e-15
#: :func:`near_flows` augments an orthant's greedy flow to the maximum one (Dinic's) only when the greedy
#: flow is short of a finite target by at most this share of it: an orthant it leaves below its target is
#: bounded again through all its conflicts anyway, at several times the cost of Dinic's through the near
#: pairs already kept (the share chosen: ``docs/benchmarks-history.md``, stops 61 and 76)
NEAR_DEFICIT = 0.10

@njit(cache=True, nogil=True)
def _push(ps: np.ndarray, qs: np.ndarray, first: int, last: int, left_p: np.ndarray, left_n: np.ndarray,
          sent: float) -> float:
    """The greedy step of every flow here: each conflict ``(ps[e], qs[e])`` (positive pattern,
    negative pattern) of ``first:last``, in turn, carries what both its ends have left (``left_p``,
    ``left_n``, updated); returns ``sent`` plus what they carried."""
    for e in range(first, last):
        p, q = ps[e], qs[e]
        f = min(left_p[p], left_n[q])
        if f > 0.0:
            left_p[p] -= f
            left_n[q] -= f
            sent += f
    return sent


@njit(cache=True, nogil=True)
def carry(edge_p: np.ndarray, edge_q: np.ndarray, left_p: np.ndarray, left_n: np.ndarray, flows: np.ndarray) -> float:
    """:func:`_push` that keeps each conflict's flow: each conflict ``(edge_p[e], edge_q[e])`` in turn
    carries what both its ends have left (``left_p``, ``left_n``, updated), added to ``flows[e]``;
    returns the amount carried."""
    sent = 0.0
    for e in range(edge_p.size):
        p, q = edge_p[e], edge_q[e]
        f = min(left_p[p], left_n[q])
        if f > 0.0:
            flows[e] += f
            left_p[p] -= f
            left_n[q] -= f
            sent += f
    return sent


#: the classes of :func:`_group_pairs`: ``16 kind + mask``, ``kind`` where the two patterns differ (0 on
#: neither column, 1 on ``a`` only, 2 on ``b`` only, 3 on both), bit ``beta`` of ``mask`` set when
#: they conflict in the orthants of signs ``beta`` on the two (bit 0: ``sigma_a = +1``, bit 1: ``sigma_b = +1``)
CLASSES = 64


@njit(cache=True, nogil=True)
def box_terms(values: np.ndarray, levels: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Per column ``j`` of a support and pair of value ranks ``(u, v)`` (a positive and a negative
    pattern's), the most that ``m_j sigma_j (x_u - x_v)`` takes over the magnitudes ``m_j`` in
    ``1..up[j]`` (``terms[0, j, u, v]``, ``sigma_j = +1``) or ``1..down[j]`` (``terms[1, ...]``,
    ``sigma_j = -1``): the top magnitude times a positive difference, else the difference itself.
    ``values[j, rank]``: the column's values by rank (``levels[j]`` of them)."""
    r = levels.size
    size = levels.max() if r else 0
    terms = np.zeros((2, r, size, size), np.int64)
    for j in range(r):
        for u in range(levels[j]):
            for v in range(levels[j]):
                d = values[j, u] - values[j, v]
                terms[0, j, u, v] = d * up[j] if d > 0 else d
                terms[1, j, u, v] = -d * down[j] if d < 0 else -d
    return terms


@njit(cache=True, nogil=True)
def _push_classes(ps: np.ndarray, qs: np.ndarray, count: np.ndarray, beta: int, left_p: np.ndarray,
                  left_n: np.ndarray, sent: float, target: float) -> float:
    """:func:`_push` through the pairs of the classes (:data:`CLASSES`) that conflict in the orthants
    of signs ``beta`` on the grouping's two columns (:func:`near_flows`), the patterns that differ on
    fewer columns first, class by class until ``sent`` reaches ``target``."""
    for c in range(CLASSES):
        if (c >> beta) & 1:
            sent = _push(ps, qs, count[c], count[c + 1], left_p, left_n, sent)
            if sent >= target:
                break
    return sent


@njit(cache=True, nogil=True)
def _group_pairs(Rp: np.ndarray, Rn: np.ndarray, ids_p: np.ndarray, ids_n: np.ndarray, groups: int, a: int,
                 b: int, terms: np.ndarray, twice_margin: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of a positive and a negative pattern of the same group (``ids_p``, ``ids_n``), sorted
    by their class (:data:`CLASSES`) on columns ``a`` and ``b``: where their value ranks ``Rp``,
    ``Rn`` differ, and in which sign pairs they conflict in the orthant's whole box (``terms``:
    :func:`box_terms`; a conflict when the two columns' most is under ``twice_margin``): ``(count,
    positive ends, negative ends)``, class ``c`` at ``count[c]:count[c + 1]``. The two columns are
    first copied in group order, so each pair's class is computed once, on contiguous values."""
    start_p, items_p = by_group(ids_p, groups)
    start_n, items_n = by_group(ids_n, groups)
    ap, bp = np.empty(items_p.size, np.int64), np.empty(items_p.size, np.int64)
    an, bn = np.empty(items_n.size, np.int64), np.empty(items_n.size, np.int64)
    for s in range(items_p.size):
        ap[s], bp[s] = Rp[items_p[s], a], Rp[items_p[s], b]
    for t in range(items_n.size):
        an[t], bn[t] = Rn[items_n[t], a], Rn[items_n[t], b]
    plus_a, minus_a, plus_b, minus_b = terms[0, a], terms[1, a], terms[0, b], terms[1, b]
    total = 0
    for g in range(groups):
        total += (start_p[g + 1] - start_p[g]) * (start_n[g + 1] - start_n[g])
    code = np.empty(total, np.uint8)
    count = np.zeros(CLASSES + 1, np.int64)
    k = 0
    for g in range(groups):
        for s in range(start_p[g], start_p[g + 1]):
            x, z = ap[s], bp[s]
            for t in range(start_n[g], start_n[g + 1]):
                u, v = an[t], bn[t]
                # a conflict in the orthants of signs beta when the most a box model separates them by
                # is under 2 margin (bit 0 of beta: sigma_a = +1, bit 1: sigma_b = +1)
                c = (16 * ((x != u) + 2 * (z != v)) + (minus_a[x, u] + minus_b[z, v] < twice_margin)
                     + 2 * (plus_a[x, u] + minus_b[z, v] < twice_margin)
                     + 4 * (minus_a[x, u] + plus_b[z, v] < twice_margin)
                     + 8 * (plus_a[x, u] + plus_b[z, v] < twice_margin))
                code[k] = c
                count[c + 1] += 1
                k += 1
    for c in range(CLASSES):
        count[c + 1] += count[c]
    at = count[:CLASSES].copy()
    ps, qs = np.empty(total, np.int32), np.empty(total, np.int32)
    k = 0
    for g in range(groups):
        for s in range(start_p[g], start_p[g + 1]):
            p = items_p[s]
            for t in range(start_n[g], start_n[g + 1]):
                c = code[k]
                ps[at[c]], qs[at[c]] = p, items_n[t]
                at[c] += 1
                k += 1
    return count, ps, qs


@njit(cache=True, nogil=True)
def _grouping(Rp: np.ndarray, Rn: np.ndarray, levels: np.ndarray, a: int, b: int, slot: np.ndarray, keys: np.ndarray,
              ids: np.ndarray) -> int:
    """Number the patterns (positive ones first, then negative) by their ranks on every column but
    ``a`` and ``b`` into ``ids`` (``keys``: scratch); returns the number of groups. Through ``slot``
    (:func:`group_ids`) when the key space fits in it, else by a comparison sort."""
    n_pos, r = Rp.shape
    stride = 1
    keys[:] = 0
    for j in range(r):
        if j != a and j != b:
            for p in range(n_pos):
                keys[p] += Rp[p, j] * stride
            for q in range(Rn.shape[0]):
                keys[n_pos + q] += Rn[q, j] * stride
            stride *= levels[j]
    if stride <= slot.size:
        groups = group_ids(keys, slot, ids, 0)
        forget(keys, slot)
        return groups
    ids[:] = dense_keys(keys)
    return ids.max() + 1


@njit(cache=True, nogil=True)
def near_flows(Rp: np.ndarray, wp: np.ndarray, Rn: np.ndarray, wn: np.ndarray, levels: np.ndarray,
               terms: np.ndarray, twice_margin: int, allowed: np.ndarray, target: float, slot: np.ndarray,
               first_ids: np.ndarray, first_groups: int) -> np.ndarray:
    """Per sign pattern ``plus`` with ``allowed[plus]`` (``-1`` elsewhere), the value of a maximum
    flow through only the conflicts between patterns (given by their value ranks ``Rp``, ``Rn``)
    equal on all but two of the ``r`` columns, stopped at ``target``: the pairs that no model of the
    orthant's whole box of magnitudes gets both right (``terms``: :func:`box_terms`, the most each
    column separates them by; a conflict when the two columns' sum is under ``twice_margin``), which
    holds the monotone conflicts (those the orthant's signs order) and the pairs one column orders
    against the orthant by less than the other orders them with it (a flow through them bounds the
    orthant's box, as :func:`solvers.exact.orthant_boxes.box_flow` does). First a greedy flow:
    for each such pair of columns in turn (the last columns grouped first), the patterns are grouped
    by their ranks on the others, the pairs of a group sorted by their class on the two
    (:data:`CLASSES`), and every orthant not yet at ``target`` adds what its conflicts among them
    carry (a pair met again is the same conflict); it stops once every orthant reaches ``target``.
    The groupings' pairs are kept, each once (:func:`_kept_class`), and an orthant the greedy flow
    leaves below ``target`` by at most :data:`NEAR_DEFICIT` of it (any, when ``target`` is infinite)
    gets the maximum flow through its kept conflicts (:func:`flow_through`, Dinic's). A flow, so a
    lower bound, at a small part of the cost of all the pairs. ``slot`` is :func:`group_ids`'s
    scratch. With ``first_groups >= 0``, ``first_ids`` holds the patterns' groups of the first
    grouping (on all columns but the last two; the positive patterns first), already known to the
    caller (:func:`solvers.exact.pattern_groups.tail_patterns`)."""
    n_pos, r = Rp.shape
    n_neg = Rn.shape[0]
    orthants = allowed.size
    out = np.full(orthants, -1.0)
    for o in range(orthants):
        if allowed[o]:
            out[o] = 0.0
    if n_pos == 0 or n_neg == 0:
        return out
    # what each orthant has left to send / receive, and has sent, kept per *class*: the orthants that
    # agree on the columns of the groupings met so far (the bits ``touched``) have met the same conflicts,
    # so they share one flow, kept in the slot numbered by their signs on those columns (``o & touched``)
    left_p, left_n = np.empty((orthants, n_pos)), np.empty((orthants, n_neg))
    sent = np.zeros(orthants)
    left_p[0], left_n[0] = wp, wn
    touched = 0
    open_ = allowed.copy()
    keys = np.empty(n_pos + n_neg, np.int64)
    ids = np.empty(n_pos + n_neg, np.int64)
    # the groupings' pairs, each once: class c of the grouping on columns (a, b) at span[a, b, c]:span[a, b, c + 1]
    kept_p, kept_q = np.empty(1024, np.int32), np.empty(1024, np.int32)
    span = np.zeros((r, r, CLASSES + 1), np.int64)
    size = 0
    first = True
    for b in range(r - 1, 0, -1):  # the two columns a < b left out of the grouping, the last ones first
        for a in range(b - 1, -1, -1):
            if first and first_groups >= 0:
                ids[:] = first_ids[:n_pos + n_neg]
                groups = first_groups
            else:
                groups = _grouping(Rp, Rn, levels, a, b, slot, keys, ids)
            first = False
            count, ps, qs = _group_pairs(Rp, Rn, ids[:n_pos], ids[n_pos:], groups, a, b, terms, twice_margin)
            kept_p, kept_q, size = _keep_pairs(ps, qs, count, a, b, kept_p, kept_q, size, span[a, b])
            # a class that the grouping's columns split: each part starts from the class's flow (a new
            # slot has a bit outside ``touched``, so it is no slot read here)
            grown = touched | (1 << a) | (1 << b)
            if grown != touched:
                split = np.zeros(orthants, np.bool_)
                for o in range(orthants):
                    new, old = o & grown, o & touched
                    if open_[o] and new != old and not split[new]:
                        split[new] = True
                        left_p[new], left_n[new], sent[new] = left_p[old], left_n[old], sent[old]
                touched = grown
            done = True
            pushed = np.zeros(orthants, np.bool_)
            for o in range(orthants):
                if not open_[o]:
                    continue
                at = o & touched
                if not pushed[at]:  # conflicts on a and b as the signs of the class say
                    pushed[at] = True
                    beta = ((o >> a) & 1) + 2 * ((o >> b) & 1)
                    sent[at] = _push_classes(ps, qs, count, beta, left_p[at], left_n[at], sent[at], target)
                out[o] = sent[at]
                open_[o] = out[o] < target
                done = done and not open_[o]
            if done:
                return out
    for o in range(orthants):
        if allowed[o] and out[o] < target and (target == np.inf or out[o] >= (1.0 - NEAR_DEFICIT) * target):
            edge_p, edge_q = _orthant_pairs(kept_p, kept_q, span, o)
            out[o] = max(out[o], flow_through(edge_p, edge_q, wp, wn, target)[0])
    return out


@njit(cache=True, nogil=True, inline="always")
def _kept_class(a: int, b: int, c: int) -> bool:
    """Whether :func:`near_flows` keeps class ``c`` (:data:`CLASSES`) of the grouping on columns ``a <
    b``, so that every pair of patterns equal on all but two columns is kept once: a pair that
    differs on both columns is only in that grouping; one that differs on one column ``j`` only is
    kept in the grouping on ``(0, j)`` (on ``(0, 1)`` when ``j = 0``); an equal pair in the grouping on
    ``(0, 1)``."""
    kind = c >> 4
    if kind == 3:
        return True
    if kind == 2:
        return a == 0
    return a == 0 and b == 1


@njit(cache=True, nogil=True)
def _keep_pairs(ps: np.ndarray, qs: np.ndarray, count: np.ndarray, a: int, b: int, kept_p: np.ndarray,
                kept_q: np.ndarray, size: int, span: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Append the classes of one grouping's pairs (``count``: :func:`_group_pairs`) that
    :func:`_kept_class` keeps to ``kept_p``, ``kept_q`` (grown when full; ``size`` used), class ``c``
    at ``span[c]:span[c + 1]``. Returns the arrays and their new size."""
    total = size
    for c in range(CLASSES):
        if _kept_class(a, b, c):
            total += count[c + 1] - count[c]
    if total > kept_p.size:
        grown = max(2 * kept_p.size, total)
        grown_p, grown_q = np.empty(grown, np.int32), np.empty(grown, np.int32)
        grown_p[:size], grown_q[:size] = kept_p[:size], kept_q[:size]
        kept_p, kept_q = grown_p, grown_q
    for c in range(CLASSES):
        span[c] = size
        if _kept_class(a, b, c):
            for e in range(count[c], count[c + 1]):
                kept_p[size], kept_q[size] = ps[e], qs[e]
                size += 1
    span[CLASSES] = size
    return kept_p, kept_q, size


@njit(cache=True, nogil=True)
def _orthant_pairs(kept_p: np.ndarray, kept_q: np.ndarray, span: np.ndarray, plus: int) -> tuple[np.ndarray,
                                                                                                 np.ndarray]:
    """The kept pairs (:func:`_keep_pairs`) that conflict in orthant ``plus``: per grouping on ``(a,
    b)``, the classes equal or below / above on each column as ``sigma`` says; those that differ on at
    most one column first (the order of :func:`flow_through`'s greedy flow)."""
    r = span.shape[0]
    ranges = np.empty((r * r * CLASSES // 2, 2), np.int64)  # (first, end) of each class taken, in order
    taken, total = 0, 0
    for near in range(2):
        for b in range(1, r):
            for a in range(b):
                beta = ((plus >> a) & 1) + 2 * ((plus >> b) & 1)
                for c in range(CLASSES):
                    if (c >> beta) & 1 and ((c >> 4) == 3) == (near == 1):
                        ranges[taken, 0], ranges[taken, 1] = span[a, b, c], span[a, b, c + 1]
                        total += span[a, b, c + 1] - span[a, b, c]
                        taken += 1
    edge_p, edge_q = np.empty(total, np.int32), np.empty(total, np.int32)
    size = 0
    for i in range(taken):
        for e in range(ranges[i, 0], ranges[i, 1]):
            edge_p[size], edge_q[size] = kept_p[e], kept_q[e]
            size += 1
    return edge_p, edge_q


@njit(cache=True, nogil=True)
def flow_through(edge_p: np.ndarray, edge_q: np.ndarray, wp: np.ndarray, wn: np.ndarray,
                 target: float) -> tuple[float, np.ndarray]:
    """A maximum flow from the positive patterns (capacities ``wp``) through the uncapacitated
    conflicts ``(edge_p[e], edge_q[e])`` to the negative patterns (capacities ``wn``), stopped once
    it reaches ``target``: ``(value, flow on each conflict)``. Each conflict in turn first carries
    greedily what both its ends have left (:func:`carry`: the order of the conflicts is the greedy
    flow's), then Dinic's method augments it (shortest augmenting paths by level graphs, blocking
    flows by depth-first search with current arcs)."""
    n_pos, n_neg = wp.size, wn.size
    # the greedy flow, on what each pattern has left; Dinic's only if short
    left_p, left_n = wp.copy(), wn.copy()
    flows = np.zeros(edge_p.size)
    total = carry(edge_p, edge_q, left_p, left_n, flows)
    if total >= target:
        return total, flows
    source, sink = n_pos + n_neg, n_pos + n_neg + 1
    nodes = n_pos + n_neg + 2
    degree = np.zeros(nodes + 1, np.int64)
    degree[source + 1] = n_pos
    degree[sink + 1] = n_neg
    for p in range(n_pos):
        degree[p + 1] += 1
    for q in range(n_neg):
        degree[n_pos + q + 1] += 1
    for e in range(edge_p.size):
        degree[edge_p[e] + 1] += 1
        degree[n_pos + edge_q[e] + 1] += 1
    for v in range(nodes):
        degree[v + 1] += degree[v]
    head = degree  # arcs of node v at head[v]:head[v + 1]
    arcs = head[nodes]
    to = np.empty(arcs, np.int64)
    cap = np.zeros(arcs)
    rev = np.empty(arcs, np.int64)
    at = head[:-1].copy()
    big = 1e300

    for p in range(n_pos):  # source -> p, capacity its weight, less what it sends
        a, b = at[source], at[p]
        to[a], cap[a], rev[a] = p, left_p[p], b
        to[b], cap[b], rev[b] = source, wp[p] - left_p[p], a
        at[source] += 1
        at[p] += 1
    for q in range(n_neg):  # q -> sink
        v = n_pos + q
        a, b = at[v], at[sink]
        to[a], cap[a], rev[a] = sink, left_n[q], b
        to[b], cap[b], rev[b] = v, wn[q] - left_n[q], a
        at[v] += 1
        at[sink] += 1
    arc = np.empty(edge_p.size, np.int64)  # each conflict's arc u -> v (its flow: the reverse arc's capacity)
    for e in range(edge_p.size):  # the conflicts, uncapacitated, with their flows
        u, v = edge_p[e], n_pos + edge_q[e]
        a, b = at[u], at[v]
        arc[e] = a
        to[a], cap[a], rev[a] = v, big - flows[e], b
        to[b], cap[b], rev[b] = u, flows[e], a
        at[u] += 1
        at[v] += 1

    level = np.empty(nodes, np.int64)
    queue = np.empty(nodes, np.int64)
    current = np.empty(nodes, np.int64)
    path = np.empty(nodes, np.int64)
    while total < target:
        level[:] = -1
        level[source] = 0
        queue[0] = source
        qhead, qtail = 0, 1
        while qhead < qtail:
            u = queue[qhead]
            qhead += 1
            if level[sink] >= 0 and level[u] >= level[sink]:
                break  # the rest lie as far as the sink or farther: on no shortest path
            for a in range(head[u], head[u + 1]):
                v = to[a]
                if cap[a] > _TINY and level[v] < 0:
                    level[v] = level[u] + 1
                    queue[qtail] = v
                    qtail += 1
        if level[sink] < 0:
            break
        copy_into(current, head[:-1])
        depth = 0
        u = source
        while True:
            if u == sink:
                f = big
                for i in range(depth):
                    f = min(f, cap[path[i]])
                for i in range(depth):
                    cap[path[i]] -= f
                    cap[rev[path[i]]] += f
                total += f
                if total >= target:
                    break
                depth = 0
                u = source
                continue
            advanced = False
            while current[u] < head[u + 1]:
                a = current[u]
                v = to[a]
                if cap[a] > _TINY and level[v] == level[u] + 1:
                    path[depth] = a
                    depth += 1
                    u = v
                    advanced = True
                    break
                current[u] += 1
            if not advanced:
                if u == source:
                    break
                level[u] = -1  # a dead end in this level graph
                depth -= 1
                u = to[rev[path[depth]]]
                current[u] += 1
    for e in range(edge_p.size):
        flows[e] = cap[rev[arc[e]]]
    return total, flows
