"""Which supports the blocked screen must list, by exclusion bounds (RiskSLIM's kind, two levels).

A support holds no model below the prune level ``L`` when every model on it is a point of a relaxation
whose certified bound reaches ``L``. The relaxation used is the box-constrained one with some features'
points fixed at 0 (:mod:`solvers.exact.exclusion`): it bounds every model that uses none of them.

1. A set ``U = (u_0, .., u_{k-1})`` with the relaxation without ``U`` at ``L`` or above
   (:func:`solvers.exact.exclusion.excluded_union`, grown a variable at a time: the nested thresholds
   of one variable, :func:`solvers.exact.nested_columns.nested_chains`, or a single column). Every
   support worth screening holds a feature of ``U``; those whose first feature in the order
   ``U, rest`` is ``u_i`` are the supports of branch ``i``: ``u_i`` and features of
   ``R_i = (u_{i+1}, .., rest)``, none of ``u_0 .. u_{i-1}``.
2. In branch ``i`` a model avoids ``u_0 .. u_{i-1}``; a set ``V_i`` of ``R_i`` with the relaxation without
   ``u_0 .. u_{i-1}`` and ``V_i`` at ``L`` or above (the same greedy, from the relaxation without
   ``u_0 .. u_{i-1}``) leaves only the branch's supports holding a feature of ``V_i``: with ``R_i``
   ordered ``V_i, rest``, those whose second feature is in ``V_i``. When the relaxation without
   ``u_0 .. u_{i-1}`` alone reaches ``L``, the branch lists nothing.

Each support is listed at most once (by its first feature in ``U`` and, within the branch, by its
first in ``V_i``). A set is sought only while the supports it keeps stay below :data:`MOST_LISTED` of
those it would cut (beyond that the pass is barely shorter), and the second sets only while the branches
found so far are less work to screen than the listing they would replace (the sets are dropped as soon
as they are not: later branches only add work).

A later fit of the same rows (another multiplier) reuses a kept screen made with these sets when the
sets' bounds hold for its models too (:func:`carries_over`: a larger multiplier, ranges holding 0,
derived intercept boxes), else only when it rules in the same sets again at its own level
(``ruled_in``).
"""
from __future__ import annotations

import math

import numpy as np

from formulations.riskslim import maps_into
from solvers.exact import route
from solvers.exact.blocked_entropy import FASTEST
from solvers.exact.blocked_pass import Branch, GroupBranch, all_pairs
from solvers.exact.exclusion import bound_without, excluded_union, fit_without
from solvers.exact.nested_columns import nested_chains
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.limits import Limits

#: a set is sought only while the supports holding one of its features stay below this share of
#: those it is meant to cut (listing the others first)
MOST_LISTED = 0.9


def most_columns(d: int, size: int) -> int:
    """The largest ``m`` such that the supports of ``size`` of ``d`` columns holding one of ``m`` given
    columns are at most :data:`MOST_LISTED` of all."""
    all_supports, m = math.comb(d, size), 0
    while m < d and all_supports - math.comb(d - m - 1, size) <= MOST_LISTED * all_supports:
        m += 1
    return m


def carries_over(scale: float, derived: bool, problem: SparseLogistic) -> bool:
    """Whether exclusion bounds proven for a problem of the same rows, weights, costs and coefficient box
    as ``problem`` but with multiplier ``scale`` (and the derived intercept box when ``derived``) bound
    ``problem``'s models too, so its sets hold without being verified again: its models are real models of
    that problem's box (:func:`formulations.riskslim.maps_into`), so their loss is at least the
    relaxation's without any feature they avoid."""
    return maps_into(problem.lo, problem.hi, derived, scale, problem.data.scale)


def _groups(X: np.ndarray, features: np.ndarray) -> list[np.ndarray]:
    """The candidates of a set: each chain of nested columns among ``features``, every other one alone."""
    chains = nested_chains(X, features)
    chained = np.concatenate(chains) if chains else np.zeros(0, np.int64)
    return chains + [np.array([j], np.int64) for j in np.setdiff1d(features, chained)]


def exclusion_branches(problem: SparseLogistic, level: float, limits: Limits,
                       known: tuple[np.ndarray, ...] = (), every: Branch | GroupBranch | None = None
                       ) -> tuple[list[Branch | GroupBranch], tuple, tuple]:
    """The branches (:class:`solvers.exact.blocked_pass.Branch`, positions in ``problem.free``) of the
    supports to screen at the prune ``level`` (module docstring), what was ruled in — ``(sentence,
    objective bound of the supports left out)``, empty when nothing — and the sets ``(U, V_0, ..)``
    (feature indices; an empty array for a branch without a set). With fewer than
    ``ENUMERATION.rule_in_supports`` supports, nothing ruled in within ``ENUMERATION.exclusion_share`` of
    the time left, or branches whose screen would take at least as long as ``every``'s
    (:meth:`~solvers.exact.blocked_pass.Branch.work`), ``every`` alone (the branch listing every support;
    default: every column support). Sets ruled in give column branches even when ``every`` lists supports
    of groups: the saturated loss of groups does not rule out what the exclusion bounds do. The sets
    ``known`` (an earlier fit's) are tried first and kept when every one of them is ruled in here too.
    The budget ``limits`` is started here if not yet."""
    limits = limits.started()
    free, size = problem.free, problem.max_size
    d = free.size
    every = all_pairs(d, size) if every is None else every
    plain = [every], (), ()
    supports = math.comb(d, size)
    most = most_columns(d, size)
    if supports < route.ENUMERATION.rule_in_supports or most == 0 or \
            (supports - math.comb(d - 1, size)) * FASTEST > limits.seconds_left():
        return plain  # (few supports; no set is worth it; or one feature's supports could not be screened)
    loss_level = (level - problem.offset) / problem.loss_cost
    budget = limits.share(route.ENUMERATION.exclusion_share)
    box = (problem.data, problem.lo, problem.hi, problem.intercept_lo, problem.intercept_hi)
    position = np.full(problem.lo.size, -1, np.int64)
    position[free] = np.arange(d)
    if known:
        sets, least = _verified(box, known, loss_level, budget)
    else:
        sets, least = _sought(box, problem.data.X, free, size, loss_level, most, budget, every.work(size), position)
    if not sets:
        return plain
    union, branches, used = sets[0], [], [least[0]]
    rest = np.setdiff1d(free, union)
    for i in range(union.size):
        branch = _branch(position, union, rest, i, sets[1 + i], least[1 + i] >= loss_level, size)
        if branch is not None:
            branches.append(branch)
        if sets[1 + i].size or branch is None:
            used.append(least[1 + i])
    if sum(branch.work(size) for branch in branches) >= every.work(size):
        return plain  # (the sets leave more to screen than every support of groups)
    floor = problem.loss_cost * float(min(used)) + problem.offset
    cut = sum(1 for s in sets[1:] if s.size)
    said = (f"only supports holding one of the {union.size} features {' '.join(str(int(j)) for j in union)}"
            + (f", and in {cut} of their {union.size} branches one of a second set" if cut else "")
            + f": every other model costs at least {floor:.9g} (exclusion bounds)")
    return branches, (said, floor), tuple(sets)


def _branch(position: np.ndarray, union: np.ndarray, rest: np.ndarray, i: int, second: np.ndarray, closed: bool,
            size: int) -> Branch | None:
    """Branch ``i`` of the sets ``union`` (``U``) and ``second`` (``V_i``, maybe empty), as positions
    (``position[j]``: feature ``j``'s in ``problem.free``): ``u_i`` and the features after it, those of
    ``V_i`` first, the supports whose second feature is in ``V_i`` (every one when it is empty); None
    when it lists nothing (``V_i`` empty and ``closed``: the relaxation without ``u_0 .. u_{i-1}``
    reaches the level)."""
    if second.size == 0 and closed:
        return None
    after = np.concatenate([union[i + 1:], rest])
    if second.size:
        after = np.concatenate([second, np.setdiff1d(after, second)])
    columns = position[np.concatenate([[union[i]], after])]
    last = (second.size if second.size else after.size) + 1
    pairs = np.array([(0, b) for b in range(1, min(last, columns.size - size + 2))], np.int64).reshape(-1, 2)
    return Branch(columns, pairs)


def _sought(box, X: np.ndarray, free: np.ndarray, size: int, level: float, most: int, limits: Limits,
            most_work: float, position: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
    """The sets of the module docstring found within ``limits``: ``[U, V_0, ..]`` (an empty ``V_i``
    where none was found, or where the relaxation without ``u_0 .. u_{i-1}`` already reaches the
    level) and each one's certified bound (``U``'s, then for branch ``i`` the relaxation's without
    ``u_0 .. u_{i-1}`` and ``V_i``, or without ``u_0 .. u_{i-1}`` alone; -inf where not bounded).
    Nothing as soon as the screen of the branches found so far (:func:`_branch`, positions ``position``;
    :meth:`~solvers.exact.blocked_pass.Branch.work`) is ``most_work`` or more."""
    groups = _groups(X, free)
    chosen, bound = excluded_union(*box, groups, level, most, limits)
    if not chosen:
        return [], []
    union = np.concatenate([groups[g] for g in chosen])
    sets, least = [union], [bound]
    rest = np.setdiff1d(free, union)
    theta = np.zeros(box[1].size + 1)  # (then the relaxation's point without u_0 .. u_{i-1}, warm from the last)
    listed = 0.0
    for i in range(union.size):
        after = np.concatenate([union[i + 1:], rest])
        if limits.expired() or after.size < size - 1:
            sets.append(np.zeros(0, np.int64))
            least.append(-math.inf)
        else:
            fixed = union[:i]
            theta, base = fit_without(*box, fixed, theta, level, limits)
            if base >= level:
                sets.append(np.zeros(0, np.int64))
                least.append(base)
                continue
            candidates = [g[np.isin(g, after)] for g in groups]
            candidates = [g for g in candidates if g.size]
            picked, second = excluded_union(*box, candidates, level, most_columns(after.size, size - 1), limits,
                                            fixed=fixed, start=theta)
            sets.append(np.concatenate([candidates[g] for g in picked]) if picked else np.zeros(0, np.int64))
            least.append(second if picked else -math.inf)
        branch = _branch(position, union, rest, i, sets[-1], least[-1] >= level, size)
        listed += 0.0 if branch is None else branch.work(size)
        if listed >= most_work:
            return [], []  # (the branches left can only add to it)
    return sets, least


def _verified(box, known: tuple[np.ndarray, ...], level: float,
              limits: Limits) -> tuple[list[np.ndarray], list[float]]:
    """The sets ``known`` and their bounds at ``level`` (as :func:`_sought` returns them) when every
    non-empty one is ruled in there (each branch's with ``u_0 .. u_{i-1}`` fixed too); else nothing."""
    union = known[0]
    least = [bound_without(*box, union, level, limits)]
    if least[0] < level:
        return [], []
    theta = np.zeros(box[1].size + 1)
    for i, second in enumerate(known[1:]):
        theta, base = fit_without(*box, union[:i], theta, level, limits)
        if second.size:
            _, bound = fit_without(*box, np.concatenate([union[:i], second]), theta, level, limits)
            if bound < level:
                return [], []
            least.append(bound)
        else:
            least.append(base)
    return list(known), least
