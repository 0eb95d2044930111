"""The one solve pipeline: exact, relaxed, rounded and heuristic solves of a formulation instance.

Every caller (estimators, ``compare``, studies, the command line, benchmarks) goes through these
functions; none re-implements a step of them. Each returns a :class:`Fit`:

* :func:`solve_exact` -- heuristic and user starts (each checked with ``violations`` before use),
  then the exact program on a backend warm-started from the best start; the returned model is
  the better of the solver's (rounded into the coefficient set, :meth:`Instance.round`) and the
  start's, by the **true** objective.
* :func:`solve_relaxed` -- the relaxation on a backend (or the proximal path for instances with a
  composite ``loss + penalty`` form); its value is a lower bound on the exact optimum.
* :func:`solve_rounded` -- a model (usually the relaxed one) rounded into the coefficient set.
* :func:`solve_method` -- a formulation's extra heuristics by name (local search, randomized
  rounding, proximal path + rounding), declared in :mod:`solvers.catalog`.

Certificates. A backend's :class:`~solvers.result.Result` is kept as it came (frozen). The
``Fit`` reports its own status from the true objective ``f`` of the returned model and the
backend's lower bound ``L``: OPTIMAL only when ``f - L <= mip_rel_gap * max(|f|, 1e-10) + 1e-9``;
FEASIBLE for any other feasible model; INFEASIBLE only when the backend proved it and no start
was feasible. The budget ``limits`` (:class:`~solvers.limits.Limits`, started once per call) is the
wall time of the whole call.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from formulations.base import Instance, Model
from solvers.catalog import entry_for
from solvers.exact.route import Projection, StepRecord, preferred, projected_finish, run_route
from solvers.exact.support_workers import start_workers
from solvers.feasibility import FEASIBILITY_TOL, violation
from solvers.heuristics.ray_rounding import round_along_ray
from solvers.limits import Limits, interrupted
from solvers.registry import solve, solver_options
from solvers.result import Result, Status, certified, relative_gap
from solvers.warmup import ensure_compiled

#: share of the remaining budget a heuristic may spend before the exact solve starts
HEURISTIC_SHARE = 0.5


@dataclass(frozen=True)
class Fit:
    """A model and its certificate, as one pipeline call produced them.

    Attributes
    ----------
    method : ``"exact"``, ``"relaxed"``, ``"rounding"``, ``"heuristic"`` or a catalog method.
    model : the :class:`~formulations.base.Model` (None when there is none).
    status : certificate on the true objective (module docstring); for ``"relaxed"`` the status
        of the relaxation's solve.
    objective : true objective of ``model`` (:meth:`Instance.objective`).
    bound : valid lower bound on the exact optimum known to this call (nan when none).
    gap : ``relative_gap(objective, bound)``.
    violation : largest constraint violation of ``lift(model)`` in the exact program (0: feasible;
        rounded or relaxed models may be infeasible; nan: a relaxed fit that spent its budget, since
        measuring it builds the exact program).
    result : the backend's own account (None for heuristics).
    times : seconds per phase (``build``, ``heuristic``, ``solve``, ``total``).
    message : what happened, in words (rejected starts, which model was kept).
    steps : for a fit by an exact route, what became of each step (ran, or why not).
    projection : for an unproven fit by an exact route, when its proof would end by the projection of
        the step that stopped short of it (:func:`solvers.exact.route.projected_finish`; None: proven,
        or no step projected one).
    """

    method: str
    model: Model | None
    status: Status
    objective: float = float("nan")
    bound: float = float("nan")
    gap: float = float("nan")
    violation: float = 0.0
    result: Result | None = None
    times: Mapping[str, float] = field(default_factory=dict)
    message: str = ""
    steps: tuple[StepRecord, ...] = ()

    @property
    def projection(self) -> Projection | None:
        return None if self.status == Status.OPTIMAL else projected_finish(self.steps)

    def summary(self) -> dict[str, Any]:
        """Flat dict for tables."""
        return {"method": self.method, "status": self.status.value, "objective": self.objective,
                "bound": self.bound, "gap": self.gap, "violation": self.violation,
                "backend": self.result.backend if self.result is not None else "",
                **{f"{k}_time": v for k, v in self.times.items()}}

    def __repr__(self) -> str:
        return (f"Fit(method={self.method!r}, status={self.status.value}, objective={self.objective:.6g}, "
                f"bound={self.bound:.6g}, gap={self.gap:.3g}, violation={self.violation:.3g})")


# ----------------------------------------------------------------------------- helpers
def certify(objective: float, bound: float, mip_rel_gap: float) -> tuple[Status, float]:
    """Status and gap of a feasible model of true objective ``objective`` against ``bound``
    (``INTERRUPTED`` instead of ``FEASIBLE`` after a Ctrl-C, :func:`solvers.limits.interrupt`)."""
    unproven = Status.INTERRUPTED if interrupted() else Status.FEASIBLE
    return (Status.OPTIMAL if certified(objective, bound, mip_rel_gap) else unproven), relative_gap(objective, bound)


def _started(limits: Limits | None) -> Limits:
    """The started limits of a call (default :class:`Limits` made now, so the memory budget reads
    the memory available at the call, not at import)."""
    return (Limits() if limits is None else limits).started()


def _entry(instance: Instance):
    return entry_for(instance.spec)


def _heuristic(entry, instance: Instance, limits: Limits) -> Model | None:
    """The formulation's heuristic within ``limits`` (its phase's share of the call); one that
    declares a ``relaxed`` parameter gets the relaxed solve within the same limits
    (``relaxed() -> Fit``) rather than importing this module."""
    function = entry.heuristic_function
    if "relaxed" in inspect.signature(function).parameters:
        return function(instance, limits, limits.seed, relaxed=lambda: solve_relaxed(instance, limits=limits))
    return function(instance, limits, limits.seed)


def _backend_options(limits: Limits, verbose: bool) -> dict[str, Any]:
    return {**solver_options(limits), "verbose": verbose}


def _as_model(start: Model | Fit | None) -> Model | None:
    return start.model if isinstance(start, Fit) else start


# ------------------------------------------------------------------------------- exact
#: the best feasible model so far: (where it came from, the model, its true objective)
Best = tuple[str, Model, float] | None


def _keep_better(instance: Instance, best: Best, label: str, model: Model, notes: list[str],
                 rejection: str) -> Best:
    """``best``, or ``(label, model, objective)`` if ``model`` is feasible and preferred to it;
    an infeasible model is noted with ``rejection`` (formatted with its violation ``v``)."""
    v = violation(instance, model)
    if v > FEASIBILITY_TOL:
        notes.append(rejection.format(v=v))
        return best
    value = instance.objective(model)
    return (label, model, value) if best is None or preferred(model, value, best[1], best[2]) else best


def _solve_by_route(route, instance: Instance, best: Best, limits: Limits) -> tuple[Result, tuple]:
    """The formulation's route table from ``best``: its outcome as a :class:`Result`, and its step records."""
    t0 = time.perf_counter()
    outcome = run_route(route, instance, None if best is None else best[1], limits,
                        lambda model: violation(instance, model) <= FEASIBILITY_TOL)
    result = Result(outcome.status, x=None if outcome.model is None else instance.lift(outcome.model),
                    objective=outcome.objective, bound=outcome.bound,
                    gap=relative_gap(outcome.objective, outcome.bound), solve_time=time.perf_counter() - t0,
                    nodes=outcome.nodes, backend="route", message=outcome.message)
    return result, outcome.records


def _certified(instance: Instance, program, result: Result, best: Best, limits: Limits, t0: float,
               times: dict, notes: list[str], steps: tuple) -> Fit:
    """The exact fit: the better of ``best`` and the solver's rounded model, its status decided here
    once, by :func:`certify` on its true objective against the solver's bound (module docstring)."""
    if result.has_solution:
        best = _keep_better(instance, best, "solver", instance.round(instance.decode(result.x)), notes,
                            "solver's model rejected after rounding (violation {v:.3g})")
    times["total"] = time.perf_counter() - t0
    bound = float(result.bound) if program.is_mip or result.status == Status.OPTIMAL else float("nan")
    if best is None:
        status = result.status if not result.status.has_solution else Status.NO_SOLUTION_FOUND
        return Fit("exact", None, status, bound=bound, gap=float("inf"), result=result, times=times,
                   message="; ".join(notes + [f"{result.backend}: {result.message}"]), steps=steps)
    label, model, value = best
    if result.status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED):
        notes.append(f"{result.backend} reported {result.status.value}, but the {label} is feasible")
        bound = float("nan")
    if bound > value:
        # no valid bound exceeds a feasible model's objective; HiGHS does so by up to the L1
        # tie-breaker's range on SLIM (its dual bound rounded up on an objective grid the
        # tie-breaker is not on): say so, and keep the model's objective as the bound
        notes.append(f"{result.backend}'s bound {bound:.9g} exceeds the model's true objective by "
                     f"{bound - value:.3g}; bound taken as that objective")
        bound = value
    status, gap = certify(value, bound, limits.mip_rel_gap)
    if result.status == Status.OPTIMAL and status != Status.OPTIMAL:
        notes.append(f"{result.backend} reported optimal, but the true objective {value:.9g} exceeds the "
                     f"bound {bound:.9g} beyond the gap tolerance")
    notes.append(f"returned the {label}'s model; {result.backend}: {result.message}")
    return Fit("exact", model, status, value, bound, gap, 0.0, result, times, "; ".join(notes), steps)


def _prepare(entry, instance: Instance, limits: Limits, by_route: bool, heuristic: bool) -> None:
    """What an exact fit by a route or with a heuristic needs first: its kernels compiled when there
    is time (:func:`solvers.warmup.ensure_compiled`), and the route's bounding workers started (their
    start-up overlaps the heuristic, :mod:`solvers.exact.supports`)."""
    if by_route or heuristic:
        ensure_compiled(entry, instance, limits)  # a fresh environment's first fit compiles, when it has time
    if by_route:
        start_workers(limits.n_jobs)


def prepare_exact(instance: Instance, limits: Limits | None = None) -> None:
    """What :func:`solve_exact` does first for ``instance`` by its route, for callers that run its
    heuristic themselves before the exact solve (:mod:`solvers.multipliers`): its kernels compiled when
    there is time, and the route's bounding workers started."""
    limits = _started(limits)
    entry = _entry(instance)
    _prepare(entry, instance, limits, entry.route is not None, entry.heuristic is not None)


def solve_exact(instance: Instance, backend: str | None = None, *, start: Model | Fit | None = None,
                limits: Limits | None = None, heuristic: bool = True, verbose: bool = False,
                options: Mapping[str, Any] | None = None) -> Fit:
    """Solve the exact program of ``instance`` within ``limits`` (one wall-clock budget).

    Parameters
    ----------
    backend : registry name; None takes the formulation's default (:mod:`solvers.catalog`).
    start : a model (or a previous fit) to warm-start from; used only if feasible.
    heuristic : also run the formulation's own heuristic (if it has one) for a start.
    options : further backend options.

    Returns a :class:`Fit` (module docstring for how its status is certified).
    """
    limits, start_time = _started(limits), time.perf_counter()
    entry = _entry(instance)
    route = entry.route if backend is None else None
    _prepare(entry, instance, limits, route is not None, heuristic)
    backend = backend or entry.exact_backend
    t0 = time.perf_counter()
    program = entry.exact_program(instance)
    times = {"build": time.perf_counter() - t0}
    notes: list[str] = []
    best: Best = None
    if _as_model(start) is not None:
        best = _keep_better(instance, best, "start", _as_model(start), notes,
                            "start rejected (violates the constraints by {v:.3g})")
    t1 = time.perf_counter()
    if heuristic and entry.heuristic is not None:
        # the heuristic gets at most HEURISTIC_SHARE of the budget: the exact solve needs time for a bound
        found = _heuristic(entry, instance, limits.share(HEURISTIC_SHARE))
        if found is not None:
            best = _keep_better(instance, best, "heuristic", found, notes,
                                "heuristic rejected (violates the constraints by {v:.3g})")
    times["heuristic"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    steps: tuple[StepRecord, ...] = ()
    if route is not None:
        result, steps = _solve_by_route(route, instance, best, limits)
    else:
        warm = instance.lift(best[1]) if best is not None else None
        result = solve(program, backend, warm_start=warm, **_backend_options(limits, verbose),
                       **dict(options or {}))
    times["solve"] = time.perf_counter() - t2
    return _certified(instance, program, result, best, limits, start_time, times, notes, steps)


# ----------------------------------------------------------------------------- relaxed
def solve_relaxed(instance: Instance, backend: str | None = None, *, limits: Limits | None = None,
                  verbose: bool = False, options: Mapping[str, Any] | None = None) -> Fit:
    """Solve the relaxation of ``instance``; its optimal value bounds the exact optimum below.

    ``backend="prox"`` runs the proximal path on the instance's composite form
    (``instance.composite() -> (loss, penalty)``, coefficients in model units). An instance with
    ``relaxed_start()`` (a point of its relaxation, or None) hands the backend that first incumbent.
    """
    limits, start_time = _started(limits), time.perf_counter()
    entry = _entry(instance)
    backend = backend or entry.relaxed_backend
    t0 = time.perf_counter()
    if backend == "prox":
        result = _solve_prox(instance, limits, dict(options or {}))
        if result is None:
            return Fit("relaxed", None, Status.NO_SOLUTION_FOUND, times={"total": time.perf_counter() - start_time},
                       message=_prox_over_budget(instance, limits))
        times = {"build": 0.0}
        model = Model(result.x, result.raw["intercept"]) if result.x is not None else None
    else:
        program = instance.relaxed()
        start = getattr(instance, "relaxed_start", None)  # an instance may know a point near the optimum
        warm = None if start is None or "warm_start" in (options or {}) else start()
        times = {"build": time.perf_counter() - t0}
        t1 = time.perf_counter()
        result = solve(program, backend, **_backend_options(limits, verbose), **dict(options or {}),
                       **({} if warm is None else {"warm_start": warm}))
        times["solve"] = time.perf_counter() - t1
        model = instance.decode(result.x) if result.has_solution else None
    times["total"] = time.perf_counter() - start_time
    if model is None:
        return Fit("relaxed", None, result.status, result=result, times=times, message=result.message)
    value = instance.objective(model)
    bound = float(result.bound) if np.isfinite(result.bound) else (
        float(result.objective) if result.status == Status.OPTIMAL else float("nan"))
    # measuring the violation builds the exact program: not once the budget is spent (nan: not measured)
    measured = float("nan") if limits.expired() else violation(instance, model)
    return Fit("relaxed", model, result.status, value, bound, relative_gap(value, bound), measured, result, times,
               result.message)


def _prox_memory(instance: Instance) -> float:
    """Bytes the proximal path on ``instance``'s composite form may allocate: a copy of the design
    (n x p floats) and its working vectors (a few of length n and p)."""
    n, p = instance.X.shape
    return 8.0 * (n * p + 8 * n + 10 * p)


def _prox_over_budget(instance: Instance, limits: Limits) -> str:
    return (f"proximal path not run: it would allocate about {_prox_memory(instance) / 2**20:,.0f} MiB, over the "
            f"memory budget of {limits.memory / 2**20:,.0f} MiB (memory_limit)")


def _solve_prox(instance: Instance, limits: Limits, options: dict[str, Any]) -> Result | None:
    """The proximal path on the composite form within ``limits`` (None: over the memory budget)."""
    from solvers.proximal.gradient import proximal_gradient

    composite = getattr(instance, "composite", None)
    if composite is None:
        raise ValueError(f"{type(instance.spec).__name__} has no composite loss + penalty form for the proximal "
                         "path; choose a program backend such as 'highs' or 'ecos'")
    if not limits.fits(_prox_memory(instance)):
        return None
    loss, penalty = composite()
    return proximal_gradient(loss, penalty, limits=limits, **options)


# ----------------------------------------------------------------------------- rounded
def _heuristic_fit(instance: Instance, method: str, model: Model | None, bound: float, times: dict[str, float],
                   message: str, source: Result | None = None) -> Fit:
    if model is None:
        return Fit(method, None, Status.NO_SOLUTION_FOUND, bound=bound, gap=float("inf"), result=source,
                   times=times, message=message or "no model found")
    value = instance.objective(model)
    v = violation(instance, model)
    if v > FEASIBILITY_TOL:
        return Fit(method, model, Status.NO_SOLUTION_FOUND, value, bound, relative_gap(value, bound), v, source,
                   times, f"{message}; the model violates the constraints by {v:.3g}".strip("; "))
    status = Status.FEASIBLE  # a heuristic proves nothing, even when its gap happens to be 0
    return Fit(method, model, status, value, bound, relative_gap(value, bound), 0.0, source, times,
               message or "heuristic: feasible model, optimality not proven")


def solve_rounded(instance: Instance, source: Fit | Model, *, limits: Limits | None = None) -> Fit:
    """Round ``source``'s model into the coefficient set (:meth:`Instance.round`), along its ray
    (:func:`solvers.heuristics.ray_rounding.round_along_ray`: the nearest rounding and those of the
    model rescaled, the feasible one of lowest true objective). The bound is the source's bound (the
    relaxation value when ``source`` is a relaxed fit)."""
    limits, start_time = _started(limits), time.perf_counter()
    model = _as_model(source)
    bound = source.bound if isinstance(source, Fit) else float("nan")
    if model is None:
        return _heuristic_fit(instance, "rounding", None, bound, {"total": time.perf_counter() - start_time},
                              "no model to round")
    rounded, scale = round_along_ray(instance, model, limits)
    times = {"solve": time.perf_counter() - start_time, "total": time.perf_counter() - start_time}
    note = "rounded into the coefficient set" + (f" (along its ray, scale {scale:.3g})" if scale != 1.0 else "")
    return _heuristic_fit(instance, "rounding", rounded, bound, times, note)


def solve_heuristic(instance: Instance, *, limits: Limits | None = None) -> Fit:
    """The formulation's own heuristic alone (the start :func:`solve_exact` would use)."""
    limits, start_time = _started(limits), time.perf_counter()
    entry = _entry(instance)
    if entry.heuristic is None:
        raise ValueError(f"{type(instance.spec).__name__} has no heuristic; use solve_rounded or solve_exact")
    model = _heuristic(entry, instance, limits)
    times = {"heuristic": time.perf_counter() - start_time, "total": time.perf_counter() - start_time}
    return _heuristic_fit(instance, "heuristic", model, float("nan"), times, "")


def solve_method(instance: Instance, method: str, *, source: Fit | None = None, limits: Limits | None = None) -> Fit:
    """Run a formulation's extra method by name (:attr:`solvers.catalog.Entry.methods`).

    A method is ``fn(instance, source, limits, seed) -> (Model | None, message)``; ``source`` is
    the relaxed fit when the method starts from it. The fit's bound is the source's bound.
    """
    limits, start_time = _started(limits), time.perf_counter()
    entry = _entry(instance)
    if method not in entry.method_paths:
        raise ValueError(f"{type(instance.spec).__name__} has no method {method!r}; it has "
                         f"{sorted(entry.method_paths)}")
    if source is None:  # every method starts from the relaxation
        source = solve_relaxed(instance, limits=limits)
    model, message = entry.methods[method](instance, source, limits, limits.seed)
    times = {"solve": time.perf_counter() - start_time, "total": time.perf_counter() - start_time}
    bound = source.bound if source is not None else float("nan")
    return _heuristic_fit(instance, method, model, bound, times, message)


# ------------------------------------------------------------------------------ dispatch
def run(instance: Instance, method: str = "exact", backend: str | None = None, *, limits: Limits | None = None,
        source: Fit | None = None, verbose: bool = False, options: Mapping[str, Any] | None = None) -> Fit:
    """Run one method by name, all of it inside the budget ``limits``.

    ``"exact"``, ``"relaxed"``, ``"rounding"`` (of ``source``, or of the relaxation solved here
    first), ``"heuristic"``, or a catalog method of the formulation (which starts from ``source``
    or from the relaxation when its source is needed). ``backend`` and ``options`` go to the
    exact or relaxed solve.
    """
    if method == "exact":
        return solve_exact(instance, backend, limits=limits, start=source, verbose=verbose, options=options)
    if method == "relaxed":
        return solve_relaxed(instance, backend, limits=limits, verbose=verbose, options=options)
    if method == "heuristic":
        return solve_heuristic(instance, limits=limits)
    limits = _started(limits)
    if source is None:
        source = solve_relaxed(instance, backend, limits=limits, verbose=verbose, options=options)
    if method == "rounding":
        return solve_rounded(instance, source, limits=limits)
    return solve_method(instance, method, source=source, limits=limits)
