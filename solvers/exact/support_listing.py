"""Listing the supports of the support enumerations (:mod:`solvers.exact.supports`), chunk by chunk.

The supports of one size are the ``forced`` features plus ``r`` of the ``free`` ones, in
lexicographic order of the free ones (consecutive supports share their first columns), listed
:data:`CHUNK` at a time by a numba kernel that also leaves out the supports using a member of a
class of interchangeable columns without its predecessor (:mod:`solvers.exact.symmetry`).
:func:`unrank` jumps to any position of the order (the combinatorial number system), so a worker
or a rate sample starts anywhere; :func:`sift` bounds the next supports of a listing against a
prune level.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.exact.loops import copy_into

#: supports bounded between two looks at the clock
CHUNK = 4096


@njit(cache=True, nogil=True)
def _next_combinations(state: np.ndarray, n: int, out: np.ndarray, prev: np.ndarray) -> tuple[int, int]:
    """List up to ``out.shape[0]`` r-combinations of ``range(n)`` from ``state`` on, in lexicographic
    order (``state`` advanced past them), and keep in ``out`` those in which every ``c`` with
    ``prev[c] >= 0`` comes with ``prev[c]`` (all of them when ``prev`` is empty); returns how many
    were listed and how many kept."""
    count, r = out.shape
    listed = kept = 0
    while listed < count:
        if r > 0 and state[0] > n - r:
            break
        listed += 1
        ok = True
        if prev.size:
            for a in range(r):
                need = prev[state[a]]
                if need >= 0:
                    found = False
                    for b in range(a):
                        if state[b] == need:
                            found = True
                            break
                    if not found:
                        ok = False
                        break
        if ok:
            copy_into(out[kept], state)
            kept += 1
        i = r - 1
        while i >= 0 and state[i] == n - r + i:
            i -= 1
        if i < 0:
            state[0] = n + 1  # exhausted
            break
        state[i] += 1
        for t in range(i + 1, r):
            state[t] = state[t - 1] + 1
    return listed, kept


_NO_PREV = np.zeros(0, np.int64)


def unrank(rank: int, n: int, r: int) -> np.ndarray:
    """The r-combination of ``range(n)`` at 0-based position ``rank`` of the lexicographic order
    (combinatorial number system: ``C(n - c - 1, r - i - 1)`` combinations have ``c`` at place ``i``
    after a given prefix)."""
    state, c = np.empty(r, np.int64), 0
    for i in range(r):
        while rank >= (count := math.comb(n - c - 1, r - i - 1)):
            rank -= count
            c += 1
        state[i] = c
        c += 1
    return state


class Lister:
    """Supports made of the ``forced`` features and ``r`` of the ``free`` ones, chunk by chunk (the
    free ones in lexicographic order, so consecutive supports share their first columns). With
    ``prev`` (:func:`solvers.exact.symmetry.predecessors`, positions in ``free``) the supports that
    use a member of a class of interchangeable columns without its predecessor are left out
    (``listed`` still counts them). ``outside``: the least objective of the supports of this size
    not listed (ruled out by exclusion bounds; inf when none is)."""

    def __init__(self, forced: np.ndarray, free: np.ndarray, r: int, prev: np.ndarray | None = None,
                 outside: float = math.inf):
        self.forced, self.free, self.r = forced, free, r
        self.prev = prev if prev is not None and (prev >= 0).any() else None
        self._prev = _NO_PREV if self.prev is None else self.prev
        self.total = math.comb(self.free.size, self.r)
        self.state = np.arange(self.r, dtype=np.int64)
        self.listed = 0
        self.outside = outside

    def at(self, position: int) -> "Lister":
        """A lister of the same supports that starts at ``position`` of this one's listing."""
        other = Lister(self.forced, self.free, self.r, self.prev)
        other.state, other.listed = unrank(position, self.free.size, self.r), position
        return other

    def skip(self, count: int) -> np.ndarray:
        """Move past the next ``count`` supports without listing them; returns the state they start at."""
        start = self.state.copy()
        left = min(count, self.total - self.listed)
        self.listed += left
        scratch = np.empty((min(left, CHUNK), self.r), dtype=np.int64)
        while self.r and left > 0:
            filled = _next_combinations(self.state, self.free.size, scratch[:min(left, CHUNK)], _NO_PREV)[0]
            if filled == 0:
                break
            left -= filled
        return start

    def next(self, count: int) -> np.ndarray:
        out = np.empty((min(count, self.total - self.listed), self.r), dtype=np.int64)
        filled, kept = _next_combinations(self.state, self.free.size, out, self._prev) if self.r else \
            (out.shape[0], out.shape[0])
        self.listed += filled
        out = out[:kept]
        chosen = self.free[out]
        return np.ascontiguousarray(np.hstack([np.broadcast_to(self.forced, (out.shape[0], self.forced.size)), chosen]),
                                    dtype=np.int64)


class Listed:
    """Given supports (full rows, forced features included) as a lister of the size of ``like``;
    bounded in this process (no lister state to ship to workers)."""

    def __init__(self, rows: np.ndarray, like: Lister):
        self.rows, self.forced, self.free, self.r, self.prev = rows, like.forced, like.free, like.r, like.prev
        self.total, self.listed = rows.shape[0], 0

    def next(self, count: int) -> np.ndarray:
        out = self.rows[self.listed:self.listed + count]
        self.listed += out.shape[0]
        return out


def sift(bound, lister: Lister, count: int, level: float) -> tuple:
    """Bound the next ``count`` supports of ``lister`` with the prune ``level``: those kept (bound
    below it), their bounds, the least bound of the pruned ones (inf: none), how many were listed
    (symmetric ones left out included), and those that passed the saturated-loss screen (None:
    the bounder has no such screen). A bound stopped at the cutoff is at least the cutoff, so the
    supports pruned do not depend on it."""
    before = lister.listed
    chunk = lister.next(count)
    out = bound(chunk, level) if chunk.shape[0] else (np.zeros(0), np.zeros(0, bool))
    bounds, passed = out if isinstance(out, tuple) else (out, None)
    keep = bounds < level
    floor = math.inf if keep.all() else float(bounds[~keep].min())
    return chunk[keep], bounds[keep], floor, lister.listed - before, None if passed is None else chunk[passed]


class RuledBounder:
    """A bounder whose supports that break the ``rules`` (:class:`formulations.support_rules.SupportRules`)
    get the bound inf and do not pass its screen: they hold no model of the program."""

    def __init__(self, bound, rules) -> None:
        self.bound, self.rules = bound, rules

    def __call__(self, supports: np.ndarray, level: float):
        out = self.bound(supports, level)
        broken = ~self.rules.feasible(supports)
        if isinstance(out, tuple):
            return np.where(broken, np.inf, out[0]), out[1] & ~broken
        return np.where(broken, np.inf, out)
