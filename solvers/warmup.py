"""Compile the exact engine's numba kernels into numba's on-disk cache, once per environment.

A kernel compiles on its first call and is cached (``cache=True``); later processes load it. Who
compiles:

* :func:`ensure_compiled`, at the start of every exact fit by a route: when kernels of the
  formulation (:attr:`solvers.catalog.Entry.kernels`) are not ready and the clock leaves at least
  :data:`FOREGROUND_SECONDS`, it compiles them *now*, in a child process given at most
  :data:`COMPILE_SHARE` of the time left (so the fit's time limit holds even on a slow machine),
  and says so in one line on stderr -- the one line the library prints unasked, once per
  environment. The fit then loads the kernels from the cache. With less time, or when the child
  runs out of its share, the fit goes on without the steps whose kernels are missing and
  :func:`compile_in_background` compiles them for the next fit.
* ``milpscore warmup`` (or ``python -m solvers.warmup``) compiles every formulation's kernels by hand.

Child processes run with the directory that holds the *imported* ``solvers`` package as their
working directory, so ``python -m solvers.warmup`` imports the same copy as the fit that started
it (the installed package, not a source tree that happens to be the current directory) and fills
the cache that copy reads. The cache is wherever numba's locator puts it for that copy: beside the
source, or ``NUMBA_CACHE_DIR``, or the user-wide cache when the install is read-only.

What compiling means: tiny SLIM and RiskSLIM instances, on 0/1 and on integer features, solved
through the heuristic and every route step with kernels, without a time limit, so each kernel is
compiled for the argument types the fits use.
"""
from __future__ import annotations

import math
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.catalog import CATALOG, Entry
from solvers.compiled import modules_ready
from solvers.exact.route import Incumbent
from solvers.limits import Clock, Limits

#: seconds left from which a fit compiles its missing kernels before it starts
FOREGROUND_SECONDS = 20.0
#: share of the time left the foreground compilation may take
COMPILE_SHARE = 0.5
#: the tiny instance each formulation with kernels is compiled on
TINY_SPECS = {"slim": SLIM(c0=0.01, coef_bound=3, max_size=3), "riskslim": RiskSLIM(c0=0.01, coef_bound=3, max_size=2)}

_lock = threading.Lock()
_background: list[subprocess.Popen] = []


def _command(names: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", __name__, *names]


def _package_root() -> Path:
    """The directory holding the imported ``solvers`` package (site-packages or a source tree)."""
    return Path(__file__).resolve().parents[1]


def ensure_compiled(entry: Entry, clock: Clock) -> None:
    """Make ``entry``'s kernels ready before a fit on ``clock`` starts, when there is time for it
    (module docstring); otherwise leave them to a background compilation."""
    if modules_ready(entry.kernels):
        return
    left = clock.seconds_left()
    if left < FOREGROUND_SECONDS:
        compile_in_background()
        return
    print(f"milpscore: compiling the {entry.name} engine's numba kernels for this environment "
          "(once; later fits load them from the cache)", file=sys.stderr, flush=True)
    try:
        subprocess.run(_command((entry.name,)), cwd=_package_root(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=None if math.isinf(left) else COMPILE_SHARE * left, check=False)
    except subprocess.TimeoutExpired:  # the child is killed; what it cached stays cached
        pass
    if not modules_ready(entry.kernels):
        compile_in_background()


def compile_in_background() -> None:
    """Start (once per process, while none runs) a child process that compiles every kernel; its
    output is discarded."""
    with _lock:
        if any(p.poll() is None for p in _background):
            return
        _background.append(subprocess.Popen(_command(()), cwd=_package_root(), stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def _tiny(rng: np.random.Generator, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    X = rng.integers(0, 2 if binary else 4, size=(40, 4)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(0, 0.7, 40) > (1.0 if binary else 3.0), 1, -1)
    y[:2] = (1, -1)
    return X, y


def compile_kernels(names: tuple[str, ...] = tuple(TINY_SPECS)) -> None:
    """Compile the kernels of the formulations ``names`` (keys of :data:`TINY_SPECS`) in this
    process, by solving their tiny instances (module docstring); prints nothing."""
    unknown = sorted(set(names) - set(TINY_SPECS))
    if unknown:
        raise ValueError(f"no kernels to compile for {unknown}; formulations with kernels: {sorted(TINY_SPECS)}")
    rng = np.random.default_rng(0)
    limits = Limits(time_limit=None, node_limit=200)
    for binary in (True, False):
        X, y = _tiny(rng, binary)
        for name in names:
            entry, instance = CATALOG[name], TINY_SPECS[name].instance(X, y)
            start = entry.heuristic_function(instance, Clock(None), 0)
            best = Incumbent(start, instance.objective(start))
            for step in entry.route:  # every step with kernels that takes the instance, proven or not
                if step.kernels and step.applies(instance, limits) is None:
                    step.run(instance, best, limits, Clock(None), {})


if __name__ == "__main__":
    compile_kernels(tuple(sys.argv[1:]) or tuple(TINY_SPECS))
