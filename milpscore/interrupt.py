"""Ctrl-C as CPLEX and Gurobi users expect it: the first stops the solve and keeps the incumbent,
the second exits at once.

:func:`stop_on_sigint` installs a SIGINT handler for the duration of a command. The first
SIGINT calls :func:`solvers.limits.interrupt`: every clock of the running fit expires, HiGHS stops
at its next interrupt callback, SCIP at its next node or LP (``interruptSolve``), the searches at
their next look at the clock; the fit returns its best model with status ``"interrupted"`` and its
gap. A second SIGINT exits the process at once with code 130 (128 + SIGINT), as a shell expects.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

from solvers.limits import clear_interrupt, interrupt, interrupted

#: exit code of a command stopped by Ctrl-C (128 + SIGINT)
EXIT_INTERRUPTED = 130

__all__ = ["stop_on_sigint", "exit_code", "EXIT_INTERRUPTED", "interrupted"]


def _handler(signum: int, frame: object) -> None:
    if interrupted():
        os.write(2, b"\nmilpscore: interrupted again: exiting now\n")
        os._exit(EXIT_INTERRUPTED)
    interrupt()
    os.write(2, b"\nmilpscore: interrupted: stopping the solve and keeping the best model so far "
                b"(Ctrl-C again exits now)\n")


@contextlib.contextmanager
def stop_on_sigint() -> Iterator[None]:
    """Within the block the first SIGINT interrupts the fit (module docstring); the earlier handler
    is restored after it. Outside the main thread (where Python cannot set handlers) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear_interrupt()
    previous = signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.stderr.flush()


def exit_code(code: int, command_line: bool) -> int:
    """``code``, or :data:`EXIT_INTERRUPTED` after a Ctrl-C. From the command line the process then
    exits at once (output flushed): the interpreter's teardown (garbage-collecting the solver and
    compiler objects) takes over a second, and the user asked to stop."""
    if not interrupted():
        return code
    if command_line:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    return EXIT_INTERRUPTED
