"""Exact sparse models on 0/1 features: every support screened on blocked rows, survivors searched.

Two kinds: RiskSLIM's (:class:`solvers.exact.sparse_logistic.SparseLogistic`, the saturated loss as the
screen, below) and SLIM's (:class:`solvers.exact.zero_one_supports.ZeroOneProgram`, Ustun & Rudin
2016): a SLIM model whose support lies in ``S`` has weighted 0-1 error at least the Bayes error ``E(S)``
of ``S`` (rows that agree on ``S`` are scored alike), and every model lies in some ``S`` of exactly
``max_size`` features, so the same screen with Bayes errors in place of entropies
(:data:`solvers.exact.blocked_entropy.BAYES`) rules out the supports with ``E(S)`` at the prune level;
a survivor's bound is ``E(S)`` (the L0 costs of a model inside ``S`` are those of the features it
uses, at least 0) and its search is the SLIM MILP restricted to ``S`` (HiGHS,
:meth:`ZeroOneProgram.search`).

The RiskSLIM program without operational constraints (Ustun & Rudin 2019, eq. 1; the problem of
:class:`solvers.exact.sparse_logistic.SparseLogistic`) has every solution inside some support of exactly
``K = max_size`` features. On 0/1 features almost every support of a wide table is ruled out by its
saturated loss alone (the conditional entropy of the label given the support's values, a bound for
every model on it): this step bounds them all with :func:`solvers.exact.blocked_entropy.screen_pair`,
one call per pair ``(a, b)`` of first columns, which lists the supports itself and splits the
prefixes' patterns by the last column on rows blocked by ``(a, b)`` (popcounts over a quarter of the
words). Then, as in :func:`solvers.exact.supports.enumerate_supports`:

1. every support the screen leaves (its saturated loss below the incumbent's prune level) gets the
   box-constrained fit's certified bound (:func:`solvers.exact.box_logistic.binary_support_bounds`);
2. those still below the level are searched in increasing bound (branch and bound on the integer
   box, :meth:`SparseLogistic.search`), each improving the incumbent and so the level;
3. the bound is the least of the incumbent, the pruned supports' bounds and the open ones' bounds.

The screen is shared by the fits of one call (``limits.screen``, :class:`solvers.exact.screen.SupportScreen`;
RiskSLIM's multipliers, :mod:`solvers.multipliers`): the saturated loss depends on the rows, labels and
weights only, not on the multiplier, the coefficient box or the intercept box, and the objective is
``loss + L0 cost`` in the same units for every multiplier, so a support it pruned at level ``L`` holds
no model of objective below ``L`` for any of them. A later fit whose prune level is at most ``L``
skips the screen, starts from the survivors and counts ``L`` as the bound of the rest.

On a binarised table (chains of nested thresholds) the screen may list supports of *groups* of
nested columns instead (:mod:`solvers.exact.group_screen`; :func:`solvers.exact.blocked_pass.plain_branch`
decides): a support of groups bounds every column support inside it, and only the column supports
of the group supports left are screened one by one; what the pass returns is the same (the column
supports whose own sums are below the cutoff).

On a wide binarised table many supports need not be listed at all: when the relaxation without every
threshold of a few variables (chains of nested columns) is bounded above the prune level, every better
model holds one of those columns, and within the supports whose first such column is a given one, a
second set again (RiskSLIM's kind; :mod:`solvers.exact.exclusion_listing`); only those supports are
screened (column by column), unless every support of groups is less work to screen. Such a screen is shared with
a later multiplier when the exclusion bounds behind it hold for that multiplier's models too
(:func:`solvers.exact.exclusion_listing.carries_over`: a larger multiplier, ranges holding 0, derived
intercept boxes), else only when the same sets are ruled in at that multiplier's own level and give the
same branches (its own exclusion bounds cover the supports left out).

The prune level is the start incumbent's, fixed while screening (the screen's cutoff). The pairs are
screened in a fixed spread order (a seeded permutation), so the rate of the first ones projects the
whole pass; when it projects more than :data:`SLIM_PROJECTION_SHARE` of the time left, SLIM's kind
stops with no bound and the route's next step gets the time, and past
:data:`solvers.exact.blocked_pass.PROJECTION_SHARE` of it RiskSLIM's screens
one group at a time instead (:mod:`solvers.exact.ordered_screen`: a bound from the start, rising as the
strongest variables are done; it stops in turn when a group's projection does not fit). With ``n_jobs`` > 1 the
pairs are screened on that many threads (:mod:`solvers.exact.blocked_pass`). The result depends
neither on the order nor on the threads.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

import numpy as np

from formulations.rows import is_binary
from formulations.support_rules import SupportRules
from solvers import progress
from solvers.exact.bayes_error import bayes_errors, value_bits
from solvers.exact.blocked_entropy import BAYES, FASTEST, xlogx_table
from solvers.exact.blocked_pass import MAX_KEPT, PROJECTION_SHARE, GroupBranch, plain_branch, screen_pairs
from solvers.exact.box_logistic import _popcount, copy_counts, label_bits
from solvers.exact.exclusion_listing import carries_over, exclusion_branches
from solvers.exact.floor import SparseBox
from solvers.exact.ordered_screen import PARTS, RestFloor, branch_parts, group_order, ordered_branches
from solvers.exact.screen import SupportScreen
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.support_search import Search
from solvers.exact.supports import Enumeration
from solvers.limits import Limits, job_threads

#: largest support size screened (a prefix has ``2^(size - 1)`` patterns)
MAX_SIZE = 10
#: survivors bounded by one call of the box fits
FIT_CHUNK = 4096
#: the screen one group at a time: seconds the hull floor without the groups done may take per second
#: of the branch it follows
FLOOR_SECONDS_PER_SCREEN = 0.2
#: the screen one group at a time: the floors get all of :data:`FLOOR_SECONDS_PER_SCREEN` once the supports
#: left project past this many times the time left at the pass's rate so far, none while they project
#: within it, in proportion between (:meth:`_OrderedState.floor_share`; the rate of the first branches,
#: the strongest groups', mostly overstates the rest's time)
FLOOR_FULL_PROJECTION = 1.5
#: the screen one group at a time: a branch projected past this share of the time left is screened in
#: parts (so that the bound rises while it runs)
WHOLE_BRANCH_SHARE = 0.25
#: SLIM's pass goes on while its projection stays within this share of the time left (RiskSLIM's, which
#: the one-group-at-a-time pass follows, within :data:`~solvers.exact.blocked_pass.PROJECTION_SHARE`):
#: SLIM's next bound on a wide 0/1 table, the sign-cover LP's, is far below the optimum, so a pass that
#: projects to fit runs, the rest of the time left for its survivors' searches
SLIM_PROJECTION_SHARE = 0.97


def applies(problem: SparseLogistic, rules: SupportRules | None = None) -> str | None:
    """Why the step cannot take ``problem`` under ``rules`` (None: it can; the rules must leave every model
    that obeys them in a support of ``max_size`` that does: :meth:`formulations.support_rules.SupportRules.
    screen_reason`)."""
    if problem.forced.any():
        return "some features are forced (the support enumeration handles them)"
    if problem.max_size < 2 or problem.free.size < problem.max_size:
        return "fewer than 2 features per support, or fewer free features than that (nothing to screen)"
    if problem.max_size > MAX_SIZE:
        return f"supports of more than {MAX_SIZE} features (2^(size - 1) patterns per prefix)"
    X, y, weights = (problem.data.X, problem.data.y, problem.data.weights) if isinstance(problem, SparseLogistic) \
        else (problem.X, problem.y, problem.weights)
    positive = y > 0
    if not is_binary(X) or not positive.any() or positive.all() or \
            copy_counts(weights[positive]) is None or copy_counts(weights[~positive]) is None:
        return "the features are not all 0/1, a label is absent, or a label's weights have no common unit"
    return None if rules is None else rules.screen_reason(problem.free, problem.max_size)


@dataclass(frozen=True)
class BlockedListing:
    """The supports the screen lists, as :class:`solvers.exact.screen.SupportScreen` keys them: every
    support of ``r`` of the ``free`` features (in that order, none forced, no symmetry skipped) whose
    one of ``branches`` lists (``(columns, pairs)`` bytes of each :class:`solvers.exact.blocked_pass.Branch`;
    empty: every support), and the sets of features ``ruled_in`` that made those branches
    (:func:`solvers.exact.exclusion_listing.exclusion_branches`)."""

    forced: np.ndarray
    free: np.ndarray
    r: int
    branches: tuple = ()
    ruled_in: tuple[np.ndarray, ...] = ()


def _label(bits: np.ndarray, valid: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, int]:
    return np.ascontiguousarray(bits[free]), int(sum(_popcount(v) for v in valid))


def _earlier_screen(screen: SupportScreen, problem: SparseLogistic, level: float) -> tuple[np.ndarray, str] | None:
    """The survivors of an earlier fit's screen that serves ``problem`` at ``level`` (of every support, or
    of its exclusion branches when their bounds carry over), and how; None when none does."""
    plain = BlockedListing(np.zeros(0, np.int64), problem.free, problem.max_size)
    carried = screen.listing if isinstance(screen.listing, BlockedListing) and screen.listing.branches and \
        carries_over(*screen.source, problem) else None
    for listing, how in ((plain, ""), (carried, " and its exclusion bounds")):
        known = None if listing is None else screen.survivors(problem, listing, level)
        if known is not None:
            return known, how
    return None


def _screen_bits(X: np.ndarray, y: np.ndarray, weights: np.ndarray, free: np.ndarray, logistic: bool):
    """The screen's bit sets of the ``free`` columns, ``(bits_pos, n_pos, unit_pos, bits_neg, n_neg,
    unit_neg)``, and its table of cell sums (``c log c`` for RiskSLIM's kind, Bayes errors for SLIM's)."""
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(X, y > 0, weights)
    bits_pos, n_pos = _label(bits_pos, valid_pos, free)
    bits_neg, n_neg = _label(bits_neg, valid_neg, free)
    table = xlogx_table(n_pos, n_neg, unit_pos, unit_neg) if logistic else BAYES
    return (bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg), table


def _stopped(search: Search, reason: str, projected: float = math.nan) -> Enumeration:
    """The step's result when it stops before its bound: its incumbent, no bound, ``reason``, and the
    seconds its work projected from its start (nan: not known)."""
    return Enumeration(search.model, search.incumbent, -math.inf, False, search.nodes, f"stopped: {reason}",
                       projected=projected)


def solve_blocked(problem: SparseLogistic, limits: Limits, *, start: tuple[np.ndarray, float] | None = None,
                  incumbent: float = math.inf, point: tuple[np.ndarray, float] | None = None,
                  ordered: bool = False, rules: SupportRules | None = None) -> Enumeration:
    """Solve ``problem`` (which :func:`applies`) from the model ``start`` of objective ``incumbent``
    (module docstring) within the budget ``limits`` (time, node limit, gap; started here if not yet).
    RiskSLIM's kind screens one group at a time (:mod:`solvers.exact.ordered_screen`, its groups ordered
    and its hull floors started at ``point``, e.g. the continuous fit; default 0) when every support
    would not fit the time left, or when ``ordered``. ``rules``: :func:`_after_screen`."""
    t0 = time.perf_counter()
    limits = limits.started()
    search = Search(problem.d, incumbent, None if start is None else (np.asarray(start[0], float).copy(),
                                                                       float(start[1])), limits.mip_rel_gap)

    level = search.prune_level()
    if not math.isfinite(level):
        return _stopped(search, "no incumbent to screen against")
    logistic = isinstance(problem, SparseLogistic)
    X, y, weights = (problem.data.X, problem.data.y, problem.data.weights) if logistic else \
        (problem.X, problem.y, problem.weights)
    size = problem.max_size
    screen: SupportScreen | None = limits.screen if logistic else None
    free = problem.free

    def reused(known: np.ndarray, how: str) -> Enumeration:  # an earlier fit's screen: the rest hold no model
        search.close_relaxed(screen.level)  # below its level
        total = math.comb(free.size, size)
        return _after_screen(problem, search, known, level, known.shape[0], t0, limits, logistic, X, y, weights,
                             f"{total - known.shape[0]} of the {total} supports of {size} features ruled out by "
                             f"an earlier fit's screen at {screen.level:.6g}{how}", rules)

    earlier = None if screen is None else _earlier_screen(screen, problem, level)
    if earlier is not None:
        return reused(*earlier)
    every = plain_branch(X[:, free], size)
    branches, ruled, ruled_in = [every], (), ()
    if logistic:
        branches, ruled, ruled_in = exclusion_branches(problem, level, limits, screen.ruled_in if screen else (), every)
    if ruled:
        search.close_relaxed(ruled[1])
    bits, table = _screen_bits(X, y, weights, free, logistic)
    # a support's bound in objective units from its sum (loss units; SLIM's errors: weight units); the pass's share
    scale, share = (problem.loss_cost, PROJECTION_SHARE) if logistic else (1.0, SLIM_PROJECTION_SHARE)
    cutoff = (level - problem.offset) / scale
    total = sum(branch.count(size) for branch in branches)
    listing = BlockedListing(np.zeros(0, np.int64), free, size,
                             tuple((b.columns.tobytes(), b.pairs.tobytes()) for b in branches) if ruled else (), ruled_in)
    known = None if screen is None else screen.survivors(problem, listing, level)
    if known is not None:  # (the same sets ruled in again here)
        return reused(known, " and exclusion bounds")
    threads = job_threads(limits.n_jobs)

    def one_group_at_a_time(why: str) -> Enumeration:
        return _ordered(problem, search, bits, table, every, limits, threads, point, t0, why, rules)

    if ordered and logistic:
        return one_group_at_a_time("asked")
    if total * FASTEST > limits.seconds_left():
        why = (f"screening the {total} supports of {size} features would take more than the "
               f"{max(limits.seconds_left(), 0.0):.0f} s left, even at {FASTEST * 1e9:.0f} ns each")
        return one_group_at_a_time(why) if logistic else \
            _stopped(search, why, time.perf_counter() - t0 + total * FASTEST)
    started = time.perf_counter()
    found = screen_pairs(bits, table, branches, size, cutoff, limits, threads, share)
    if found.stopped is not None:
        return one_group_at_a_time(found.stopped) if logistic and found.too_long else \
            _stopped(search, found.stopped, started - t0 + found.projected)
    screened = time.perf_counter() - started
    search.close_relaxed(scale * found.pruned + problem.offset)
    held = found.survivors.shape[0]
    survivors = free[found.survivors]
    if screen is not None:
        screen.store(problem, listing, level, survivors)
    return _after_screen(problem, search, survivors, level, held, t0, limits, logistic, X, y, weights,
                         (f"{found.listed} supports of {size} groups of nested columns (for the "
                          f"{math.comb(free.size, size)} of {size} features)" if isinstance(branches[0], GroupBranch)
                          else f"{found.listed} supports of {size} features")
                         + f" screened on blocked rows in {screened:.2f} s"
                         + (f" on {threads} threads" if threads > 1 else "")
                         + (f" ({ruled[0]})" if ruled else ""), rules)


def _after_screen(problem, search: Search, survivors: np.ndarray, level: float, held: int, t0: float, limits: Limits,
                  logistic: bool, X, y, weights, said: str, rules: SupportRules | None = None) -> Enumeration:
    """Bound the supports the screen left (``survivors``, feature indices) and search those below the
    prune level within ``limits`` (module docstring, steps 1-3). With ``rules`` (:class:`formulations.
    support_rules.SupportRules` whose ``screen_reason`` is None: the instance's constraints, their signs
    folded into the box) the survivors that break them are dropped first: every model that obeys them lies
    in a support of ``max_size`` that does, so the result is the constrained program's."""
    node_limit = limits.node_limit
    if rules is not None:
        survivors = survivors[rules.feasible(survivors)]
    if logistic:
        bound = problem.bounder()
    else:  # E(S) alone: the L0 costs of a model inside S are those of the features it uses
        bits = value_bits(X, y > 0, weights)

        def bound(chunk: np.ndarray, level: float) -> tuple[np.ndarray, None]:
            return bayes_errors(*bits, chunk, level - problem.offset) + problem.offset, None
    bounds = np.zeros(0)
    for i in range(0, survivors.shape[0], FIT_CHUNK):
        if limits.expired():
            return _stopped(search, f"fitted {i} of the {survivors.shape[0]} supports the screen left by the deadline")
        b, _ = bound(survivors[i:i + FIT_CHUNK], level)
        bounds = np.append(bounds, b)
    low = bounds < level
    search.closed_floor = min(search.closed_floor, float(bounds[~low].min(initial=math.inf)))
    search.relaxed_floor = min(search.relaxed_floor, float(bounds.min(initial=math.inf)))  # (the searched too)
    survivors, bounds = survivors[low], bounds[low]
    report = progress.current()
    if report is not None:
        report(time.perf_counter() - t0, search.incumbent,
               min(search.incumbent, search.closed_floor, float(bounds.min(initial=math.inf))), math.nan)
    order = np.argsort(bounds, kind="stable")
    open_floor, visited = math.inf, 0
    for position, s in enumerate(order):
        if bounds[s] >= search.prune_level():
            search.closed_floor = min(search.closed_floor, float(bounds[s]))
            break
        if limits.expired() or (node_limit is not None and search.nodes >= node_limit):
            open_floor = float(bounds[s])
            break
        unfinished = problem.search(survivors[s], float(bounds[s]), search, limits)
        visited += 1
        if math.isfinite(unfinished):
            rest = bounds[order[position + 1:]]
            open_floor = min(unfinished, float(rest.min()) if rest.size else math.inf)
            break
        if report is not None:
            following = float(bounds[order[position + 1]]) if position + 1 < order.size else math.inf
            report(time.perf_counter() - t0, search.incumbent, min(search.incumbent, search.closed_floor, following),
                   math.nan)
    lower = min(search.incumbent, search.closed_floor, open_floor)
    said = (f"{said}, {held} passed the {'saturated-loss' if logistic else 'Bayes-error'} screen, {int(low.sum())} "
            f"below the incumbent after {'their box fits' if logistic else 'it'}, {visited} searched, "
            f"{search.nodes} nodes")
    return Enumeration(search.model, search.incumbent, lower, not math.isfinite(open_floor), search.nodes, said,
                       search.relaxed())


def _ordered(problem: SparseLogistic, search: Search, bits, table, every, limits: Limits, threads: int,
             point: tuple[np.ndarray, float] | None, t0: float, why: str, rules: SupportRules | None) -> Enumeration:
    """The screen one group at a time (:mod:`solvers.exact.ordered_screen`), for RiskSLIM's kind when
    every support at once would not fit (``why``): the groups ordered at ``point``, then branch after
    branch the screen, the survivors' fits and searches (:func:`_after_screen`) and the hull floor
    without the groups done (from ``point``, then warm; for a share of its time that is 0 while the
    supports left project within the time left at the pass's rate, since a floor bounds only a pass that
    stops, :meth:`_OrderedState.floor_share`), until every branch is done or a limit (or a branch's
    projection) stops it; a branch projected past :data:`WHOLE_BRANCH_SHARE` of the time left is screened
    again in parts (:func:`_in_parts`). The bound is the least of the listed supports' and those floors (a
    branch stopped midway is under them: its supports avoid the groups done before it).
    A whole pass is kept for the later fits of the call (``limits.screen``) at the least level its
    branches screened at, unless its survivors outnumber what one pass may hold
    (:data:`~solvers.exact.blocked_pass.MAX_KEPT`)."""
    size, free = problem.max_size, problem.free
    d = problem.lo.size
    scale, offset = problem.loss_cost, problem.offset
    box = SparseBox(problem.lo, problem.hi, problem.forced, size - int(problem.forced.sum()), problem.intercept_lo,
                    problem.intercept_hi, problem.cost / scale)
    start = (np.zeros(d), 0.0) if point is None else point
    rest = RestFloor(problem.data, box, start)
    groups = group_order(problem.data.X[:, free], every, np.asarray(start[0])[free])
    branches = ordered_branches(groups, size, isinstance(every, GroupBranch))
    state = _OrderedState(problem, search, bits, table, limits, threads, t0, rules)
    state.total = sum(branch.count(size) for branch in branches)
    done, stop = 0, ""
    for k, branch in enumerate(branches):
        if limits.expired():
            stop = "the deadline"
            break
        screened = time.perf_counter()
        splittable = branch.pairs.shape[0] > 1
        stop = state.screen(branch, WHOLE_BRANCH_SHARE if splittable else PROJECTION_SHARE)
        parted = bool(stop) and state.too_long and splittable
        if parted:
            stop = _in_parts(state, rest, branch, groups, k, free)
        if stop:
            break
        done += 1
        if k == len(branches) - 1:
            state.rest_bound = math.inf
        elif not parted:  # (in parts, ``rest`` is past group k already)
            per_screen = state.floor_share() * FLOOR_SECONDS_PER_SCREEN  # (floor seconds per screen second)
            if per_screen == 0.0:  # (no floor while the pass projects to finish: it bounds only a pass that stops)
                rest.exclude(free[groups[k]])
            else:
                floor = rest.without(free[groups[k]], limits.capped(per_screen * (time.perf_counter() - screened)))
                state.rest_bound = max(state.rest_bound, scale * floor + offset)
        state.parts = 0  # (the parts counted are the next branch's)
        state.report()
    lower = min(search.incumbent, search.closed_floor, state.rest_bound)
    finished = done == len(branches)
    if finished and state.kept is not None and limits.screen is not None:  # (each support at its level or lower)
        limits.screen.store(problem, BlockedListing(np.zeros(0, np.int64), free, size), state.least_level,
                            np.concatenate(state.kept))
    rest_said = "" if finished or not math.isfinite(state.rest_bound) else (
        f"; the models of the supports not listed are above {state.rest_bound:.9g} (hull floors without the groups "
        f"done, {rest.iterations + state.floor_iterations} gradient steps)")
    said = (f"{why}: the supports screened one group at a time, most used first; {done} of {len(branches)} groups "
            f"done ({state.listed} supports" + (f", {state.parts} parts of the next" if state.parts and not finished
                                                 else "") + "), "
            + ("every support screened" if finished else f"stopped ({stop})") + f"{rest_said}, {search.nodes} nodes")
    return Enumeration(search.model, search.incumbent, lower, finished, search.nodes, said,
                       search.relaxed(state.rest_bound), math.nan if finished else state.projected())


def _in_parts(state: "_OrderedState", rest: RestFloor, branch, groups: list[np.ndarray], k: int,
              free: np.ndarray) -> str:
    """Branch ``k`` screened part by part (:func:`solvers.exact.ordered_screen.branch_parts`), the bound
    after each the least of the floor without the groups ``0..k`` (``rest``, moved on past group ``k``
    first) and the floor without the groups ``0..k-1`` and the second groups of the parts done (a fork
    of ``rest``); after each part the second floor takes the new groups out, and the first goes on
    from its last point when it is the lower one (each for its share of the part's time); returns why
    it stopped ("" when every part is done, ``rest`` then past group ``k``)."""
    problem, limits = state.problem, state.limits
    scale, offset = problem.loss_cost, problem.offset
    inner = rest.fork()
    after_k = scale * rest.without(free[groups[k]], limits.capped(FLOOR_SECONDS_PER_SCREEN * limits.seconds_left()
                                                                   / PARTS)) + offset
    for part in branch_parts(branch, problem.max_size):
        screened = time.perf_counter()
        stop = state.screen(part)
        if stop:
            state.floor_iterations += inner.iterations
            return stop
        state.parts += 1
        seconds = FLOOR_SECONDS_PER_SCREEN * (time.perf_counter() - screened)
        seconds_done = [free[groups[k + int(b)]] for b in part.pairs[:, 1]]
        inner_floor = scale * inner.without(np.concatenate(seconds_done), limits.capped(seconds)) + offset
        if after_k < inner_floor:  # (the floor that binds goes on from where it stopped)
            after_k = scale * rest.without(np.zeros(0, np.int64), limits.capped(seconds)) + offset
        state.rest_bound = max(state.rest_bound, min(inner_floor, after_k))
        state.report()
    state.floor_iterations += inner.iterations
    state.rest_bound = max(state.rest_bound, after_k)
    return ""


class _OrderedState:
    """What the ordered pass has found so far: supports listed, survivors kept for later fits (None: too
    many), the least level screened at, the bound of the models not listed (``rest_bound``), the parts of
    a branch done, and whether the last branch's screen stopped on its projection."""

    def __init__(self, problem, search, bits, table, limits, threads, t0, rules=None) -> None:
        self.problem, self.search, self.bits, self.table, self.rules = problem, search, bits, table, rules
        self.limits, self.threads, self.t0 = limits, threads, t0
        self.listed, self.kept, self.least_level, self.rest_bound = 0, [], math.inf, -math.inf
        self.parts, self.too_long, self.floor_iterations = 0, False, 0
        self.total, self.seconds = 0, 0.0  # (supports the pass lists; seconds its screens, fits and searches took)
        self.said = progress.current()

    def _rest_seconds(self) -> float:
        """Seconds the supports not yet listed take at the pass's rate so far (the floors' time not
        counted; inf: none listed)."""
        return (self.total - self.listed) * self.seconds / self.listed if self.listed else math.inf

    def projected(self) -> float:
        """Seconds from the step's start to the end of the pass at its rate so far (nan: none listed)."""
        if not self.listed:
            return math.nan
        return time.perf_counter() - self.t0 + self._rest_seconds()

    def floor_share(self) -> float:
        """The share of :data:`FLOOR_SECONDS_PER_SCREEN` the next hull floor gets: with ``r`` the time the
        supports left take at the pass's rate so far (the floors' time not counted), as a multiple of the
        time left before the deadline, 0 for ``r <= 1`` (a floor bounds only a pass that stops), 1 from
        :data:`FLOOR_FULL_PROJECTION` on, in proportion between; 1 without a deadline."""
        left = self.limits.seconds_left()
        if not math.isfinite(left):
            return 1.0
        projected = self._rest_seconds() / max(left, 1e-9)
        return min(max((projected - 1.0) / (FLOOR_FULL_PROJECTION - 1.0), 0.0), 1.0)

    def screen(self, branch, share: float = PROJECTION_SHARE) -> str:
        """Screen ``branch`` at the prune level (stopped when it projects past ``share`` of the time left),
        then fit and search its survivors; why it stopped ("": done)."""
        began = time.perf_counter()
        try:
            return self._screen(branch, share)
        finally:
            self.seconds += time.perf_counter() - began

    def _screen(self, branch, share: float) -> str:
        problem, search = self.problem, self.search
        scale, offset = problem.loss_cost, problem.offset
        level = search.prune_level()
        self.least_level = min(self.least_level, level)
        found = screen_pairs(self.bits, self.table, [branch], problem.max_size, (level - offset) / scale, self.limits,
                             self.threads, share)
        self.too_long = found.too_long
        if found.stopped is not None:
            return found.stopped
        self.listed += found.listed
        search.close_relaxed(scale * found.pruned + offset)
        survivors = problem.free[found.survivors]
        if self.kept is not None:  # (for the later fits' screen; given up past what one pass may hold)
            self.kept.append(survivors)
            self.kept = self.kept if sum(map(len, self.kept)) <= MAX_KEPT else None
        report = self.said

        def capped(elapsed: float, incumbent: float, bound: float, gap: float) -> None:
            report(elapsed, incumbent, min(bound, self.rest_bound), gap)  # (the models not listed)
        data = problem.data
        with progress.reporting(capped) if report is not None else contextlib.nullcontext():
            out = _after_screen(problem, search, survivors, level, found.survivors.shape[0], self.t0, self.limits,
                                True, data.X, data.y, data.weights, "", self.rules)
        # (its supports avoid the groups done: the floors without them bound them)
        return "" if out.finished else "a limit, bounding or searching the supports the screen left"

    def report(self) -> None:
        """The progress line after a branch (or a part of one)."""
        if self.said is not None:
            search = self.search
            self.said(time.perf_counter() - self.t0, search.incumbent,
                      min(search.incumbent, search.closed_floor, self.rest_bound), math.nan)
