"""Exact sparse logistic models by support enumeration with convex bounds (a RiskSLIM route step).

The RiskSLIM program (Ustun & Rudin 2019, eq. 1; :mod:`formulations.riskslim`) with only box,
L0 and cardinality constraints,

.. math::

    \\min\\; l(\\lambda, \\lambda_0) + \\sum_j c_j [\\lambda_j \\ne 0] \\quad \\text{s.t.}\\quad
    \\lambda \\in \\mathbb{Z}^d \\cap [lo, hi],\\ \\lambda_0 \\in \\mathbb{Z} \\cap [b_{lo}, b_{hi}],\\
    \\|\\lambda\\|_0 \\le K,

has every solution inside some support ``S`` of exactly ``K`` features (all forced features plus
``K - |F|`` of the free ones): enumerating those supports covers every model. On each support the
box-constrained continuous minimum of the loss is a lower bound of every integer model in it
(:func:`solvers.exact.box_logistic.fit_box`, certified by the Frank-Wolfe gap at any iterate), and it
is much tighter than the LP bound of the cutting-plane MILP, where a fractional indicator lets
``K`` features spread into ``sum |lambda_j| / u_j <= K`` over all of them. So:

0. when a size has many supports (``ENUMERATION.rule_in_supports``), rule in the features without which
   no model reaches the incumbent: the continuous relaxation over all free features with one of
   them fixed at 0, certified by a Frank-Wolfe bound (:func:`solvers.exact.exclusion.must_use`),
   already costs more, so every better model uses that feature; only the supports holding all of
   them are listed, and the least of those relaxations bounds the supports left out;
1. bound every support (numba; rows merged per support into value patterns); a support whose
   saturated loss (the conditional entropy of the label given its values,
   :func:`solvers.exact.box_logistic.saturated_loss`, a bound for every model on it, whatever its
   box or multiplier) already reaches the incumbent is pruned without a fit; a support that uses a
   copy or 0/1 complement of an earlier column without that column is not listed (it has the
   optimum of one that is: :mod:`solvers.exact.symmetry`);
2. visit the supports in increasing bound; in each, branch and bound on the integer box (best
   first; node bound = Frank-Wolfe bound of the node's box + the L0 cost of the coordinates whose
   range excludes 0; each node's continuous point rounded for incumbents, with the best integer
   intercept);
3. stop when the next support's bound reaches the incumbent less the gap tolerance.

The reported bound is the least of the incumbent and of every lower bound of a pruned or
unvisited region, so it is valid at any stop (time or node limit): the gap is honest. There are
``C(d_free, K - |F|)`` supports: when their rate (measured on samples spread over the listing,
:func:`solvers.exact.support_rate.sampled_rate`, or on the first chunks of a small size) projects
that bounding them all takes more than ``ENUMERATION.projection_share`` of the time left, the
enumeration stops with its incumbent and the
route's next step (SCIP's lazy-cut tree) gets the time. The second kind, SLIM with Bayes-error
bounds, is :mod:`solvers.exact.zero_one_supports`.

Parallel bounding. With ``n_jobs`` other than 1, step 1 runs on joblib workers: after the first
chunks (bounded here, they measure the rate), the rest of each size is cut into tasks of whole
chunks of :data:`~solvers.exact.support_listing.CHUNK` supports (about
:data:`~solvers.exact.support_workers.TASK_SECONDS` each); a task carries the lister's
state (not the supports), the pickled bounder (its kernels are module functions, so a worker loads
them from numba's cache) and the prune level of the incumbent at that time, which stays valid
while the size is bounded (the in-support searches, which improve the incumbent, run after it, and
the next size's tasks get the new level). A bound stopped at the cutoff is at least the cutoff, so
the supports kept, their bounds (each support's fit depends on the support and the cutoff only)
and their order (bound, then listing order) are the serial run's, and so are the searches, the
model, the bound and the certificate. Results are read in order as the tasks finish, with a look
at the clock after each; at the deadline the tasks not finished are dropped. The workers come
from the active joblib backend (:func:`solvers.exact.support_workers.start_workers` starts them,
and loads their kernels, while
the fit's heuristic runs): local processes (loky, which keeps them between calls), or a
``dask.distributed`` cluster::

    from dask.distributed import Client
    from joblib import parallel_backend

    client = Client("scheduler-address:8786")       # or Client(LocalCluster(...))
    with parallel_backend("dask"):
        RiskScoreClassifier(max_size=5, n_jobs=-1).fit(X, y)

(there the bounder is scattered to the cluster once per size; the workers need this package
installed). Each worker holds its own copy of the kernel's data: the routes' memory estimates
count :func:`solvers.exact.support_workers.kernel_copies`.

The modules, one job each: :mod:`solvers.exact.support_listing` (listing),
:mod:`solvers.exact.support_rate` (rate projection), :mod:`solvers.exact.support_search` (the
search inside a support), :mod:`solvers.exact.support_workers` (worker pool),
:mod:`solvers.exact.sparse_logistic` (the RiskSLIM kind) and this driver. Its give-up thresholds
and pre-pass are route decisions, in one table: :data:`solvers.exact.route.ENUMERATION`.
"""
from __future__ import annotations

import math
import pickle
import time
from dataclasses import dataclass

import numpy as np
from joblib import delayed

from formulations.support_rules import SupportRules
from solvers import progress
from solvers.exact import route
from solvers.exact.screen import MAX_SUPPORTS
from solvers.exact.support_listing import CHUNK, Listed, Lister, RuledBounder, sift
from solvers.exact.support_rate import FIRST_CHUNK, PROJECTION_CHUNK, SAMPLED_PASS, sampled_rate, too_long
from solvers.exact.support_search import Search
from solvers.exact.support_workers import TASK_SECONDS, Pool, bound_task, bounding_workers, worker_tasks
from solvers.limits import Limits


@dataclass(frozen=True)
class Enumeration:
    """What :func:`enumerate_supports` found: the best model ``(coef, intercept)`` (None: nothing
    better than the start), its objective, a bound valid for every model (when the enumeration
    stopped before it bounded every support: the least of what it closed and of the least bounds
    of the sizes it had not finished; ``-inf`` when it gave up before listing any), whether it
    finished, and its account; ``relaxed``: a bound on every *real* model of the box (points anywhere
    in their ranges, at most ``max_size`` non-zero), from the screens, box fits and floors alone, not
    the searches (``-inf``: not known; :func:`solvers.exact.route.relaxation_bound`); ``projected``: when
    it stopped on a projection of its work (or at the deadline with its rate known), the seconds from
    its start that work projected (nan: otherwise)."""

    model: tuple[np.ndarray, float] | None
    objective: float
    bound: float
    finished: bool
    nodes: int
    message: str
    relaxed: float = -math.inf
    projected: float = math.nan


def enumerate_supports(problem, limits: Limits, *, start: tuple[np.ndarray, float] | None = None,
                       incumbent: float = math.inf, rules: SupportRules | None = None) -> Enumeration:
    """Solve a sparse problem (:class:`SparseLogistic`, or the SLIM kind of
    :mod:`solvers.exact.zero_one_supports`) by support enumeration (module docstring), from the
    model ``start`` of objective ``incumbent``, within the budget ``limits`` (its time, node limit,
    gap ``mip_rel_gap``, ``n_jobs`` and ``screen``; started here if not yet). When the supports' sampled rate projects that bounding them all would take
    more than ``ENUMERATION.projection_share`` of the time left (or, for kinds whose in-support searches
    are rationed, the searches would not fit), it stops at once with its incumbent and no bound:
    the route's next step gets the time.

    ``limits.n_jobs`` joblib workers (-1: all cores) bound the chunks of supports, in the active joblib
    backend: local processes (loky) by default, a ``dask.distributed`` cluster inside
    ``joblib.parallel_backend("dask")`` (module docstring, *Parallel bounding*). The result — the
    supports kept, their bounds, the model, the bound and the certificate — is the serial one.

    ``limits.screen`` (:class:`solvers.exact.screen.SupportScreen`, RiskSLIM kind only) carries the
    survivors of the saturated-loss screen between fits of the same rows: a size it covers lists
    only them (the rest hold no model below its level); a size bounded to the end leaves its
    survivors in it.

    ``rules`` (:class:`formulations.support_rules.SupportRules`: the instance's operational constraints
    when they only count the features a model uses, its sign rows folded into the box) leaves out the
    supports that break them (bound inf), and the problem lists every support (``every_support``): the
    result is the constrained program's."""
    limits = limits.started()
    workers = bounding_workers(limits.n_jobs)
    if workers == 1:
        return _Enumeration(problem, start, incumbent, limits, None, rules).run()
    pool = Pool(limits.n_jobs, workers)
    try:
        return _Enumeration(problem, start, incumbent, limits, pool, rules).run()
    finally:
        pool.close()


class _GiveUp(Exception):
    """The enumeration stops at once with its incumbent and no bound (the reason in the message; the
    seconds from its start its work projected, when a projection stopped it)."""

    def __init__(self, reason: str, projected: float = math.nan) -> None:
        super().__init__(reason)
        self.projected = projected


class _Kept:
    """What the bounding of one size keeps: the supports below the prune level and their bounds,
    how many were listed, and the saturated-loss screen's survivors while there are few enough to
    keep (None once there are too many, or the bounder has no screen)."""

    def __init__(self, search: Search, screening: bool):
        self.search, self.supports, self.bounds, self.done = search, [], [], 0
        self.passed: list[np.ndarray] | None = [] if screening else None
        self.survivors = 0

    def absorb(self, sifted: tuple) -> None:
        """Add one :func:`solvers.exact.support_listing.sift` result."""
        self.supports.append(sifted[0])
        self.bounds.append(sifted[1])
        self.search.closed_floor = min(self.search.closed_floor, sifted[2])
        self.done += sifted[3]
        if self.passed is not None:
            self.survivors += 0 if sifted[4] is None else sifted[4].shape[0]
            if sifted[4] is None or self.survivors > MAX_SUPPORTS:
                self.passed = None
            else:
                self.passed.append(sifted[4])


class _Enumeration:
    """One run of :func:`enumerate_supports` (module docstring): the sizes in turn, each bounded
    (:meth:`_bound_size`) then searched in increasing bound (:meth:`_search_size`); any step may give
    up (:class:`_GiveUp`) when the projected work does not fit the time left
    (:data:`solvers.exact.route.ENUMERATION`)."""

    def __init__(self, problem, start, incumbent: float, limits: Limits, pool: Pool | None,
                 rules: SupportRules | None = None):
        self.problem, self.limits, self.node_limit, self.rules = problem, limits, limits.node_limit, rules
        self.pool, self.screen = pool, limits.screen
        self.timed = limits.deadline is not None
        self.t0 = time.perf_counter()
        self.search = Search(problem.d, incumbent, None if start is None else (np.asarray(start[0], float).copy(),
                                                                                float(start[1])), limits.mip_rel_gap)
        self.rationed = problem.hands_over_search and self.timed
        self.workers = 1 if pool is None else pool.workers
        self.done = self.visited = self.ruled_out = 0
        self.bound_time, self.open_floor = 0.0, math.inf
        self.unfinished = -math.inf  # the least bound of the sizes not finished (none listed yet)
        self.report = progress.current()

    def left(self) -> float:
        return self.limits.seconds_left()

    def since_start(self, projected: float) -> float:
        """Seconds from this run's start to the end of work projected to take ``projected`` more."""
        return time.perf_counter() - self.t0 + projected

    def fits(self, projected: float) -> bool:
        """Whether work projected to take ``projected`` seconds fits the time left."""
        return projected <= route.ENUMERATION.projection_share * self.left()

    def run(self) -> Enumeration:
        try:
            return self._run()
        except _GiveUp as stop:
            search = self.search
            lower = min(search.incumbent, search.closed_floor, self.open_floor, self.unfinished)
            return Enumeration(search.model, search.incumbent, lower, False, search.nodes, f"stopped: {stop}",
                               projected=stop.projected)

    def _run(self) -> Enumeration:
        problem, search = self.problem, self.search
        if problem.hands_over_search and not self.timed:
            raise _GiveUp("with features of more than two values the in-support searches are planned "
                          "against a time limit, and there is none")
        listers = problem.listers(search.incumbent, self.limits, every_support=self.rules is not None)
        for lister in listers:  # the supports ruled out before listing
            search.closed_floor = min(search.closed_floor, lister.outside)
        self.bound = problem.bounder() if self.rules is None else RuledBounder(problem.bounder(), self.rules)
        self.blob = None if self.pool is None else np.frombuffer(
            pickle.dumps(self.bound, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)
        first = listers[0]
        self.bound(Lister(first.forced, first.free, first.r).next(1), math.inf)
        # (compiles the kernel, if this process has not, before the first chunk is timed)
        later_least = [min([problem.least_bound(later) for later in listers[i + 1:]], default=math.inf)
                       for i in range(len(listers))]  # every support of a size not yet reached is above this
        for index, lister in enumerate(listers):
            least = problem.least_bound(lister)
            self.unfinished = min(least, later_least[index])  # the sizes before are closed
            level = search.prune_level()  # the incumbent's, fixed while this size is bounded
            if least >= level:  # every support of this size costs the incumbent already
                search.closed_floor = min(search.closed_floor, least)
                continue
            kept, lister, stopped, phase_time = self._bound_size(lister, least, level)
            bounds = np.concatenate(kept.bounds) if kept.bounds else np.zeros(0)
            if self.report is not None:  # this size bounded: its least bound, the closed regions, later sizes
                self.report(time.perf_counter() - self.t0, search.incumbent,
                            min(search.incumbent, search.closed_floor, self.open_floor,
                                float(bounds.min(initial=math.inf)), later_least[index]), math.nan)
            stopped = self._search_size(lister, kept.supports, bounds, later_least[index]) or stopped
            if stopped:  # the sizes not reached keep their least bound
                self.open_floor = min(self.open_floor, later_least[index])
                break
            self._check_ahead(listers[index + 1:], lister, phase_time)
        return self._result(listers)

    # ---------------------------------------------------------------- bounding one size
    def _bound_size(self, lister, least: float, level: float):
        """Bound the supports of one size at the prune ``level``: ``(kept, lister, stopped, seconds)``
        (``lister``: the screen's survivors when an earlier fit's screen covers the size)."""
        search, screen = self.search, self.screen
        started = time.perf_counter()
        known = None if screen is None else screen.survivors(self.problem, lister, level)
        if known is not None:  # an earlier fit's screen: the rest hold no model below its level
            search.closed_floor = min(search.closed_floor, screen.level)
            self.ruled_out += lister.total - known.shape[0]
            lister = Listed(known, lister)
        kept = _Kept(search, screen is not None and known is None)
        sampled = known is None and lister.total >= SAMPLED_PASS and self.timed
        if sampled:  # a large size: its pass projected from samples spread over it
            share = route.ENUMERATION.projection_share * self.left() * self.workers
            projected = sampled_rate(self.bound, lister, level, share) * lister.total / self.workers
            if not self.fits(projected):
                raise _GiveUp(too_long(lister, projected, self.limits), self.since_start(projected))
        stopped = self._bound_here(lister, kept, level, least, sampled, known is not None)
        if not stopped and lister.listed < lister.total:
            stopped = self._bound_on_workers(lister, kept, level, least, started)
        phase_time = time.perf_counter() - started
        self.bound_time += phase_time
        self.done += kept.done
        if kept.passed is not None and not stopped:  # every support of this size screened at ``level``
            screen.store(self.problem, lister, level, np.concatenate(kept.passed) if kept.passed else
                         np.zeros((0, lister.r + lister.forced.size), np.int64))
        return kept, lister, stopped, phase_time

    def _bound_here(self, lister, kept: _Kept, level: float, least: float, sampled: bool, listed: bool) -> bool:
        """Chunks of :data:`FIRST_CHUNK` doubling to :data:`CHUNK`, in this process, each projecting
        the whole pass at its rate; then (without workers, or for given supports) chunks of CHUNK.
        True when the deadline stopped it."""
        size = FIRST_CHUNK
        while lister.listed < lister.total and (self.pool is None or size < CHUNK or listed):
            if self.limits.expired():
                self.open_floor = min(self.open_floor, least)
                return True
            started = time.perf_counter()
            kept.absorb(sift(self.bound, lister, size, level))
            if size < CHUNK:
                took, listed_now = time.perf_counter() - started, size
                size *= 2
                # the rate of the latest chunk, once it is large enough that a call's fixed cost does
                # not dominate it (or slow enough to matter)
                if lister.listed < lister.total and self.timed and not sampled and \
                        (listed_now >= PROJECTION_CHUNK or took > 0.1 * self.left()):
                    projected = took * (lister.total - lister.listed) / listed_now / self.workers
                    if not self.fits(projected):
                        raise _GiveUp(too_long(lister, projected, self.limits), self.since_start(projected))
        return False

    def _bound_on_workers(self, lister, kept: _Kept, level: float, least: float, started: float) -> bool:
        """The rest of the size in tasks of whole chunks on the workers (the serial run's chunks).
        True when the deadline came first (the tasks not finished are dropped)."""
        per_chunk = (time.perf_counter() - started) / lister.listed * CHUNK
        chunks_left = -(-(lister.total - lister.listed) // CHUNK)
        per_task = max(1, min(int(TASK_SECONDS / max(per_chunk, 1e-9)), -(-chunks_left // (4 * self.workers))))
        tasks = (delayed(bound_task)(self.blob, lister.forced, lister.free, lister.r, lister.prev, state, count, level)
                 for state, count in worker_tasks(lister, per_task))
        results = self.pool.run(tasks, self.limits)
        for sifted in results if results is not None else ():
            kept.absorb(sifted)
            if self.limits.expired():
                results.close()
                break
        if kept.done < lister.total:  # the deadline came first
            self.open_floor = min(self.open_floor, least)
            return True
        return False

    # ---------------------------------------------------------------- searching one size
    def _search_size(self, lister, supports: list[np.ndarray], bounds: np.ndarray, later_least: float) -> bool:
        """Search the kept supports in increasing bound (ties: listing order) until the next bound
        reaches the prune level; True when a limit (time, nodes, an unfinished search) stopped it."""
        search, limits, node_limit = self.search, self.limits, self.node_limit
        order = np.argsort(bounds, kind="stable")
        searching = time.perf_counter()
        for position, s in enumerate(order):
            if bounds[s] >= search.prune_level():
                search.closed_floor = min(search.closed_floor, float(bounds[s]))
                return False
            if limits.expired() or (node_limit is not None and search.nodes >= node_limit):
                self.open_floor = min(self.open_floor, float(bounds[s]))
                return True
            within = limits.share(route.ENUMERATION.search_share) if self.rationed else limits
            unfinished = self.problem.search(_row(supports, s), float(bounds[s]), search, within)
            self.visited += 1
            if self.rationed and (node_limit is None or search.nodes < node_limit):
                ahead = int((bounds[order[position + 1:]] < search.prune_level()).sum())
                projected = (time.perf_counter() - searching) / (position + 1) * ahead
                if math.isfinite(unfinished) or not self.fits(projected):
                    raise _GiveUp(f"searching the {ahead + 1} supports of {lister.r + lister.forced.size} "
                                  f"features below the incumbent one by one would not fit the "
                                  f"{max(self.left(), 0.0):.0f} s left", self.since_start(projected))
            if math.isfinite(unfinished):
                rest = bounds[order[position + 1:]]
                self.open_floor = min(self.open_floor, unfinished, float(rest.min()) if rest.size else math.inf)
                return True
            if self.report is not None:  # the search's bound: closed regions, this size's rest, later sizes
                following = float(bounds[order[position + 1]]) if position + 1 < order.size else math.inf
                self.report(time.perf_counter() - self.t0, search.incumbent,
                            min(search.incumbent, search.closed_floor, following, later_least), math.nan)
        return False

    def _check_ahead(self, later: list, lister, phase_time: float) -> None:
        """This size done, with the freshest incumbent: give up when the larger sizes it does not
        prune yet would not fit the time, at this size's rate (measured on a full chunk; larger
        supports cost more)."""
        ahead = [size for size in later if self.problem.least_bound(size) < self.search.prune_level()]
        if ahead and lister.total >= CHUNK and self.timed:
            count = sum(size.total for size in ahead)
            projected = phase_time * count / lister.total
            if not self.fits(projected):
                raise _GiveUp(f"bounding the {count} supports of {ahead[0].r + ahead[0].forced.size} to "
                              f"{ahead[-1].r + ahead[-1].forced.size} features would take about "
                              f"{projected:.0f} s, more than the {max(self.left(), 0.0):.0f} s left",
                              self.since_start(projected))

    def _result(self, listers: list) -> Enumeration:
        search, problem = self.search, self.problem
        total = sum(lister.total for lister in listers)
        lower = min(search.incumbent, search.closed_floor, self.open_floor)
        finished = not math.isfinite(self.open_floor)
        symmetric = max((int((lister.prev >= 0).sum()) for lister in listers if lister.prev is not None), default=0)
        ruled_in = max(lister.forced.size for lister in listers) - int(np.count_nonzero(problem.forced))
        message = (f"{self.done} of {total} supports bounded in {self.bound_time:.2f} s, {self.visited} searched, "
                   f"{search.nodes} nodes" + (f" ({symmetric} columns interchangeable with an earlier one: their "
                                              f"symmetric supports skipped)" if symmetric else "")
                   + (f" ({self.ruled_out} ruled out by the screen of an earlier fit of these rows)"
                      if self.ruled_out else "")
                   + (f" ({ruled_in} features in every support: without any of them every model costs at least "
                      f"{min(lister.outside for lister in listers):.9g}, exclusion bounds)" if ruled_in > 0 else ""))
        return Enumeration(search.model, search.incumbent, lower, finished, search.nodes, message)


def _row(chunks: list[np.ndarray], index: int) -> np.ndarray:
    """Row ``index`` of the concatenation of ``chunks`` (supports of different sizes stay apart)."""
    for chunk in chunks:
        if index < chunk.shape[0]:
            return chunk[index]
        index -= chunk.shape[0]
    raise IndexError(index)
