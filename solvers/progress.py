"""A live progress line for long branch-and-bound solves: elapsed time, incumbent, bound, gap.

Backends read the current reporter (:func:`current`) and call it from their callbacks (HiGHS:
the MIP interrupt callback; SCIP: an event handler on solved nodes). Nothing is reported unless
a caller opts in with :func:`reporting` (the command line does, when stderr is a terminal and
``--quiet`` is not given), so library use stays silent.
"""
from __future__ import annotations

import contextlib
import math
import sys
import time
from contextvars import ContextVar
from typing import Callable, Iterator, TextIO

from solvers.result import relative_gap

#: ``reporter(elapsed s, incumbent, bound, backend's gap)``
Reporter = Callable[[float, float, float, float], None]
_CURRENT: ContextVar[Reporter | None] = ContextVar("milpscore_progress", default=None)


def current() -> Reporter | None:
    """The reporter of the enclosing :func:`reporting` block, or None."""
    return _CURRENT.get()


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[Reporter]:
    """Within the block, solves report ``(elapsed s, incumbent, bound, gap)`` to ``reporter``."""
    token = _CURRENT.set(reporter)
    try:
        yield reporter
    finally:
        _CURRENT.reset(token)
        close = getattr(reporter, "close", None)
        if close is not None:
            close()


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Within the block nothing reports: for sub-solves of a larger search, whose incumbent and
    bound are not the search's (the search reports its own)."""
    token = _CURRENT.set(None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class Trace:
    """A reporter that keeps every report: ``rows`` of ``(elapsed s, incumbent, bound)``, for a
    figure of the certificate over time (:func:`milpscore.cards.plots.plot_bound_trace`).

    ``with progress.reporting(trace := Trace()): model.fit(X, y)``."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, float, float]] = []

    def __call__(self, elapsed: float, incumbent: float, bound: float, gap: float) -> None:
        self.rows.append((float(elapsed), float(incumbent), float(bound)))


class ProgressLine:
    """Rewrites one line of ``stream`` at most every ``every`` seconds (``\\r``, no scrolling)."""

    def __init__(self, stream: TextIO = sys.stderr, every: float = 0.5):
        self.stream, self.every = stream, every
        self._last = -math.inf
        self._shown = False

    def __call__(self, elapsed: float, incumbent: float, bound: float, gap: float) -> None:
        now = time.monotonic()
        if now - self._last < self.every:
            return
        self._last = now
        fmt = lambda v: f"{v:.6g}" if math.isfinite(v) else "-"  # noqa: E731
        gap = relative_gap(incumbent, bound)  # one definition for every backend (solvers.result)
        gap_text = f"{100 * gap:.2f}%" if math.isfinite(gap) else "-"
        self.stream.write(f"\r  {elapsed:7.1f} s   incumbent {fmt(incumbent):>10}   bound {fmt(bound):>10}   "
                          f"gap {gap_text:>8} ")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
