"""SLIM exactly on few-valued integer features: every support's sign orthants screened by a monotone
flow bound on the support's merged patterns, the orthants left searched by branch and bound.

A plain SLIM instance (:class:`solvers.exact.zero_one_supports.ZeroOneProgram`: 0-1 loss with an
integer ``margin``, integer features, integer points in ``[L_j, U_j]``, an integer intercept, at most
``K`` features, none forced) is split into *orthants* ``(S, sigma)``: a support ``S`` of at most ``K``
free features and a sign ``sigma_j = +-1`` per feature of ``S``, holding the models whose non-zero
points are exactly those of ``S``, with those signs. Every model lies in exactly one orthant, so the
optimum is the least optimum over the orthants (supports listed smallest first; the empty one is the
constant model).

*Patterns.* Rows that agree on ``S`` get the same score under every model of support ``S``, so the
screen works on the support's *patterns* (the distinct value vectors the rows take on ``S``), each
with the weight of its positive and of its negative rows: on few-valued columns a support has far
fewer patterns than rows. They are found by numbering a key (the columns' value ranks in mixed radix).

*Screen.* A model of ``(S, sigma)`` scores ``s = sum_{j in S} lambda_j x_j`` with
``sigma_j lambda_j > 0``: its score is monotone non-decreasing in each ``sigma_j x_j``. A positive
pattern ``p`` and a negative pattern ``q`` with ``sigma_j x_pj <= sigma_j x_qj`` for every ``j`` in
``S`` get ``s_p <= s_q``, so they are not both right (``s_p + b >= margin`` and ``s_q + b <= -margin``
would need ``s_p - s_q >= 2 margin > 0``). Every model of the orthant thus errs on a vertex cover of
the bipartite conflict graph of these pairs, whose least weight equals the value of a maximum flow
from the positive patterns (capacity their weights) through the conflicts to the negative patterns
(Konig; any flow is a lower bound by weak LP duality): the *monotone bound*. A pair of patterns is a
conflict in the orthants whose signs agree with its comparison on every column where the two differ
(``x_pj < x_qj`` needs ``sigma_j = +1``, ``x_pj > x_qj`` needs ``-1``, equal values allow both): the
pairs are sorted once per support into the ``3^K`` classes of that comparison, and each orthant
reads the classes it conflicts on. A greedy flow (each conflict, in turn, carries what both ends
have left) is computed for every orthant, first through the conflicts of patterns equal on all but
two columns only (:func:`_near_flows`: found by grouping, far fewer than all the pairs, and often
enough), then through all of them; an orthant whose greedy flow plus the costs every model of it pays (``sum_{j in S} C_0 c_{0,j} + epsilon_j``: each point is at least 1 in magnitude) reaches the
incumbent's objective (with a relative margin of :data:`solvers.exact.floor.ROUNDOFF` for the sums'
round-off) holds no better model and is pruned; one it leaves gets a maximum flow (Dinic's blocking
flows) and, if still below, is kept with that bound.

*Search.* The orthants kept are searched lowest bound first (a heap): one every
:data:`SEARCH_EVERY` supports while the screen goes on (a better incumbent early prunes more), the
rest once it ends, until the lowest bound left reaches the incumbent. An orthant is searched by branch
and bound on its box of magnitudes ``m_j`` in ``1..|bound|`` (points ``sigma_j m_j``): a box is
bounded by a flow through the pairs no model of the box gets both right
(``max_m sum_j m_j sigma_j (x_pj - x_qj) < 2 margin``, margin included) plus its least costs, split
on its widest side, and enumerated once small: every point vector with its best integer intercept
from the cumulative weights of the patterns per score (exact: ``y_i (s_i + b) >= margin`` is an
integer comparison). The objective is SLIM's: weighted errors, plus ``C_0 c_{0,j}`` per non-zero
point and the tie-breaker ``epsilon_j |lambda_j|``.

When every support is screened and every orthant kept is searched or bounded above the incumbent,
the incumbent is optimal: each pruned orthant's bound is at least the incumbent at its time (which
only decreases). Stopped at a limit during the screen, no bound is claimed (``-inf``); stopped while
searching the orthants kept after it, the least bound among them (or the incumbent, if lower) is a
lower bound on every model. The search first times :data:`SAMPLED` random supports of ``K``
features and goes on only when the screen's time per support, times the number of supports, fits
in the time left (the route's next steps get the time otherwise).
"""
from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from solvers.exact.floor import ROUNDOFF
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits

#: most features per support (the comparison classes are ``3^K``, the orthants ``2^K``)
MAX_SIZE = 8
#: slots of the patterns' numbering scratch (:func:`_group_ids`; larger key spaces are sorted by comparison)
KEY_SLOTS = 2**20
#: a box of the orthant search with at most this many magnitude vectors is enumerated
LEAF = 64
#: orthants left by the screen kept before they are searched (then searched, lowest bound first, to
#: improve the incumbent before the screen goes on)
MAX_LEFT = 200_000
#: supports screened between two searches of the lowest orthant left
SEARCH_EVERY = 500
#: supports of ``K`` features visited first, at random, to time a support (the kernels loaded
#: before); the search goes on only if the time per support, times the number of supports, fits in
#: the time left
SAMPLED = 48
#: a flow amount below this is no flow (the weights are positive fractions of one)
_TINY = 1e-15


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
    reason: str | None = None

    @property
    def message(self) -> str:
        state = "every orthant screened or searched" if self.finished else (self.reason or "stopped at a limit")
        return f"{state}: {self.orthants} orthants, {self.searched} enumerated"


def _levels(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the rank of each row's value among the column's distinct values, and their count."""
    ranks = np.empty(X.shape, np.int64)
    levels = np.empty(X.shape[1], np.int64)
    for j in range(X.shape[1]):
        values, ranks[:, j] = np.unique(X[:, j], return_inverse=True)
        levels[j] = values.size
    return ranks, levels


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
    k = min(problem.max_size, problem.free.size)
    if k > MAX_SIZE:
        return f"supports of more than {MAX_SIZE} features"
    levels = np.sort([np.unique(problem.X[:, j]).size for j in problem.free])[::-1]
    if float(np.prod(levels[:k].astype(float))) >= 2.0 ** 62:
        return f"its {k} most-valued features take over 2^62 value combinations (the patterns' keys)"
    return None


def _supports(free: np.ndarray, k: int):
    """Every support of at most ``k`` of the ``free`` features, smallest first."""
    return itertools.chain.from_iterable(itertools.combinations(free.tolist(), r) for r in range(k + 1))


@njit(cache=True, nogil=True)
def _group_ids(keys: np.ndarray, slot: np.ndarray, ids: np.ndarray, count: int) -> int:
    """Number the distinct ``keys`` (integers below ``slot.size``) from ``count`` on, in order of first
    appearance, writing each key's number to ``ids``; ``slot`` (scratch, ``-1`` everywhere) keeps the
    numbers until :func:`_forget` clears them. Returns the new count."""
    for i in range(keys.size):
        key = keys[i]
        if slot[key] < 0:
            slot[key] = count
            count += 1
        ids[i] = slot[key]
    return count


@njit(cache=True, nogil=True)
def _forget(keys: np.ndarray, slot: np.ndarray) -> None:
    for key in keys:
        slot[key] = -1


@njit(cache=True, nogil=True)
def _by_group(ids: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """A counting sort of the indices of ``ids`` by their group: ``(start of each group, indices)``."""
    start = np.zeros(groups + 1, np.int64)
    for g in ids:
        start[g + 1] += 1
    for g in range(groups):
        start[g + 1] += start[g]
    at = start[:-1].copy()
    items = np.empty(ids.size, np.int64)
    for i in range(ids.size):
        items[at[ids[i]]] = i
        at[ids[i]] += 1
    return start, items


@njit(cache=True, nogil=True)
def _dense_keys(keys: np.ndarray) -> np.ndarray:
    """``keys`` renumbered ``0, 1, ...`` in increasing order (a comparison sort: the numbering of
    :func:`_group_ids` for key spaces over its scratch)."""
    order = np.argsort(keys)
    out = np.empty(keys.size, np.int64)
    count = -1
    for t in range(keys.size):
        if t == 0 or keys[order[t]] != keys[order[t - 1]]:
            count += 1
        out[order[t]] = count
    return out


@njit(cache=True, nogil=True)
def _patterns(valuesT: np.ndarray, ranksT: np.ndarray, levels: np.ndarray, S: np.ndarray, positive: np.ndarray,
              w: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                        np.ndarray]:
    """The patterns of support ``S`` of each label: ``(positive patterns, their weights, their value
    ranks, negative patterns, their weights, their value ranks)``, one per distinct key (the rows'
    value ranks on ``S`` in mixed radix), from the features and their ranks stored column by column
    (``valuesT``, ``ranksT``: one row per feature); ``slot`` is :func:`_group_ids`'s scratch, used
    when the keys fit in it."""
    r, m = S.size, valuesT.shape[1]
    keys = np.zeros(m, np.int64)
    space = 1
    for j in range(r):
        column = ranksT[S[j]]
        for i in range(m):
            keys[i] += column[i] * space
        space *= levels[S[j]]
    ids = np.empty(m, np.int64)
    if space > slot.size:
        ids = _dense_keys(keys)
        u = ids.max() + 1 if m > 0 else 0
    else:
        u = _group_ids(keys, slot, ids, 0)
        _forget(keys, slot)
    first = np.full(u, -1, np.int64)
    wpos = np.zeros(u)
    wneg = np.zeros(u)
    for i in range(m):
        a = ids[i]
        if first[a] < 0:
            first[a] = i
        if positive[i]:
            wpos[a] += w[i]
        else:
            wneg[a] += w[i]
    n_pos, n_neg = 0, 0
    for a in range(u):
        n_pos += wpos[a] > 0.0
        n_neg += wneg[a] > 0.0
    Vp, Vn = np.empty((n_pos, r), np.int64), np.empty((n_neg, r), np.int64)
    Rp, Rn = np.empty((n_pos, r), np.int64), np.empty((n_neg, r), np.int64)
    wp, wn = np.empty(n_pos), np.empty(n_neg)
    a_pos, a_neg = 0, 0
    for a in range(u):
        i = first[a]
        if wpos[a] > 0.0:
            for j in range(r):
                Vp[a_pos, j], Rp[a_pos, j] = valuesT[S[j], i], ranksT[S[j], i]
            wp[a_pos] = wpos[a]
            a_pos += 1
        if wneg[a] > 0.0:
            for j in range(r):
                Vn[a_neg, j], Rn[a_neg, j] = valuesT[S[j], i], ranksT[S[j], i]
            wn[a_neg] = wneg[a]
            a_neg += 1
    return Vp, wp, Rp, Vn, wn, Rn


@njit(cache=True, nogil=True)
def _class_flow(pairs: np.ndarray, count: np.ndarray, on_a: int, on_b: int, n_neg: int, left_p: np.ndarray,
                left_n: np.ndarray, wp: np.ndarray, wn: np.ndarray, target: float) -> float:
    """A greedy flow from scratch (``left_p``, ``left_n`` set to the weights, then what is left)
    through the pairs of the classes that conflict on two columns, ``on_a`` / ``on_b`` the digit of
    a conflict (1 below or 2 above) on each (:func:`_near_flows`); stopped at ``target``."""
    left_p[:] = wp
    left_n[:] = wn
    sent = 0.0
    for c in (0, on_a, 3 * on_b, on_a + 3 * on_b):
        for e in range(count[c], count[c + 1]):
            p, q = divmod(pairs[e], n_neg)
            f = min(left_p[p], left_n[q])
            if f > 0.0:
                left_p[p] -= f
                left_n[q] -= f
                sent += f
        if sent >= target:
            break
    return sent


@njit(cache=True, nogil=True)
def _near_flows(Vp: np.ndarray, wp: np.ndarray, Rp: np.ndarray, Vn: np.ndarray, wn: np.ndarray, Rn: np.ndarray,
                levels: np.ndarray, allowed: np.ndarray, target: float, slot: np.ndarray) -> np.ndarray:
    """Per sign pattern ``plus`` with ``allowed[plus]`` (``-1`` elsewhere), the value of a greedy flow
    through only the conflicts between patterns equal on all but two of the ``r`` columns: for each
    such pair of columns in turn (the last columns grouped first), the patterns are grouped by their
    ranks on the others, the pairs of a group sorted by their comparison on the two, and every
    orthant not yet at ``target`` adds what its conflicts among them carry (a pair met again is the
    same conflict). Stops once every orthant reaches ``target``. A flow, so a lower bound, at a small
    part of the cost of all the pairs. ``slot`` is :func:`_group_ids`'s scratch."""
    n_pos, r = Vp.shape
    n_neg = Vn.shape[0]
    orthants = allowed.size
    out = np.full(orthants, -1.0)
    for o in range(orthants):
        if allowed[o]:
            out[o] = 0.0
    if n_pos == 0 or n_neg == 0:
        return out
    # what each orthant has left to send / receive: filled once the first grouping leaves it open (on
    # the first grouping, the orthants that agree on its two columns have the same conflicts: one flow
    # per sign pair of those columns)
    left_p, left_n = np.empty((orthants, n_pos)), np.empty((orthants, n_neg))
    first_p, first_n = np.empty((4, n_pos)), np.empty((4, n_neg))
    first = True
    keys = np.empty(n_pos + n_neg, np.int64)
    ids = np.empty(n_pos + n_neg, np.int64)
    count = np.zeros(10, np.int64)
    for b in range(r - 1, 0, -1):  # the two columns a < b left out of the grouping, the last ones first
        for a in range(b - 1, -1, -1):
            stride = 1
            keys[:] = 0
            for j in range(r):
                if j != a and j != b:
                    for p in range(n_pos):
                        keys[p] += Rp[p, j] * stride
                    for q in range(n_neg):
                        keys[n_pos + q] += Rn[q, j] * stride
                    stride *= levels[j]
            if stride <= slot.size:
                groups = _group_ids(keys, slot, ids, 0)
                _forget(keys, slot)
            else:
                ids[:] = _dense_keys(keys)
                groups = ids.max() + 1
            start_p, items_p = _by_group(ids[:n_pos], groups)
            start_n, items_n = _by_group(ids[n_pos:], groups)
            # the pairs of each group, by their comparison on columns a and b (9 classes)
            count[:] = 0
            for g in range(groups):
                for s in range(start_p[g], start_p[g + 1]):
                    p = items_p[s]
                    for t in range(start_n[g], start_n[g + 1]):
                        q = items_n[t]
                        c = ((Vp[p, a] < Vn[q, a]) + 2 * (Vp[p, a] > Vn[q, a])
                             + 3 * ((Vp[p, b] < Vn[q, b]) + 2 * (Vp[p, b] > Vn[q, b])))
                        count[c + 1] += 1
            for c in range(9):
                count[c + 1] += count[c]
            at = count[:9].copy()
            pairs = np.empty(count[9], np.int64)
            for g in range(groups):
                for s in range(start_p[g], start_p[g + 1]):
                    p = items_p[s]
                    for t in range(start_n[g], start_n[g + 1]):
                        q = items_n[t]
                        c = ((Vp[p, a] < Vn[q, a]) + 2 * (Vp[p, a] > Vn[q, a])
                             + 3 * ((Vp[p, b] < Vn[q, b]) + 2 * (Vp[p, b] > Vn[q, b])))
                        pairs[at[c]] = p * n_neg + q
                        at[c] += 1
            if first:
                first = False
                done = True
                for signs in range(4):  # bit 0: sigma_a = +1, bit 1: sigma_b = +1
                    sent = -1.0
                    for o in range(orthants):
                        if not allowed[o] or ((o >> a) & 1) + 2 * ((o >> b) & 1) != signs:
                            continue
                        if sent < 0.0:
                            sent = _class_flow(pairs, count, 1 if signs & 1 else 2, 1 if signs & 2 else 2, n_neg,
                                               first_p[signs], first_n[signs], wp, wn, target)
                        out[o] = sent
                        if sent < target:
                            done = False
                            left_p[o] = first_p[signs]
                            left_n[o] = first_n[signs]
                if done:
                    return out
                continue
            done = True
            for o in range(orthants):
                if not allowed[o] or out[o] >= target:
                    continue
                # conflicts on a: equal, or below with sigma_a = +1, or above with -1 (and so on b)
                on_a = 1 if (o >> a) & 1 else 2
                on_b = 1 if (o >> b) & 1 else 2
                for c in (0, on_a, 3 * on_b, on_a + 3 * on_b):
                    for e in range(count[c], count[c + 1]):
                        p, q = divmod(pairs[e], n_neg)
                        f = min(left_p[o, p], left_n[o, q])
                        if f > 0.0:
                            left_p[o, p] -= f
                            left_n[o, q] -= f
                            out[o] += f
                    if out[o] >= target:
                        break
                done = done and out[o] >= target
            if done:
                return out
    return out


@njit(cache=True, nogil=True)
def _classes(Vp: np.ndarray, Vn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pattern pairs sorted by their comparison class (digit ``j`` in base 3: 0 equal, 1 the
    positive pattern below, 2 above): ``(start of each of the 3^r classes, pairs)``, a pair
    ``p * n_neg + q`` (positive pattern ``p``, negative ``q``), those of class ``c`` at
    ``start[c]:start[c + 1]``. The classes are summed column by column over the negative patterns
    (contiguous, so the loop vectorises), then the pairs are placed by a counting sort."""
    n_pos, r = Vp.shape
    n_neg = Vn.shape[0]
    size = 3 ** r
    VnT = np.ascontiguousarray(Vn.T)
    code = np.zeros((n_pos, n_neg), np.int16)
    start = np.zeros(size + 1, np.int64)
    for p in range(n_pos):
        row = code[p]
        power = 1
        for j in range(r):
            a = Vp[p, j]
            column = VnT[j]
            for q in range(n_neg):
                b = column[q]
                row[q] += np.int16(power * ((a < b) + 2 * (a > b)))
            power *= 3
        for q in range(n_neg):
            start[row[q] + 1] += 1
    for c in range(size):
        start[c + 1] += start[c]
    at = start[:-1].copy()
    pairs = np.empty(n_pos * n_neg, np.int32)
    for p in range(n_pos):
        row = code[p]
        for q in range(n_neg):
            c = row[q]
            pairs[at[c]] = np.int32(p * n_neg + q)
            at[c] += 1
    return start, pairs


@njit(cache=True, nogil=True)
def _conflicting(r: int, plus: int) -> np.ndarray:
    """The comparison classes that are conflicts in the orthant ``plus`` (bit ``j`` set:
    ``sigma_j = +1``): on every column the class is equal, or below with ``+1``, or above with ``-1``."""
    size = 3 ** r
    out = np.zeros(size, np.bool_)
    for c in range(size):
        rest = c
        ok = True
        for j in range(r):
            digit = rest % 3
            rest //= 3
            if (digit == 1 and not (plus >> j) & 1) or (digit == 2 and (plus >> j) & 1):
                ok = False
                break
        out[c] = ok
    return out


@njit(cache=True, nogil=True)
def _greedy_flows(start: np.ndarray, pairs: np.ndarray, wp: np.ndarray, wn: np.ndarray,
                  r: int, allowed: np.ndarray, target: float) -> np.ndarray:
    """For each sign pattern ``plus`` with ``allowed[plus]``, the value of a greedy flow through its
    conflicts (stopped once it reaches ``target``); ``-1`` elsewhere."""
    out = np.full(allowed.size, -1.0)
    n_neg = wn.size
    left_p, left_n = np.empty(wp.size), np.empty(n_neg)
    for plus in range(allowed.size):
        if not allowed[plus]:
            continue
        classes = _conflicting(r, plus)
        left_p[:] = wp
        left_n[:] = wn
        total = 0.0
        for c in range(classes.size):
            if not classes[c]:
                continue
            for e in range(start[c], start[c + 1]):
                p, q = divmod(pairs[e], n_neg)
                t = min(left_p[p], left_n[q])
                if t > 0.0:
                    left_p[p] -= t
                    left_n[q] -= t
                    total += t
            if total >= target:
                break
        out[plus] = total
    return out


@njit(cache=True, nogil=True)
def _max_flow(start: np.ndarray, pairs: np.ndarray, wp: np.ndarray, wn: np.ndarray, r: int,
              plus: int, target: float) -> float:
    """The value of a maximum flow through the conflicts of sign pattern ``plus`` (:func:`_dinic`),
    stopped once it reaches ``target``."""
    classes = _conflicting(r, plus)
    size = 0
    for c in range(classes.size):
        if classes[c]:
            size += start[c + 1] - start[c]
    edges = np.empty(size, np.int64)
    size = 0
    for c in range(classes.size):
        if classes[c]:
            for e in range(start[c], start[c + 1]):
                edges[size] = pairs[e]
                size += 1
    return _dinic(edges, wp, wn, target)


@njit(cache=True, nogil=True)
def _dinic(edges: np.ndarray, wp: np.ndarray, wn: np.ndarray, target: float) -> float:
    """The value of a maximum flow from the positive patterns (capacities ``wp``) through the
    uncapacitated conflicts ``edges`` (``p * n_neg + q``) to the negative patterns (capacities
    ``wn``), stopped once it reaches ``target`` (Dinic: shortest augmenting paths by level graphs,
    blocking flows by depth-first search with current arcs)."""
    n_pos, n_neg = wp.size, wn.size
    source, sink = n_pos + n_neg, n_pos + n_neg + 1
    nodes = n_pos + n_neg + 2
    degree = np.zeros(nodes + 1, np.int64)
    degree[source + 1] = n_pos
    degree[sink + 1] = n_neg
    for p in range(n_pos):
        degree[p + 1] += 1
    for q in range(n_neg):
        degree[n_pos + q + 1] += 1
    for e in range(edges.size):
        p, q = divmod(edges[e], n_neg)
        degree[p + 1] += 1
        degree[n_pos + q + 1] += 1
    for v in range(nodes):
        degree[v + 1] += degree[v]
    head = degree  # arcs of node v at head[v]:head[v + 1]
    arcs = head[nodes]
    to = np.empty(arcs, np.int64)
    cap = np.zeros(arcs)
    rev = np.empty(arcs, np.int64)
    at = head[:-1].copy()
    big = 1e300

    for p in range(n_pos):  # source -> p, capacity its weight
        a, b = at[source], at[p]
        to[a], cap[a], rev[a] = p, wp[p], b
        to[b], cap[b], rev[b] = source, 0.0, a
        at[source] += 1
        at[p] += 1
    for q in range(n_neg):  # q -> sink
        v = n_pos + q
        a, b = at[v], at[sink]
        to[a], cap[a], rev[a] = sink, wn[q], b
        to[b], cap[b], rev[b] = v, 0.0, a
        at[v] += 1
        at[sink] += 1
    for e in range(edges.size):  # the conflicts, uncapacitated
        u, q = divmod(edges[e], n_neg)
        v = n_pos + q
        a, b = at[u], at[v]
        to[a], cap[a], rev[a] = v, big, b
        to[b], cap[b], rev[b] = u, 0.0, a
        at[u] += 1
        at[v] += 1

    level = np.empty(nodes, np.int64)
    queue = np.empty(nodes, np.int64)
    current = np.empty(nodes, np.int64)
    path = np.empty(nodes, np.int64)
    total = 0.0
    while total < target:
        level[:] = -1
        level[source] = 0
        queue[0] = source
        qhead, qtail = 0, 1
        while qhead < qtail:
            u = queue[qhead]
            qhead += 1
            for a in range(head[u], head[u + 1]):
                v = to[a]
                if cap[a] > _TINY and level[v] < 0:
                    level[v] = level[u] + 1
                    queue[qtail] = v
                    qtail += 1
        if level[sink] < 0:
            break
        current[:] = head[:-1]
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
    return total


@njit(cache=True, nogil=True)
def _box_flow(Vp: np.ndarray, wp: np.ndarray, Vn: np.ndarray, wn: np.ndarray, sign: np.ndarray, lo: np.ndarray,
              hi: np.ndarray, margin: int, target: float) -> float:
    """A maximum flow through the conflicts of the models whose points are ``sign_j m_j`` with
    magnitudes ``m_j`` in ``[lo_j, hi_j]``: a positive pattern ``p`` and a negative one ``q`` that no
    such model gets both right, ``max_m sum_j m_j sign_j (x_pj - x_qj) < 2 margin`` (both right
    needs ``s_p - s_q >= 2 margin``, whatever the intercept). Every model of the box errs on a vertex
    cover of these conflicts, so the value is a lower bound on its weighted error (Konig)."""
    n_pos, r = Vp.shape
    n_neg = Vn.shape[0]
    # first a greedy flow (heavy positive patterns first, each until it has sent its weight): often
    # enough to stop before listing the conflicts for the maximum flow
    left_n = wn.copy()
    greedy = 0.0
    for p in np.argsort(-wp):
        send = wp[p]
        for q in range(n_neg):
            if left_n[q] <= 0.0:
                continue
            most = 0
            for j in range(r):
                delta = sign[j] * (Vp[p, j] - Vn[q, j])
                most += delta * (hi[j] if delta > 0 else lo[j])
            if most < 2 * margin:
                f = min(send, left_n[q])
                left_n[q] -= f
                send -= f
                if send <= 0.0:
                    break
        greedy += wp[p] - send
        if greedy >= target:
            return greedy
    size = 0
    edges = np.empty(1024, np.int64)
    VnT = np.ascontiguousarray(Vn.T)
    most = np.empty(n_neg, np.int64)
    for p in range(n_pos):
        most[:] = 0
        for j in range(r):  # the largest score difference over the box, column by column
            a, column, up, down = sign[j] * Vp[p, j], VnT[j], hi[j], lo[j]
            for q in range(n_neg):
                delta = a - sign[j] * column[q]
                most[q] += delta * (up if delta > 0 else down)
        for q in range(n_neg):
            if most[q] < 2 * margin:
                if size == edges.size:
                    grown = np.empty(2 * size, np.int64)
                    grown[:size] = edges
                    edges = grown
                edges[size] = p * n_neg + q
                size += 1
    return _dinic(edges[:size], wp, wn, target)


@njit(cache=True, nogil=True)
def _enumerate(Xs: np.ndarray, positive: np.ndarray, w: np.ndarray, low: np.ndarray, top: np.ndarray,
               sign: np.ndarray, cost: np.ndarray, eps: np.ndarray, margin: int, b_lo: int, b_hi: int,
               target: float) -> tuple[float, np.ndarray, int]:
    """Least objective of the point vectors ``sign_j * (low_j..top_j)`` on the columns ``Xs`` of the
    patterns (weights ``w``, labels ``positive``), each with its best integer intercept in
    ``[b_lo, b_hi]``; returns ``(objective, points, intercept)`` of the best one below ``target``
    (``target`` and zeros when none). The vectors are visited in mixed-radix order, the scores
    updated in place."""
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
    mags = low.copy()
    scores = np.zeros(m, np.int64)
    for i in range(m):
        for j in range(k):
            scores[i] += sign[j] * low[j] * Xs[i, j]
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
                for i in range(m):
                    scores[i] += sign[j] * Xs[i, j]
                break
            for i in range(m):
                scores[i] -= sign[j] * (top[j] - low[j]) * Xs[i, j]
            mags[j] = low[j]
            j += 1
        if j == k:
            break
    return best, best_points, best_b


@njit(cache=True, nogil=True)
def _orthant_search(Vp: np.ndarray, wp: np.ndarray, Vn: np.ndarray, wn: np.ndarray, top: np.ndarray, sign: np.ndarray,
                    cost: np.ndarray, eps: np.ndarray, margin: int, b_lo: int, b_hi: int, target: float,
                    leaf: int) -> tuple[float, np.ndarray, int, int]:
    """Least objective over the point vectors ``sign_j m_j``, ``m_j`` in ``1..top_j`` (each with its
    best intercept), below ``target``: branch and bound on the box of magnitudes (depth first, the
    widest side halved), a box bounded by its conflicts' flow (:func:`_box_flow`) plus its least
    costs and enumerated (:func:`_enumerate`) once it holds at most ``leaf`` vectors. Returns
    ``(objective, points, intercept, boxes)``: ``target`` and zeros when nothing is below it."""
    r = sign.size
    Xs = np.empty((wp.size + wn.size, r), np.int64)
    Xs[:wp.size] = Vp
    Xs[wp.size:] = Vn
    positive = np.zeros(wp.size + wn.size, np.bool_)
    positive[:wp.size] = True
    w = np.concatenate((wp, wn))
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
            value, points, b = _enumerate(Xs, positive, w, lo, hi, sign, cost, eps, margin, b_lo, b_hi, best)
            if value < best:
                best, best_points, best_b = value, points, b
            continue
        if (_box_flow(Vp, wp, Vn, wn, sign, lo, hi, margin, best - fixed) + fixed) * (1.0 - ROUNDOFF) >= best:
            continue
        widest = 0
        for j in range(r):
            if hi[j] - lo[j] > hi[widest] - lo[widest]:
                widest = j
        mid = (lo[widest] + hi[widest]) // 2
        lows[size], highs[size] = lo, hi
        highs[size, widest] = mid
        lows[size + 1], highs[size + 1] = lo, hi
        lows[size + 1, widest] = mid + 1
        size += 2
    return best, best_points, best_b, boxes


@dataclass
class _Support:
    """One support's patterns (with their value ranks) and, once sorted, their pairs by comparison
    class (:func:`_classes`)."""

    columns: np.ndarray
    Vp: np.ndarray
    wp: np.ndarray
    Rp: np.ndarray
    Vn: np.ndarray
    wn: np.ndarray
    Rn: np.ndarray
    start: np.ndarray | None = None
    pairs: np.ndarray | None = None

    def near_flows(self, levels: np.ndarray, allowed: np.ndarray, target: float, slot: np.ndarray) -> np.ndarray:
        return _near_flows(self.Vp, self.wp, self.Rp, self.Vn, self.wn, self.Rn, levels, allowed, target, slot)

    def sort_pairs(self) -> None:
        self.start, self.pairs = _classes(self.Vp, self.Vn)

    def flows(self, allowed: np.ndarray, target: float) -> np.ndarray:
        return _greedy_flows(self.start, self.pairs, self.wp, self.wn, self.columns.size, allowed, target)

    def max_flow(self, plus: int, target: float) -> float:
        return _max_flow(self.start, self.pairs, self.wp, self.wn, self.columns.size, plus, target)

    def search(self, problem: ZeroOneProgram, plus: int, target: float) -> tuple[float, np.ndarray, int]:
        """:func:`_orthant_search` on orthant ``plus``: ``(objective below target or target, points, intercept)``."""
        S = self.columns
        sign = np.where((plus >> np.arange(S.size)) & 1 == 1, 1, -1).astype(np.int64)
        top = np.where(sign > 0, np.floor(problem.hi[S] + 1e-9), np.floor(-problem.lo[S] + 1e-9)).astype(np.int64)
        margin = int(round(problem.margin))
        b_lo = int(math.ceil(problem.intercept_lo - 1e-9))
        b_hi = int(math.floor(problem.intercept_hi + 1e-9))
        value, points, b, _ = _orthant_search(self.Vp, self.wp, self.Vn, self.wn, top, sign, problem.cost[S],
                                              problem.epsilon[S], margin, b_lo, b_hi, target, LEAF)
        return value, points, b


def signs_allowed(problem: ZeroOneProgram, S: np.ndarray) -> np.ndarray:
    """Per sign pattern of ``S`` (bit ``j`` set: ``sigma_j = +1``), whether the points' bounds allow it."""
    bits = (np.arange(2 ** S.size)[:, None] >> np.arange(S.size)[None, :]) & 1
    return np.all(np.where(bits == 1, (problem.hi[S] >= 1)[None, :], (problem.lo[S] <= -1)[None, :]), axis=1)


def _load_kernels() -> None:
    """Call every kernel once on a tiny support, so that loading them from numba's cache (or compiling
    them) is not timed as the search's work."""
    values = np.array([[0, 1, 2], [1, 0, 2], [2, 2, 0], [0, 0, 1]], np.int64)
    ranks, levels = _levels(values)
    positive, w = np.array([True, False, True, False]), np.full(4, 0.25)
    slot = np.full(64, -1, np.int64)
    Vp, wp, Rp, Vn, wn, Rn = _patterns(np.ascontiguousarray(values.T), np.ascontiguousarray(ranks.T), levels,
                                       np.arange(3), positive, w, slot)
    allowed = np.ones(8, bool)
    found = _Support(np.arange(3), Vp, wp, Rp, Vn, wn, Rn)
    found.near_flows(levels, allowed, math.inf, slot)
    found.sort_pairs()
    found.flows(allowed, math.inf)
    found.max_flow(0, math.inf)
    _orthant_search(Vp, wp, Vn, wn, np.full(3, 2, np.int64), np.ones(3, np.int64), np.zeros(3), np.zeros(3), 1, -9, 9,
                    math.inf, 1)


class _Search:
    """The orthant search's state: the data as the kernels read them, the incumbent (objective
    without the constant offset), the orthants left by the screen (``(bound, support, signs)``, a
    heap) and the counts."""

    def __init__(self, problem: ZeroOneProgram, incumbent: float, start: tuple[np.ndarray, float] | None,
                 max_pairs: float) -> None:
        self.problem, self.max_pairs = problem, max_pairs
        self.k = min(problem.max_size, problem.free.size)
        self.positive = problem.y > 0
        ranks, self.levels = _levels(np.asarray(problem.X, dtype=np.int64))
        self.valuesT = np.ascontiguousarray(np.asarray(problem.X, dtype=np.int64).T)
        self.ranksT = np.ascontiguousarray(ranks.T)
        # the sign patterns allowed per support size, when every free feature may take either sign
        both = bool(np.all((problem.hi[problem.free] >= 1) & (problem.lo[problem.free] <= -1)))
        self.every_sign = [np.ones(2 ** r, bool) for r in range(self.k + 1)] if both else None
        top = np.prod(np.sort(self.levels)[::-1][:self.k].astype(float))
        self.slot = np.full(int(min(top, KEY_SLOTS)), -1, np.int64)
        self.best = incumbent - problem.offset
        self.coef, self.intercept = None, 0.0
        if start is not None:
            self.coef, self.intercept = np.asarray(start[0], dtype=float).copy(), float(start[1])
        self.left: list[tuple[float, tuple[int, ...], int]] = []
        self.orthants, self.searched = 0, 0

    def support(self, S: np.ndarray) -> "_Support | None":
        """The patterns of support ``S`` and their pairs (None if more pairs than ``max_pairs``)."""
        Vp, wp, Rp, Vn, wn, Rn = _patterns(self.valuesT, self.ranksT, self.levels, S, self.positive,
                                           self.problem.weights, self.slot)
        if float(wp.size) * float(wn.size) > self.max_pairs:
            return None
        return _Support(S, Vp, wp, Rp, Vn, wn, Rn)

    def screen(self, S: np.ndarray) -> bool:
        """Bound every orthant of support ``S`` (module docstring) and keep those below the incumbent
        with their bounds; False if ``S`` has more pattern pairs than ``max_pairs``."""
        problem, best = self.problem, self.best
        found = self.support(S)
        if found is None:
            return False
        allowed = signs_allowed(problem, S) if self.every_sign is None else self.every_sign[S.size]
        self.orthants += int(allowed.sum())
        # every model of the orthant pays the L0 costs of S and the tie-breaker at magnitude 1
        least = float(problem.cost[S].sum() + problem.epsilon[S].sum())
        if S.size >= 3:  # the near pairs first: they prune most supports at a fraction of the cost
            near = found.near_flows(self.levels[S], allowed, best - least, self.slot)
            allowed = allowed & ((near + least) * (1.0 - ROUNDOFF) < best)
            if not allowed.any():
                return True
        found.sort_pairs()
        flows = found.flows(allowed, best - least)  # through all the pairs (a flow of its own)
        if S.size >= 3:
            flows = np.maximum(flows, near)
        for plus in np.flatnonzero(allowed & ((flows + least) * (1.0 - ROUNDOFF) < best)):
            bound = (found.max_flow(int(plus), best - least) + least) * (1.0 - ROUNDOFF)
            if bound < best:
                heapq.heappush(self.left, (bound, tuple(S.tolist()), int(plus)))
        return True

    def search_left(self, limits: Limits, most: float = math.inf) -> bool:
        """Search the orthants left, lowest bound first, until the lowest reaches the incumbent (True),
        ``most`` are searched (True) or a limit (False); a better model found prunes those whose bound
        it undercuts."""
        problem = self.problem
        while self.left and self.left[0][0] < self.best:
            if most <= 0:
                return True
            most -= 1
            if limits.expired():
                return False
            bound, support, plus = heapq.heappop(self.left)
            S = np.array(support, dtype=np.int64)
            value, points, b = self.support(S).search(problem, plus, self.best)
            self.searched += 1
            if value < self.best:
                self.best = value
                self.coef = np.zeros(problem.d)
                self.coef[S] = points
                self.intercept = float(b)
        self.left.clear()  # every bound left is at least the incumbent
        return True

    @property
    def bound(self) -> float:
        """A lower bound on every orthant screened: the incumbent, or the least bound left below it."""
        return min(self.best, self.left[0][0]) if self.left else self.best

    def projected(self, limits: Limits, seed: int = 0) -> float:
        """Seconds the screen would take: the mean time of :data:`SAMPLED` random supports of ``K``
        features (screened for good: the orthants they leave are kept) times the number of supports."""
        free = self.problem.free
        total = sum(math.comb(free.size, r) for r in range(self.k + 1))
        if total <= 4 * SAMPLED or self.k == 0:
            return 0.0
        rng = np.random.default_rng(seed)
        draws = [np.sort(rng.choice(free, self.k, replace=False)) for _ in range(SAMPLED)]
        _load_kernels()
        t0 = time.perf_counter()
        for S in draws:
            if not self.screen(S):
                return math.inf
        return (time.perf_counter() - t0) / SAMPLED * total

    def result(self, finished: bool, bound: float, seconds: float, message: str | None = None) -> MonotoneSupports:
        offset = self.problem.offset
        return MonotoneSupports(self.coef, self.intercept, self.best + offset, bound + offset, finished,
                                self.orthants, self.searched, seconds, message)


def monotone_supports(problem: ZeroOneProgram, limits: Limits, incumbent: float = math.inf,
                      start: tuple[np.ndarray, float] | None = None, max_pairs: float = math.inf) -> MonotoneSupports:
    """The optimum of ``problem`` by screened orthants (module docstring), pruning at ``incumbent``
    (and at the objective of ``start``'s model, which it returns if nothing beats it). It first
    times the screen on a sample of supports (:meth:`_Search.projected`) and stops there, unfinished,
    when the whole screen would not fit in the time left; it stops unfinished at a support of more
    than ``max_pairs`` pattern pairs (its memory). Stopped in the search of the orthants the screen
    left, it returns the least bound among those not yet searched."""
    t0 = time.perf_counter()
    search = _Search(problem, incumbent, start, max_pairs)
    projected = search.projected(limits)
    if projected > limits.seconds_left():
        return search.result(False, -math.inf, time.perf_counter() - t0,
                             f"not finished: its screen would take about {projected:.3g} s (timed on a sample)")
    for count, support in enumerate(_supports(problem.free, search.k)):
        if limits.expired() or not search.screen(np.array(support, dtype=np.int64)):
            return search.result(False, -math.inf, time.perf_counter() - t0)
        # now and then the lowest orthant left is searched: a better incumbent early prunes more
        most = math.inf if len(search.left) > MAX_LEFT else 1 if count % SEARCH_EVERY == 0 else 0
        if most and not search.search_left(limits, most):
            return search.result(False, -math.inf, time.perf_counter() - t0)
    if not search.search_left(limits):
        return search.result(False, search.bound, time.perf_counter() - t0,
                             "screened; stopped in the search of the orthants left (bound: the least left)")
    return search.result(True, search.best, time.perf_counter() - t0)
