"""A support's patterns: the distinct value vectors its rows take, with the weight of each label.

Rows that agree on a support ``S`` get the same score under every model of support ``S``, so the
orthant search (:mod:`solvers.exact.monotone_supports`) works on patterns. A pattern is numbered
by its *key*, the rows' value ranks on ``S`` in mixed radix: through a scratch table of slots
(:func:`group_ids`, one pass over the rows) when the key space fits in it, else by a comparison
sort (:func:`dense_keys`). The features and their ranks are read column by column (one row per
feature), so a support's columns are never copied.
"""
from __future__ import annotations

import numpy as np
from numba import njit

def value_ranks(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the rank of each row's value among the column's distinct values, and their count."""
    ranks = np.empty(X.shape, np.int64)
    levels = np.empty(X.shape[1], np.int64)
    for j in range(X.shape[1]):
        values, ranks[:, j] = np.unique(X[:, j], return_inverse=True)
        levels[j] = values.size
    return ranks, levels


def rank_values(X: np.ndarray, ranks: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Per column ``j`` of ``X``, its values by rank, ``table[j, ranks[i, j]] = X[i, j]`` (the ranks and
    numbers of values of :func:`value_ranks`; zeros past ``levels[j]``)."""
    table = np.zeros((X.shape[1], levels.max(initial=0)), np.int64)
    for j in range(X.shape[1]):
        table[j, ranks[:, j]] = X[:, j]
    return table


@njit(cache=True, nogil=True)
def group_ids(keys: np.ndarray, slot: np.ndarray, ids: np.ndarray, count: int) -> int:
    """Number the distinct ``keys`` (integers below ``slot.size``) from ``count`` on, in order of first
    appearance, writing each key's number to ``ids``; ``slot`` (scratch, ``-1`` everywhere) keeps the
    numbers until :func:`forget` clears them. Returns the new count."""
    for i in range(keys.size):
        key = keys[i]
        if slot[key] < 0:
            slot[key] = count
            count += 1
        ids[i] = slot[key]
    return count


@njit(cache=True, nogil=True)
def forget(keys: np.ndarray, slot: np.ndarray) -> None:
    for key in keys:
        slot[key] = -1


@njit(cache=True, nogil=True)
def by_group(ids: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
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
def dense_keys(keys: np.ndarray) -> np.ndarray:
    """``keys`` renumbered ``0, 1, ...`` in increasing order (a comparison sort: the numbering of
    :func:`group_ids` for key spaces over its scratch)."""
    order = np.argsort(keys)
    out = np.empty(keys.size, np.int64)
    count = -1
    for t in range(keys.size):
        if t == 0 or keys[order[t]] != keys[order[t - 1]]:
            count += 1
        out[order[t]] = count
    return out


@njit(cache=True, nogil=True)
def patterns(valuesT: np.ndarray, ranksT: np.ndarray, levels: np.ndarray, S: np.ndarray, positive: np.ndarray,
              w: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                        np.ndarray]:
    """The patterns of support ``S`` of each label: ``(positive patterns, their weights, their value
    ranks, negative patterns, their weights, their value ranks)``, one per distinct key (the rows'
    value ranks on ``S`` in mixed radix), from the features and their ranks stored column by column
    (``valuesT``, ``ranksT``: one row per feature); ``slot`` is :func:`group_ids`'s scratch, used
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
        ids = dense_keys(keys)
        u = ids.max() + 1 if m > 0 else 0
    else:
        u = group_ids(keys, slot, ids, 0)
        forget(keys, slot)
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
def prefix_order(ranksT: np.ndarray, levels: np.ndarray, prefix: np.ndarray,
                 order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows (listed in ``order``) sorted by their value ranks on the columns ``prefix``, the first
    column most significant (lexicographic order: stable counting sorts from the last column to the
    first, so rows of equal ranks stay in ``order``), and
    their runs of equal ranks: ``(rows, start, ranks, group)``, run ``g`` at
    ``rows[start[g]:start[g + 1]]`` with the ranks ``ranks[g]``, and ``group[g]`` the number of its
    run of equal ranks on the prefix but its last column."""
    m, k = ranksT.shape[1], prefix.size
    rows = order.copy()
    spare = np.empty(m, np.int64)
    for j in range(k - 1, -1, -1):
        column, size = ranksT[prefix[j]], levels[prefix[j]]
        at = np.zeros(size + 1, np.int64)
        for i in range(m):
            at[column[i] + 1] += 1
        for v in range(size):
            at[v + 1] += at[v]
        for t in range(m):
            i = rows[t]
            spare[at[column[i]]] = i
            at[column[i]] += 1
        done = spare
        spare = rows
        rows = done
    start = np.empty(m + 1, np.int64)
    ranks = np.empty((m, k), np.int64)
    group = np.empty(m, np.int64)
    runs = 0
    for t in range(m):
        i = rows[t]
        differs = k  # the first column where the row differs from the previous run (k: none)
        for j in range(k):
            if runs == 0 or ranksT[prefix[j], i] != ranks[runs - 1, j]:
                differs = j
                break
        if differs < k:
            for j in range(k):
                ranks[runs, j] = ranksT[prefix[j], i]
            group[runs] = 0 if runs == 0 else group[runs - 1] + (differs < k - 1)
            start[runs] = t
            runs += 1
    start[runs] = m
    return rows, start[:runs + 1], ranks[:runs], group[:runs]


@njit(cache=True, nogil=True)
def split_runs(ranksT: np.ndarray, levels: np.ndarray, rows: np.ndarray, start: np.ndarray, ranks: np.ndarray,
               last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`prefix_order` of ``head + (last,)`` from that of ``head`` (``rows``, ``start``, ``ranks``):
    each of its runs split by the rows' rank on column ``last`` (a counting sort per run, stable),
    its runs becoming the groups."""
    m, k = rows.size, ranks.shape[1] + 1
    column, size = ranksT[last], levels[last]
    out = np.empty(m, np.int64)
    out_start = np.empty(m + 1, np.int64)
    out_ranks = np.empty((m, k), np.int64)
    out_group = np.empty(m, np.int64)
    at = np.zeros(size + 1, np.int64)
    runs = 0
    for g in range(start.size - 1):
        at[:] = 0
        for s in range(start[g], start[g + 1]):
            at[column[rows[s]] + 1] += 1
        for v in range(size):
            if at[v + 1] > 0:
                out_start[runs] = start[g] + at[v]
                out_ranks[runs, :k - 1] = ranks[g]
                out_ranks[runs, k - 1] = v
                out_group[runs] = g
                runs += 1
            at[v + 1] += at[v]
        for s in range(start[g], start[g + 1]):
            v = column[rows[s]]
            out[start[g] + at[v]] = rows[s]
            at[v] += 1
    out_start[runs] = m
    return out, out_start[:runs + 1], out_ranks[:runs], out_group[:runs]


@njit(cache=True, nogil=True)
def _emit(R: np.ndarray, weights: np.ndarray, gids: np.ndarray, at: int, prefix_ranks: np.ndarray, last: int,
          weight: float, gid: int) -> int:
    """Write pattern ``at`` of one label (:func:`tail_patterns`): its ranks (the run's on the prefix,
    then ``last``), its weight and its group; returns the next pattern's index."""
    k = prefix_ranks.size
    for j in range(k):
        R[at, j] = prefix_ranks[j]
    R[at, k] = last
    weights[at] = weight
    gids[at] = gid
    return at + 1


@njit(cache=True, nogil=True)
def tail_patterns(ranksT: np.ndarray, rows: np.ndarray, start: np.ndarray, ranks: np.ndarray, group: np.ndarray,
                  last: int, size: int, positive: np.ndarray, w: np.ndarray, Rp: np.ndarray, wp: np.ndarray,
                  Rn: np.ndarray, wn: np.ndarray, ids: np.ndarray) -> tuple[int, int, int]:
    """The patterns of the support ``prefix + (last,)``, by their value ranks only, in lexicographic
    order, from the rows sorted by the prefix and their runs (:func:`prefix_order`: ``rows``,
    ``start``, ``ranks``, ``group``): each run is split by its rows' rank on ``last`` (``size``
    ranks); ``positive`` and ``w`` are the labels and weights *in the order of* ``rows``. Written to
    the first rows of the buffers ``Rp``, ``wp`` (positive patterns) and ``Rn``,
    ``wn`` (negative); ``ids`` gets each pattern's group on the columns but the last two (the positive
    patterns first, then the negative ones: :func:`solvers.exact.monotone_flows.near_flows`'s first
    grouping). Returns ``(n_pos, n_neg, groups)``."""
    column = ranksT[last]
    w_pos, w_neg = np.zeros(size), np.zeros(size)
    seen = np.zeros(size, np.bool_)
    touched = np.empty(size, np.int64)
    gid_n = np.empty(Rn.shape[0], np.int64)
    n_pos, n_neg = 0, 0
    for g in range(start.size - 1):
        used = 0
        for s in range(start[g], start[g + 1]):
            v = column[rows[s]]
            if not seen[v]:
                seen[v] = True
                at = used  # insertion into the sorted ranks met in this run
                while at > 0 and touched[at - 1] > v:
                    touched[at] = touched[at - 1]
                    at -= 1
                touched[at] = v
                used += 1
            if positive[s]:
                w_pos[v] += w[s]
            else:
                w_neg[v] += w[s]
        for u in range(used):
            v = touched[u]
            if w_pos[v] > 0.0:
                n_pos = _emit(Rp, wp, ids, n_pos, ranks[g], v, w_pos[v], group[g])
            if w_neg[v] > 0.0:
                n_neg = _emit(Rn, wn, gid_n, n_neg, ranks[g], v, w_neg[v], group[g])
            w_pos[v], w_neg[v], seen[v] = 0.0, 0.0, False
    ids[n_pos:n_pos + n_neg] = gid_n[:n_neg]
    return n_pos, n_neg, (group[-1] + 1) if group.size else 0
