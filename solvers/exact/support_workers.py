"""The worker pool of the support enumerations: joblib workers that bound chunks of supports.

After the first chunks of a size (bounded by the coordinator, they measure the rate), the rest is
cut into tasks of whole chunks of :data:`solvers.exact.support_listing.CHUNK` supports (about
:data:`TASK_SECONDS` each); a task carries the lister's state (not the supports), the pickled
bounder (its kernels are module functions, so a worker loads them from numba's cache) and the
prune level (module docstring of :mod:`solvers.exact.supports`, *Parallel bounding*). The workers
come from the active joblib backend: :func:`start_workers` starts them, and loads their kernels,
while the fit's heuristic runs. Each worker holds its own copy of the kernel's data: the routes'
memory estimates count :func:`kernel_copies`.
"""
from __future__ import annotations

import math
import pickle
import threading

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from joblib.parallel import get_active_backend

from solvers.exact.bayes_error import bayes_errors, value_bits
from solvers.exact.box_logistic import column_codes, label_bits
from solvers.exact.sparse_logistic import _binary_fits, _pattern_fits
from solvers.exact.support_listing import CHUNK, Lister, sift
from solvers.limits import Limits

#: seconds of bounding one worker task aims at (whole chunks; the coordinator looks at the clock as
#: each task returns)
TASK_SECONDS = 0.25


def bounding_workers(n_jobs: int) -> int:
    """Workers that bound the supports for ``n_jobs`` in the active joblib backend (1: this process)."""
    return 1 if n_jobs == 1 else max(1, int(effective_n_jobs(n_jobs)))


def kernel_copies(n_jobs: int) -> int:
    """Processes holding the bounding kernel's data and scratch (for the memory budget): this one,
    plus each worker when there are several."""
    workers = bounding_workers(n_jobs)
    return 1 if workers == 1 else 1 + workers


_warming: list[threading.Thread] = []


def start_workers(n_jobs: int) -> None:
    """Start the workers of ``n_jobs`` in the active joblib backend from a background thread and
    load the kernels in each, so that their start-up (processes, imports, kernels) overlaps the
    fit's heuristic; the enumeration waits for it, then reuses them (loky keeps its processes
    between calls; a dask cluster's workers keep their imports). Nothing for one worker or a
    backend of threads."""
    backend = get_active_backend()[0]
    if n_jobs == 1 or getattr(backend, "uses_threads", False):
        return
    workers = bounding_workers(n_jobs)

    def warm() -> None:
        with parallel_config(backend=backend):
            Parallel(n_jobs=n_jobs)(delayed(_load_kernels)() for _ in range(workers))

    if workers > 1 and not any(thread.is_alive() for thread in _warming):
        thread = threading.Thread(target=warm, daemon=True)
        thread.start()
        _warming[:] = [thread]


def workers_started(limits: Limits) -> bool:
    """Wait for :func:`start_workers`' call to end (at most until the budget ``limits`` ends); whether it
    has. Every joblib call of a fit waits for it: joblib's dask backend (1.6) has one result collector per
    backend, which a call that ends stops for every call (``DaskDistributedBackend.stop_call``), so a
    call started just before another ends never gets its results and waits forever."""
    for thread in _warming:
        left = limits.seconds_left()
        thread.join(None if math.isinf(left) else max(left, 0.0))
    return not any(thread.is_alive() for thread in _warming)


def _load_kernels() -> None:
    """In a worker: load the bounding kernels from the numba cache (each called once on a tiny
    problem with the argument types of the fits)."""
    X = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    positive, weights = np.array([True, False, True, False]), np.ones(4)
    chunk = Lister(np.zeros(0, np.int64), np.arange(3), 2).next(CHUNK)
    box = (np.full(3, -2.0), np.full(3, 2.0), -2.0, 2.0, 1.0)
    _binary_fits(*label_bits(X, positive, weights), chunk, box, math.inf)
    _pattern_fits(*column_codes(X), X, positive, weights, chunk, box, math.inf)
    bayes_errors(*value_bits(X, positive, weights), chunk, math.inf)


class Pool:
    """The joblib workers of one enumeration: one ``Parallel`` context, entered at the first tasks
    (after :func:`start_workers`' processes are up, waiting for them at most until the budget ends)."""

    def __init__(self, n_jobs: int, workers: int):
        self.n_jobs, self.workers = n_jobs, workers
        self.parallel: Parallel | None = None

    def run(self, tasks, limits: Limits):
        """The results of ``tasks`` (``delayed`` calls) in order, as a generator; None when the
        budget ``limits`` ran out while the workers were starting."""
        if self.parallel is None:
            if not workers_started(limits):
                return None
            self.parallel = Parallel(n_jobs=self.n_jobs, return_as="generator", batch_size=1).__enter__()
        return self.parallel(tasks)

    def close(self) -> None:
        if self.parallel is not None:
            self.parallel.__exit__(None, None, None)


def bound_task(blob: np.ndarray, forced: np.ndarray, free: np.ndarray, r: int, prev: np.ndarray | None,
                state: np.ndarray, count: int, level: float) -> tuple:
    """In a worker: :func:`solvers.exact.support_listing.sift` the ``count`` supports of a lister
    from its ``state``, chunk by
    chunk of :data:`CHUNK` (the serial run's chunks), kept ones concatenated in listing order.
    ``blob`` is the pickled bounder (a uint8 array, so joblib memory-maps it and dask scatters it once
    per call); its kernels are module functions, loaded from the numba cache."""
    bound = pickle.loads(blob)
    lister = Lister(forced, free, r, prev)
    lister.state, lister.total = state.copy(), count
    parts = [sift(bound, lister, CHUNK, level) for _ in range(-(-count // CHUNK))]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            min(p[2] for p in parts), count,
            None if parts[0][4] is None else np.concatenate([p[4] for p in parts]))


def worker_tasks(lister: Lister, per_task: int):
    """``(state, count)`` of the tasks covering the rest of ``lister`` (moved past each)."""
    while lister.listed < lister.total:
        count = min(per_task * CHUNK, lister.total - lister.listed)
        yield lister.skip(count), count
