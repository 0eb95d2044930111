"""The one timing method every benchmark script uses: interleaved rounds, medians, the machine stated.

A ratio is only meaningful when both sides ran under the same conditions, so :func:`interleaved`
runs every case once per round, in an order rotated from round to round (no case always first
or always after a cache-hostile neighbour), after one untimed warm-up call of each; it reports the
median and the min-max over at least five rounds. A case may time itself and return a
:class:`Measured` (a peer in its own process: :mod:`benchmarks.peers`). :func:`environment` says what the numbers were
measured on (BLAS threads, load average, cores, library versions); scripts print it first.
"""
from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

MIN_ROUNDS = 5


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of one case over the rounds, and the value of its last call."""

    median: float
    low: float
    high: float
    rounds: int
    value: Any = None

    def ratio(self, reference: "Timing") -> float:
        return self.median / reference.median

    def spread(self) -> str:
        return f"{self.low:.4g}-{self.high:.4g}"


@dataclass(frozen=True)
class Measured:
    """A case's own timing: a call timed elsewhere (a peer's worker process) returns its seconds
    and value, and :func:`interleaved` records those seconds instead of its wall clock."""

    seconds: float
    value: Any


def interleaved(cases: Mapping[str, Callable[[], Any]], rounds: int = 7, warmup: bool = True) -> dict[str, Timing]:
    """Time every case once per round, rotating the order each round; medians over ``rounds``."""
    if rounds < MIN_ROUNDS:
        raise ValueError(f"rounds must be >= {MIN_ROUNDS} (medians of fewer runs are noise), got {rounds}")
    names = list(cases)
    values: dict[str, Any] = {}
    if warmup:
        for name in names:
            cases[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            value = cases[name]()
            seconds = time.perf_counter() - t0
            if isinstance(value, Measured):
                seconds, value = value.seconds, value.value
            values[name] = value
            samples[name].append(seconds)
    return {name: Timing(float(np.median(s)), float(np.min(s)), float(np.max(s)), rounds, values.get(name))
            for name, s in samples.items()}


def environment() -> str:
    """One line: BLAS / OpenMP threads as capped now, load average, cores, Python and numpy versions."""
    from threadpoolctl import threadpool_info

    threads = {d["internal_api"]: d["num_threads"] for d in threadpool_info()}
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (f"threads {threads}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores; "
            f"Python {platform.python_version()}, numpy {np.__version__}")


def load() -> str:
    """The load averages over 1, 5 and 15 minutes, as one short string."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"


def compile_kernels() -> str:
    """Compile every numba kernel of the exact engine and the heuristics once, before anything is
    timed (:mod:`solvers.warmup`: every route step on tiny instances, without a time limit; numba
    caches them on disk, but a fresh checkout compiles them first, and a fit with less than
    :data:`solvers.warmup.FOREGROUND_SECONDS` seconds left skips a step whose kernels are not
    compiled). Returns a line for the output."""
    from solvers.warmup import compile_kernels

    t0 = time.perf_counter()
    compile_kernels()
    return f"numba kernels compiled (or loaded from cache) in {time.perf_counter() - t0:.1f} s, before any timing"
