"""Compile every numba kernel of the exact engine into the on-disk cache, outside any fit.

``python -m solvers.warmup`` (what :func:`solvers.compiled.compile_in_background` starts, and what
``milpscore warmup`` runs) solves tiny SLIM and RiskSLIM instances through every route step
without a time limit (every step that takes them, whether or not an earlier one already
proved the optimum), so each kernel is compiled once for the argument types the fits use and
cached (``cache=True``); later fits in any process load them from the cache.
"""
from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np

from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.exact import riskslim_route, slim_route
from solvers.exact.route import Incumbent
from solvers.limits import Clock, Limits

_lock = threading.Lock()
_background: list[subprocess.Popen] = []
from solvers.catalog import entry_for


def _tiny(rng: np.random.Generator, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    X = rng.integers(0, 2 if binary else 4, size=(40, 4)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(0, 0.7, 40) > (1.0 if binary else 3.0), 1, -1)
    y[:2] = (1, -1)
    return X, y


def compile_in_background() -> None:
    """Start (once per process, while none runs) a process that runs :func:`main`; its output
    is discarded. Called by the pipeline after a fit that skipped steps whose kernels were not
    compiled (:func:`solvers.compiled.kernels_ready`)."""
    with _lock:
        if any(p.poll() is None for p in _background):
            return
        _background.append(subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def main() -> None:
    """Solve the tiny instances (module docstring); prints nothing."""
    rng = np.random.default_rng(0)
    limits = Limits(time_limit=None, node_limit=200)
    for binary in (True, False):
        X, y = _tiny(rng, binary)
        for spec, route in ((SLIM(c0=0.01, coef_bound=3, max_size=3), slim_route.ROUTE),
                            (RiskSLIM(c0=0.01, coef_bound=3, max_size=2), riskslim_route.ROUTE)):
            instance = spec.instance(X, y)
            start = entry_for(spec).heuristic_function(instance, Clock(None), 0)
            best = Incumbent(start, instance.objective(start))
            for step in route:  # every step that takes the instance, proven or not
                if step.kernels and step.applies(instance, limits) is None:
                    step.run(instance, best, limits, Clock(None), {})


if __name__ == "__main__":
    main()
