"""Limits of one solve and the wall clock that spends them.

:class:`Limits` is checked once, when it is made; :meth:`Limits.clock` starts a :class:`Clock`
at the beginning of a pipeline call. Every phase of the call (heuristic, relaxation, exact
solve, polishing) asks the same clock for the time it has left, so ``time_limit`` is the wall
time of the whole call, not of one phase.

Reproducibility: a time-limited branch and bound may stop at a different node from one run
to the next, so two runs can return different models. ``Limits(time_limit=None,
node_limit=N)`` stops on a node count instead: with a fixed ``seed`` and one thread the result
is deterministic.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from formulations.validation import check_number


@dataclass(frozen=True)
class Limits:
    """What one pipeline call may spend.

    Parameters
    ----------
    time_limit : seconds of wall time for the whole call (heuristics, relaxation and exact
        solve together); None: no limit.
    node_limit : branch-and-bound nodes of the exact solve (None: no limit). With
        ``time_limit=None`` this gives reproducible runs.
    mip_rel_gap : relative gap ``(objective - bound) / |objective|`` at which a solve counts as
        optimal; the certificate is computed on the true objective of the returned model.
    threads : solver threads (1 is the safe default on small machines).
    seed : seed of every randomised step (rounding draws, restarts, solver seeds).
    """

    time_limit: float | None = 60.0
    node_limit: int | None = None
    mip_rel_gap: float = 1e-6
    threads: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        check_number("time_limit", self.time_limit, allow_none=True)
        check_number("node_limit", self.node_limit, minimum=1, strict=False, integer=True, allow_none=True)
        check_number("mip_rel_gap", self.mip_rel_gap, strict=False)
        check_number("threads", self.threads, minimum=1, strict=False, integer=True)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")

    def clock(self) -> "Clock":
        """Start the wall clock of one call."""
        return Clock(self.time_limit)


class Clock:
    """Wall-clock budget started at creation: ``remaining()`` seconds (None without a limit)."""

    #: a phase asked to run with less than this many seconds left gets this much: a solver
    #: needs a positive limit, and a few milliseconds of overrun are the price of returning
    #: the incumbent rather than nothing
    MIN_PHASE = 0.05

    def __init__(self, time_limit: float | None) -> None:
        self.time_limit = time_limit
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        """Seconds left (never below :attr:`MIN_PHASE`), or None when there is no limit."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - self.elapsed(), self.MIN_PHASE)

    def expired(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit
