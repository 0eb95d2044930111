"""HiGHS models: a silent ``Highs`` with the project's options (the one place they are set), a
:class:`~formulations.program.Program` loaded in one ``passModel`` call, LP / MPS files.

:func:`new_highs` sets every option the project uses (threads, time and node limits, gaps, seed,
log); the backend (:mod:`solvers.backends.highs`), its cutting-plane loop
(:mod:`solvers.backends.cutting_planes`) and the sign-cover LP (:mod:`solvers.exact.sign_cover`)
all build their ``Highs`` through it.
"""
from __future__ import annotations

import atexit
import math
import os
import sys
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

import highspy
import numpy as np

from formulations.errors import NotRepresentableError
from formulations.program import Program, column_names, row_names
from solvers.limits import interrupted

_banner_lock = threading.Lock()
_banner_shown = False
#: after a first Ctrl-C, seconds a run gets to stop at its next callback (keeping its incumbent)
#: before :func:`run_interruptibly` returns without it
INTERRUPT_GRACE = 1.0
#: seconds past its time limit a run gets before :func:`run_interruptibly` returns without it
#: (HiGHS's root cut rounds look at neither its clock nor its callbacks)
OVERRUN_GRACE = 0.25


#: HiGHS's default feasibility tolerances (highspy 1.15-1.16)
DEFAULT_TOLERANCES = {"primal_feasibility_tolerance": 1e-7, "dual_feasibility_tolerance": 1e-7,
                      "mip_feasibility_tolerance": 1e-6}
#: the finest feasibility tolerance HiGHS is given (its own lower limit is 1e-10)
FINEST_TOLERANCE = 1e-10


def new_highs(*, verbose: bool = False, threads: int = 1, time_limit: float | None = None,
              mip_rel_gap: float | None = None, node_limit: int | None = None, seed: int = 0,
              options: Mapping | None = None) -> highspy.Highs:
    """A fresh :class:`highspy.Highs` with the project's options, the one place they are set.

    The first ``Highs()`` of a process prints HiGHS's banner on the C-level standard output,
    whatever ``output_flag`` says: file descriptor 1 is pointed at ``os.devnull`` around that
    construction, so a library call never writes to stdout. ``mip_abs_gap`` is 1e-12: HiGHS's
    default 1e-6 is coarser than the tie-breaking terms of the score-card objectives (SLIM's L1
    epsilon), so the stopping rule is the relative gap only. The feasibility tolerances are no
    coarser than ``mip_rel_gap`` (down to :data:`FINEST_TOLERANCE`): HiGHS's dual bound is the
    optimum of constraints relaxed by them, so with its defaults (1e-7, 1e-6) a bound can fall
    short of the true optimum by more than a tight gap allows.
    """
    global _banner_shown
    with _banner_lock:
        if _banner_shown:
            h = highspy.Highs()
        else:
            sys.stdout.flush()
            saved = os.dup(1)
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.close(devnull)
                h = highspy.Highs()
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            _banner_shown = True
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", int(seed))
    set_limits(h, seconds=time_limit, nodes=node_limit)
    if mip_rel_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
        h.setOptionValue("mip_abs_gap", 1e-12)
        for key, default in DEFAULT_TOLERANCES.items():
            h.setOptionValue(key, min(default, max(FINEST_TOLERANCE, float(mip_rel_gap))))
    for key, value in (options or {}).items():
        h.setOptionValue(key, value)
    # a first Ctrl-C (solvers.limits.interrupt) stops the run at the next node (MIP) or IPM iteration;
    # the simplex callback is left out: it fires every iteration and slows the MIP down
    abandoned = threading.Event()

    def stop(event) -> None:  # keeps the incumbent
        if abandoned.is_set() or interrupted():
            event.interrupt()

    h.cbMipInterrupt += stop
    h.cbIpmInterrupt += stop
    h.milpscore_abandoned = abandoned
    return h


#: runs left behind by :func:`run_interruptibly` that may still be inside HiGHS
_ABANDONED: set[threading.Thread] = set()
#: seconds the interpreter's exit waits for each run left behind (:func:`_join_abandoned`)
EXIT_WAIT = 60.0


def _interrupt_now(event) -> None:
    event.interrupt()


def _abandon(h: highspy.Highs, thread: threading.Thread) -> None:
    """Leave a run behind: it stops at its next node or IPM iteration (``milpscore_abandoned``) and, through
    the simplex callback subscribed now (not before: it fires every iteration), at its next simplex iteration."""
    h.milpscore_abandoned.set()
    h.cbSimplexInterrupt += _interrupt_now
    _ABANDONED.add(thread)


@atexit.register
def _join_abandoned() -> None:
    """Wait (at most :data:`EXIT_WAIT` s each) for the runs left behind: a process that exits while a HiGHS
    run is still going aborts (``terminate called without an active exception``, SIGABRT) when HiGHS's
    thread pool is destroyed under it."""
    for thread in list(_ABANDONED):
        thread.join(EXIT_WAIT)


def run_interruptibly(h: highspy.Highs, time_limit: float | None = None) -> bool:
    """``h.run()`` (a :func:`new_highs` model) in a thread while this one waits, so that a SIGINT
    handler runs at once and the time limit holds: HiGHS calls back only at MIP nodes and IPM
    iterations, and its root LP and cut rounds can run for seconds past its ``time_limit``. True
    when the run ended; False when it had not stopped :data:`INTERRUPT_GRACE` s after
    :func:`solvers.limits.interrupt`, or :data:`OVERRUN_GRACE` s after ``time_limit`` seconds (its
    results are then not read: it stops at its next callback, in its thread). An exception in the
    waiting thread (a ``KeyboardInterrupt`` where no handler of :mod:`milpscore.interrupt` is
    installed) also asks HiGHS to stop there, and propagates."""
    failure: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            h.run()
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=run, daemon=True, name="highs-run")
    thread.start()
    since = None
    overrun = math.inf if time_limit is None else time.perf_counter() + time_limit + OVERRUN_GRACE
    try:
        while not done.wait(0.05):
            if time.perf_counter() > overrun:
                _abandon(h, thread)
                return False
            if interrupted():
                since = time.perf_counter() if since is None else since
                if time.perf_counter() - since > INTERRUPT_GRACE:
                    _abandon(h, thread)
                    return False
    except BaseException:  # a KeyboardInterrupt without milpscore's handler: HiGHS stops at its next callback
        _abandon(h, thread)
        raise
    if failure:
        raise failure[0]
    return True


def to_highs(program: Program, *, names: bool = False, labels: Mapping[str, Sequence[str]] | None = None,
             **options) -> highspy.Highs:
    """Load ``program`` into a fresh :class:`highspy.Highs` (one ``passModel`` call).

    With ``names=True`` columns and rows get readable names (``loss_17``; with ``labels``, e.g.
    ``{"coef": feature names}``, ``coef(age_ge_60)``: :func:`formulations.program.column_names`)
    so that ``writeModel('model.lp')`` is readable. ``options`` go to :func:`new_highs`.
    """
    if program.cones:
        raise NotRepresentableError(
            f"HiGHS solves LP/MILP only; this program has cones {sorted(program.cone_kinds)}. "
            "Use backend 'ecos' (or 'cvxpy') for conic programs.")
    h = new_highs(**options)
    A = program.A.tocsc()
    inf = highspy.kHighsInf
    clip = lambda v: np.clip(np.asarray(v, dtype=np.float64), -inf, inf)  # noqa: E731
    h.passModel(program.n_variables, program.n_rows, int(A.nnz),
                int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize),
                float(program.offset), np.asarray(program.c, dtype=np.float64),
                clip(program.col_lb), clip(program.col_ub), clip(program.row_lb), clip(program.row_ub),
                A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(np.float64),
                program.integer.astype(np.int32))
    if names:
        lp = h.getLp()
        lp.col_names_ = column_names(program, labels)
        lp.row_names_ = row_names(program)
        h.passModel(lp)
    return h


def write_model(program: Program, path: str | Path, labels: Mapping[str, Sequence[str]] | None = None) -> Path:
    """Write ``program`` as an LP or MPS file (by suffix) with readable names (``labels``: see :func:`to_highs`)."""
    path = Path(path)
    if path.suffix.lower() not in (".lp", ".mps"):
        raise ValueError(f"write_model path must end in .lp or .mps, got {path.name!r}")
    h = to_highs(program, names=True, labels=labels)
    h.writeModel(str(path))
    return path


def set_limits(h: highspy.Highs, *, seconds: float | None = None, nodes: int | None = None) -> None:
    """Set (or, between the rounds of a loop, reset) the time limit (``seconds`` from now, of HiGHS's
    own run time) and the node limit (``nodes``) of ``h``; None leaves a limit as it is.

    HiGHS compares ``time_limit`` with its run clock, which adds up the time of *every* ``run()`` of
    the object, not of the next one (after runs of 100 s in all, a limit of 50 s stops the next run at
once).
    So the limit set is that clock plus ``seconds``."""
    if seconds is not None:
        if seconds <= 0:
            raise ValueError(f"time_limit must be > 0 seconds, got {seconds}")
        h.setOptionValue("time_limit", float(h.getRunTime()) + float(seconds))
    if nodes is not None:
        h.setOptionValue("mip_max_nodes", int(nodes))
