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

0. when a size has many supports (:data:`RULE_IN_SUPPORTS`), rule in the features without which
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
``C(d_free, K - |F|)`` supports: when their rate (measured on :data:`SAMPLES` chunks spread over
the listing, :func:`sampled_rate`, or on the first chunks of a small size) projects that bounding
them all takes more than :data:`PROJECTION_SHARE` of the time left, the enumeration stops with its incumbent and the
route's next step (SCIP's lazy-cut tree) gets the time. The second kind, SLIM with Bayes-error
bounds, is :mod:`solvers.exact.zero_one_supports`.

Parallel bounding. With ``n_jobs`` other than 1, step 1 runs on joblib workers: after the first
chunks (bounded here, they measure the rate), the rest of each size is cut into tasks of whole
chunks of :data:`CHUNK` supports (about :data:`TASK_SECONDS` each); a task carries the lister's
state (not the supports), the pickled bounder (its kernels are module functions, so a worker loads
them from numba's cache) and the prune level of the incumbent at that time, which stays valid
while the size is bounded (the in-support searches, which improve the incumbent, run after it, and
the next size's tasks get the new level). A bound stopped at the cutoff is at least the cutoff, so
the supports kept, their bounds (each support's fit depends on the support and the cutoff only)
and their order (bound, then listing order) are the serial run's, and so are the searches, the
model, the bound and the certificate. Results are read in order as the tasks finish, with a look
at the clock after each; at the deadline the tasks not finished are dropped. The workers come
from the active joblib backend (:func:`start_workers` starts them, and loads their kernels, while
the fit's heuristic runs): local processes (loky, which keeps them between calls), or a
``dask.distributed`` cluster::

    from dask.distributed import Client
    from joblib import parallel_backend

    client = Client("scheduler-address:8786")       # or Client(LocalCluster(...))
    with parallel_backend("dask"):
        RiskScoreClassifier(max_size=5, n_jobs=-1).fit(X, y)

(there the bounder is scattered to the cluster once per size; the workers need this package
installed). Each worker holds its own copy of the kernel's data: the routes' memory estimates
count :func:`kernel_copies`.
"""
from __future__ import annotations

import functools
import heapq
import math
import pickle
import threading
import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from joblib.parallel import get_active_backend
from numba import njit

from formulations.logistic_cuts import LogisticData
from formulations.rows import unique_rows
from solvers import progress
from solvers.exact.bayes_error import bayes_errors, value_bits
from solvers.exact.exclusion import must_use
from solvers.exact.box_logistic import binary_support_bounds, column_codes, fit_box, label_bits, support_bounds
from solvers.exact.screen import MAX_SUPPORTS, SupportScreen
from solvers.exact.symmetry import predecessors
from solvers.result import prune_level

#: supports bounded between two looks at the clock
CHUNK = 4096
#: supports in a chunk from which its rate projects the whole pass (smaller chunks are dominated
#: by the fixed cost of a call and project only when they are slow)
PROJECTION_CHUNK = 1024
#: the first chunk of each size; chunks double up to CHUNK, each projecting the whole pass
FIRST_CHUNK = 16
#: evenly spaced places of a large size's listing at which :data:`PROJECTION_CHUNK` supports are
#: bounded to project its pass (consecutive supports share their first columns, so the rate of the
#: first chunks is not that of the rest); their work is not kept
SAMPLES = 16
#: sizes with at least this many supports are projected by the samples (they cost at most 1/64 of
#: the pass); smaller ones by their first chunks
SAMPLED_PASS = 64 * SAMPLES * PROJECTION_CHUNK
#: the samples end early, projecting a pass too long, only after this share of its budget
DECISIVE_SHARE = 0.01
#: the supports are bounded only while the chunks project the whole pass within this share of the
#: time left (else the enumeration stops and the route's next step gets the time)
PROJECTION_SHARE = 0.8
#: share of the time left one in-support search may take, for kinds that hand searches over
SEARCH_SHARE = 0.25
#: a continuous coordinate this close to an integer counts as integral
INTEGRAL = 1e-7
#: sizes with at least this many supports first rule in the features every model below the
#: incumbent uses (:mod:`solvers.exact.exclusion`)
RULE_IN_SUPPORTS = 10**5
#: share of the time left the exclusion step may take (it returns the features proven by then)
EXCLUSION_SHARE = 0.25
#: seconds of bounding one worker task aims at (whole chunks; the coordinator looks at the clock as
#: each task returns)
TASK_SECONDS = 0.25


@dataclass(frozen=True)
class SparseLogistic:
    """The sparse logistic problem of a RiskSLIM instance without operational constraints (module docstring)."""

    data: LogisticData
    lo: np.ndarray
    hi: np.ndarray
    intercept_lo: int
    intercept_hi: int
    cost: np.ndarray
    forced: np.ndarray
    max_size: int
    loss_cost: float
    offset: float
    loss_floor: float
    #: the intercept box is the derived one (:func:`formulations.riskslim.intercept_box`), so 0/1
    #: complements are interchangeable too (:mod:`solvers.exact.symmetry`)
    complements: bool = False

    @classmethod
    def from_instance(cls, instance) -> "SparseLogistic":
        """The problem of a :class:`formulations.riskslim.RiskSLIMInstance` (operational
        constraints left out: the route runs this only on instances without them)."""
        cs, spec = instance.coefficients, instance.spec
        d = instance.X.shape[1]
        lo, hi = instance.intercept_bounds
        return cls(instance.data, cs.lb.astype(float), cs.ub.astype(float), int(math.ceil(lo - 1e-9)),
                   int(math.floor(hi + 1e-9)), spec.c0 * cs.c0.astype(float), np.asarray(instance.forced, bool),
                   d if spec.max_size is None else min(int(spec.max_size), d), 1.0, 0.0, float(instance.loss_floor()),
                   cs.intercept_lb is None and cs.intercept_ub is None)

    # ---------------------------------------------------------------- supports
    @property
    def free(self) -> np.ndarray:
        """Features that may be non-zero and are not forced."""
        return np.flatnonzero(~self.forced & ((self.lo < 0) | (self.hi > 0)))

    # ------------------------------------------------- the kind's protocol (enumerate_supports)
    #: the in-support branch and bound is cheap (a few continuous fits per node): never rationed
    hands_over_search = False

    @property
    def d(self) -> int:
        return self.lo.size

    def listers(self, incumbent: float = math.inf, deadline: float = math.inf) -> list["_Lister"]:
        """The supports of ``max_size`` features; with many of them, those containing the features
        every model below ``incumbent`` uses (:func:`solvers.exact.exclusion.must_use`, given
        :data:`EXCLUSION_SHARE` of the time to ``deadline``), the others' least bound in the lister's ``outside``."""
        forced, free = np.flatnonzero(self.forced), self.free
        r = max(0, min(free.size, self.max_size - forced.size))
        outside = math.inf
        if math.comb(free.size, r) >= RULE_IN_SUPPORTS and math.isfinite(incumbent):
            level = (incumbent - float(self.cost @ self.forced) - self.offset) / self.loss_cost
            now = time.perf_counter()
            ruled_in, floor = must_use(self.data, self.lo, self.hi, self.intercept_lo, self.intercept_hi, free, level,
                                       r, now + EXCLUSION_SHARE * (deadline - now))
            if ruled_in.size:
                forced, free = np.sort(np.append(forced, ruled_in)), np.setdiff1d(free, ruled_in)
                r, outside = r - ruled_in.size, self.loss_cost * floor + float(self.cost @ self.forced) + self.offset
        prev = predecessors(self.data.X, free, self.lo, self.hi, self.cost, self.complements)
        return [_Lister(forced, free, r, prev, outside)]

    def least_bound(self, lister: "_Lister") -> float:
        return self.floor()

    def bounder(self):
        """``bound(supports, level) -> objective bounds``: the box fits' certified bounds plus the
        forced costs; a fit stops once its bound reaches ``level``. A picklable partial of
        module-level functions (it is shipped to the bounding workers)."""
        data = self.data
        box = (self.lo, self.hi, float(self.intercept_lo), float(self.intercept_hi), data.scale)
        positive = data.y > 0
        bits = label_bits(data.X, positive, data.weights)
        if bits is not None:
            fits = functools.partial(_binary_fits, *bits)
        else:
            fits = functools.partial(_pattern_fits, *column_codes(data.X), data.X, positive, data.weights)
        return functools.partial(_logistic_bounds, fits, box, self.loss_cost, float(self.cost @ self.forced),
                                 self.offset, self.floor())

    def search(self, support: np.ndarray, bound: float, search: "_Search", deadline: float,
               node_limit: int | None) -> float:
        return _branch_and_bound(search, _SupportProblem(self, support), bound, deadline, node_limit)

    def costs_in(self, support: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
        """L0 cost every integer point of the box ``[lo, hi]`` on ``support`` pays at least."""
        pays = self.forced[support] | (lo > 0) | (hi < 0)
        return float(self.cost[support] @ pays)

    def objective(self, loss: float, support: np.ndarray, coef: np.ndarray) -> float:
        return self.loss_cost * loss + float(self.cost[support] @ (self.forced[support] | (coef != 0))) + self.offset

    @property
    def zero_intercept(self) -> float:
        """Optimal real intercept of the empty model (the log-odds, times the multiplier)."""
        w = self.data.weights
        w_pos, w_neg = w[self.data.y > 0].sum(), w[self.data.y < 0].sum()
        return self.data.scale * math.log(w_pos / w_neg) if w_pos > 0 and w_neg > 0 else 0.0

    def floor(self) -> float:
        """A bound valid for every model: the program's loss floor and the forced costs."""
        return self.loss_cost * self.loss_floor + float(self.cost @ self.forced) + self.offset


def _binary_fits(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, chunk, box, cutoff):
    return binary_support_bounds(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, chunk, *box, cutoff)


def _pattern_fits(codes, radix, levels, X, positive, weights, chunk, box, cutoff):
    return support_bounds(codes, radix, levels, X, positive, weights, chunk, *box, cutoff)


def _logistic_bounds(fits, box, loss_cost, forced_cost, offset, floor, chunk, level):
    """Objective bounds of the supports ``chunk``: ``loss_cost`` times the box fits' certified
    bounds (stopped once they reach ``level``) plus the forced costs, at least ``floor``; and which
    supports passed the saturated-loss screen (the kernels give those they screened out a NaN loss)."""
    lower, losses = fits(chunk, box, (level - offset - forced_cost) / loss_cost)
    return np.maximum(loss_cost * lower + forced_cost + offset, floor), ~np.isnan(losses)


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
            out[kept] = state
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


def sampled_rate(bound, lister: "_Lister", level: float, budget: float = math.inf) -> float:
    """Seconds per listed support of bounding ``lister``'s listing at prune ``level``, measured on
    :data:`PROJECTION_CHUNK` supports at each of :data:`SAMPLES` evenly spaced places (``lister``
    does not move; the supports bounded there are bounded again in their turn). A first probe of
    :data:`FIRST_CHUNK` supports, and each sample, may end the measure early: once it has taken
    :data:`DECISIVE_SHARE` of ``budget`` seconds and its rate projects the whole pass above
    ``budget`` (so slow supports cost a small probe, not the samples; a fast probe, whose time is
    mostly the call's overhead, decides nothing)."""
    took, listed = 0.0, 0
    for i, size in [(SAMPLES // 2, FIRST_CHUNK)] + [(i, PROJECTION_CHUNK) for i in range(SAMPLES)]:
        probe = lister.at(int((i + 0.5) * lister.total / SAMPLES))
        started, before = time.perf_counter(), probe.listed
        _sift(bound, probe, size, level)
        took, listed = took + time.perf_counter() - started, listed + probe.listed - before
        if took >= DECISIVE_SHARE * budget and took / max(listed, 1) * lister.total > budget:
            break
    return took / max(listed, 1)


class _Lister:
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

    def at(self, position: int) -> "_Lister":
        """A lister of the same supports that starts at ``position`` of this one's listing."""
        other = _Lister(self.forced, self.free, self.r, self.prev)
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


class _Listed:
    """Given supports (full rows, forced features included) as a lister of the size of ``like``;
    bounded in this process (no lister state to ship to workers)."""

    def __init__(self, rows: np.ndarray, like: _Lister):
        self.rows, self.forced, self.free, self.r, self.prev = rows, like.forced, like.free, like.r, like.prev
        self.total, self.listed = rows.shape[0], 0

    def next(self, count: int) -> np.ndarray:
        out = self.rows[self.listed:self.listed + count]
        self.listed += out.shape[0]
        return out


class _SupportProblem:
    """Rows merged on one support, with label weights; ``theta`` = points on the support, intercept."""

    def __init__(self, problem: SparseLogistic, support: np.ndarray):
        data = problem.data
        if support.size:
            keys, inverse = unique_rows(data.X[:, support])
        else:
            keys, inverse = np.zeros((1, 0)), np.zeros(data.X.shape[0], dtype=np.int64)
        m = keys.shape[0]
        positive = data.y > 0
        self.wp = np.bincount(inverse[positive], weights=data.weights[positive], minlength=m)
        self.wn = np.bincount(inverse[~positive], weights=data.weights[~positive], minlength=m)
        self.P = np.ascontiguousarray(np.column_stack([keys, np.ones(m)]) / data.scale)
        self.problem, self.support = problem, support
        self.lo = np.append(problem.lo[support], problem.intercept_lo).astype(float)
        self.hi = np.append(problem.hi[support], problem.intercept_hi).astype(float)

    def loss(self, theta: np.ndarray) -> float:
        s = self.P @ theta
        return float(self.wp @ np.logaddexp(0.0, -s) + self.wn @ np.logaddexp(0.0, s))

    def best_intercept(self, coef: np.ndarray, start: float) -> tuple[float, float]:
        """Integer intercept in the box minimising the loss for fixed points (convex: walk downhill)."""
        lo, hi = self.lo[-1], self.hi[-1]
        theta = np.append(coef, min(max(round(start), lo), hi))
        best = self.loss(theta)
        for direction in (1.0, -1.0):
            while lo <= theta[-1] + direction <= hi:
                theta[-1] += direction
                value = self.loss(theta)
                if value < best:
                    best = value
                else:
                    theta[-1] -= direction
                    break
        return float(theta[-1]), best


@dataclass
class _Search:
    """State of one search: incumbent, the least bound of every closed region, counters."""

    d: int
    incumbent: float
    model: tuple[np.ndarray, float] | None
    tolerance: float
    closed_floor: float = math.inf
    nodes: int = 0

    def prune_level(self) -> float:
        return prune_level(self.incumbent, self.tolerance)

    def offer(self, value: float, support: np.ndarray, coef: np.ndarray, intercept: float) -> None:
        if value < self.incumbent:
            full = np.zeros(self.d)
            full[support] = coef
            self.incumbent, self.model = value, (full, intercept)


def _branch_and_bound(search: _Search, sub: _SupportProblem, root_bound: float, deadline: float,
                      node_limit: int | None) -> float:
    """Best-first branch and bound on one support's integer box (whose continuous bound is
    ``root_bound``); returns the least bound of its open nodes (inf when it is finished)."""
    problem, support = sub.problem, sub.support
    counter = 0
    theta0 = np.append(np.zeros(support.size), np.clip(problem.zero_intercept, sub.lo[-1], sub.hi[-1]))
    heap = [(root_bound, counter, sub.lo, sub.hi, theta0)]
    while heap:
        if time.perf_counter() > deadline or (node_limit is not None and search.nodes >= node_limit):
            return heap[0][0]
        parent_bound, _, lo, hi, start = heapq.heappop(heap)
        if parent_bound >= search.prune_level():
            search.closed_floor = min(search.closed_floor, parent_bound)
            continue
        search.nodes += 1
        theta = start.copy()
        lower, loss = fit_box(sub.P, sub.wp, sub.wn, lo, hi, theta)
        bound = problem.loss_cost * lower + problem.costs_in(support, lo[:-1], hi[:-1]) + problem.offset
        # incumbent from the continuous point: points rounded, best integer intercept
        coef = np.clip(np.rint(theta[:-1]), sub.lo[:-1], sub.hi[:-1])
        intercept, rounded_loss = sub.best_intercept(coef, theta[-1])
        search.offer(problem.objective(rounded_loss, support, coef), support, coef, intercept)
        if bound >= search.prune_level():
            search.closed_floor = min(search.closed_floor, bound)
            continue
        width = hi - lo
        frac = np.abs(theta - np.rint(theta))
        frac[width < 0.5] = -1.0
        j = int(np.argmax(frac))
        if frac[j] > INTEGRAL:
            cuts = [(lo[j], math.floor(theta[j])), (math.ceil(theta[j]), hi[j])]
        else:
            # integral point, yet the bound is short of the incumbent: split a paid-for zero
            point = np.rint(theta)
            open_zero = (point[:-1] != 0) & (lo[:-1] <= 0) & (hi[:-1] >= 0) & (problem.cost[support] > 0)
            if not open_zero.any():
                search.closed_floor = min(search.closed_floor, bound)
                continue
            j = int(np.flatnonzero(open_zero)[0])
            cuts = [(lo[j], -1.0), (0.0, 0.0), (1.0, hi[j])]
        for a, b in cuts:
            if a > b:
                continue
            child_lo, child_hi = lo.copy(), hi.copy()
            child_lo[j], child_hi[j] = a, b
            counter += 1
            heapq.heappush(heap, (bound, counter, child_lo, child_hi, theta))
    return math.inf


@dataclass(frozen=True)
class Enumeration:
    """What :func:`enumerate_supports` found: the best model ``(coef, intercept)`` (None: nothing
    better than the start), its objective, a bound valid for every model (``-inf`` when the
    enumeration stopped before it bounded every support), whether it finished, and its account."""

    model: tuple[np.ndarray, float] | None
    objective: float
    bound: float
    finished: bool
    nodes: int
    message: str


def enumerate_supports(problem, *, start: tuple[np.ndarray, float] | None = None, incumbent: float = math.inf,
                       deadline: float = math.inf, node_limit: int | None = None,
                       mip_rel_gap: float = 1e-6, n_jobs: int = 1,
                       screen: SupportScreen | None = None) -> Enumeration:
    """Solve a sparse problem (:class:`SparseLogistic`, or the SLIM kind of
    :mod:`solvers.exact.zero_one_supports`) by support enumeration (module docstring), from the
    model ``start`` of objective ``incumbent``, until ``deadline`` (``time.perf_counter()``) or
    ``node_limit``. When the supports' sampled rate projects that bounding them all would take
    more than :data:`PROJECTION_SHARE` of the time left (or, for kinds whose in-support searches
    are rationed, the searches would not fit), it stops at once with its incumbent and no bound:
    the route's next step gets the time.

    ``n_jobs`` joblib workers (-1: all cores) bound the chunks of supports, in the active joblib
    backend: local processes (loky) by default, a ``dask.distributed`` cluster inside
    ``joblib.parallel_backend("dask")`` (module docstring, *Parallel bounding*). The result — the
    supports kept, their bounds, the model, the bound and the certificate — is the serial one.

    ``screen`` (:class:`solvers.exact.screen.SupportScreen`, RiskSLIM kind only) carries the
    survivors of the saturated-loss screen between fits of the same rows: a size it covers lists
    only them (the rest hold no model below its level); a size bounded to the end leaves its
    survivors in it."""
    workers = bounding_workers(n_jobs)
    if workers == 1:
        return _enumerate(problem, start, incumbent, deadline, node_limit, mip_rel_gap, None, screen)
    pool = _Pool(n_jobs, workers)
    try:
        return _enumerate(problem, start, incumbent, deadline, node_limit, mip_rel_gap, pool, screen)
    finally:
        pool.close()


def bounding_workers(n_jobs: int) -> int:
    """Workers that bound the supports for ``n_jobs`` in the active joblib backend (1: this process)."""
    return 1 if n_jobs == 1 else max(1, int(effective_n_jobs(n_jobs)))


def kernel_copies(n_jobs: int) -> int:
    """Processes holding the bounding kernel's data and scratch (for the memory budget): this one,
    plus each worker when there are several."""
    workers = bounding_workers(n_jobs)
    return 1 if workers == 1 else 1 + workers


_warming: list[threading.Thread] = []


def start_workers(n_jobs: int) -> None:
    """Start the workers of ``n_jobs`` in the active joblib backend from a background thread and
    load the kernels in each, so that their start-up (processes, imports, kernels) overlaps the
    fit's heuristic; the enumeration waits for it, then reuses them (loky keeps its processes
    between calls; a dask cluster's workers keep their imports). Nothing for one worker or a
    backend of threads."""
    backend = get_active_backend()[0]
    if n_jobs == 1 or getattr(backend, "uses_threads", False):
        return
    workers = bounding_workers(n_jobs)

    def warm() -> None:
        with parallel_config(backend=backend):
            Parallel(n_jobs=n_jobs)(delayed(_load_kernels)() for _ in range(workers))

    if workers > 1 and not any(thread.is_alive() for thread in _warming):
        thread = threading.Thread(target=warm, daemon=True)
        thread.start()
        _warming[:] = [thread]


def _load_kernels() -> None:
    """In a worker: load the bounding kernels from the numba cache (each called once on a tiny
    problem with the argument types of the fits)."""
    X = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    positive, weights = np.array([True, False, True, False]), np.ones(4)
    chunk = _Lister(np.zeros(0, np.int64), np.arange(3), 2).next(CHUNK)
    box = (np.full(3, -2.0), np.full(3, 2.0), -2.0, 2.0, 1.0)
    _binary_fits(*label_bits(X, positive, weights), chunk, box, math.inf)
    _pattern_fits(*column_codes(X), X, positive, weights, chunk, box, math.inf)
    bayes_errors(*value_bits(X, positive, weights), chunk, math.inf)


class _Pool:
    """The joblib workers of one enumeration: one ``Parallel`` context, entered at the first tasks
    (after :func:`start_workers`' processes are up, waiting for them at most until the deadline)."""

    def __init__(self, n_jobs: int, workers: int):
        self.n_jobs, self.workers = n_jobs, workers
        self.parallel: Parallel | None = None

    def run(self, tasks, deadline: float):
        """The results of ``tasks`` (``delayed`` calls) in order, as a generator; None when the
        deadline passed while the workers were starting."""
        if self.parallel is None:
            for thread in _warming:
                thread.join(None if math.isinf(deadline) else max(deadline - time.perf_counter(), 0.0))
            if any(thread.is_alive() for thread in _warming):
                return None
            self.parallel = Parallel(n_jobs=self.n_jobs, return_as="generator", batch_size=1).__enter__()
        return self.parallel(tasks)

    def close(self) -> None:
        if self.parallel is not None:
            self.parallel.__exit__(None, None, None)


def _sift(bound, lister: "_Lister", count: int, level: float) -> tuple:
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


def _bound_task(blob: np.ndarray, forced: np.ndarray, free: np.ndarray, r: int, prev: np.ndarray | None,
                state: np.ndarray, count: int, level: float) -> tuple:
    """In a worker: :func:`_sift` the ``count`` supports of a lister from its ``state``, chunk by
    chunk of :data:`CHUNK` (the serial run's chunks), kept ones concatenated in listing order.
    ``blob`` is the pickled bounder (a uint8 array, so joblib memory-maps it and dask scatters it once
    per call); its kernels are module functions, loaded from the numba cache."""
    bound = pickle.loads(blob)
    lister = _Lister(forced, free, r, prev)
    lister.state, lister.total = state.copy(), count
    parts = [_sift(bound, lister, CHUNK, level) for _ in range(-(-count // CHUNK))]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            min(p[2] for p in parts), count,
            None if parts[0][4] is None else np.concatenate([p[4] for p in parts]))


def _tasks(lister: "_Lister", per_task: int):
    """``(state, count)`` of the tasks covering the rest of ``lister`` (moved past each)."""
    while lister.listed < lister.total:
        count = min(per_task * CHUNK, lister.total - lister.listed)
        yield lister.skip(count), count


def _enumerate(problem, start, incumbent, deadline, node_limit, mip_rel_gap, pool: _Pool | None,
               screen: SupportScreen | None) -> Enumeration:
    """:func:`enumerate_supports` with the workers of ``pool`` (None: bound here)."""
    t0 = time.perf_counter()
    search = _Search(problem.d, incumbent, None if start is None else (np.asarray(start[0], float).copy(),
                                                                       float(start[1])), mip_rel_gap)
    rationed = problem.hands_over_search and math.isfinite(deadline)

    def stopped_early(reason: str) -> Enumeration:
        return Enumeration(search.model, search.incumbent, -math.inf, False, search.nodes,
                           f"stopped: {reason}")

    if problem.hands_over_search and not math.isfinite(deadline):
        return stopped_early("with features of more than two values the in-support searches are planned "
                             "against a time limit, and there is none")
    listers = problem.listers(search.incumbent, deadline)
    for lister in listers:  # the supports ruled out before listing
        search.closed_floor = min(search.closed_floor, lister.outside)
    total = sum(lister.total for lister in listers)
    bound = problem.bounder()
    workers = 1 if pool is None else pool.workers
    blob = None if pool is None else np.frombuffer(pickle.dumps(bound, protocol=pickle.HIGHEST_PROTOCOL),
                                                       np.uint8)
    first = listers[0]
    bound(_Lister(first.forced, first.free, first.r).next(1), math.inf)
    # (compiles the kernel, if this process has not, before the first chunk is timed)
    done = visited = ruled_out = 0
    bound_time, open_floor = 0.0, math.inf
    report = progress.current()
    later_least = [min([problem.least_bound(later) for later in listers[i + 1:]], default=math.inf)
                   for i in range(len(listers))]  # every support of a size not yet reached is above this
    for index, lister in enumerate(listers):
        least = problem.least_bound(lister)
        level = search.prune_level()  # the incumbent's, fixed while this size is bounded
        if least >= level:  # every support of this size costs the incumbent already
            search.closed_floor = min(search.closed_floor, least)
            continue
        started_phase = time.perf_counter()
        kept_bounds, kept_supports, stopped, done_before = [], [], False, done
        known = None if screen is None else screen.survivors(problem, lister, level)
        if known is not None:  # an earlier fit's screen: the rest hold no model below its level
            search.closed_floor = min(search.closed_floor, screen.level)
            ruled_out += lister.total - known.shape[0]
            lister = _Listed(known, lister)
        passed: list[np.ndarray] | None = [] if screen is not None and known is None else None
        survivors = 0
        sampled = known is None and lister.total >= SAMPLED_PASS and math.isfinite(deadline)
        if sampled:  # a large size: its pass projected from samples spread over it
            projected = sampled_rate(bound, lister, level,
                                     PROJECTION_SHARE * (deadline - time.perf_counter()) * workers) * lister.total / workers
            if projected > PROJECTION_SHARE * (deadline - time.perf_counter()):
                return stopped_early(_too_long(lister, projected, deadline))

        def absorb(sifted: tuple) -> None:
            nonlocal done, passed, survivors
            kept_supports.append(sifted[0])
            kept_bounds.append(sifted[1])
            search.closed_floor = min(search.closed_floor, sifted[2])
            done += sifted[3]
            if passed is not None:  # the screen's survivors, while there are few enough to keep
                survivors += 0 if sifted[4] is None else sifted[4].shape[0]
                if sifted[4] is None or survivors > MAX_SUPPORTS:
                    passed = None
                else:
                    passed.append(sifted[4])

        # chunks of FIRST_CHUNK doubling to CHUNK, here, each projecting the whole pass at its rate;
        # then chunks of CHUNK, here or in tasks of whole chunks on the workers (the same chunks)
        size = FIRST_CHUNK
        while lister.listed < lister.total and (pool is None or size < CHUNK or known is not None):
            if time.perf_counter() > deadline:
                open_floor, stopped = min(open_floor, least), True
                break
            started_chunk = time.perf_counter()
            absorb(_sift(bound, lister, size, level))
            if size < CHUNK:
                took, listed_now = time.perf_counter() - started_chunk, size
                size *= 2
                left = deadline - time.perf_counter()
                # the rate of the latest chunk, once it is large enough that a call's fixed cost does
                # not dominate it (or slow enough to matter)
                if lister.listed < lister.total and math.isfinite(deadline) and not sampled and \
                        (listed_now >= PROJECTION_CHUNK or took > 0.1 * left):
                    projected = took * (lister.total - lister.listed) / listed_now / workers
                    if projected > PROJECTION_SHARE * left:
                        return stopped_early(_too_long(lister, projected, deadline))
        if not stopped and lister.listed < lister.total:
            per_chunk = (time.perf_counter() - started_phase) / lister.listed * CHUNK
            chunks_left = -(-(lister.total - lister.listed) // CHUNK)
            per_task = max(1, min(int(TASK_SECONDS / max(per_chunk, 1e-9)), -(-chunks_left // (4 * workers))))
            tasks = (delayed(_bound_task)(blob, lister.forced, lister.free, lister.r, lister.prev, state, count, level)
                     for state, count in _tasks(lister, per_task))
            results = pool.run(tasks, deadline)
            for sifted in results if results is not None else ():
                absorb(sifted)
                if time.perf_counter() > deadline:
                    results.close()  # the tasks not finished are dropped
                    break
            if done - done_before < lister.total:  # the deadline came first
                open_floor, stopped = min(open_floor, least), True
        phase_time = time.perf_counter() - started_phase
        bound_time += phase_time
        if passed is not None and not stopped:  # every support of this size screened at ``level``
            screen.store(problem, lister, level, np.concatenate(passed) if passed else
                         np.zeros((0, lister.r + lister.forced.size), np.int64))
        bounds = np.concatenate(kept_bounds) if kept_bounds else np.zeros(0)
        if report is not None:  # this size bounded: its least bound, the closed regions, later sizes
            report(time.perf_counter() - t0, search.incumbent, min(search.incumbent, search.closed_floor, open_floor,
                                                                   float(bounds.min(initial=math.inf)),
                                                                   later_least[index]), math.nan)
        order = np.argsort(bounds, kind="stable")  # ties: the order of listing
        searching = time.perf_counter()
        for position, s in enumerate(order):
            if bounds[s] >= search.prune_level():
                search.closed_floor = min(search.closed_floor, float(bounds[s]))
                break
            if time.perf_counter() > deadline or (node_limit is not None and search.nodes >= node_limit):
                open_floor, stopped = min(open_floor, float(bounds[s])), True
                break
            until = time.perf_counter() + SEARCH_SHARE * (deadline - time.perf_counter()) if rationed else deadline
            unfinished = problem.search(_row(kept_supports, s), float(bounds[s]), search, until, node_limit)
            visited += 1
            if rationed and (node_limit is None or search.nodes < node_limit):
                ahead = int((bounds[order[position + 1:]] < search.prune_level()).sum())
                projected = (time.perf_counter() - searching) / (position + 1) * ahead
                if math.isfinite(unfinished) or projected > PROJECTION_SHARE * (deadline - time.perf_counter()):
                    return stopped_early(f"searching the {ahead + 1} supports of {lister.r + lister.forced.size} "
                                         f"features below the incumbent one by one would not fit the "
                                         f"{max(deadline - time.perf_counter(), 0.0):.0f} s left")
            if math.isfinite(unfinished):
                rest = bounds[order[position + 1:]]
                open_floor = min(open_floor, unfinished, float(rest.min()) if rest.size else math.inf)
                stopped = True
                break
            if report is not None:  # the search's bound: closed regions, this size's rest, later sizes
                following = float(bounds[order[position + 1]]) if position + 1 < order.size else math.inf
                report(time.perf_counter() - t0, search.incumbent,
                       min(search.incumbent, search.closed_floor, following, later_least[index]), math.nan)
        if stopped:  # the sizes not reached keep their least bound
            open_floor = min(open_floor, later_least[index])
            break
        # this size done, with the freshest incumbent: would the larger sizes it does not prune yet
        # fit the time, at this size's rate (measured on a full chunk; larger supports cost more)?
        ahead = [later for later in listers[index + 1:] if problem.least_bound(later) < search.prune_level()]
        if ahead and lister.total >= CHUNK and math.isfinite(deadline):
            count = sum(later.total for later in ahead)
            projected = phase_time * count / lister.total
            if projected > PROJECTION_SHARE * (deadline - time.perf_counter()):
                return stopped_early(f"bounding the {count} supports of {ahead[0].r + ahead[0].forced.size} to "
                                     f"{ahead[-1].r + ahead[-1].forced.size} features would take about "
                                     f"{projected:.0f} s, more than the "
                                     f"{max(deadline - time.perf_counter(), 0.0):.0f} s left")
    lower = min(search.incumbent, search.closed_floor, open_floor)
    finished = not math.isfinite(open_floor)
    symmetric = max((int((lister.prev >= 0).sum()) for lister in listers if lister.prev is not None), default=0)
    ruled_in = max(lister.forced.size for lister in listers) - int(np.count_nonzero(problem.forced))
    message = (f"{done} of {total} supports bounded in {bound_time:.2f} s, {visited} searched, "
               f"{search.nodes} nodes" + (f" ({symmetric} columns interchangeable with an earlier one: their "
                                          f"symmetric supports skipped)" if symmetric else "")
               + (f" ({ruled_out} ruled out by the screen of an earlier fit of these rows)" if ruled_out else "")
               + (f" ({ruled_in} features in every support: without any of them every model costs at least "
                  f"{min(lister.outside for lister in listers):.9g}, exclusion bounds)" if ruled_in > 0 else ""))
    return Enumeration(search.model, search.incumbent, lower, finished, search.nodes, message)


def _too_long(lister: "_Lister", projected: float, deadline: float) -> str:
    return (f"bounding the {lister.total} supports of {lister.r + lister.forced.size} features would take "
            f"about {projected:.0f} s, more than the {max(deadline - time.perf_counter(), 0.0):.0f} s left")


def _row(chunks: list[np.ndarray], index: int) -> np.ndarray:
    """Row ``index`` of the concatenation of ``chunks`` (supports of different sizes stay apart)."""
    for chunk in chunks:
        if index < chunk.shape[0]:
            return chunk[index]
        index -= chunk.shape[0]
    raise IndexError(index)
