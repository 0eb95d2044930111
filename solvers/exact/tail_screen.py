"""The near flows of the supports that share a prefix, from the rows sorted once for them.

Supports listed in lexicographic order come in runs that share their first ``r - 1`` features (the
*prefix*) and differ in the last (the *tail*). The rows are sorted once by their ranks on the prefix
(:func:`solvers.exact.pattern_groups.prefix_order`); each tail's patterns are then its runs split by
the tail's rank (:func:`solvers.exact.pattern_groups.tail_patterns`, no hashing), already grouped for
the near flows' first grouping (:func:`solvers.exact.monotone_flows.near_flows`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.monotone_flows import near_flows
from solvers.exact.pattern_groups import prefix_order, tail_patterns


@njit(cache=True, nogil=True)
def near_tails(ranksT: np.ndarray, levels: np.ndarray, prefix: np.ndarray, tails: np.ndarray, positive: np.ndarray,
               w: np.ndarray, slot: np.ndarray, allowed: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each support ``prefix + (tails[t],)``: its near flows (row ``t``, one per sign pattern,
    ``-1`` where ``allowed[t]`` is False; stopped at ``targets[t]``) and its number of pattern pairs
    (positive times negative patterns). ``ranksT``: the value ranks, one row per feature;
    ``slot``: the groupings' scratch (:func:`solvers.exact.pattern_groups.group_ids`)."""
    rows, start, ranks, group = prefix_order(ranksT, levels, prefix)
    m, r = rows.size, prefix.size + 1
    sorted_positive, sorted_w = positive[rows], w[rows]
    Rp, Rn = np.empty((m, r), np.int64), np.empty((m, r), np.int64)
    wp, wn = np.empty(m), np.empty(m)
    ids = np.empty(2 * m, np.int64)
    columns = np.empty(r, np.int64)
    columns[:r - 1] = levels[prefix]
    near = np.empty((tails.size, allowed.shape[1]))
    pairs = np.empty(tails.size)
    for t in range(tails.size):
        columns[r - 1] = levels[tails[t]]
        n_pos, n_neg, groups = tail_patterns(ranksT, rows, start, ranks, group, tails[t], levels[tails[t]], sorted_positive,
                                             sorted_w, Rp, wp, Rn, wn, ids)
        pairs[t] = float(n_pos) * float(n_neg)
        near[t] = near_flows(Rp[:n_pos], wp[:n_pos], Rn[:n_neg], wn[:n_neg], columns, allowed[t], targets[t], slot,
                             ids, groups)
    return near, pairs
