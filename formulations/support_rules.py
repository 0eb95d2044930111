"""Operational constraints that restrict only the points' signs and which features a model uses.

Two kinds of compiled rows (:class:`formulations.constraints.CompiledConstraints`, rows
``lb <= P points + U used + c intercept <= ub``) say nothing about the rows of data:

* a *sign row*: one entry ``s`` in ``P``, none in ``U``, no intercept, so ``s * points_j`` lies in
  ``[lo, hi]`` -- a bound on one feature's points (:class:`~formulations.constraints.Monotone` over
  thresholds gives ``points_j >= 0`` or ``<= 0``). :func:`folded_bounds` folds these rows into the
  coefficient box (rounded inwards for integer points), so every step of a route, which searches the
  box, obeys them;
* a *count row*: only ``U`` entries, all 1, on a group ``G`` of features, ``lo <= 0`` and ``hi``
  finite, so ``|support ∩ G| <= floor(hi)`` (:class:`~formulations.constraints.AtMost`, and the
  one-per-variable rule of ``one_threshold_per_variable``). A model obeys it exactly when its support
  does, and so does every model whose support lies inside one that does.

When every row is one of these (and there is no performance constraint, which counts rows of data),
:func:`support_rules` returns the count rows as :class:`SupportRules`: a support enumeration that
lists only the supports that obey them, in the folded box, solves the constrained program exactly
(every model of the program lies in such a support, and every model of such a support obeys the
constraints).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from formulations.coefficients import CoefficientSet
from formulations.constraints import CompiledConstraints

#: slack on a sign row's range, in points, for the round-off of ``lo / s``
TOL = 1e-9


def _is_sign_row(P, U, c: CompiledConstraints, r: int) -> bool:
    """Whether row ``r`` of ``c`` (``P``, ``U`` its CSR blocks) is a sign row: one non-zero point entry,
    no support entry, no constant (module docstring)."""
    start, end = P.indptr[r], P.indptr[r + 1]
    return end - start == 1 and U.indptr[r + 1] == U.indptr[r] and c.c[r] == 0.0 and P.data[start] != 0.0


def _sign_rows(c: CompiledConstraints) -> list[tuple[int, float, float, float]]:
    """``(j, s, lo, hi)`` of every sign row (module docstring)."""
    P, U = c.P.tocsr(), c.U.tocsr()
    return [(int(P.indices[P.indptr[r]]), float(P.data[P.indptr[r]]), float(c.lb[r]), float(c.ub[r]))
            for r in range(c.n_rows) if _is_sign_row(P, U, c, r)]


def folded_bounds(c: CompiledConstraints | None, lb: np.ndarray, ub: np.ndarray,
                  integer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The box ``[lb, ub]`` narrowed by the sign rows of ``c`` (integer points rounded inwards). The box
    may come out empty for a feature (``lb > ub``): the caller names it."""
    lb, ub = np.array(lb, float), np.array(ub, float)
    if c is None:
        return lb, ub
    for j, s, lo, hi in _sign_rows(c):
        low, high = (lo / s, hi / s) if s > 0 else (hi / s, lo / s)
        if integer[j]:  # (inf stays inf)
            low = math.ceil(low - TOL) if math.isfinite(low) else low
            high = math.floor(high + TOL) if math.isfinite(high) else high
        lb[j], ub[j] = max(lb[j], low), min(ub[j], high)
    return lb, ub


def folded_coefficients(cs: CoefficientSet, c: CompiledConstraints | None) -> CoefficientSet:
    """``cs`` with its box narrowed by the sign rows of ``c`` (:func:`folded_bounds`); a feature whose box
    comes out empty is an error naming it."""
    lb, ub = folded_bounds(c, cs.lb, cs.ub, cs.integer)
    if np.array_equal(lb, cs.lb) and np.array_equal(ub, cs.ub):
        return cs
    empty = np.flatnonzero(lb > ub)
    if empty.size:
        j = int(empty[0])
        raise ValueError(f"the constraints leave feature {cs.names[j]!r} no points in its range [{cs.lb[j]:g}, "
                         f"{cs.ub[j]:g}] (they ask for [{lb[j]:g}, {ub[j]:g}]); widen its bounds or drop a constraint")
    return replace(cs, lb=lb, ub=ub)


@dataclass(frozen=True)
class SupportRules:
    """Count rows on supports: ``|S ∩ G_g| <= most_g`` for every group ``g`` (``members[g]`` marks
    ``G_g`` among the ``d`` features)."""

    members: np.ndarray
    most: np.ndarray

    def feasible(self, supports: np.ndarray) -> np.ndarray:
        """Which rows of ``supports`` (``(n, r)`` feature indices, each row a support) obey every rule."""
        supports = np.asarray(supports, np.int64)
        if self.most.size == 0 or supports.shape[1] == 0:
            return np.ones(supports.shape[0], bool)
        counts = self.members[:, supports].sum(axis=2, dtype=np.int64)  # (groups, supports)
        return np.all(counts <= self.most[:, None], axis=0)

    def columns_in(self, order: np.ndarray) -> "SupportRules":
        """The same rules on the columns taken in ``order`` (column ``i`` of the result is ``order[i]``)."""
        return SupportRules(self.members[:, np.asarray(order, np.int64)], self.most)

    def reach(self, free: np.ndarray) -> int | None:
        """The most features of ``free`` a support that obeys the rules holds, when the groups are laminar
        on ``free`` (any two disjoint or nested, as one threshold per variable with "at most one of these
        variables"; None otherwise): the supports that obey laminar counts are the independent sets of a
        laminar matroid, whose maximal ones all have this size, so every support that obeys them lies in
        one of that many that does. Groups are taken smallest first, each capped at its count over what
        the groups inside it and its other columns hold."""
        members = self.members[:, np.asarray(free, np.int64)]
        sizes = members.sum(axis=1)
        shared = members.astype(np.int64) @ members.T.astype(np.int64)  # (columns two groups share)
        if np.any((shared > 0) & (shared < np.minimum.outer(sizes, sizes))):
            return None
        top = np.full(members.shape[1], -1)  # the largest group done that holds each column (-1: none)
        cap = np.zeros(sizes.size, np.int64)
        for g in np.argsort(sizes, kind="stable"):
            inside = top[members[g]]
            cap[g] = min(int(self.most[g]), int(cap[np.unique(inside[inside >= 0])].sum() + np.sum(inside < 0)))
            top[members[g]] = g
        return int(cap[np.unique(top[top >= 0])].sum() + np.sum(top < 0))

    def screen_reason(self, free: np.ndarray, size: int) -> str | None:
        """Why a screen of the supports of exactly ``size`` features of ``free`` (the ones that obey the
        rules) does not cover every model that obeys them (None: it does, :meth:`reach`)."""
        reach = self.reach(free)
        if reach is None:
            return "its rules on supports count groups of features that overlap without nesting"
        if reach < size:
            return f"its rules on supports allow at most {reach} features, fewer than max_size {size}"
        return None


def support_rules(c: CompiledConstraints | None, lb: np.ndarray, ub: np.ndarray) -> SupportRules | None:
    """The count rows of ``c`` as :class:`SupportRules` when every row of ``c`` is a count row or a sign
    row that the box ``[lb, ub]`` already obeys (:func:`folded_bounds`), and ``c`` has no performance
    constraint; else None (only a program with the rows keeps them)."""
    if c is None:
        return SupportRules(np.zeros((0, len(lb)), bool), np.zeros(0, np.int64))
    if c.performance:
        return None
    for j, s, lo, hi in _sign_rows(c):
        values = (s * lb[j], s * ub[j])
        if min(values) < lo - TOL or max(values) > hi + TOL:
            return None
    P, U = c.P.tocsr(), c.U.tocsr()
    members, most = [], []
    for r in range(c.n_rows):
        if _is_sign_row(P, U, c, r):
            continue  # checked above
        if P.indptr[r + 1] > P.indptr[r]:
            return None
        data = U.data[U.indptr[r]:U.indptr[r + 1]]
        if c.c[r] != 0.0 or not np.all(data == 1.0) or c.lb[r] > 0 or not math.isfinite(c.ub[r]):
            return None
        group = np.zeros(len(lb), bool)
        group[U.indices[U.indptr[r]:U.indptr[r + 1]]] = True
        members.append(group)
        most.append(int(math.floor(c.ub[r] + TOL)))
    return SupportRules(np.array(members, bool).reshape(-1, len(lb)), np.array(most, np.int64))


#: why a support enumeration may not run on an instance whose constraints are more than rules on supports
NOT_RULES = ("the instance has operational constraints beyond signs and counts of the features used "
             "(only the MILP keeps them)")


def instance_rules(instance) -> tuple[SupportRules | None, str | None]:
    """``(rules, reason)`` for a support enumeration of ``instance`` (its ``constraints`` and
    ``coefficients``): ``(None, None)`` when its constraints restrict nothing, ``(rules, None)`` when they
    are rules on supports in its box (:func:`support_rules`), ``(None, NOT_RULES)`` otherwise. Read once per
    instance (kept in its ``_cache``, :class:`formulations.base.CachedPrograms`: every step asks)."""
    cache = instance._cache
    if "support_rules" not in cache:
        c, cs = instance.constraints, instance.coefficients
        if c is None or c.empty:
            cache["support_rules"] = (None, None)
        else:
            rules = support_rules(c, cs.lb, cs.ub)
            cache["support_rules"] = (rules, None) if rules is not None else (None, NOT_RULES)
    return cache["support_rules"]
