"""Ctrl-C: a SIGINT sent to ``milpscore fit`` on a hard instance stops the solve within 3 s and the CLI
prints the incumbent's card with status "interrupted" and its gap, exit code 130, no traceback; a
second SIGINT exits at once. In-process: HiGHS stops at its interrupt callback and SCIP through
``interruptSolve`` once :func:`solvers.limits.interrupt` is called, keeping the incumbent."""
import _thread
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

from formulations.base import Model
from formulations.slim import SLIM
from solvers.backends.highs import solve_highs
from solvers.backends.highs_model import INTERRUPT_GRACE
from solvers.backends.scip import solve_scip
from solvers.limits import clear_interrupt, interrupt
from solvers.result import Status

ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg",
       "PYTHONUNBUFFERED": "1"}


def hard_frame(n=600, d=30, seed=1):
    """600 rows, 30 noisy columns (90 threshold indicators): SLIM is not proven optimal in a minute."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, :8] @ rng.normal(size=8) + rng.normal(0, 2.0, n) > 0).astype(int)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    frame.insert(0, "y", y)
    return frame


def start_fit(tmp_path):
    path = tmp_path / "hard.csv"
    hard_frame().to_csv(path, index=False)
    proc = subprocess.Popen([sys.executable, "-m", "milpscore.cli", "fit", str(path), "--time-limit", "60", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    first = proc.stdout.readline()  # the data summary: the fit starts now
    assert first.startswith("data:"), first + proc.stderr.read()
    time.sleep(4.0)  # well inside the exact solve
    assert proc.poll() is None, "the instance was solved before the interrupt: not hard enough"
    return proc, first


def test_first_sigint_returns_the_incumbent_within_3_s(tmp_path):
    proc, first = start_fit(tmp_path)
    proc.send_signal(signal.SIGINT)
    t = time.perf_counter()
    out, err = proc.communicate(timeout=30)
    elapsed = time.perf_counter() - t
    assert proc.returncode == 130, err
    assert elapsed < 3.0, f"{elapsed:.2f} s from SIGINT to exit"
    assert "Traceback" not in err and "interrupted: stopping the solve" in err
    assert "PREDICT" in out and "ADD POINTS" in out  # the incumbent's card
    assert "status=interrupted" in out and " gap=" in out


def test_second_sigint_exits_at_once(tmp_path):
    """Two Ctrl-C 0.2 s apart (signals sent together coalesce into one): exit 130 within 2 s of the
    first, no traceback, whichever of the two ended the process. (A signal is handled when the main
    thread next runs Python code: a C call or a numba compile in progress delays it.)"""
    proc, _ = start_fit(tmp_path)
    proc.send_signal(signal.SIGINT)
    t = time.perf_counter()
    time.sleep(0.2)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and time.perf_counter() - t < 2.0, err
    assert "interrupted" in err and "Traceback" not in err


def _interrupt_after(seconds):
    timer = threading.Timer(seconds, interrupt)
    timer.start()
    return timer


@pytest.mark.parametrize("solver", [solve_highs, solve_scip], ids=["highs", "scip"])
def test_backend_stops_at_the_interrupt_with_its_incumbent(solver):
    frame = hard_frame(n=400, d=12)
    X = (frame.drop(columns="y").to_numpy() > 0).astype(float)
    X = np.hstack([X, (frame.drop(columns="y").to_numpy() > 0.8).astype(float)])
    instance = SLIM(coef_bound=10, c0=1e-4).instance(X, np.where(frame["y"] > 0, 1.0, -1.0))
    program = instance.exact()
    start = instance.lift(Model(np.zeros(X.shape[1]), 0.0))  # an incumbent from the start, however loaded the machine
    assert program.is_feasible(start, tol=1e-9)
    clear_interrupt()
    timer = _interrupt_after(1.5)
    try:
        t = time.perf_counter()
        result = solver(program, time_limit=60, warm_start=start)
        elapsed = time.perf_counter() - t
    finally:
        timer.cancel()
        clear_interrupt()
    if elapsed < 1.5:
        pytest.skip(f"{solver.__name__} solved the instance before the interrupt ({elapsed:.2f} s)")
    assert elapsed < 5.0, f"{elapsed:.2f} s to stop (interrupted at 1.5 s of a 60 s limit)"
    assert result.x is not None and program.is_feasible(result.x, tol=1e-6)
    assert result.gap > 0


def _long_root_program():
    """A SLIM MILP whose HiGHS root (LP and cut rounds) runs for seconds without a callback: 3000
    rows of 60 many-valued features."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(3000, 60)), 1)
    y = np.where(X[:, :5].sum(1) + rng.normal(0, 2, 3000) > 0, 1.0, -1.0)
    return SLIM(coef_bound=10, c0=1e-4).instance(X, y).exact()


def test_highs_busy_in_its_root_is_left_behind_after_the_grace():
    """HiGHS calls back only at MIP nodes and IPM iterations: in a long root the call returns
    INTERRUPT_GRACE s after the interrupt, without HiGHS's results (the route keeps its own
    incumbent)."""
    program = _long_root_program()
    clear_interrupt()
    timer = _interrupt_after(1.0)
    try:
        t = time.perf_counter()
        result = solve_highs(program, time_limit=8)
        elapsed = time.perf_counter() - t
    finally:
        timer.cancel()
        clear_interrupt()
    assert elapsed < 1.0 + INTERRUPT_GRACE + 1.0, f"{elapsed:.2f} s to return"
    if result.x is None:  # left behind in its root, or stopped at a callback before any incumbent
        assert result.status == Status.NO_SOLUTION_FOUND
        assert "left behind" in result.message or "Interrupted" in result.message, result.message
        assert result.bound == -np.inf
    else:  # it reached a callback in time and stopped there with its incumbent
        assert program.is_feasible(result.x, tol=1e-6)
    _join_left_runs()


def test_a_keyboard_interrupt_in_a_notebook_reaches_the_caller_at_once():
    """Without milpscore's SIGINT handler (a notebook, a script) Ctrl-C raises KeyboardInterrupt in
    the waiting thread at once, and the HiGHS run is asked to stop at its next callback."""
    program = _long_root_program()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, as in a script
    timer = threading.Timer(0.5, _thread.interrupt_main)
    try:
        timer.start()
        t = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            solve_highs(program, time_limit=5)
        assert time.perf_counter() - t < 1.5
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    _join_left_runs()


def _join_left_runs():
    """The runs left behind stop at their next callback, or at their time limit."""
    for thread in [thread for thread in threading.enumerate() if thread.name == "highs-run"]:
        thread.join(15)
        assert not thread.is_alive()
