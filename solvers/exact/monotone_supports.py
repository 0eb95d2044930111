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
fewer patterns than rows (:mod:`solvers.exact.pattern_groups`).

*Screen.* A model of ``(S, sigma)`` scores ``s = sum_{j in S} lambda_j x_j`` with
``sigma_j lambda_j > 0``: its score is monotone non-decreasing in each ``sigma_j x_j``. A positive
pattern ``p`` and a negative pattern ``q`` with ``sigma_j x_pj <= sigma_j x_qj`` for every ``j`` in
``S`` get ``s_p <= s_q``, so they are not both right (``s_p + b >= margin`` and ``s_q + b <= -margin``
would need ``s_p - s_q >= 2 margin > 0``). Every model of the orthant thus errs on a vertex cover of
the bipartite conflict graph of these pairs, whose least weight equals the value of a maximum flow
from the positive patterns (capacity their weights) through the conflicts to the negative patterns
(Konig; any flow is a lower bound by weak LP duality): the *monotone bound*
(:mod:`solvers.exact.monotone_flows`). A pair of patterns is a
conflict in the orthants whose signs agree with its comparison on every column where the two differ
(``x_pj < x_qj`` needs ``sigma_j = +1``, ``x_pj > x_qj`` needs ``-1``, equal values allow both).
For supports of three or more features, the maximum flow through the conflicts of rows equal on all
but the last two columns comes first, for every support of a prefix at once
(:mod:`solvers.exact.dominance_sweep`: a two-dimensional dominance per group of rows, swept); a
support it brings to the incumbent in every orthant needs nothing more. A greedy flow (each
conflict, in turn, carries what both ends have left) is computed for every orthant it leaves open
through the pairs of patterns equal on all but two columns only
(:func:`solvers.exact.monotone_flows.near_flows`: found by grouping, far fewer than all the pairs,
and often enough), taking every such pair that no model of the orthant's whole box of magnitudes
gets both right (the margin counts, as in the refinement's box flow below: the monotone conflicts,
and the pairs one column orders against the orthant by less than the other orders them with it),
then, where it falls short of the incumbent by a little
(:data:`solvers.exact.monotone_flows.NEAR_DEFICIT`), the maximum flow through those conflicts
(Dinic's); an orthant whose flow plus the costs every model of it pays
(``sum_{j in S} C_0 c_{0,j} + epsilon_j``: each point is at least 1 in magnitude) reaches the
incumbent's objective (with a relative margin of :data:`solvers.exact.floor.ROUNDOFF` for the sums'
round-off) holds no better model and is pruned; one it leaves is kept with that bound, to be
*refined*: the maximum flow through all the conflicts of its whole box of magnitudes
(:func:`solvers.exact.orthant_boxes.box_flow`: the margin counts, and the monotone conflicts are
among them; a greedy flow as they are listed, then Dinic's blocking flows from it). The screen is
this *first pass* over every support; the refinements wait for the search (below), so that a bound
on every orthant exists as soon as the first pass ends, except on supports of few pattern pairs
(:data:`REFINED_AT_ONCE`), whose refinements cost less than keeping their orthants apart. The
supports of three or more features are screened in runs that share all but their last feature: the
rows are sorted once per run (split from their sort by all but the run's last two features, kept
while those stay the same) and each support's patterns split from them, already grouped for the near
flows' first grouping (:mod:`solvers.exact.tail_screen`).

*Column order.* The columns are taken fewest distinct values first (:func:`fewest_values_first`),
so that a support's first features, on which the sweep's blocks of rows agree, are its fewest-valued
ones; the model is returned in the caller's column order.

*Search.* The orthants kept are taken lowest bound first (a heap): one every
:data:`SEARCH_EVERY` supports while the screen goes on (a better incumbent early prunes more), the
rest once it ends, until the lowest bound left reaches the incumbent. An orthant not yet refined is
refined and kept again if still below the incumbent; a refined one is searched by branch
and bound (:mod:`solvers.exact.orthant_boxes`; its whole box, bounded by the refinement, is split
at once) on its box of magnitudes ``m_j`` in ``1..|bound|`` (points ``sigma_j m_j``): a box is
split on the side that spreads the patterns' scores most; once small, it is bounded by a greedy flow
through the pairs no model of the box gets both right (``max_m sum_j m_j sigma_j (x_pj - x_qj) <
2 margin``, margin included, :mod:`solvers.exact.box_greedy`) plus its least costs, and enumerated
once smaller: every point vector with its best integer intercept from the cumulative weights of the
patterns per score (exact: ``y_i (s_i + b) >= margin`` is an integer comparison). The objective is
SLIM's: weighted errors, plus ``C_0 c_{0,j}`` per non-zero point and the tie-breaker
``epsilon_j |lambda_j|``.

When every support is screened and every orthant kept is searched or bounded above the incumbent,
the incumbent is optimal: each pruned orthant's bound is at least the incumbent at its time (which
only decreases). Stopped at a limit during the screen, no bound is claimed (``-inf``); stopped while
refining or searching the orthants kept after it, the least bound among them (or the incumbent, if
lower) is a lower bound on every model, which the search reports as it rises
(:mod:`solvers.progress`). The search first times the screen on :data:`SAMPLED` random heads of
supports of ``K`` features (drawn by their number of supports, :meth:`_Search.projected`; their
orthants refined at once, so the sample times both passes) and goes on only when the projected
screen is at most ``slack`` times the time left, or, asked for a partial bound, when its first pass
projects within the time left (the route's next steps get the time otherwise). The projection errs
both ways: a few heads hold most of the cost, its sample is screened at the start's incumbent (which
the searches between supports improve), and the search of the orthants left after the screen is not
in it. Stopped in that search, it projects the rest of it from what it has done so far
(:class:`SearchRates`: the seconds per refinement and per search, and the share of refinements that
leave an orthant to search).

*Threads.* The screen comes in *units* (each support of at most two features alone; then, per size
``r >= 3``, a head of ``r - 2`` features with all its prefixes and their tails: one sort per unit),
which ``threads`` threads of this process take in lexicographic order (the kernels release the GIL;
the sample of the projection is timed on the same threads, in wall seconds). They share the
incumbent (read without the lock: a stale one is larger and only prunes less), the heap of orthants
left and the counts (under a lock), each with its own scratch (the patterns' numbering slots, the
prefix sorts). The orthants left are searched by every thread, lowest bound first; an orthant being
searched when a limit stops the others still counts in the bound returned.
"""
from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from dataclasses import dataclass, replace

import numpy as np

from formulations.support_rules import SupportRules
from solvers import progress
from solvers.exact.floor import ROUNDOFF
from solvers.exact.orthant_boxes import orthant_flows, orthant_search
from solvers.exact.pattern_groups import patterns, rank_values, value_ranks
from solvers.exact.tail_screen import PrefixOrders, near_tails
from solvers.exact.worker_threads import run_threads
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits

#: most features per support (the orthants are ``2^K``; the near flows' groupings ``K (K - 1) / 2``)
MAX_SIZE = 8
#: slots of the patterns' numbering scratch (:func:`solvers.exact.pattern_groups.group_ids`; larger key spaces sorted)
KEY_SLOTS = 2**20
#: a box of the orthant search with at most this many magnitude vectors is enumerated
LEAF = 64
#: orthants left by the screen kept before they are searched (then searched, lowest bound first, to
#: improve the incumbent before the screen goes on)
MAX_LEFT = 200_000
#: supports screened between two searches of the lowest orthant left
SEARCH_EVERY = 500
#: heads of ``K - 2`` features (with all their prefixes and tails, as the screen meets them: one sort
#: per head; supports of ``K`` features when ``K < 3``) visited first, at random, to time a support
#: (the kernels loaded before); the search goes on only if the time per support, times the number of
#: supports, fits in the time left
SAMPLED = 48
#: most of the time left the sample may take (past it, the projection stands on what was timed)
PROJECTION_SHARE = 0.05
#: seconds between two progress reports of the orthants' refinement and search
REPORT_EVERY = 0.5
#: a support of at most this many pattern pairs (positive times negative patterns) has its open orthants
#: refined at once in the screen's first pass: its flows cost less than keeping them apart (an orthant
#: kept unrefined pays a heap entry and a call of its own, the support's patterns again)
REFINED_AT_ONCE = 10**5


@dataclass
class SearchRates:
    """What the search of the orthants left has done: refinements (an unrefined orthant bounded through all
    its conflicts), how many of them left it below the incumbent (kept, to be searched), searches, and
    the seconds each took (summed over threads)."""

    refinements: int = 0
    refine_seconds: float = 0.0
    kept: int = 0
    searches: int = 0
    search_seconds: float = 0.0

    def rest(self, unrefined: int, refined: int, threads: int = 1) -> float:
        """Wall seconds the orthants left would take on ``threads`` threads at these rates, the incumbent
        unchanged: each unrefined one a refinement, and the share of them kept so far plus the refined ones
        a search each (nan when a rate it needs is not measured yet)."""
        refine = self.refine_seconds / self.refinements if self.refinements else math.nan
        search = self.search_seconds / self.searches if self.searches else math.nan
        kept = self.kept / self.refinements if self.refinements else math.nan
        searched = refined + (unrefined * kept if unrefined else 0.0)
        seconds = (unrefined * refine if unrefined else 0.0) + (searched * search if searched else 0.0)
        return seconds / max(threads, 1)


@dataclass(frozen=True)
class MonotoneSupports:
    """The best model found (None if none beat the start), its objective, the bound (the objective
    when finished, else ``-inf``), whether every orthant was screened or searched, the counts, and,
    stopped by its projection or a time limit, the seconds its work projected (in the screen: the
    screen's projection; in the search of the orthants left: its seconds so far and the rest at its rates,
    :class:`SearchRates`; nan: otherwise)."""

    coef: np.ndarray | None
    intercept: float
    objective: float
    bound: float
    finished: bool
    orthants: int
    searched: int
    seconds: float
    reason: str | None = None
    projected: float = math.nan

    @property
    def message(self) -> str:
        state = "every orthant screened or searched" if self.finished else (self.reason or "stopped at a limit")
        return f"{state}: {self.orthants} orthants, {self.searched} enumerated"


def _orthant_bound(flow, least):
    """An orthant's bound from a flow through its conflicts and ``least``, what every model of it pays
    besides its errors (:meth:`_Search._least`), less :data:`solvers.exact.floor.ROUNDOFF` of it for
    the sums' round-off (module docstring); elementwise on arrays."""
    return (flow + least) * (1.0 - ROUNDOFF)


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
    levels = np.sort(problem.levels[problem.free])[::-1]
    if float(np.prod(levels[:k].astype(float))) >= 2.0 ** 62:
        return f"its {k} most-valued features take over 2^62 value combinations (the patterns' keys)"
    return None


def _head_batches(free: np.ndarray, head: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The batches ``(prefix, tails)`` of a head: the prefixes ``head + (last,)`` in order, each with
    the free features after its last (the supports whose first ``len(head)`` features are the head)."""
    lasts = free[(free > head[-1]) & (free < free[-1])]
    return [(np.append(head, last), free[free > last]) for last in lasts.tolist()]


def _units(free: np.ndarray, k: int):
    """The screen's units of work (module docstring), smallest supports first and in lexicographic
    order within a size: ``[(S, None)]`` for each support of at most two features, then for each size
    ``r >= 3`` and each head of ``r - 2`` free features (sorted) its batches (:func:`_head_batches`)."""
    for r in range(min(k, 2) + 1):
        for S in itertools.combinations(free.tolist(), r):
            yield [(np.array(S, dtype=np.int64), None)]
    for r in range(3, k + 1):
        for head in itertools.combinations(free[:-2].tolist(), r - 2):
            yield _head_batches(free, np.array(head, dtype=np.int64))


@dataclass
class _Support:
    """One support's patterns (with their value ranks); each orthant's conflicts are listed by the
    kernels that bound it (:func:`solvers.exact.orthant_boxes.orthant_flows`), not kept: up to one
    pattern pair each."""

    columns: np.ndarray
    Vp: np.ndarray
    wp: np.ndarray
    Rp: np.ndarray
    Vn: np.ndarray
    wn: np.ndarray
    Rn: np.ndarray

    def _box(self, problem: ZeroOneProgram, plus: int) -> tuple[np.ndarray, np.ndarray, int]:
        """The signs of orthant ``plus``, its largest magnitudes and the margin."""
        sign = np.where((plus >> np.arange(self.columns.size)) & 1 == 1, 1, -1).astype(np.int64)
        up, down = _largest_magnitudes(problem, self.columns)
        return sign, np.where(sign > 0, up, down), int(round(problem.margin))

    def flows(self, problem: ZeroOneProgram, orthants: np.ndarray, target: float) -> np.ndarray:
        """:func:`solvers.exact.orthant_boxes.orthant_flows` of the sign patterns ``orthants``: per
        orthant, the maximum flow through its whole box's conflicts (the margin counts), stopped at
        ``target``."""
        up, down = _largest_magnitudes(problem, self.columns)
        return orthant_flows(self.Vp, self.wp, self.Vn, self.wn, orthants.astype(np.int64), up, down,
                             int(round(problem.margin)), target)

    def search(self, problem: ZeroOneProgram, plus: int, target: float) -> tuple[float, np.ndarray, int]:
        """:func:`solvers.exact.orthant_boxes.orthant_search` on orthant ``plus``, refined (its whole
        box's flow left it below ``target``: not bounded again): ``(objective below target or target,
        points, intercept)``."""
        S = self.columns
        sign, top, margin = self._box(problem, plus)
        b_lo = int(math.ceil(problem.intercept_lo - 1e-9))
        b_hi = int(math.floor(problem.intercept_hi + 1e-9))
        value, points, b, _ = orthant_search(self.Vp, self.wp, self.Vn, self.wn, top, sign, problem.cost[S],
                                              problem.epsilon[S], margin, b_lo, b_hi, target, LEAF, True)
        return value, points, b


def _largest_magnitudes(problem: ZeroOneProgram, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest magnitudes of the points on features ``S``: positive, negative (0 where that sign
    is not allowed)."""
    return (np.maximum(np.floor(problem.hi[S] + 1e-9), 0).astype(np.int64),
            np.maximum(np.floor(-problem.lo[S] + 1e-9), 0).astype(np.int64))


def signs_allowed(problem: ZeroOneProgram, S: np.ndarray) -> np.ndarray:
    """Per sign pattern of ``S`` (bit ``j`` set: ``sigma_j = +1``), whether the points' bounds allow it."""
    bits = (np.arange(2 ** S.size)[:, None] >> np.arange(S.size)[None, :]) & 1
    return np.all(np.where(bits == 1, (problem.hi[S] >= 1)[None, :], (problem.lo[S] <= -1)[None, :]), axis=1)


def _load_kernels() -> None:
    """Call every kernel once on a tiny support, so that loading them from numba's cache (or compiling
    them) is not timed as the search's work."""
    values = np.array([[0, 1, 2], [1, 0, 2], [2, 2, 0], [0, 0, 1]], np.int64)
    ranks, levels = value_ranks(values)
    positive, w = np.array([True, False, True, False]), np.full(4, 0.25)
    slot = np.full(64, -1, np.int64)
    Vp, wp, Rp, Vn, wn, Rn = patterns(np.ascontiguousarray(values.T), np.ascontiguousarray(ranks.T), levels,
                                       np.arange(3), positive, w, slot)
    allowed = np.ones(8, bool)
    ranksT = np.ascontiguousarray(ranks.T)
    near_tails(ranksT, levels, *PrefixOrders(ranksT, levels, positive)(np.arange(2)), np.arange(2), np.array([2]),
               positive, w, slot, allowed[None, :], np.array([0.5]), rank_values(values, ranks, levels),
               np.full(3, 2, np.int64), np.full(3, 2, np.int64), 1)
    orthant_flows(Vp, wp, Vn, wn, np.arange(8), np.full(3, 2, np.int64), np.full(3, 2, np.int64), 1, math.inf)
    orthant_search(Vp, wp, Vn, wn, np.full(3, 2, np.int64), np.ones(3, np.int64), np.zeros(3), np.zeros(3), 1, -9, 9,
                    math.inf, 1, True)


class _Scratch:
    """One thread's scratch: the patterns' numbering slots (:func:`solvers.exact.pattern_groups.group_ids`)
    and the prefix sorts (:class:`solvers.exact.tail_screen.PrefixOrders`), and the seconds it spent
    refining orthants in :meth:`_Search.screen_tails` (the projection times the two passes apart)."""

    def __init__(self, search: "_Search") -> None:
        self.slot = np.full(search.slots, -1, np.int64)
        self.orders = PrefixOrders(search.ranksT, search.levels, search.positive)
        self.refining = 0.0  # seconds this thread spent in the screen's own refinements (the projection's)


class _Search:
    """The orthant search's state: the data as the kernels read them, the incumbent (objective
    without the constant offset), the orthants left by the screen (``(bound, support, signs,
    refined)``, a heap: refined once bounded through all their conflicts) and those being searched
    or refined, the counts, and the lock that guards them when threads share
    the search (module docstring)."""

    def __init__(self, problem: ZeroOneProgram, incumbent: float, start: tuple[np.ndarray, float] | None,
                 max_pairs: float, rules: SupportRules | None = None) -> None:
        self.problem, self.max_pairs, self.rules = problem, max_pairs, rules
        self.k = min(problem.max_size, problem.free.size)
        self.positive = problem.y > 0
        values = np.asarray(problem.X, dtype=np.int64)
        ranks, self.levels = value_ranks(values)
        self.valuesT = np.ascontiguousarray(values.T)
        self.ranksT = np.ascontiguousarray(ranks.T)
        # the near flows' box conflicts: each feature's values by rank, its largest magnitudes, the margin
        self.rank_values = rank_values(values, ranks, self.levels)
        self.up, self.down = _largest_magnitudes(problem, np.arange(problem.d))
        self.margin = int(round(problem.margin))
        # the sign patterns allowed per support size, when every free feature may take either sign
        both = bool(np.all((problem.hi[problem.free] >= 1) & (problem.lo[problem.free] <= -1)))
        self.every_sign = [np.ones(2 ** r, bool) for r in range(self.k + 1)] if both else None
        top = np.prod(np.sort(self.levels)[::-1][:self.k].astype(float))
        self.slots = int(min(top, KEY_SLOTS))
        self.best = incumbent - problem.offset
        self.coef, self.intercept = None, 0.0
        if start is not None:
            self.coef, self.intercept = np.asarray(start[0], dtype=float).copy(), float(start[1])
        self.left: list[tuple[float, tuple[int, ...], int, bool]] = []
        self.flying: dict[int, float] = {}  # bounds of the orthants being searched, by ticket
        self.tickets = itertools.count()
        self.orthants, self.searched, self.screened = 0, 0, 0
        self.rates = SearchRates()  # the search of the orthants left, so far (its projection)
        # prefixes of K - 1 features the projection screened with all their tails (not screened again)
        self.sampled: set[tuple[int, ...]] = set()
        self.lock = threading.Lock()
        self.stopped = False  # a thread's unit failed: the others stop at their next batch
        # the reporter once the screen is over (its bound is then valid), and when it last reported
        self.report: progress.Reporter | None = None
        self.reported = -math.inf
        self.main = _Scratch(self)  # the calling thread's

    def run(self, units, work, threads: int) -> bool:
        """``work(scratch, unit)`` for each of ``units`` (taken in order) on ``threads`` threads
        (:func:`solvers.exact.worker_threads.run_threads`), each with its own :class:`_Scratch` (one
        thread: this one, with :attr:`main`). False once a unit's work returns False (the others stop
        at their next batch, :attr:`stopped`); an error in a thread is raised here."""
        units = iter(units)

        def loop() -> None:
            scratch = self.main if threads <= 1 else _Scratch(self)
            while not self.stopped:
                with self.lock:
                    unit = next(units, None)
                if unit is None:
                    return
                if not work(scratch, unit):
                    self.stopped = True

        def stop() -> None:
            self.stopped = True

        self.stopped = False
        run_threads(loop, threads, stop)
        return not self.stopped

    def support(self, S: np.ndarray, scratch: _Scratch | None = None) -> "_Support | None":
        """The patterns of support ``S`` and their pairs (None if more pairs than ``max_pairs``)."""
        Vp, wp, Rp, Vn, wn, Rn = patterns(self.valuesT, self.ranksT, self.levels, S, self.positive,
                                           self.problem.weights, (scratch or self.main).slot)
        if float(wp.size) * float(wn.size) > self.max_pairs:
            return None
        return _Support(S, Vp, wp, Rp, Vn, wn, Rn)

    def _allowed(self, S: np.ndarray) -> np.ndarray:
        """The sign patterns of ``S``'s orthants its box allows (none if ``S`` breaks a rule)."""
        if self.rules is not None and not self.rules.feasible(S[None, :])[0]:
            return np.zeros(2 ** S.size, bool)
        return signs_allowed(self.problem, S) if self.every_sign is None else self.every_sign[S.size]

    def _least(self, S: np.ndarray) -> float:
        """What every model of an orthant of ``S`` pays besides its errors: the L0 costs of ``S`` and
        the tie-breaker at magnitude 1."""
        return float(self.problem.cost[S].sum() + self.problem.epsilon[S].sum())

    def screen(self, S: np.ndarray, scratch: _Scratch | None = None) -> bool:
        """Bound every orthant of support ``S`` of at most two features (module docstring: no near
        flows) and keep those below the incumbent with their bounds; False if ``S`` has more pattern
        pairs than ``max_pairs``."""
        allowed = self._allowed(S)
        with self.lock:
            self.orthants += int(allowed.sum())
        return self._bound(S, allowed, self._least(S), scratch or self.main)

    def screen_tails(self, prefix: np.ndarray, tails: np.ndarray, scratch: _Scratch | None = None,
                     limits: Limits | None = None, refine: bool = False) -> bool:
        """:meth:`screen` for the supports ``prefix + (e,)``, ``e`` in ``tails`` (of three or more
        features): their near flows, all from the rows sorted once by the prefix
        (:func:`solvers.exact.tail_screen.near_tails`); the orthants they leave open are kept with
        those bounds, unrefined (the screen's first pass; :meth:`search_left` refines them, lowest
        first), or, with ``refine`` or on a support of at most :data:`REFINED_AT_ONCE` pattern pairs,
        bounded at once through all their conflicts (:meth:`_bound`).
        False at a support of more pattern pairs than ``max_pairs``, or when ``limits`` expire
        before every tail is bounded."""
        problem, scratch = self.problem, scratch or self.main
        if self.every_sign is None:
            allowed = np.array([signs_allowed(problem, np.append(prefix, e)) for e in tails.tolist()])
        else:
            allowed = np.ones((tails.size, 2 ** (prefix.size + 1)), bool)
        if self.rules is not None:  # (every tail at once)
            allowed &= self.rules.feasible(np.column_stack((np.tile(prefix, (tails.size, 1)), tails)))[:, None]
        # what every model pays besides its errors (:meth:`_least`), per support
        least = (problem.cost[prefix].sum() + problem.epsilon[prefix].sum()) + (problem.cost[tails] + problem.epsilon[tails])
        with self.lock:
            self.orthants += int(allowed.sum())
        best = self.best
        near, pairs = near_tails(self.ranksT, self.levels, *scratch.orders(prefix), prefix, tails, self.positive,
                                 problem.weights, scratch.slot, allowed, best - least, self.rank_values, self.up,
                                 self.down, self.margin)
        if float(pairs.max(initial=0.0)) > self.max_pairs:
            return False
        bounds = _orthant_bound(near, least[:, None])
        open_ = allowed & (bounds < best)
        at_once = open_.any(axis=1) & (refine | (pairs <= REFINED_AT_ONCE))
        lazy = open_ & ~at_once[:, None]
        if lazy.any():
            head = tuple(prefix.tolist())
            with self.lock:
                for t in np.flatnonzero(lazy.any(axis=1)).tolist():
                    support = head + (int(tails[t]),)
                    for plus in np.flatnonzero(lazy[t]).tolist():
                        if bounds[t, plus] < self.best:
                            heapq.heappush(self.left, (float(bounds[t, plus]), support, plus, False))
        began = time.perf_counter()
        try:
            for t in np.flatnonzero(at_once):
                if (limits is not None and limits.expired()) or not self._bound(np.append(prefix, tails[t]), open_[t],
                                                                                  float(least[t]), scratch):
                    return False
            return True
        finally:
            scratch.refining += time.perf_counter() - began

    def _bound(self, S: np.ndarray, allowed: np.ndarray, least: float, scratch: _Scratch) -> bool:
        """The orthants ``allowed`` of ``S`` (every model of them pays ``least`` besides its errors,
        :meth:`_least`), each through all the conflicts of its whole box of magnitudes (the margin
        counts): a maximum flow, stopped at the incumbent, kept in the heap if still below. False if
        ``S`` has more pattern pairs than ``max_pairs``."""
        found = self.support(S, scratch)
        if found is None:
            return False
        orthants = np.flatnonzero(allowed)
        for plus, flow in zip(orthants.tolist(), found.flows(self.problem, orthants, self.best - least).tolist()):
            self._keep(S, plus, _orthant_bound(flow, least))
        return True

    def _keep(self, S: np.ndarray, plus: int, bound: float) -> None:
        """Keep orthant ``(S, plus)``, refined, in the heap if its bound is below the incumbent."""
        with self.lock:
            if bound < self.best:
                heapq.heappush(self.left, (bound, tuple(S.tolist()), plus, True))

    def screen_unit(self, scratch: _Scratch, unit: list, limits: Limits) -> bool:
        """Screen a unit's batches (:func:`_units`; the prefixes the projection screened skipped), and
        search the lowest orthant left each time the supports screened pass a multiple of
        :data:`SEARCH_EVERY` (all of them while more than :data:`MAX_LEFT` are left). False at a limit,
        at a support of more than ``max_pairs`` pattern pairs, or once another thread stopped."""
        for support, tails in unit:
            if tails is not None and tuple(support.tolist()) in self.sampled:
                continue
            if self.stopped or limits.expired():
                return False
            if not (self.screen(support, scratch) if tails is None else self.screen_tails(support, tails, scratch, limits)):
                return False
            with self.lock:
                before = self.screened
                self.screened += 1 if tails is None else tails.size
                most = math.inf if len(self.left) > MAX_LEFT else 1 if before // SEARCH_EVERY < self.screened // SEARCH_EVERY else 0
            if most and not self.search_left(limits, most, scratch):
                return False
        return True

    def search_left(self, limits: Limits, most: float = math.inf, scratch: _Scratch | None = None) -> bool:
        """Take the orthants left, lowest bound first, until the lowest reaches the incumbent (True),
        ``most`` are taken (True), a limit (False) or a support of more than ``max_pairs`` pattern
        pairs (False): one the screen kept unrefined is bounded through all its conflicts
        (:meth:`_Support.flows`) and kept again if still below the incumbent; a refined one is
        searched, and a better model found prunes those whose bound it undercuts. Threads may take
        orthants at once (each the lowest left); one being taken still counts in :attr:`bound`."""
        problem, scratch = self.problem, scratch or self.main
        while True:
            with self.lock:
                if not self.left or self.left[0][0] >= self.best:
                    self.left.clear()  # every bound left is at least the incumbent
                    return True
                if most <= 0:
                    return True
                if limits.expired():
                    return False
                most -= 1
                bound, support, plus, refined = heapq.heappop(self.left)
                ticket = next(self.tickets)
                self.flying[ticket] = bound
            began = time.perf_counter()
            S = np.array(support, dtype=np.int64)
            found = self.support(S, scratch)
            if found is None:
                with self.lock:
                    del self.flying[ticket]
                    heapq.heappush(self.left, (bound, support, plus, refined))
                return False
            if not refined:
                least = self._least(S)
                flow = float(found.flows(problem, np.array([plus]), self.best - least)[0])
                refined_bound = max(bound, _orthant_bound(flow, least))
                with self.lock:  # back in the heap as it leaves the flying ones: always counted in the bound
                    del self.flying[ticket]
                    self.rates.refinements += 1
                    self.rates.refine_seconds += time.perf_counter() - began
                    if refined_bound < self.best:
                        heapq.heappush(self.left, (refined_bound, support, plus, True))
                        self.rates.kept += 1
                self._report(limits)
                continue
            value, points, b = found.search(problem, plus, self.best)
            with self.lock:
                del self.flying[ticket]
                self.searched += 1
                self.rates.searches += 1
                self.rates.search_seconds += time.perf_counter() - began
                if value < self.best:
                    self.best = value
                    self.coef = np.zeros(problem.d)
                    self.coef[S] = points
                    self.intercept = float(b)
            self._report(limits)

    def _report(self, limits: Limits) -> None:
        """Report the incumbent and :attr:`bound` to :attr:`report`, at most every
        :data:`REPORT_EVERY` seconds (from any thread: the reporter was taken from the caller's)."""
        now = time.perf_counter()
        if self.report is None or now - self.reported < REPORT_EVERY:
            return
        self.reported = now
        offset = self.problem.offset
        self.report(limits.elapsed(), self.best + offset, self.bound + offset, math.nan)

    def rest(self, threads: int) -> float:
        """Wall seconds the orthants left (those being searched among them) would take, at the rates of the
        search so far (:meth:`SearchRates.rest`)."""
        with self.lock:
            unrefined = sum(1 for *_, refined in self.left if not refined)
            return self.rates.rest(unrefined, len(self.left) - unrefined + len(self.flying), threads)

    @property
    def bound(self) -> float:
        """A lower bound on every orthant screened: the incumbent, or the least bound left below it
        (of those in the heap and those being searched)."""
        with self.lock:
            return min([self.best, *(self.left[0][:1] if self.left else ()), *self.flying.values()])

    def projected(self, limits: Limits, threads: int = 1, seed: int = 0) -> tuple[float, float]:
        """Seconds the screen would take on ``threads`` threads, with its refinements and without
        (its first pass). :data:`SAMPLED` heads of ``K - 2``
        features are drawn with chance proportional to their supports (:meth:`_sampled_head`, with
        repeats; supports of ``K`` random features when ``K < 3``) and each head drawn is screened
        with all its prefixes and tails (:meth:`screen_tails`, one sort per head as in the screen),
        in random order, until the sample has taken :data:`PROJECTION_SHARE` of the time left:
        screened for good (the orthants they leave are kept, and the screen skips them). The mean
        over the draws (repeats counted) of a head's seconds per support estimates the mean over all
        supports of ``K`` features without bias (Hansen-Hurwitz: the draws are proportional to size;
        the sample's seconds over its supports would favour the heavy heads, drawn almost surely, and
        overstated the screen threefold on 15 columns); times their number, times the sample's wall
        seconds per thread-second (the threads' overlap). The first pass's: the same, without the
        seconds the sample spent refining its orthants. The smaller supports, far cheaper (more
        conflicts per pair of columns, no near flows), are not counted."""
        free = self.problem.free
        if sum(math.comb(free.size, r) for r in range(self.k + 1)) <= 4 * SAMPLED or self.k == 0:
            return 0.0, 0.0
        rng = np.random.default_rng(seed)
        _load_kernels()
        if self.k < 3:
            draws = [tuple(np.sort(rng.choice(free, self.k, replace=False)).tolist()) for _ in range(SAMPLED)]
        else:
            draws = [tuple(self._sampled_head(rng).tolist()) for _ in range(SAMPLED)]
        distinct = sorted(set(draws))
        keys = [distinct[i] for i in rng.permutation(len(distinct))]
        t0, cap = time.perf_counter(), PROJECTION_SHARE * limits.seconds_left()
        # per head drawn: seconds, of which refining, supports screened
        cost: dict[tuple[int, ...], tuple[float, float, int]] = {}
        state = {"screened": 0}

        def work(scratch: _Scratch, key: tuple[int, ...]) -> bool:
            began, screened, refining = time.perf_counter(), 0, scratch.refining
            unit = [(np.array(key, np.int64), None)] if self.k < 3 else _head_batches(free, np.array(key, np.int64))
            for support, tails in unit:
                if state["screened"] and time.perf_counter() - t0 > cap:  # enough to tell that it will not fit
                    break
                if not (self.screen(support, scratch) if tails is None
                        else self.screen_tails(support, tails, scratch, limits, refine=True)):
                    return False
                with self.lock:
                    screened += 1 if tails is None else tails.size
                    state["screened"] += 1 if tails is None else tails.size
                    if tails is not None:
                        self.sampled.add(tuple(support.tolist()))
            if screened:
                with self.lock:
                    cost[key] = (time.perf_counter() - began, scratch.refining - refining, screened)
            return True

        if not self.run(keys, work, threads):
            return math.inf, math.inf
        wall = time.perf_counter() - t0
        busy = sum(seconds for seconds, _, _ in cost.values())
        scale = math.comb(free.size, self.k) * wall / max(busy, 1e-9)
        whole = float(np.mean([cost[key][0] / cost[key][2] for key in draws if key in cost]))
        first = float(np.mean([(cost[key][0] - cost[key][1]) / cost[key][2] for key in draws if key in cost]))
        return whole * scale, first * scale

    def _sampled_head(self, rng: np.random.Generator) -> np.ndarray:
        """A head of ``K - 2`` free features drawn with chance proportional to its supports (those
        whose first ``K - 2`` features it is): its last feature, the ``i``-th, with weight
        ``C(i, K - 3) C(f - 1 - i, 2)`` (``f`` free features), the others at random before it."""
        free = self.problem.free
        f, before = free.size, self.k - 3
        weight = np.array([math.comb(i, before) * math.comb(f - 1 - i, 2) for i in range(f)], float)
        i = int(rng.choice(f, p=weight / weight.sum()))
        return np.sort(np.append(rng.choice(free[:i], before, replace=False), free[i])).astype(np.int64)

    def result(self, finished: bool, bound: float, seconds: float, message: str | None = None,
               projected: float = math.nan) -> MonotoneSupports:
        offset = self.problem.offset
        return MonotoneSupports(self.coef, self.intercept, self.best + offset, bound + offset, finished,
                                self.orthants, self.searched, seconds, message, projected)


def fewest_values_first(problem: ZeroOneProgram) -> np.ndarray:
    """The order the search takes the columns in: the free features by their number of distinct
    values, fewest first (ties by index), then the others. A support's first ``K - 2`` features
    are then its fewest-valued ones, so the blocks of rows equal on them (the sweep's, and the near
    flows' first grouping, :mod:`solvers.exact.tail_screen`) are as large as they can be, and so are
    their flows."""
    free = problem.free
    rest = np.setdiff1d(np.arange(problem.d), free)
    return np.concatenate((free[np.argsort(problem.levels[free], kind="stable")], rest)).astype(np.int64)


def monotone_supports(problem: ZeroOneProgram, limits: Limits, incumbent: float = math.inf,
                      start: tuple[np.ndarray, float] | None = None, max_pairs: float = math.inf,
                      slack: float = 1.0, threads: int = 1, partial: bool = False,
                      rules: SupportRules | None = None) -> MonotoneSupports:
    """The optimum of ``problem`` by screened orthants (module docstring), pruning at ``incumbent``
    (and at the objective of ``start``'s model, which it returns if nothing beats it), on ``threads``
    threads of this process. It first times the screen on a sample of supports
    (:meth:`_Search.projected`) and stops there, unfinished, when the whole screen projects over
    ``slack`` times the time left, unless ``partial`` and its first pass projects within the time
    left (then its bound, once the first pass ends, is finite and rises as the orthants left are
    refined); it stops unfinished at a support of more than ``max_pairs`` pattern pairs (its
    memory). Stopped in the refinement or the search of the orthants the first pass left, it
    returns the least bound among them. ``rules`` (:class:`formulations.support_rules.SupportRules`, in
    ``problem``'s columns): only the supports that obey them are screened (every size is listed, so
    every model that obeys them lies in one); ``start`` must obey them. The columns are searched in
    :func:`fewest_values_first` order; the model returned is in ``problem``'s."""
    order = fewest_values_first(problem)
    if start is not None:
        start = (np.asarray(start[0], dtype=float)[order], start[1])
    rules = None if rules is None else rules.columns_in(order)
    found = _monotone_supports(problem.columns_in(order), limits, incumbent, start, max_pairs, slack, threads,
                               partial, rules)
    if found.coef is None:
        return found
    coef = np.zeros(problem.d)
    coef[order] = found.coef
    return replace(found, coef=coef)


def _monotone_supports(problem: ZeroOneProgram, limits: Limits, incumbent: float,
                       start: tuple[np.ndarray, float] | None, max_pairs: float, slack: float, threads: int,
                       partial: bool, rules: SupportRules | None) -> MonotoneSupports:
    """:func:`monotone_supports` on ``problem``'s columns as they are."""
    t0 = time.perf_counter()
    search = _Search(problem, incumbent, start, max_pairs, rules)
    projected, first = search.projected(limits, threads)
    left = limits.seconds_left()
    if projected > slack * left and not (partial and first <= left):
        return search.result(False, -math.inf, time.perf_counter() - t0,
                             f"not finished: its screen would take about {projected:.3g} s, its first pass "
                             f"{first:.3g} s (timed on a sample)", projected)
    if not search.run(_units(problem.free, search.k), lambda scratch, unit: search.screen_unit(scratch, unit, limits),
                      threads):  # (the projection, when a time limit stopped it short of it; nan at a memory stop)
        seconds = time.perf_counter() - t0
        return search.result(False, -math.inf, seconds,
                             projected=projected if limits.expired() and projected > seconds else math.nan)
    search.report = progress.current()
    if not search.run(range(max(threads, 1)), lambda scratch, _: search.search_left(limits, scratch=scratch), threads):
        seconds = time.perf_counter() - t0
        return search.result(False, search.bound, seconds,
                             "screened; stopped in the refinement and search of the orthants left (bound: the "
                             "least left)", seconds + search.rest(threads) if limits.expired() else math.nan)
    return search.result(True, search.best, time.perf_counter() - t0)
