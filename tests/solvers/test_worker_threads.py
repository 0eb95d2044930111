"""The screens' threads (:mod:`solvers.exact.worker_threads`): every thread runs, and an error in one
stops the others and is raised in the caller (not printed by the thread and lost)."""
from __future__ import annotations

import threading
import time

import pytest

from solvers.exact.worker_threads import run_threads


def test_every_thread_runs_the_work_and_one_thread_is_the_caller():
    seen, lock = [], threading.Lock()
    together = threading.Barrier(3, timeout=10)  # all three alive at once (an ended thread's id is reused)

    def work() -> None:
        with lock:
            seen.append(threading.get_ident())
        together.wait()

    run_threads(work, 3, lambda: None)
    assert len(seen) == 3 and len(set(seen)) == 3 and threading.get_ident() not in seen
    seen.clear()
    run_threads(lambda: seen.append(threading.get_ident()), 1, lambda: None)
    assert seen == [threading.get_ident()]


def test_an_error_in_a_thread_stops_the_others_and_is_raised_in_the_caller():
    stopped = threading.Event()
    calls = {"n": 0}
    lock = threading.Lock()

    def work() -> None:
        with lock:
            calls["n"] += 1
            first = calls["n"] == 1
        if first:
            raise MemoryError("in a worker")
        while not stopped.is_set():  # the others run until told to stop
            time.sleep(0.001)

    with pytest.raises(MemoryError, match="in a worker"):
        run_threads(work, 3, stopped.set)
    assert stopped.is_set() and calls["n"] == 3
