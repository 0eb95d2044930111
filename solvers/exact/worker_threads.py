"""Threads of this process for the screens whose kernels release the GIL (numba ``nogil``): the
blocked screen (:mod:`solvers.exact.blocked_pass`) and the orthant search
(:mod:`solvers.exact.monotone_supports`). Their count for ``n_jobs`` is
:func:`solvers.limits.job_threads`.

Contract of :func:`run_threads`: every thread runs the same ``work`` (which takes its units of work
from shared state under its own lock); the call returns once all have ended. An error in a thread
is not left to the thread (Python would print it and go on, and the screen would return as if the
units that thread held had been screened): ``stop()`` is called so the others end at their next
check, and the first error is raised in the calling thread.
"""
from __future__ import annotations

import threading
from typing import Callable


def run_threads(work: Callable[[], None], threads: int, stop: Callable[[], None]) -> None:
    """Run ``work()`` on ``threads`` threads (one: in the calling thread) and wait for every one
    (timed joins: the calling thread stays responsive to Ctrl-C); an error in a thread calls
    ``stop()`` and is raised here once all have ended (module docstring)."""
    if threads <= 1:
        work()
        return
    failed: list[BaseException] = []

    def guarded() -> None:
        try:
            work()
        except BaseException as error:  # raised again in the calling thread
            failed.append(error)
            stop()

    workers = [threading.Thread(target=guarded, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        while worker.is_alive():
            worker.join(0.1)
    if failed:
        raise failed[0]
