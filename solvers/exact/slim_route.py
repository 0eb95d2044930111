"""The SLIM route: which exact step runs on which instance (Ustun & Rudin 2016, the SLIM MILP).

:data:`ROUTE` is the table: the Bayes-error floor of the rows grouped by identical feature vectors
(always; a finite bound whatever else runs, :mod:`solvers.exact.floor`), the support enumeration with Bayes-error bounds (0/1 features; it
proves most 0/1 tables alone, and when the supports are too many it stops after its first chunks),
on 0/1 features with ``max_size`` the least Bayes error of any ``max_size`` features (a floor that stays
positive on wide tables, :mod:`solvers.exact.support_bayes_floor`), on
integer features the orthant search (every support's sign orthants screened by a monotone
flow bound on the support's merged patterns, the rest enumerated; :mod:`solvers.exact.monotone_supports`)
when its work projects within the time left (1.5 times, :data:`MONOTONE_SLACK`, when no box search
follows), or its first pass alone unless the box search on few features follows (once the first pass
ends its bound is finite and rises; before the LP: when it finishes, the LP's time is saved), the
sign-cover LP bound (always: a quarter of the time left, or on large 0/1 tables, where HiGHS does not
solve the strengthened MILP's root, round after round until it converges,
:data:`LONG_LP_NONZEROS`), the box search (few integer features of many values), then
on more free features the same box search when the rows are few (:data:`WIDE_BOX_PAIRS`: its
incumbents beat the MILP's there, though it rarely finishes), then
HiGHS on the MILP strengthened with the LP's cuts (always). Every step returns a bound valid for
every model of the instance, so the route keeps the largest (:mod:`solvers.exact.route`).
Operational constraints are rows of the MILP (the last step); the support enumeration, the screen on
blocked rows and the orthant search read them too when they are rules on supports (signs, folded into the
box, and counts of the features used: only the supports that obey them are searched,
:mod:`formulations.support_rules`), and the box searches when they are signs alone. The other steps ignore
them: the bounds stay valid, and the searches do not run then. On 0/1 features the box
search is not used: there the MILP with the sign-cover cuts does better (``docs/benchmarks.md``).
"""
from __future__ import annotations

import math

import numpy as np

from formulations.base import Model
from formulations.slim import SLIMInstance
from formulations.support_rules import instance_rules
from solvers.backends.highs import solve_highs
from solvers.exact.floor import ROUNDOFF, bayes_floor, forced_mask
from solvers.exact.blocked_supports import applies as blocked_applies
from solvers.exact.blocked_pass import screen_memory, screen_words
from solvers.exact.blocked_supports import solve_blocked
from solvers.exact.support_bayes_floor import applies as support_floor_applies
from solvers.exact.support_bayes_floor import least_bayes_error
from solvers.exact.box_cover import MAX_FEATURES, box_cover, box_cover_memory
from solvers.exact.monotone_supports import KEY_SLOTS, monotone_supports
from solvers.exact.monotone_supports import applies as monotone_applies
from solvers.exact.route import Incumbent, Outcome, Step
from solvers.exact.sign_cover import SignCover, SignCoverProblem, sign_cover
from solvers.exact.support_listing import CHUNK
from solvers.exact.support_workers import kernel_copies
from solvers.exact.supports import enumerate_supports
from solvers.exact.zero_one_supports import zero_one
from solvers.limits import MIN_PHASE, Limits, job_threads
from solvers.registry import solver_options
from solvers.result import Status, prune_level


#: the orthant search (:mod:`solvers.exact.monotone_supports`) holds at most this many pairs of a positive
#: and a negative pattern of one support (at most 97 bytes each per thread: :func:`_monotone_bytes`)
MONOTONE_PAIRS = 10**7
#: the orthant search goes on while its projection is at most this many times the time left, when no
#: box search follows it (the projection errs both ways by up to about half, and HiGHS seldom proves
#: what it could not; with a box search next, the box search gets the time)
MONOTONE_SLACK = 1.5
#: on more than ``box_cover.MAX_FEATURES`` free features the box search runs (in place of HiGHS) only when
#: its nodes are cheap: at most this many (positive row, negative row) pairs (a node prices every pair).
#: It rarely finishes there, but its incumbents beat HiGHS's
#: (``docs/benchmarks.md``, few-valued integer look-alikes)
WIDE_BOX_PAIRS = 3 * 10**5
#: seconds the support enumeration with Bayes-error bounds may take whatever its share (0.2) of the time left:
#: at short limits that share is too little for passes that prove in a second or two (the quickstart's
#: table at 6 s), while on longer ones the screen on blocked rows is often faster than a pass the share
#: would cut (mushroom); the enumeration hands over as soon as its pass projects past its budget, so
#: this costs at most these seconds when it does (and at most half the time left: ``limits.LEAST_SHARE``)
BAYES_LEAST_SECONDS = 5.0
#: seconds HiGHS takes to load and presolve a MILP, per nonzero of its matrix, before it first looks at
#: its clock (measured on SLIM programs of 10^5-10^6 nonzeros); taken off the time limit it is given
HIGHS_LOAD_SECONDS_PER_NONZERO = 7e-7


# ----------------------------------------------------------------------------------- floor
def _floor_memory(instance: SLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return 16.0 * m * d + 64.0 * m


def _run_floor(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    return Outcome(bound=bayes_floor(instance), message="Bayes error of the rows grouped by their feature vectors")


# ------------------------------------------------------------------ supports on blocked rows
def _blocked_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    rules, reason = instance_rules(instance)
    if reason is not None:
        return reason
    if instance.spec.max_size is None:
        return "no max_size (supports of every feature)"
    return blocked_applies(zero_one(instance), rules)


def _run_blocked(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    found = solve_blocked(zero_one(instance), limits, rules=instance_rules(instance)[0], **best.search_start())
    model = None if found.model is None else Model(*found.model)
    return Outcome(model=model, bound=found.bound, nodes=found.nodes, message=found.message,
                   projected=found.projected)


# ------------------------------------------------------------------ least Bayes error over supports
def _support_floor_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    cs = instance.coefficients
    if instance.spec.max_size is None:
        return "no max_size (the Bayes error of all the columns is the floor step's)"
    if forced_mask(cs).any():
        return "some features are forced"
    free = np.flatnonzero((cs.lb < 0) | (cs.ub > 0))
    return support_floor_applies(instance.X, instance.y, instance.weights, free, int(instance.spec.max_size))


def _screen_memory(instance: SLIMInstance, threads: int) -> float:
    """Bytes of the screen on ``threads`` threads (:func:`solvers.exact.blocked_pass.screen_memory`)."""
    return screen_memory(instance.X.shape[1], int(instance.spec.max_size or 2),
                         screen_words(instance.y, instance.weights), threads)


def _support_floor_memory(instance: SLIMInstance, limits: Limits) -> float:
    """Bytes of the screen on one thread."""
    return _screen_memory(instance, 1)


def _blocked_memory(instance: SLIMInstance, limits: Limits) -> float:
    """Bytes of the screen on ``n_jobs`` threads."""
    return _screen_memory(instance, job_threads(limits.n_jobs))


def _run_support_floor(instance: SLIMInstance, best: Incumbent, limits: Limits,
                       notes: dict) -> Outcome:
    cs = instance.coefficients
    free = np.flatnonzero((cs.lb < 0) | (cs.ub > 0))
    least, message = least_bayes_error(instance.X, instance.y, instance.weights, free, int(instance.spec.max_size),
                                       limits, ceiling=best.target)
    return Outcome(bound=least * (1.0 - ROUNDOFF) if math.isfinite(least) else least, message=message)


# --------------------------------------------------------------------------- sign-cover LP
#: on 0/1 features with at least this many non-zero entries the sign-cover LP keeps the time, round after
#: round, until it converges: on the binarised tables measured from this size up HiGHS did not solve the
#: strengthened MILP's root LP within minutes, while each LP round raised the bound
#: (docs/benchmarks-history.md, stop 58)
LONG_LP_NONZEROS = 3 * 10**5


def _long_lp(instance: SLIMInstance) -> bool:
    """Whether the sign-cover LP keeps the time (:data:`LONG_LP_NONZEROS`)."""
    return zero_one(instance).binary and np.count_nonzero(instance.X) >= LONG_LP_NONZEROS


def _sign_cover_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    if _long_lp(instance):
        return (f"0/1 features with {LONG_LP_NONZEROS:.0e} non-zero entries or more "
                "(the LP keeps the time: sign_cover_lp_long)")
    return None


def _sign_cover_long_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    if not _long_lp(instance):
        return (f"integer features, or 0/1 ones with fewer than {LONG_LP_NONZEROS:.0e} non-zero entries "
                "(the LP takes its share: sign_cover_lp)")
    return None


def _sign_cover_memory(instance: SLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return 24.0 * m * d + 200.0 * m * (d + 2)


def _sign_cover_needs_kernels(instance: SLIMInstance) -> bool:
    """The LP prices its cuts with numba on integer features only (on 0/1 ones by matrix products)."""
    return not zero_one(instance).binary


def _run_sign_cover(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    target = prune_level(best.target, limits.mip_rel_gap)
    cover = sign_cover(SignCoverProblem.from_zero_one(zero_one(instance)), limits, target=target)
    return Outcome(bound=cover.bound, message=f"{cover.rounds} rounds, {cover.cuts.shape[0]} cuts kept",
                   notes={"sign_cover": cover})


# -------------------------------------------------------------- supports with Bayes errors
def _bayes_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    return instance_rules(instance)[1] or zero_one(instance).bayes_reason()


def _bayes_memory(instance: SLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return (32.0 * d * (m // 64 + 1) + 8.0 * CHUNK * d) * kernel_copies(limits.n_jobs) + 200.0 * m


def _run_bayes(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    found = enumerate_supports(zero_one(instance), limits, rules=instance_rules(instance)[0], **best.search_start())
    model = None if found.model is None else Model(*found.model)
    return Outcome(model=model, bound=found.bound, nodes=found.nodes, message=found.message,
                   projected=found.projected)


# ------------------------------------------------------------- orthants with monotone bounds
def _monotone_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    reason = instance_rules(instance)[1]
    if reason is not None:
        return reason
    problem = zero_one(instance)
    if problem.binary:
        return "every feature is 0/1 (the Bayes-error steps take them)"
    return monotone_applies(problem)


def _monotone_pairs(instance: SLIMInstance) -> float:
    """Most pattern pairs of one support: the positive times the negative rows, at most
    :data:`MONOTONE_PAIRS` (the search stops at a support of more)."""
    positive = int(np.sum(instance.y > 0))
    return float(min(positive * (instance.y.size - positive), MONOTONE_PAIRS))


def _monotone_bytes(instance: SLIMInstance) -> tuple[float, float]:
    """Bytes of the orthant search: the table's copies, and per thread its scratch (numbering slots,
    prefix sorts) and, per pattern pair of one support, at most one conflict's flow network (72
    bytes: the pair, its flow, two arcs) and, in the near flows, a grouping's pair (9 bytes) and the
    pairs kept across groupings (16 bytes: arrays grown by doubling)."""
    m, d = instance.X.shape
    return 64.0 * m * d, 97.0 * _monotone_pairs(instance) + 8.0 * KEY_SLOTS + 32.0 * m


def _monotone_threads(instance: SLIMInstance, limits: Limits) -> int:
    """Threads of the orthant search: ``n_jobs``'s (:func:`solvers.limits.job_threads`), fewer when
    theirs would not fit the memory budget (one at least: the step's estimate then says so)."""
    shared, per_thread = _monotone_bytes(instance)
    fitting = int((limits.memory - shared) // per_thread)
    return max(1, min(job_threads(limits.n_jobs), fitting))


def _monotone_memory(instance: SLIMInstance, limits: Limits) -> float:
    shared, per_thread = _monotone_bytes(instance)
    return shared + _monotone_threads(instance, limits) * per_thread


def _run_monotone(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    # past its projection only when no box search follows (HiGHS after it seldom proves these tables); for
    # its bound alone (finite once its first pass ends, and above the LP's and the wide box search's)
    # unless the box search on few features, which often proves, follows
    boxes = _box_applies(instance, limits) is None
    wide = _box_wide_applies(instance, limits) is None
    found = monotone_supports(zero_one(instance), limits, **best.search_start(), max_pairs=MONOTONE_PAIRS,
                              slack=1.0 if boxes or wide else MONOTONE_SLACK,
                              threads=_monotone_threads(instance, limits), partial=not boxes,
                              rules=instance_rules(instance)[0])
    model = None if found.coef is None else Model(found.coef, found.intercept)
    return Outcome(model=model, bound=found.bound, message=found.message, projected=found.projected)


# -------------------------------------------------------------------------------- box search
def _box_reason(instance: SLIMInstance) -> str | None:
    """Why neither box search runs on ``instance`` (both need integer points on features not all 0/1, and
    constraints that are at most signs, folded into the box)."""
    rules, reason = instance_rules(instance)
    if reason is not None:
        return reason
    if rules is not None and rules.most.size:
        return "the instance counts the features used (the box search does not read counts)"
    problem = zero_one(instance)
    if not problem.integer.all():
        return "the points are not all integers"
    if problem.binary:
        return "every feature is 0/1 (the strengthened MILP does better there)"
    return None


def _box_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    reason = _box_reason(instance)
    if reason is not None:
        return reason
    problem = zero_one(instance)
    if problem.free.size > MAX_FEATURES:
        return f"it has {problem.free.size} free features (over {MAX_FEATURES})"
    return None


def _box_memory(instance: SLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return float(box_cover_memory(zero_one(instance))) * kernel_copies(limits.n_jobs) + 16.0 * m * d


def _run_box(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    found = box_cover(zero_one(instance), limits, **best.search_start())
    model = None if found.coef is None else Model(found.coef, found.intercept)
    return Outcome(model=model, bound=found.bound, nodes=found.nodes,
                   message=f"{'searched to the end' if found.finished else 'stopped at a limit'}, {found.nodes} nodes")


def _box_wide_applies(instance: SLIMInstance, limits: Limits) -> str | None:
    reason = _box_reason(instance)
    if reason is not None:
        return reason
    problem = zero_one(instance)
    if problem.free.size <= MAX_FEATURES:
        return f"it has {problem.free.size} free features (the box search takes them)"
    pairs = float(np.sum(problem.y > 0)) * float(np.sum(problem.y < 0))
    if pairs > WIDE_BOX_PAIRS:
        return f"its {pairs:.3g} pairs of a positive and a negative row are over {WIDE_BOX_PAIRS:.0e} (slow nodes)"
    return None


# ------------------------------------------------------------------- HiGHS, strengthened MILP
def _highs_memory(instance: SLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return 150.0 * (np.count_nonzero(instance.X) + 4.0 * m + 6.0 * d)


def _run_highs(instance: SLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    program = instance.exact()
    cover: SignCover | None = notes.get("sign_cover")
    start = None if best.model is None else instance.lift(best.model)
    if cover is not None:
        target, warm = cover.strengthen(program), None if start is None else SignCover.signed(program, start)
    else:
        target, warm = program, start
    # HiGHS looks at its clock only once the model is loaded and presolved: that time comes first
    after_load = limits.ending_earlier(HIGHS_LOAD_SECONDS_PER_NONZERO * target.A.nnz)
    if after_load.seconds_left() <= MIN_PHASE:
        return Outcome(message=f"not started: loading the MILP ({target.A.nnz} nonzeros) would use the time left")
    result = solve_highs(target, **solver_options(after_load), warm_start=warm)
    model = None
    if result.x is not None:
        model = instance.round(instance.decode(result.x[:program.n_variables]))
    bound = float(result.bound) if result.bound is not None and not math.isnan(result.bound) else -math.inf
    return Outcome(model=model, bound=bound, infeasible=result.status == Status.INFEASIBLE, nodes=result.nodes,
                   message=f"{'strengthened ' if cover is not None else ''}MILP: {result.message}")


ROUTE: tuple[Step, ...] = (
    Step("floor", _run_floor, lambda instance, limits: None, _floor_memory, 0.0,
         "a lower bound: the Bayes error of the rows grouped by feature vector, plus the forced features' costs",
         always=True),
    Step("bayes_supports", _run_bayes, _bayes_applies, _bayes_memory, 0.2,
         "the optimum when every support below the incumbent is bounded or searched (Bayes-error bounds)",
         ("solvers.exact.bayes_error", "solvers.exact.supports"), least=BAYES_LEAST_SECONDS),
    Step("blocked", _run_blocked, _blocked_applies, _blocked_memory, 1.0,
         "the optimum when every support of max_size 0/1 features is screened by its Bayes error (rows "
         "blocked by its first two features; on binarised variables, supports of groups of their nested "
         "thresholds) and the survivors are searched (the MILP on each)",
         ("solvers.exact.blocked_entropy", "solvers.exact.group_screen", "solvers.exact.bayes_error",
          "solvers.exact.supports")),
    Step("support_floor", _run_support_floor, _support_floor_applies, _support_floor_memory, 1.0,
         "a lower bound: the least Bayes error of any max_size 0/1 features (every model lies in such a "
         "support, and its rows that agree on it are scored alike)", ("solvers.exact.blocked_entropy",)),
    Step("monotone_supports", _run_monotone, _monotone_applies, _monotone_memory, 1.0,
         "the optimum when every sign orthant of every max_size integer features is screened by a monotone "
         "bound (a flow through the pairs no monotone score separates) or enumerated",
         ("solvers.exact.monotone_supports", "solvers.exact.pattern_groups", "solvers.exact.monotone_flows",
          "solvers.exact.dominance_sweep", "solvers.exact.tail_screen", "solvers.exact.orthant_boxes")),
    Step("sign_cover_lp", _run_sign_cover, _sign_cover_applies, _sign_cover_memory, 0.25,
         "a lower bound: the sign-cover LP (the monotone relaxation of SLIM)", ("solvers.exact.sign_cover",),
         needs_kernels=_sign_cover_needs_kernels),
    Step("sign_cover_lp_long", _run_sign_cover, _sign_cover_long_applies, _sign_cover_memory, 1.0,
         "a lower bound: the sign-cover LP, its rounds until it converges (HiGHS does not solve the "
         "strengthened MILP's root on such tables)", ("solvers.exact.sign_cover",),
         needs_kernels=_sign_cover_needs_kernels),
    Step("box_search", _run_box, _box_applies, _box_memory, 1.0,
         "the optimum by branch and bound on the points' box (pair-conflict max-flow bound)",
         ("solvers.exact.box_cover",)),
    Step("box_search_wide", _run_box, _box_wide_applies, _box_memory, 1.0,
         "the optimum by the box search on more than MAX_FEATURES free features, when the rows are few; "
         "mostly its incumbent (its bound is the least over its open boxes)", ("solvers.exact.box_cover",)),
    Step("highs", _run_highs, lambda instance, limits: None, _highs_memory, 1.0,
         "the optimum of the MILP (with the sign-cover cuts), operational constraints included"),
)
