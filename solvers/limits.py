"""The one budget of a call: one wall-clock deadline, one memory budget, nodes, gap, threads, seed.

A :class:`Limits` is the one budget of a user call. It is checked once, when it is made;
:meth:`Limits.started` fixes its deadline (``time.perf_counter()`` seconds) once per call (an
estimator's ``fit``, a ``compare``, a command of the command line); the started object is then
passed down *unchanged* — through cross-validation folds, ``compare`` rows, multipliers, the
heuristic, the relaxation and every step of an exact route — and every phase asks it for the time
left (:meth:`Limits.seconds_left`, :meth:`Limits.remaining`, :meth:`Limits.expired`). So
``time_limit`` is the wall time of the whole call, and a phase that may spend a part of what is
left gets :meth:`Limits.share` of it (the one share rule, :func:`phase_seconds`), a phase of at
most a set number of seconds :meth:`Limits.capped`: same memory, nodes, gap, threads, seed and
jobs, never past the call's deadline. No step makes a new budget from a number of seconds; the
one place the budget becomes the numbers a solver library takes is
:func:`solvers.registry.solver_options`.

Memory. ``memory`` is a budget in bytes for what one step may allocate (default: half of the
memory available when the limits are made, :func:`available_memory`). Each exact step estimates
its allocation *before* it allocates and is skipped, with its reason, when the estimate is over
budget (:mod:`solvers.exact.route`).

Interrupts. :func:`interrupt` (called by a SIGINT handler) asks every running phase to stop at its
next look at the clock: :meth:`Limits.expired` is then true and :meth:`Limits.remaining` is the
minimum, so the fit returns its incumbent.

Other processes. A pickled budget carries its deadline on the wall clock (``time.time()``) and the
process that unpickles it puts it back on its own ``perf_counter``, so joblib and dask workers ask
the same budget as the caller (on other machines, as far as their clocks agree).

Reproducibility: a time-limited branch and bound may stop at a different node from one run to
the next. ``Limits.untimed(node_limit=N)`` stops on a node count instead: with a fixed
``seed`` and one thread the result is deterministic.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from formulations.validation import check_number

#: share of the available memory the default budget takes
MEMORY_SHARE = 0.5
#: smallest memory budget accepted (bytes): below it not even the data fits
MIN_MEMORY = 16 * 2**20

_INTERRUPTED = threading.Event()


def interrupt() -> None:
    """Ask every running fit to stop and return its incumbent (a first Ctrl-C)."""
    _INTERRUPTED.set()


def clear_interrupt() -> None:
    """Forget an earlier :func:`interrupt` (a new fit starts)."""
    _INTERRUPTED.clear()


def interrupted() -> bool:
    """True after :func:`interrupt` until :func:`clear_interrupt`."""
    return _INTERRUPTED.is_set()


def available_memory() -> int:
    """Bytes of memory available to this process now (``MemAvailable`` on Linux; else the free
    physical pages; 4 GiB when neither can be read)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


def job_threads(n_jobs: int) -> int:
    """Threads of this process that ``n_jobs`` asks for (-1: every core, -2: all but one, as joblib
    counts): the blocked screen's and the orthant search's."""
    cores = os.cpu_count() or 1
    return max(1, n_jobs if n_jobs > 0 else cores + 1 + n_jobs)


#: a phase asked to run with less than this many seconds left gets this much: a solver needs a
#: positive limit, and a few milliseconds of overrun are the price of returning the incumbent
#: rather than nothing
MIN_PHASE = 0.05


#: a phase's least seconds are at most this share of the time left: a step that claims them at a short
#: limit leaves the steps after it as much (on a 6 s SLIM fit, 5 s of Bayes-error enumeration left HiGHS,
#: which proves in 1-2 s, too little)
LEAST_SHARE = 0.5


def phase_seconds(fraction: float, left: float, least: float = MIN_PHASE) -> float:
    """Seconds of a phase that may spend ``fraction`` of the ``left`` seconds of its call, and at least
    ``least`` seconds but no more than :data:`LEAST_SHARE` of ``left`` for those (and at least
    :data:`MIN_PHASE`): the one share rule of :meth:`Limits.share`, never more than what is left."""
    floor = min(max(least, MIN_PHASE), max(LEAST_SHARE * left, MIN_PHASE))
    return max(fraction * left, min(floor, left))


def seconds_left_for(seconds: float, fraction: float, least: float = MIN_PHASE) -> float:
    """The least time left at which :func:`phase_seconds` (``fraction``, ``least``) gives a phase
    ``seconds``: its inverse, for a step that projects its work."""
    by_fraction = seconds / fraction if fraction > 0 else math.inf
    by_least = seconds / LEAST_SHARE if seconds <= max(least, MIN_PHASE) else math.inf
    return max(min(by_fraction, by_least), seconds)


@dataclass(frozen=True)
class Limits:
    """What one call may spend: its one budget of time and memory (module docstring).

    Parameters
    ----------
    time_limit : seconds of wall time for the whole call (heuristics, relaxation and exact
        solve together); None: no limit. In a :meth:`share`, the seconds of that phase.
    node_limit : branch-and-bound nodes of the exact solve (None: no limit). With
        ``time_limit=None`` this gives reproducible runs.
    mip_rel_gap : relative gap ``(objective - bound) / max(|objective|, 1e-10)`` at which a solve
        counts as optimal; the certificate is computed on the true objective of the returned model.
    threads : solver threads (1 is the safe default on small machines).
    seed : seed of every randomised step (rounding draws, restarts, solver seeds).
    memory : bytes one step may allocate; None: :data:`MEMORY_SHARE` of :func:`available_memory`
        when the limits are made (never at import: no module makes a :class:`Limits` then).
    deadline : ``time.perf_counter()`` seconds at which the call ends; set by :meth:`started`
        (None: not started, or no time limit).
    n_jobs : joblib workers that bound the supports of the exact enumeration and search the boxes
        of SLIM's box search (1: this process; -1: all cores; the active joblib backend is used,
        e.g. ``dask``), and threads of this process that run the blocked screen
        (:mod:`solvers.exact.blocked_pass`) and the orthant search
        (:mod:`solvers.exact.monotone_supports`): :func:`job_threads`.
    objective_limit : only models of objective below this are sought (a MIP solver's objective
        limit, in the instance's objective units; inf: none). The exact route prunes with it as if
        it were an incumbent and stops once its bound shows that no model beats it by more than
        the gap: the fit then returns its own best model, with a bound valid for every model, and
        is certified only if that model itself meets the bound. A caller comparing several
        instances of one objective (RiskSLIM's multipliers) passes the best objective found so far.
    screen : a :class:`solvers.exact.screen.SupportScreen` shared by the fits of one call on the same
        rows (RiskSLIM's multipliers): the supports an earlier fit's saturated-loss screen left, so a
        later fit bounds only them (None: none shared). It holds proofs, not a budget; it rides here
        because, like ``objective_limit``, it is passed down unchanged to the exact route.
    start : ``time.perf_counter()`` seconds at which this budget (or this share of it) started; set
        by :meth:`started` and :meth:`share` (:meth:`elapsed` counts from it).
    """

    time_limit: float | None = 60.0
    node_limit: int | None = None
    mip_rel_gap: float = 1e-6
    threads: int = 1
    seed: int = 0
    memory: int | None = None
    deadline: float | None = None
    n_jobs: int = 1
    objective_limit: float = math.inf
    screen: Any = None
    start: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.objective_limit, bool) or not isinstance(self.objective_limit, (int, float)) or \
                math.isnan(self.objective_limit) or self.objective_limit == -math.inf:
            raise ValueError(f"objective_limit must be a number or inf, got {self.objective_limit!r}")
        check_number("time_limit", self.time_limit, allow_none=True)
        check_number("node_limit", self.node_limit, minimum=1, strict=False, integer=True, allow_none=True)
        check_number("mip_rel_gap", self.mip_rel_gap, strict=False)
        check_number("threads", self.threads, minimum=1, strict=False, integer=True)
        if isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, int) or self.n_jobs == 0:
            raise ValueError(f"n_jobs must be a non-zero integer (1: one process, -1: all cores), got {self.n_jobs!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.memory is None:
            object.__setattr__(self, "memory", max(int(MEMORY_SHARE * available_memory()), MIN_MEMORY))
        else:
            check_number("memory (memory_limit, bytes)", self.memory, minimum=MIN_MEMORY, strict=False)
            object.__setattr__(self, "memory", int(self.memory))

    # ------------------------------------------------------------------ starting and sharing
    @property
    def is_started(self) -> bool:
        return self.start is not None

    def started(self) -> "Limits":
        """These limits with the clock started now (unchanged if already started): the deadline
        is now + ``time_limit``. Called once per user call."""
        if self.is_started:
            return self
        now = time.perf_counter()
        return replace(self, start=now, deadline=None if self.time_limit is None else now + self.time_limit)

    def share(self, fraction: float, least: float = MIN_PHASE) -> "Limits":
        """The budget of a phase that may spend ``fraction`` of the time left, and at least ``least``
        seconds of it (:func:`phase_seconds`; same memory, nodes, gap, threads, seed, jobs, objective
        limit), started now; never past this deadline."""
        started = self.started()
        now = time.perf_counter()
        if started.deadline is None:
            return replace(started, start=now)
        part = phase_seconds(fraction, max(started.seconds_left(), 0.0), least)
        return replace(started, time_limit=max(part, MIN_PHASE), deadline=now + part, start=now)

    def ending_earlier(self, seconds: float) -> "Limits":
        """This budget with its deadline ``seconds`` earlier (for a solver that looks at its clock
        only after a set-up of about that many seconds); unchanged without a time limit."""
        started = self.started()
        if started.deadline is None:
            return started
        return replace(started, deadline=started.deadline - seconds)

    def capped(self, seconds: float) -> "Limits":
        """The budget of a phase that may spend at most ``seconds`` (and never past this deadline),
        started now; unchanged without a time limit (the phase then ends on its own rule, so its
        result does not depend on the clock)."""
        started = self.started()
        if started.deadline is None:
            return started
        now = time.perf_counter()
        end = min(started.deadline, now + seconds)
        return replace(started, time_limit=max(end - now, MIN_PHASE), deadline=end, start=now)

    @classmethod
    def untimed(cls, **fields: Any) -> "Limits":
        """A budget without a time limit (``fields``: the other limits, e.g. ``node_limit`` or
        ``mip_rel_gap``); work under it ends on its own rule, a node limit or an interrupt."""
        return cls(None, **fields)

    # ------------------------------------------------------------------ other processes
    def __getstate__(self) -> dict:
        """Pickled with its deadline and start on the wall clock (``time.time()``):
        ``time.perf_counter()`` has no common origin between processes."""
        state = dict(self.__dict__)
        shift = time.time() - time.perf_counter()
        for name in ("deadline", "start"):
            if state[name] is not None:
                state[name] += shift
        return state

    def __setstate__(self, state: dict) -> None:
        """Unpickled on this process's ``time.perf_counter()`` (the same wall-clock moments)."""
        shift = time.perf_counter() - time.time()
        for name, value in state.items():
            moment = name in ("deadline", "start") and value is not None
            object.__setattr__(self, name, value + shift if moment else value)

    # ------------------------------------------------------------------ the clock
    def _running(self) -> None:
        if not self.is_started:
            raise RuntimeError("these limits are not started: call Limits.started() once per call "
                               "and pass the started limits down")

    def elapsed(self) -> float:
        """Seconds since this budget (or share) started."""
        self._running()
        return time.perf_counter() - self.start

    def seconds_left(self) -> float:
        """Seconds to the deadline (``inf`` without a limit, 0 once interrupted; may be negative)."""
        self._running()
        if interrupted():
            return 0.0
        return math.inf if self.deadline is None else self.deadline - time.perf_counter()

    def remaining(self) -> float | None:
        """Seconds left (never below :data:`MIN_PHASE`), or None when there is no limit and no
        interrupt: the number a backend hands its solver."""
        if self.deadline is None and not interrupted():
            return None
        return max(self.seconds_left(), MIN_PHASE)

    def expired(self) -> bool:
        return self.seconds_left() <= 0

    # ------------------------------------------------------------------ memory
    def fits(self, nbytes: float) -> bool:
        """Whether an allocation of ``nbytes`` is within the memory budget."""
        return nbytes <= self.memory
