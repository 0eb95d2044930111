"""The near flows of the supports that share a prefix, from the rows sorted once for them.

Supports listed in lexicographic order come in runs that share their first ``r - 1`` features (the
*prefix*) and differ in the last (the *tail*). The rows are sorted once by their ranks on the prefix
(:class:`PrefixOrders`: split from their sort by all its columns but the last, which consecutive
prefixes share); each tail's patterns are then its runs split by
the tail's rank (:func:`solvers.exact.pattern_groups.tail_patterns`, no hashing), already grouped for
the near flows' first grouping (:func:`solvers.exact.monotone_flows.near_flows`). Before them, the
maximum flows of that first grouping, for every tail at once (:mod:`solvers.exact.dominance_sweep`):
a tail whose orthants they all bring to its target needs no patterns.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from solvers.exact.dominance_sweep import MAX_LEVELS, run_middles, sweep_tails
from solvers.exact.monotone_flows import box_terms, near_flows
from solvers.exact.pattern_groups import prefix_order, split_runs, tail_patterns


class PrefixOrders:
    """The rows sorted by a prefix (:func:`solvers.exact.pattern_groups.prefix_order`, each run's
    negative rows first), for prefixes met in lexicographic order: the sort by all columns but the
    last is kept while they stay the same, and each prefix's runs are split from it
    (:func:`solvers.exact.pattern_groups.split_runs`)."""

    def __init__(self, ranksT: np.ndarray, levels: np.ndarray, positive: np.ndarray) -> None:
        self.ranksT, self.levels = ranksT, levels
        self.first = np.argsort(positive, kind="stable")  # the negative rows first
        self.head: tuple[int, ...] | None = None
        self.head_order: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __call__(self, prefix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, start, ranks, group)`` of ``prefix`` (two or more columns)."""
        head = tuple(prefix[:-1].tolist())
        if head != self.head:
            self.head, self.head_order = head, prefix_order(self.ranksT, self.levels, prefix[:-1], self.first)
        rows, start, ranks, _ = self.head_order
        return split_runs(self.ranksT, self.levels, rows, start, ranks, int(prefix[-1]))


@njit(cache=True, nogil=True)
def near_tails(ranksT: np.ndarray, levels: np.ndarray, rows: np.ndarray, start: np.ndarray, ranks: np.ndarray,
               group: np.ndarray, prefix: np.ndarray, tails: np.ndarray, positive: np.ndarray, w: np.ndarray,
               slot: np.ndarray, allowed: np.ndarray, targets: np.ndarray, rank_values: np.ndarray, up: np.ndarray,
               down: np.ndarray, margin: int) -> tuple[np.ndarray, np.ndarray]:
    """For each support ``prefix + (tails[t],)``, from the rows sorted by the prefix (``rows``,
    ``start``, ``ranks``, ``group``: :class:`PrefixOrders`, each run's negative rows first): a flow
    per sign pattern (row ``t``, ``-1`` where ``allowed[t]`` is False): the sweep's maximum flow of
    the first grouping (:func:`solvers.exact.dominance_sweep.sweep_tails`, tails of at most
    ``MAX_LEVELS`` ranks) and, where that leaves an orthant below ``targets[t]``, the larger of it
    and the near flows (stopped at ``targets[t]``; through the box's conflicts, from each feature's
    values by rank ``rank_values[f, rank]``, its largest magnitudes ``up[f]``, ``down[f]`` and the
    ``margin``); and its number of pattern pairs (positive times negative patterns; 0 when the sweep
    alone reaches the target in every orthant: the support needs no patterns). ``ranksT``: the value
    ranks, one row per feature; ``slot``: the groupings' scratch
    (:func:`solvers.exact.pattern_groups.group_ids`)."""
    m, r = rows.size, prefix.size + 1
    sorted_positive, sorted_w = positive[rows], w[rows]
    Rp, Rn = np.empty((m, r), np.int64), np.empty((m, r), np.int64)
    wp, wn = np.empty(m), np.empty(m)
    ids = np.empty(2 * m, np.int64)
    columns = np.empty(r, np.int64)
    columns[:r - 1] = levels[prefix]
    support = np.empty(r, np.int64)
    support[:r - 1] = prefix
    near = np.full((tails.size, allowed.shape[1]), -1.0)
    pairs = np.zeros(tails.size)
    swept = tails.size > 0 and levels[tails].max() <= MAX_LEVELS
    flows = np.zeros((0, 4))
    # each orthant's flow of the sweep: by its signs on the prefix's last column and on the tail
    sweep_column = np.empty(allowed.shape[1], np.int64)
    for o in range(allowed.shape[1]):
        sweep_column[o] = ((o >> (r - 2)) & 1) + 2 * ((o >> (r - 1)) & 1)
    if swept:
        needed = np.zeros((tails.size, 4), np.bool_)
        for t in range(tails.size):
            for o in range(allowed.shape[1]):
                if allowed[t, o]:
                    needed[t, sweep_column[o]] = True
        flows = sweep_tails(ranksT, levels, rows, start, run_middles(rows, start, positive), group, tails, sorted_w,
                            needed, targets)
    open_ = allowed.copy()
    for t in range(tails.size):
        if swept:
            for o in range(allowed.shape[1]):
                if allowed[t, o]:
                    near[t, o] = flows[t, sweep_column[o]]
                    open_[t, o] = near[t, o] < targets[t]
            if not open_[t].any():
                continue
        columns[r - 1] = levels[tails[t]]
        support[r - 1] = tails[t]
        terms = box_terms(rank_values[support], columns, up[support], down[support])
        n_pos, n_neg, groups = tail_patterns(ranksT, rows, start, ranks, group, tails[t], levels[tails[t]], sorted_positive,
                                             sorted_w, Rp, wp, Rn, wn, ids)
        pairs[t] = float(n_pos) * float(n_neg)
        more = near_flows(Rp[:n_pos], wp[:n_pos], Rn[:n_neg], wn[:n_neg], columns, terms, 2 * margin, open_[t],
                          targets[t], slot, ids, groups)
        for o in range(allowed.shape[1]):
            if open_[t, o]:
                near[t, o] = max(near[t, o], more[o])
    return near, pairs
