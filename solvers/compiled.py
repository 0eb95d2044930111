"""Whether numba kernels are compiled: the one readiness test every step with kernels asks.

The exact steps and the SLIM beam search run numba kernels (``cache=True``): the first call in a
fresh environment compiles them, which takes far longer than a short step's share of a time limit.
A kernel is *ready* when it is compiled in this process or numba's cache (wherever numba's own
cache locator puts it: beside the installed source, ``NUMBA_CACHE_DIR``, or the user-wide cache of
a read-only install) holds a build of the current source. A step whose kernels are not ready runs
only without a time limit (compiling is then free); with one, it is skipped with that reason.

Compiling ahead is :mod:`solvers.warmup`'s job: a fit with time to spare compiles its
formulation's kernels before it starts (:func:`solvers.warmup.ensure_compiled`), so only fits too
short for that ever skip a step.
"""
from __future__ import annotations

import importlib
import math

from solvers.limits import Limits


def _dispatchers(module_name: str) -> list:
    module = importlib.import_module(module_name)
    found = []
    for value in vars(module).values():
        py_func = getattr(value, "py_func", None)
        if py_func is not None and hasattr(value, "signatures") and py_func.__module__ == module_name \
                and getattr(value, "targetoptions", {}).get("inline", "never") == "never":
            found.append(value)  # (inlined kernels are compiled into their callers only)
    return found


def _cached(dispatcher) -> bool:
    """The dispatcher is compiled here, or its cache index lists a build of the current source."""
    if dispatcher.signatures:
        return True
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # no cache, unreadable cache, or a numba without this layout: not ready
        return False


#: modules found ready (a kernel, once compiled or cached, stays so for this process)
_READY: set[str] = set()


def module_ready(module_name: str) -> bool:
    """Every kernel of ``module_name`` is compiled or cached (remembered once true)."""
    if module_name not in _READY and all(_cached(d) for d in _dispatchers(module_name)):
        _READY.add(module_name)
    return module_name in _READY


def modules_ready(modules: tuple[str, ...]) -> bool:
    """Every kernel of every module in ``modules`` is compiled or cached."""
    return all(module_ready(m) for m in modules)


def kernels_ready(modules: tuple[str, ...], limits: Limits | None) -> bool:
    """Whether a step using the kernels of ``modules`` may run within the budget ``limits``: they
    are ready, or there is no time limit (``limits`` None or untimed), so compiling cannot break one."""
    return limits is None or math.isinf(limits.seconds_left()) or modules_ready(modules)
