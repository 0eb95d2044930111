"""RiskSLIM's multipliers: one certified fit per multiplier within one budget, the least objective kept.

With a multiplier ``m`` the risk is ``1 / (1 + exp(-(x . lambda + lambda_0) / m))`` (FasterRisk's
multiplier, Liu et al. 2022, sec. 3; :class:`formulations.riskslim.RiskSLIM`). For every ``m`` the
objective is the same function of the model's *risks* (mean logistic loss + L0 cost), so the
models of several multipliers compare by objective, and the least bound over them bounds every
model of every multiplier listed: the certificate over all (:func:`certificate`).

The sequence, in one budget (:class:`solvers.limits.Limits`, started once by the caller):

1. every multiplier is set up first (:func:`set_up`): its instance is built and its continuous
   box-constrained logistic fit (:meth:`formulations.riskslim.RiskSLIMInstance.continuous_fit`,
   L-BFGS-B, which the heuristic, the floor and the program's cut pool start from) is made; neither
   looks at a clock, and on a wide table that takes seconds. So a multiplier is skipped, with its
   reason, when the set-up of the one before, repeated now, would end more than
   :data:`SETUP_GRACE` seconds past the call's deadline (or after an interrupt). A skipped
   multiplier has no model and the bound of :func:`skipped_bound`, so the certificate over all
   stays valid;
2. for method "exact", every multiplier's start is found next, *before any exact solve*
   (:func:`with_starts`): the first's heuristic, and for the others the first's supports rounded
   along their star rays in their own boxes, the best of them improved by swaps
   (:func:`solvers.heuristics.riskslim.multiplier_starts`). The least objective of those starts is
   the objective limit the first exact fit prunes with (:attr:`~solvers.limits.Limits.objective_limit`).
   A larger multiplier's points resolve the risks more finely, so its start often beats the first's;
   the first's screen of every support (its support enumeration, or on wide 0/1 tables the screen on
   blocked rows, :mod:`solvers.exact.blocked_supports`) then runs at that lower level, which prunes more;
3. each multiplier ``i`` is solved (:func:`solvers.pipeline.solve_exact` from its start) in
   :meth:`~solvers.limits.Limits.share` ``1 / (k + 1)`` of the time left (``k`` the later
   multipliers not skipped) -- the first all but a reserve of :data:`LATER_SECONDS` for each of the
   others when the instance has no operational constraints but rules on supports (at most
   :data:`MOST_RESERVED`; :mod:`formulations.support_rules`) --
   against the least objective known (the starts' and the fits' before it): it stops once no model
   beats it. The later fits bound only the first's screen survivors (the saturated-loss bound depends
   on the rows alone, not on the multiplier or the boxes, and every multiplier's objective is that
   loss plus the L0 cost in the same units: :mod:`solvers.exact.screen`);
4. a later multiplier's bound is at least the first's relaxation bound (its floors, and what its screens
   and box fits closed without searching, e.g. an unfinished wide screen's floor without the groups done:
   they hold for the real models of its box, into which the later multiplier's models map,
   :func:`inherited_bound`), so one given little time does not pull the certificate over all below what
   the first proved for real models.

The continuous fit of multiplier ``m`` is not the fit of multiplier 1 scaled by ``m``:
substituting ``mu = lambda / m`` maps the loss of ``m`` on the box ``[lb, ub]`` to the loss of 1
on the box ``[lb / m, ub / m]``, so the two agree only when no bound binds; each multiplier's fit
is made on its own box. The same substitution bounds a skipped multiplier (:func:`skipped_bound`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from formulations.base import Instance, Model
from formulations.riskslim import maps_into as riskslim_maps_into
from formulations.support_rules import instance_rules
from solvers.exact.route import relaxation_bound
from solvers.exact.screen import SupportScreen
from solvers.feasibility import FEASIBILITY_TOL, violation
from solvers.heuristics.riskslim import multiplier_starts
from solvers.limits import Limits, interrupted
from solvers.pipeline import HEURISTIC_SHARE, Fit, certify, prepare_exact, run, solve_exact
from solvers.result import Status, relative_gap

#: multipliers of ``multiplier="auto"`` (FasterRisk searches a continuum per support; this grid is
#: solved exactly, one certified fit per value)
MULTIPLIERS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
#: seconds reserved for each later multiplier when the first's share is set (without operational
#: constraints): the first's support enumeration screens every support, and the later fits bound and
#: search only its survivors, against the least objective known
LATER_SECONDS = 1.0
#: most of the time reserved for the later multipliers (the first gets at least the rest)
MOST_RESERVED = 0.2
#: seconds past the call's deadline a multiplier's set-up (instance and continuous fit, which look
#: at no clock) may be projected to end before the multiplier is skipped
SETUP_GRACE = 0.5


@dataclass(frozen=True)
class MultiplierFit:
    """One multiplier of the call: its instance and fit (None when skipped), the objective it had to
    beat, the seconds of its set-up (instance and continuous fit, :func:`set_up`; the first's also
    every multiplier's start, :func:`with_starts`) and of its solve, and why it was skipped ("" when
    solved)."""

    multiplier: float
    instance: Instance | None
    fit: Fit | None
    objective_limit: float
    setup_seconds: float = 0.0
    skipped: str = ""
    #: the bound of a skipped multiplier (:func:`skipped_bound`)
    skipped_floor: float = 0.0
    #: the first multiplier's relaxation bound, when it holds for this one's models (:func:`inherited_bound`)
    inherited: float = -math.inf

    @property
    def objective(self) -> float:
        return math.inf if self.fit is None or self.fit.model is None else self.fit.objective

    @property
    def bound(self) -> float:
        """A bound valid for every model of this multiplier: the fit's (or :func:`skipped_bound`), or the
        first multiplier's relaxation bound (:attr:`inherited`) when larger."""
        return max(self.skipped_floor if self.fit is None else self.fit.bound, self.inherited)

    def row(self) -> dict[str, Any]:
        """The multiplier's row of ``RiskScoreClassifier.multipliers_`` (its :attr:`bound`, and the gap to it;
        the status is its own fit's)."""
        if self.fit is None:
            return {"multiplier": self.multiplier, "objective": math.nan, "bound": self.bound, "gap": math.inf,
                    "status": "skipped", "objective_limit": self.objective_limit, "seconds": 0.0,
                    "projected_seconds": math.nan}
        projection = self.fit.projection
        return {"multiplier": self.multiplier, "objective": self.fit.objective, "bound": self.bound,
                "gap": relative_gap(self.fit.objective, self.bound) if self.fit.model is not None else self.fit.gap,
                "status": self.fit.status.value, "objective_limit": self.objective_limit,
                "seconds": self.setup_seconds + self.fit.times.get("total", math.nan),
                "projected_seconds": math.nan if projection is None else self.setup_seconds + projection.finish}


def check_multipliers(multiplier: Any) -> tuple[float, ...]:
    """The multipliers of the parameter ``multiplier``: a number > 0, a sequence of them, or
    ``"auto"`` (:data:`MULTIPLIERS`); else a ``ValueError``."""
    m = multiplier
    values = MULTIPLIERS if isinstance(m, str) and m == "auto" else (m,) if np.isscalar(m) else tuple(m)
    if isinstance(m, str) and m != "auto" or not len(values) or \
            not all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and np.isfinite(v) and v > 0
                    for v in values):
        raise ValueError(f"multiplier must be a number > 0, a sequence of them or 'auto'; got {m!r}")
    return tuple(float(v) for v in values)


def maps_into(first: Instance, first_multiplier: float, multiplier: float) -> bool:
    """Whether every model of ``multiplier`` is, in objective, a real model of the box of ``first`` (the
    instance of ``first_multiplier``), so that a bound on those bounds it
    (:func:`formulations.riskslim.maps_into` on ``first``'s coefficient set)."""
    cs = first.coefficients
    return riskslim_maps_into(cs.lb, cs.ub, cs.intercept_lb is None and cs.intercept_ub is None, first_multiplier,
                              multiplier)


def skipped_bound(first: Instance, first_multiplier: float, multiplier: float) -> float:
    """A lower bound on the objective of every model of ``multiplier``, from the instance ``first``
    of ``first_multiplier`` (no instance of ``multiplier`` built): when its models map into ``first``'s
    box (:func:`maps_into`), ``first``'s certified loss floor over its box
    (:meth:`formulations.riskslim.RiskSLIMInstance.loss_floor`) plus the L0 cost of the features every
    model uses; else 0 (the loss and the costs are non-negative)."""
    if not maps_into(first, first_multiplier, multiplier):
        return 0.0
    return first.loss_floor() + first.penalty(np.zeros(first.coefficients.lb.size))


def inherited_bound(first: Instance, first_fit: Fit | None, first_multiplier: float, multiplier: float) -> float:
    """The bound of ``first``'s fit that holds for the real models of its box (its rows' relaxed bounds:
    :func:`solvers.exact.route.relaxation_bound`), when the models of ``multiplier`` map into that box
    (:func:`maps_into`); else ``-inf``. A later multiplier given little time thus keeps what the first
    proved for real models, whatever its own floor reached."""
    if first_fit is None or not maps_into(first, first_multiplier, multiplier):
        return -math.inf
    return relaxation_bound(first_fit.steps)


@dataclass(frozen=True)
class SetUp:
    """A multiplier's set-up (module docstring, step 1): its instance (None: skipped, and why), the
    seconds the set-up took, and its start (None: not asked; step 2)."""

    multiplier: float
    instance: Instance | None
    seconds: float = 0.0
    start: Model | None = None
    skipped: str = ""

    @property
    def objective(self) -> float:
        """The start's objective, or inf when there is none or it breaks the exact program (the
        operational constraints): only a feasible model may set an objective limit."""
        if self.start is None or violation(self.instance, self.start) > FEASIBILITY_TOL:
            return math.inf
        return self.instance.objective(self.start)


def set_up(first: Instance, instance_for: Callable[[float], Instance], multipliers: Sequence[float], limits: Limits,
           method: str) -> list[SetUp]:
    """Every multiplier's instance and continuous fit (methods "exact" and "heuristic"), in order, within
    the started budget ``limits``; a multiplier after the first is skipped when the set-up before it,
    repeated now, would end more than :data:`SETUP_GRACE` seconds past the deadline, or after an
    interrupt. For "exact" with several multipliers, then every start (:func:`with_starts`)."""
    done, last = [], 0.0
    for i, m in enumerate(multipliers):
        if i and (interrupted() or last - SETUP_GRACE > limits.seconds_left()):
            done.append(SetUp(m, None, skipped=f"its set-up (about {last:.1f} s, like the last one's) would end past "
                                               f"the time limit"))
            continue
        started = time.perf_counter()
        instance = first if i == 0 else instance_for(m)
        if method in ("exact", "heuristic"):
            instance.continuous_fit()  # made here, timed: the set-up the next multiplier is planned with
        last = time.perf_counter() - started
        done.append(SetUp(m, instance, last))
    return with_starts(done, limits) if method == "exact" and len(multipliers) > 1 else done


def with_starts(prepared: list[SetUp], limits: Limits) -> list[SetUp]:
    """``prepared`` with the start of every multiplier set up (:func:`solvers.heuristics.riskslim.
    multiplier_starts`, within :data:`solvers.pipeline.HEURISTIC_SHARE` of the time left, after what
    the first's exact solve needs first: :func:`solvers.pipeline.prepare_exact`); the seconds the
    starts took are counted in the first's set-up."""
    started = time.perf_counter()
    prepare_exact(prepared[0].instance, limits)
    built = [p for p in prepared if p.instance is not None]
    starts = iter(multiplier_starts([p.instance for p in built], limits.share(HEURISTIC_SHARE), limits.seed))
    seconds = time.perf_counter() - started
    return [replace(p, start=next(starts), seconds=p.seconds + (seconds if i == 0 else 0.0))
            if p.instance is not None else p for i, p in enumerate(prepared)]


def solve_multipliers(first: Instance, instance_for: Callable[[float], Instance], multipliers: Sequence[float],
                      limits: Limits, *, method: str = "exact", backend: str | None = None, verbose: bool = False,
                      options: Mapping[str, Any] | None = None) -> list[MultiplierFit]:
    """Solve ``first`` (the instance of ``multipliers[0]``) and ``instance_for(m)`` for the other
    multipliers by ``method`` (``backend``, ``options``; :func:`solvers.pipeline.solve_exact` from each
    one's heuristic start for "exact", else :func:`solvers.pipeline.run`) within the started budget
    ``limits`` (module docstring); one :class:`MultiplierFit` per multiplier, in order."""
    limits = limits.started()
    n = len(multipliers)
    prepared = set_up(first, instance_for, multipliers, limits, method)
    screen = SupportScreen() if n > 1 else None
    best = min(p.objective for p in prepared if p.instance is not None)
    done: list[MultiplierFit] = []

    def floor(m: float) -> float:  # the first's continuous fit is made (and timed) only by these methods
        return skipped_bound(first, multipliers[0], m) if method in ("exact", "heuristic") else 0.0

    def inherited(m: float) -> float:
        return inherited_bound(first, done[0].fit, multipliers[0], m) if method == "exact" else -math.inf

    for i, p in enumerate(prepared):
        m, instance = p.multiplier, p.instance
        if instance is None:
            done.append(MultiplierFit(m, None, None, best, skipped=p.skipped, skipped_floor=floor(m),
                                      inherited=inherited(m)))
            continue
        later = sum(q.instance is not None for q in prepared[i + 1:])
        share = 1.0 / (later + 1)
        if i == 0 and later and instance_rules(first)[1] is None:  # (no constraints, or rules on supports)
            share = 1.0 - min(MOST_RESERVED, later * LATER_SECONDS / max(limits.seconds_left(), 1e-9))
        phase = replace(limits.share(share), objective_limit=best, screen=screen).started()
        if method == "exact":
            fit = solve_exact(instance, backend, start=p.start, limits=phase, heuristic=n == 1, verbose=verbose,
                              options=options)
        else:
            fit = run(instance, method, backend, limits=phase, verbose=verbose, options=options)
        done.append(MultiplierFit(m, instance, fit, best, p.seconds, inherited=inherited(m) if i else -math.inf))
        if fit.model is not None:
            best = min(best, fit.objective)
    return done


def least(fits: Sequence[MultiplierFit]) -> MultiplierFit:
    """The multiplier of least objective (the first one on ties; the first when none has a model)."""
    return min(fits, key=lambda f: f.objective)


@dataclass(frozen=True)
class Projections:
    """When an unproven fit over several multipliers may be proven. While the first multiplier does not
    certify the least objective, the later ones search what its screen leaves once it ends, so their own
    projections (made without it) say nothing: ``needs`` is the first's projected time limit alone
    (:meth:`MultiplierFit.row`'s ``projected_seconds``, its set-up included) and ``finish`` a floor
    (``at_least``). Otherwise each later multiplier whose bound does not certify it needs its own
    projected time limit and every other the seconds it took; they are solved one after the other in one
    budget, so ``finish`` is the sum. A projection, not a promise (:class:`solvers.exact.route.Projection`)."""

    needs: tuple[tuple[float, float], ...]
    finish: float
    at_least: bool = False

    def sentence(self) -> str:
        """The card's note: the time limit at which the multipliers not proven would end their work."""
        each = ", ".join(f"multiplier {m:g} about {s:,.0f} s" for m, s in self.needs)
        if self.at_least:
            (m, seconds), = self.needs
            return (f"not proven: the steps of multiplier {m:g} projected about {seconds:,.0f} s for its work "
                    f"(set-up included), and the later multipliers take their time after it, so a time limit of "
                    f"more than about {self.finish:,.0f} s for this fit may prove it")
        return (f"not proven: the steps of the multipliers not proven projected their work ({each}, set-ups "
                f"included), so a time limit of about {self.finish:,.0f} s or more for this fit may prove it")


def projected(fits: Sequence[MultiplierFit], mip_rel_gap: float) -> Projections | None:
    """The :class:`Projections` of an unproven fit over ``fits``; None when the certificate is proven, or a
    multiplier it needs has no projection (skipped, or stopped without one)."""
    objective = least(fits).objective
    if certificate(fits, mip_rel_gap)[0] == Status.OPTIMAL or not math.isfinite(objective):
        return None
    needs, total = [], 0.0
    for i, f in enumerate(fits):
        row = f.row()
        if certify(objective, f.bound, mip_rel_gap)[0] == Status.OPTIMAL:  # (its models are no better)
            total += row["seconds"]
        elif math.isnan(row["projected_seconds"]):
            return None
        elif i == 0:  # (the later ones wait for its screen)
            return Projections(((f.multiplier, row["projected_seconds"]),), row["projected_seconds"], at_least=True)
        else:
            needs.append((f.multiplier, row["projected_seconds"]))
            total += row["projected_seconds"]
    return Projections(tuple(needs), total)


def certificate(fits: Sequence[MultiplierFit], mip_rel_gap: float) -> tuple[Status, float, float]:
    """Status, gap and bound of the least objective over the points *and* the multipliers: the least
    bound of them all (a skipped multiplier's is 0)."""
    bound = min(f.bound for f in fits)
    status, gap = certify(least(fits).objective, bound, mip_rel_gap)
    return status, gap, bound
