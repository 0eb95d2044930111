"""Route tables: the exact engine runs a table of steps, keeps the best model and the largest bound.

A *route* is a tuple of :class:`Step` rows, one table per problem family
(:mod:`solvers.exact.slim_route`, :mod:`solvers.exact.riskslim_route`). Each row says

* ``applies(instance, limits) -> reason | None``: whether the step can take this *formulation
  instance* (features, value counts, coefficient set, constraints, weights; never program row
  names), and if not, why;
* ``memory(instance, limits) -> bytes``: what the step will allocate (in all its processes, e.g.
  each of ``limits.n_jobs`` bounding workers), estimated *before* it allocates and compared with
  ``limits.memory``;
* ``share``: the share of the time left the step may spend, and ``least``: the seconds it may spend
  whatever its share (never past the fit's deadline);
* ``kernels``: the modules whose numba kernels it runs (:mod:`solvers.compiled`), and ``needs_kernels``:
  whether it runs them on an instance (else it runs before they are compiled);
* ``always``: the step runs even with no time left and without compiled kernels (a *floor*,
  :mod:`solvers.exact.floor`: cheap, and the fit's bound stays finite whatever the other steps do);
  it is skipped only once proven or when over the memory budget;
* ``relaxes``: its bound holds for every *real* model of the instance's box (points anywhere in their
  ranges, at most ``max_size`` non-zero), not only the integer ones (:func:`relaxation_bound`; another
  RiskSLIM multiplier's models are such models, :mod:`solvers.multipliers`); a step that does not relax
  may still return such a bound beside its own (``Outcome.relaxed``: e.g. what its screens and box fits
  closed, without its searches);
* ``run(instance, incumbent, limits, notes) -> Outcome``, with ``limits`` the step's share of the
  fit's budget (:meth:`solvers.limits.Limits.share` of ``share``, at least ``least``): a model (or None), a lower bound
  valid for *every* model of the instance, whether it proved infeasibility, and notes handed to
  later steps (e.g. the sign-cover cuts).

:func:`run_route` runs the rows in order until the incumbent is certified (:func:`certified`, the
one certificate test) or the bound shows that no model beats the fit's objective limit
(:attr:`solvers.limits.Limits.objective_limit`, which the steps prune with), keeps the incumbent of least true objective (``instance.objective``) among
the models that obey the program (``feasible``), and the largest bound. It records, per row, that
it ran (seconds, bound, objective after it, its message) or why it did not (does not apply, over
the memory budget, kernels not compiled, no time left, already proven, nothing beats the limit). Steps never relabel each
other's results: the route's status is decided here, once.

The progress line (:mod:`solvers.progress`, when a caller opted in) shows the route's numbers: after
each step its incumbent and bound, and during a step the step's own reports with the route's
incumbent and bound folded in (the least objective, the largest bound), so the bound shown never
falls back below the floor.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from formulations.base import Instance, Model
from solvers import progress
from solvers.compiled import kernels_ready
from solvers.limits import MIN_PHASE, Limits, seconds_left_for
from solvers.result import Status, certified


@dataclass(frozen=True)
class Incumbent:
    """The best model known when a step starts (None: none yet), its true objective, and the
    objective limit of the fit (:attr:`solvers.limits.Limits.objective_limit`)."""

    model: Model | None
    objective: float = math.inf
    limit: float = math.inf

    @property
    def target(self) -> float:
        """The objective a step must beat: the incumbent's or the objective limit, the least."""
        return min(self.objective, self.limit)

    def search_start(self) -> dict:
        """The ``start`` / ``incumbent`` keywords of the searches (:func:`solvers.exact.supports.
        enumerate_supports`, :func:`solvers.exact.box_cover.box_cover`): prune at :attr:`target`,
        start from the model (if any)."""
        start = {} if math.isinf(self.target) else {"incumbent": self.target}
        if self.model is not None:
            start["start"] = (self.model.coef.copy(), float(self.model.intercept))
        return start


@dataclass(frozen=True)
class Outcome:
    """What one step returns: a model (checked by the route), a bound valid for every model of the
    instance (objective units; ``-inf``: none), whether it proved that no model exists, its
    branch-and-bound nodes, a sentence, notes for later steps, a bound valid for every real model
    of the box (``relaxed``, module docstring; ``-inf``: none; a step that ``relaxes`` need not set it),
    and, when it stopped short of its proof, the seconds its whole work projected from its start
    (``projected``; nan: not known or finished)."""

    model: Model | None = None
    bound: float = -math.inf
    infeasible: bool = False
    nodes: int = 0
    message: str = ""
    notes: Mapping[str, Any] = field(default_factory=dict)
    relaxed: float = -math.inf
    projected: float = math.nan


@dataclass(frozen=True)
class Step:
    """One row of a route table (module docstring)."""

    name: str
    run: Callable[..., Outcome]
    applies: Callable[[Instance, Limits], str | None]
    memory: Callable[[Instance, Limits], float]
    share: float
    proves: str
    kernels: tuple[str, ...] = ()
    always: bool = False
    relaxes: bool = False
    least: float = 0.0
    needs_kernels: Callable[[Instance], bool] = lambda instance: True


@dataclass(frozen=True)
class StepRecord:
    """What became of one row: ``ran`` with its seconds, or the reason it was skipped; ``relaxed``: its
    bound on the real models of the box (its own bound when the row ``relaxes``, else its outcome's
    ``relaxed``); ``started``: the fit's elapsed seconds when it started; ``share``, ``least``: the row's share of
    the time left and least seconds; ``projected``: its outcome's."""

    step: str
    ran: bool
    reason: str = ""
    seconds: float = 0.0
    bound: float = -math.inf
    objective: float = math.inf
    message: str = ""
    relaxed: float = -math.inf
    started: float = 0.0
    share: float = 1.0
    least: float = 0.0
    projected: float = math.nan

    def __str__(self) -> str:
        if not self.ran:
            return f"{self.step}: skipped ({self.reason})"
        return f"{self.step}: ran {self.seconds:.2f} s, bound {self.bound:.9g}, objective {self.objective:.9g}" + \
            (f" ({self.message})" if self.message else "")


@dataclass(frozen=True)
class RouteOutcome:
    """The route's model (None if none), its true objective, the bound, the status (decided by
    :func:`certified`), the nodes of all steps, and the record of every row."""

    model: Model | None
    objective: float
    bound: float
    status: Status
    nodes: int
    records: tuple[StepRecord, ...]

    @property
    def message(self) -> str:
        return "; ".join(str(r) for r in self.records)


@dataclass(frozen=True)
class EnumerationRules:
    """When a support enumeration (:mod:`solvers.exact.supports`, the ``supports`` and
    ``bayes_supports`` steps) takes its pre-pass or gives up and leaves the time to the route's
    next step: the route's decisions inside those steps, in one table (:data:`ENUMERATION`).

    projection_share : the supports of a size are bounded only while their rate projects the whole
        pass within this share of the time left (else the step stops with its incumbent).
    search_share : share of the time left one in-support search may take, for kinds that ration
        their searches (the SLIM kind); the searches also stop when the projected rest is over
        ``projection_share``.
    decisive_share : a rate sample may end the measure (projecting a pass too long) only after
        this share of its budget.
    rule_in_supports : sizes with at least this many supports first rule in the features every
        model below the incumbent uses (:mod:`solvers.exact.exclusion`, the RiskSLIM kind).
    exclusion_share : share of the time left that pre-pass may take (it returns the features
        proven by then).
    """

    projection_share: float = 0.8
    search_share: float = 0.25
    decisive_share: float = 0.01
    rule_in_supports: int = 10**5
    exclusion_share: float = 0.25


#: the support enumerations' route decisions (:class:`EnumerationRules`)
ENUMERATION = EnumerationRules()


#: relative difference below which two true objectives count as tied (:func:`preferred`)
TIE_TOL = 1e-12


def preferred(model: Model, value: float, other: Model, other_value: float) -> bool:
    """Whether ``model`` (true objective ``value``) is returned rather than ``other``: the lower
    objective; between tied objectives (within :data:`TIE_TOL`), the fewer non-zero coefficients,
    then the smaller ``sum |coef|``, then the lexicographically smaller ``(coef, intercept)``. The
    rule makes the returned model a function of the set of models found, not of their order."""
    if abs(value - other_value) > TIE_TOL * max(1.0, abs(value), abs(other_value)):
        return value < other_value

    def key(m: Model) -> tuple:
        return (int(np.count_nonzero(m.coef)), float(np.abs(m.coef).sum()), tuple(m.coef.tolist()), m.intercept)

    return key(model) < key(other)


def run_route(route: tuple[Step, ...], instance: Instance, start: Model | None, limits: Limits,
              feasible: Callable[[Model], bool]) -> RouteOutcome:
    """Run ``route`` on ``instance`` from ``start`` (a feasible model or None) within ``limits``, the
    started budget of the fit (module docstring). ``feasible(model)`` says whether a model obeys the exact
    program (coefficient set, size, operational constraints)."""
    limit = limits.objective_limit
    best = Incumbent(start, instance.objective(start), limit) if start is not None else Incumbent(None, limit=limit)
    bound, nodes, infeasible = -math.inf, 0, False
    notes: dict[str, Any] = {}
    records: list[StepRecord] = []
    for step in route:
        reason = _why_not(step, instance, limits, best, bound)
        if reason is not None:
            records.append(StepRecord(step.name, False, reason))
            continue
        started, at = time.perf_counter(), limits.elapsed()
        try:
            with _folded(progress.current(), limits, best.objective, bound):
                out = step.run(instance, best, limits.share(step.share, step.least), notes)
        except MemoryError:  # the estimate was wrong: the step is lost, the route goes on
            records.append(StepRecord(step.name, False, "ran out of memory despite its estimate"))
            continue
        nodes += out.nodes
        if out.model is not None and feasible(out.model):
            value = instance.objective(out.model)
            if best.model is None or preferred(out.model, value, best.model, best.objective):
                best = Incumbent(out.model, value, limit)
        bound = max(bound, out.bound)
        notes.update(out.notes)
        records.append(StepRecord(step.name, True, seconds=time.perf_counter() - started, bound=out.bound,
                                  objective=best.objective, message=out.message,
                                  relaxed=out.bound if step.relaxes else out.relaxed, started=at,
                                  share=step.share, least=step.least, projected=out.projected))
        report = progress.current()
        if report is not None:
            report(limits.elapsed(), best.objective, bound, math.nan)
        if out.infeasible and best.model is None:
            infeasible = True
            break
    if best.model is None:
        status = Status.INFEASIBLE if infeasible else Status.NO_SOLUTION_FOUND
        return RouteOutcome(None, math.nan, bound, status, nodes, tuple(records))
    bound = min(bound, best.objective)  # no valid bound exceeds a feasible model's objective
    status = Status.OPTIMAL if certified(best.objective, bound, limits.mip_rel_gap) else Status.FEASIBLE
    return RouteOutcome(best.model, best.objective, bound, status, nodes, tuple(records))


def relaxation_bound(records: tuple[StepRecord, ...]) -> float:
    """The largest bound of the rows that ran on the real models of the box (``StepRecord.relaxed``: the
    rows that relax, and what the others closed by relaxations): a lower bound on the objective of every
    real model of the instance's box (``-inf``: none)."""
    return max((r.relaxed for r in records if r.ran), default=-math.inf)


@dataclass(frozen=True)
class Projection:
    """When an unproven fit's proof would end by its steps' own projections: ``step`` (a route row's
    name, which may take ``share`` of the time left, and at least ``least`` seconds of it) stopped short of
    its proof after starting at ``started`` seconds into the fit, its whole work projected at ``seconds``;
    ``finish`` is the time limit at which its share would hold that work (``started`` plus
    :func:`solvers.limits.seconds_left_for`). A projection, not a
    promise: it times a sample (errs both ways) and leaves out what follows the projected work (e.g.
    the search of what a screen leaves)."""

    step: str
    started: float
    seconds: float
    share: float = 1.0
    least: float = 0.0

    @property
    def finish(self) -> float:
        return self.started + seconds_left_for(self.seconds, self.share, self.least)

    def sentence(self) -> str:
        """The card's note: the time limit at which the step would end its work."""
        share = "" if self.share == 1.0 else f", and it takes {self.share:.0%} of the time left"
        if self.share < 1.0 and self.least > MIN_PHASE:
            share += f", at least {self.least:g} s or half of it"
        return (f"not proven: the {self.step} step projected about {self.seconds:,.0f} s for its work "
                f"(started {self.started:,.0f} s into the fit{share}), so a time limit of about "
                f"{self.finish:,.0f} s or more for this fit may prove it")


def projected_finish(records: tuple[StepRecord, ...]) -> Projection | None:
    """The earliest end among the rows that stopped short of their proof with a projection (None:
    no row projected one)."""
    ends = [Projection(r.step, r.started, r.projected, r.share, r.least) for r in records
            if r.ran and r.share > 0 and math.isfinite(r.projected)]
    return min(ends, key=lambda p: p.finish, default=None)


def _folded(report, limits: Limits, objective: float, bound: float):
    """A :func:`solvers.progress.reporting` block in which a step's reports show the fit's elapsed
    time (``limits``), the least of the step's incumbent and ``objective`` and the largest of its
    bound and ``bound`` (nothing when no one reports)."""
    if report is None:
        return contextlib.nullcontext()

    def folded(elapsed: float, incumbent: float, step_bound: float, gap: float) -> None:
        report(limits.elapsed(), min(incumbent, objective), max(step_bound, bound), math.nan)

    return progress.reporting(folded)


#: the reason recorded for a step skipped because its kernels are not compiled yet
NOT_COMPILED = "its numba kernels are not compiled in this environment yet (compiling them in the background)"


def _why_not(step: Step, instance: Instance, limits: Limits, best: Incumbent, bound: float) -> str | None:
    """The reason ``step`` does not run now, or None."""
    if best.model is not None and certified(best.objective, bound, limits.mip_rel_gap):
        return "the incumbent is already proven optimal"
    if best.limit < best.objective and certified(best.limit, bound, limits.mip_rel_gap):
        return "no model beats the objective limit (proven)"
    if limits.expired() and not step.always:
        return "no time left"
    reason = step.applies(instance, limits)
    if reason is not None:
        return reason
    need = step.memory(instance, limits)
    if not limits.fits(need):
        return (f"it would allocate about {need / 2**20:,.0f} MiB, over the memory budget of "
                f"{limits.memory / 2**20:,.0f} MiB (memory_limit)")
    if step.kernels and not step.always and step.needs_kernels(instance) and not kernels_ready(step.kernels, limits):
        return NOT_COMPILED
    return None
