"""Four ``RiskScoreClassifier`` fits at once: in threads against in processes.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/threads.py [--rounds 2] [--rows 2000] [--workers 4]``.

Each fit is the same problem (generated data: ``rows`` rows, 30 binary features, a planted
5-feature card with logistic noise; ``max_size=5``, ``time_limit=60``), so the four fits of a
batch do equal work. The numba kernels are compiled (and cached) before timing, in the parent and
in every worker process. A batch is timed from submitting the four fits to the last one
returning; per fit, the time inside ``fit``. Threads and processes alternate round by round so
machine load affects both sides alike; the table prints every batch and the ratio of the medians.
Threads run in parallel only where the kernels release the GIL (``nogil=True``); with ``W`` fits
on ``C`` cores the ideal batch time is about ``ceil(W / C)`` single fits either way.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import statistics
import time

import numpy as np


def make_data(rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = (rng.random((rows, 30)) < 0.3).astype(float)
    w = np.zeros(30)
    w[:5] = [3, -2, 2, 1, -1]
    y = (rng.random(rows) < 1 / (1 + np.exp(-(X @ w - 1)))).astype(int)
    return X, y


def one_fit(rows: int) -> tuple[float, str, float]:
    """Seconds inside ``fit``, status and objective of one fit (in this thread or process)."""
    from milpscore import RiskScoreClassifier

    X, y = make_data(rows)
    model = RiskScoreClassifier(max_size=5, time_limit=60)
    t = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - t, model.fit_.status.value, float(model.fit_.objective)


def batch(pool: cf.Executor, rows: int, workers: int) -> tuple[float, list[tuple[float, str, float]]]:
    t = time.perf_counter()
    results = list(pool.map(one_fit, [rows] * workers))
    return time.perf_counter() - t, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    single, status, objective = one_fit(args.rows)  # compiles / loads the kernels here
    single, status, objective = one_fit(args.rows)
    print(f"one fit alone: {single:.2f} s ({status}, objective {objective:.6f}); {os.cpu_count()} cores, "
          f"{args.workers} fits per batch, {args.rows} rows")
    times: dict[str, list[float]] = {"threads": [], "processes": []}
    with cf.ThreadPoolExecutor(args.workers) as threads, \
            cf.ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn")) as processes:
        list(processes.map(one_fit, [args.rows] * args.workers))  # warm every worker (imports, kernels)
        print(f"{'round':>5} {'mode':>10} {'batch s':>8} {'per fit s (min-max)':>22} {'statuses':>20}")
        for r in range(args.rounds):
            for mode, pool in (("threads", threads), ("processes", processes)):
                wall, results = batch(pool, args.rows, args.workers)
                fits = [f for f, _, _ in results]
                objectives = {round(o, 9) for _, _, o in results}
                assert len(objectives) == 1, f"the fits disagree: {objectives}"
                times[mode].append(wall)
                print(f"{r:>5} {mode:>10} {wall:>8.2f} {min(fits):>10.2f} - {max(fits):<9.2f} "
                      f"{','.join(sorted({s for _, s, _ in results})):>20}")
    t, p = statistics.median(times["threads"]), statistics.median(times["processes"])
    print(f"median batch: threads {t:.2f} s, processes {p:.2f} s, threads / processes = {t / p:.2f}; "
          f"ideal (ceil(W / cores) single fits) {-(-args.workers // (os.cpu_count() or 1)) * single:.2f} s")


if __name__ == "__main__":
    main()
