"""The RiskSLIM route: which exact step runs on which instance (Ustun & Rudin 2019, eq. 1).

:data:`ROUTE` is the table: the box floor (a finite bound from the start, one gradient), the support
enumeration with a box-constrained logistic bound per support (:mod:`solvers.exact.supports`) when the
instance's operational constraints are at most rules on supports (signs, folded into the box, and counts
of the features used: only the supports that obey them are listed, :mod:`formulations.support_rules`) and
its kernels fit the memory budget; on 0/1 features without forced ones (and rules whose supports of
``max_size`` hold every model that obeys them), when that enumeration hands over (too many supports for
the time left), the screen of every support by its saturated loss on rows blocked by its first two features
(:mod:`solvers.exact.blocked_supports`, several times faster per support; on wide binarised tables only
the supports exclusion bounds cannot rule out, :mod:`solvers.exact.exclusion_listing`; when that pass
would not fit the time left, one group of columns at a time, under a bound that rises as groups are done,
:mod:`solvers.exact.ordered_screen`); then SCIP's
branch and bound with lazy tangent cuts of the logistic loss in one tree (:mod:`solvers.backends.scip`),
which keeps every constraint. The enumeration stops at once, with its incumbent, when its first chunk
projects that bounding every support would not fit the time left; the floor (always,
:mod:`solvers.exact.floor`: the least tangent plane of the loss over the sparse coefficient box, near
the minimiser of the loss over that box's convex hull) then gives a bound whatever SCIP reaches, and
SCIP gets the time, warm-started from the incumbent, with the floor's tangent among its first cuts (so
its root bound starts at the floor, not below it).
"""
from __future__ import annotations

import math

import numpy as np

from formulations.base import Model
from formulations.riskslim import RiskSLIMInstance
from formulations.rows import is_binary
from formulations.support_rules import instance_rules
from solvers.backends.scip import solve_scip
from solvers.exact.blocked_pass import screen_memory, screen_words
from solvers.exact.blocked_supports import solve_blocked
from solvers.exact.blocked_supports import applies as blocked_applies
from solvers.exact.box_logistic import MAX_PATTERNS, copy_counts
from solvers.exact.floor import box_floor, riskslim_floor
from solvers.exact.route import Incumbent, Outcome, Step
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.support_listing import CHUNK
from solvers.exact.support_workers import kernel_copies
from solvers.exact.supports import enumerate_supports
from solvers.heuristics.polish import with_polisher
from solvers.limits import Limits, job_threads
from solvers.registry import solver_options
from solvers.result import Status


def _size(instance: RiskSLIMInstance) -> int:
    d = instance.X.shape[1]
    return d if instance.spec.max_size is None else min(int(instance.spec.max_size), d)


# ------------------------------------------------------------------ supports on blocked rows
def _blocked_applies(instance: RiskSLIMInstance, limits: Limits) -> str | None:
    reason = _supports_applies(instance, limits)
    if reason is not None:
        return reason
    return blocked_applies(SparseLogistic.from_instance(instance), instance_rules(instance)[0])


def _blocked_memory(instance: RiskSLIMInstance, limits: Limits) -> float:
    """Bytes of the screen (:func:`solvers.exact.blocked_pass.screen_memory`, on ``n_jobs`` threads)."""
    return screen_memory(instance.X.shape[1], _size(instance), screen_words(instance.y, instance.weights),
                         job_threads(limits.n_jobs))


def _run_blocked(instance: RiskSLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    found = solve_blocked(SparseLogistic.from_instance(instance), limits, point=instance.continuous_fit(),
                          rules=instance_rules(instance)[0], **best.search_start())
    model = None if found.model is None else Model(*found.model)
    return Outcome(model=model, bound=found.bound, nodes=found.nodes, message=found.message, relaxed=found.relaxed,
                   projected=found.projected)


# -------------------------------------------------------------------------- supports
def _supports_applies(instance: RiskSLIMInstance, limits: Limits) -> str | None:
    reason = instance_rules(instance)[1]
    if reason is not None:
        return reason
    if not instance.coefficients.integer.all():
        return "the points are not all integers"
    return None


def _supports_memory(instance: RiskSLIMInstance, limits: Limits) -> float:
    """Bytes of the bounding kernel for supports of ``max_size`` features: with 0/1 features, bit
    sets of the rows per prefix pattern (``2^(K-1)`` of them), else one row block and the pattern
    accumulators; plus a chunk of supports; in each process that bounds (``kernel_copies``)."""
    X, w = instance.X, instance.weights
    m, d = X.shape
    k = _size(instance)
    chunk = 8.0 * CHUNK * (k + 2)
    copies = kernel_copies(limits.n_jobs)
    positive = instance.y > 0
    counted = [copy_counts(w[side]) for side in (positive, ~positive)]
    if is_binary(X) and all(c is not None for c in counted):  # the bit-set kernel's test
        words = sum(float(np.ceil(c[0].sum() / 64.0)) for c in counted) + 2.0
        half = 2.0 ** max(k - 1, 0)
        return (8.0 * half * words + 8.0 * 2 * half * (k + 4) + 8.0 * d * words + chunk) * copies
    return (8.0 * m * (k + 4) + 16.0 * MAX_PATTERNS + 8.0 * m * d + chunk) * copies


def _run_supports(instance: RiskSLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    found = enumerate_supports(SparseLogistic.from_instance(instance), limits, rules=instance_rules(instance)[0],
                               **best.search_start())
    model = None if found.model is None else Model(*found.model)
    return Outcome(model=model, bound=found.bound, nodes=found.nodes, message=found.message,
                   projected=found.projected)


# ----------------------------------------------------------------------------------- floors
def _run_box_floor(instance: RiskSLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    return Outcome(bound=box_floor(instance), message="the tangent at the loss minimiser over the box, plus "
                                                      "the forced L0 costs")


#: the hull floor's share of the time left, and its cap in seconds under a time limit (it stops earlier
#: once converged; without a time limit only its iteration cap stops it, so its bound is reproducible).
#: What it reaches SCIP starts from (its tangent is in SCIP's first cuts), so its time is not lost there.
FLOOR_SHARE, FLOOR_SECONDS = 0.25, 60.0


def _floor_memory(instance: RiskSLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return 8.0 * (6 * m + 12 * d)


def _run_floor(instance: RiskSLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    floor = riskslim_floor(instance, limits.capped(FLOOR_SECONDS))
    return Outcome(bound=floor.bound, message=f"least sparse tangent plane, {floor.iterations} gradient steps",
                   notes={} if floor.point is None else {"floor point": floor.point})


# ------------------------------------------------------------------ SCIP, lazy tangent cuts
def _scip_memory(instance: RiskSLIMInstance, limits: Limits) -> float:
    m, d = instance.X.shape
    return 32.0 * m * (d + 2) + 2e7


def _run_scip(instance: RiskSLIMInstance, best: Incumbent, limits: Limits, notes: dict) -> Outcome:
    points = [notes["floor point"]] if "floor point" in notes else []
    program = with_polisher(instance, instance.with_tangents(instance.exact(), points))
    result = solve_scip(program, **solver_options(limits),
                        warm_start=None if best.model is None else instance.lift(best.model))
    model = None if result.x is None else instance.round(instance.decode(result.x))
    bound = float(result.bound) if not math.isnan(result.bound) else -math.inf
    return Outcome(model=model, bound=bound, infeasible=result.status == Status.INFEASIBLE, nodes=result.nodes,
                   message=f"lazy-cut tree: {result.message}")


ROUTE: tuple[Step, ...] = (
    Step("box_floor", _run_box_floor, lambda instance, limits: None, lambda instance, limits: 0.0, 1.0,
         "a lower bound from the start: the tangent at the loss minimiser over the box, plus forced L0 costs",
         always=True, relaxes=True),
    Step("supports", _run_supports, _supports_applies, _supports_memory, 1.0,
         "the optimum when every support is bounded below the incumbent or searched (box-constrained "
         "logistic bounds)", ("solvers.exact.box_logistic", "solvers.exact.supports")),
    Step("blocked", _run_blocked, _blocked_applies, _blocked_memory, 1.0,
         "the optimum when every support of max_size 0/1 features is ruled out by exclusion bounds or "
         "screened by its saturated loss (rows blocked by its first two features) and the survivors are "
         "bounded or searched",
         ("solvers.exact.blocked_entropy", "solvers.exact.box_logistic", "solvers.exact.supports")),
    Step("floor", _run_floor, lambda instance, limits: None, _floor_memory, FLOOR_SHARE,
         "a lower bound: the least tangent plane of the loss over the sparse box (at the minimiser over "
         "its convex hull), plus L0 costs", always=True, relaxes=True),
    Step("scip", _run_scip, lambda instance, limits: None, _scip_memory, 1.0,
         "the optimum of the MILP with lazy tangent cuts of the logistic loss (one SCIP tree, its first cuts "
         "holding the floor's tangent), operational constraints included"),
)
