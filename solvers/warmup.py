"""Compile the exact engine's numba kernels into numba's on-disk cache, once per environment.

A kernel compiles on its first call and is cached (``cache=True``); later processes load it. Who
compiles:

* :func:`ensure_compiled`, at the start of every exact fit by a route: when the kernels the fit
  may run (:func:`needed_parts`: the heuristic's and those of the route steps that take the
  instance) are not ready and the clock leaves at least :data:`FOREGROUND_SECONDS`, it compiles
  *those parts only* (not every step's: a step that does not take the instance is not waited for),
  for the instance's feature kind (0/1 or integer), now, in a child process given at most
  :data:`COMPILE_SHARE` of the time left (so the fit's time limit holds even on a slow machine),
  and says so in one line on stderr -- the one line the library prints unasked, once per
  environment. The fit then loads the kernels from the cache, while a background child compiles
  every other kernel for later fits. When the child runs out of its share it is left to finish in
  the background (what it compiles serves the next fit) and the fit goes on without the steps
  whose kernels are missing; with less time than :data:`FOREGROUND_SECONDS`, the fit starts a
  background compilation (:func:`compile_in_background`) and goes on at once.
* One compilation at a time per installed copy: a child holds an exclusive lock on a file named
  after the package's directory while it compiles, and a fit that finds the lock taken waits for
  that compilation (within the same share) instead of starting a second one.
* ``milpscore warmup`` (or ``python -m solvers.warmup``) compiles every formulation's kernels by hand.

Child processes run with the directory that holds the *imported* ``solvers`` package as their
working directory, so ``python -m solvers.warmup`` imports the same copy as the fit that started
it (the installed package, not a source tree that happens to be the current directory) and fills
the cache that copy reads. The cache is wherever numba's locator puts it for that copy: beside the
source, or ``NUMBA_CACHE_DIR``, or the user-wide cache when the install is read-only.

What compiling means: tiny SLIM and RiskSLIM instances, on 0/1 and on integer features, solved
through the heuristic and the route steps with kernels (all, or the parts named), without a time
limit, so each kernel is compiled for the argument types the fits use. A target names a
formulation, optionally a kind and the parts: ``slim``, ``slim:binary``,
``slim:binary:heuristic``, ``slim:binary:bayes_supports+sign_cover_lp``.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from formulations.rows import is_binary
from solvers.catalog import CATALOG, Entry
from solvers.compiled import modules_ready
from solvers.exact.route import Incumbent
from solvers.limits import Limits

try:
    import fcntl
except ImportError:  # not on POSIX: compilations are not serialised
    fcntl = None

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


def _lock_path() -> Path:
    """The lock file of the compilations of the imported copy (one per package directory)."""
    digest = hashlib.sha256(str(_package_root()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"milpscore-warmup-{digest}.lock"


def _compiling_elsewhere() -> bool:
    """Another process holds the compilation lock of this copy."""
    if fcntl is None:
        return False
    try:
        with open(_lock_path(), "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:  # an unwritable temporary directory: no lock to ask
        return False
    return False


def _wait(process: subprocess.Popen | None, modules: tuple[str, ...], limits: Limits) -> None:
    """Wait, until the budget ``limits`` ends, for ``process`` to end (or, with none, for the lock's
    holder to finish or ``modules`` to become ready)."""
    while not limits.expired():
        if process is not None and process.poll() is not None:
            return
        if process is None and (not _compiling_elsewhere() or modules_ready(modules)):
            return
        time.sleep(0.1)


#: the part of a target that names the heuristic (the others are route steps' names)
HEURISTIC = "heuristic"


def steps_taking(entry: Entry, instance, limits: Limits) -> list:
    """The route steps with kernels that take ``instance`` (their ``applies`` says None)."""
    return [step for step in entry.route or () if step.kernels and step.applies(instance, limits) is None]


def needed_kernels(entry: Entry, steps: list) -> tuple[str, ...]:
    """Kernel modules a fit may run: the heuristic's and those of ``steps`` (:func:`steps_taking`)."""
    return tuple(dict.fromkeys([*entry.heuristic_kernels, *(m for step in steps for m in step.kernels)]))


def needed_parts(entry: Entry, steps: list) -> tuple[str, ...]:
    """The parts whose kernels a fit may run and are not ready yet: ``"heuristic"``
    (:data:`HEURISTIC`) and the names of those of ``steps`` (:func:`steps_taking`)."""
    return ((HEURISTIC,) if not modules_ready(entry.heuristic_kernels) else ()) + \
        tuple(step.name for step in steps if not modules_ready(step.kernels))


def ensure_compiled(entry: Entry, instance, limits: Limits) -> None:
    """Make the kernels a fit of ``instance`` needs ready before it starts on ``limits`` (started), when there
    is time for it (module docstring); otherwise leave them to a background compilation. The
    foreground child compiles this instance's feature kind and the parts it needs only; every
    other kernel follows in the background."""
    if modules_ready(entry.kernels):  # every kind ready: no step's applies() run twice per fit
        return
    steps = steps_taking(entry, instance, limits)  # (each applies() once: some count X's non-zeros)
    needed = needed_kernels(entry, steps)
    if modules_ready(needed):
        return
    left = limits.seconds_left()
    if left < FOREGROUND_SECONDS:
        compile_in_background()
        return
    share = limits.share(COMPILE_SHARE)
    if _compiling_elsewhere():
        _wait(None, needed, share)
        return
    print(f"milpscore: compiling the {entry.name} engine's numba kernels for this environment "
          "(once; later fits load them from the cache)", file=sys.stderr, flush=True)
    kind = "binary" if is_binary(instance.X) else "integer"
    child = _start((f"{entry.name}:{kind}:{'+'.join(needed_parts(entry, steps))}",))
    _wait(child, needed, share)
    with _lock:
        if child.poll() is None:  # out of its share: it finishes in the background for the next fit
            _background.append(child)
            return
    compile_in_background()  # every other kernel, for later fits


def _start(names: tuple[str, ...]) -> subprocess.Popen:
    return subprocess.Popen(_command(names), cwd=_package_root(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def compile_in_background() -> None:
    """Start (once per process, while no compilation of this copy runs) a child process that
    compiles every kernel; its output is discarded."""
    with _lock:
        if any(p.poll() is None for p in _background) or _compiling_elsewhere():
            return
        _background.append(_start(()))


def _tiny(rng: np.random.Generator, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """40 rows: 4 integer columns 0..3, or (binary) 3 columns 0..4 each thresholded at 1, 2, 3 and 4 --
    chains of nested columns, so that SLIM's blocked step screens supports of their groups too."""
    top = 4 if binary else 3
    X = rng.integers(0, top + 1, size=(40, 3 if binary else 4)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(0, 1.4 if binary else 0.7, 40) > top, 1, -1)
    y[:2] = (1, -1)
    if binary:
        X = np.column_stack([X[:, j] >= t for j in range(X.shape[1]) for t in range(1, top + 1)]).astype(float)
    return X, y


#: the feature kinds the tiny instances are drawn in (their kernels' argument types and steps differ)
KINDS = ("binary", "integer")


def _targets(names: tuple[str, ...]) -> list[tuple[str, str, tuple[str, ...] | None]]:
    """``(formulation, kind, parts)`` of ``names`` (module docstring): ``"slim"`` (every kind, every
    part: parts None), ``"slim:binary"`` or ``"slim:binary:heuristic+sign_cover_lp"``."""
    found = []
    for name in names:
        formulation, _, rest = name.partition(":")
        kind, _, listed = rest.partition(":")
        if formulation not in TINY_SPECS or kind and kind not in KINDS:
            raise ValueError(f"no kernels to compile for {name!r}; formulations with kernels: {sorted(TINY_SPECS)}, "
                             f"optionally with a kind ':{'|'.join(KINDS)}' and parts ':heuristic+<step>+...'")
        parts = tuple(listed.split("+")) if listed else None
        known = {HEURISTIC} | {step.name for step in CATALOG[formulation].route if step.kernels}
        if parts is not None and not set(parts) <= known:
            raise ValueError(f"no part {sorted(set(parts) - known)} in {name!r}; parts with kernels: {sorted(known)}")
        found += [(formulation, k, parts) for k in ((kind,) if kind else KINDS)]
    return found


def _steps_to_run(entry: Entry, instance, limits: Limits, parts: tuple[str, ...] | None) -> list:
    """The route steps with kernels that take the tiny ``instance`` and compile those of ``parts``
    (None: all): a named step, or for a named step that does not take the tiny instance
    (``sign_cover_lp_long``) the first one that does and runs the same kernels (``sign_cover_lp``)."""
    takes = steps_taking(entry, instance, limits)
    if parts is None:
        return takes
    chosen = {step.name for step in takes if step.name in parts}
    for step in entry.route:
        if step.name in parts and step.name not in chosen:
            chosen |= {other.name for other in takes if set(step.kernels) <= set(other.kernels)}
    return [step for step in takes if step.name in chosen]


def compile_kernels(names: tuple[str, ...] = tuple(TINY_SPECS)) -> None:
    """Compile the kernels of ``names`` (targets, module docstring: keys of :data:`TINY_SPECS`,
    each optionally with a kind of :data:`KINDS` and parts) in this process, by solving their tiny
    instances through the heuristic and the steps (:func:`_steps_to_run`); prints nothing. Without
    the heuristic among the parts, the steps start from no incumbent (a kernel compiles whole at
    its first call all the same)."""
    limits = Limits.untimed(node_limit=200).started()
    for name, kind, parts in _targets(names):
        X, y = _tiny(np.random.default_rng(KINDS.index(kind)), kind == "binary")
        entry, instance = CATALOG[name], TINY_SPECS[name].instance(X, y)
        best = Incumbent(None)
        if parts is None or HEURISTIC in parts:
            start = entry.heuristic_function(instance, limits, 0)
            best = Incumbent(start, instance.objective(start))
        for step in _steps_to_run(entry, instance, limits, parts):  # proven or not
            step.run(instance, best, limits, {})


def compile_exclusively(names: tuple[str, ...] = tuple(TINY_SPECS)) -> None:
    """Compile ``names`` holding this copy's compilation lock (waiting for a holder to finish)."""
    if fcntl is None:
        compile_kernels(names)
        return
    with open(_lock_path(), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        compile_kernels(names)


if __name__ == "__main__":
    compile_exclusively(tuple(sys.argv[1:]) or tuple(TINY_SPECS))
