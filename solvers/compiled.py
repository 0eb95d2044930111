"""Whether numba kernels are compiled, and compiling them ahead, outside any fit's time limit.

The exact steps and the SLIM beam search run numba kernels (``cache=True``): the first call in a
fresh environment compiles them, which takes far longer than a short ``time_limit``. The policy
("count compilation and fall back"):

* a kernel is *ready* when it is compiled in this process or its on-disk cache holds a compiled
  version of the current source;
* a step whose kernels are not ready runs anyway when the time left is at least
  :data:`COMPILE_ALLOWANCE` seconds (or there is no time limit): compiling is then a small part of
  the budget, and the step's own clock still ends it;
* otherwise the step is skipped with that reason (the route goes on to steps without kernels), and
  the pipeline starts one background process (:func:`solvers.warmup.compile_in_background`) that
  compiles every kernel into the cache, so the next fit has them.

``milpscore warmup`` (or ``python -m solvers.warmup``) compiles them ahead by hand.
"""
from __future__ import annotations

import importlib
#: seconds left from which a step compiles its kernels itself rather than being skipped
COMPILE_ALLOWANCE = 60.0
#: every module with numba kernels that a fit may run
KERNEL_MODULES = ("solvers.exact.sign_cover", "solvers.exact.box_cover", "solvers.exact.bayes_error",
                  "solvers.exact.box_logistic", "solvers.exact.supports", "solvers.heuristics.slim_search")


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


def kernels_ready(modules: tuple[str, ...], seconds_left: float) -> bool:
    """Whether a step using the kernels of ``modules`` may run with ``seconds_left`` (module
    docstring)."""
    return seconds_left >= COMPILE_ALLOWANCE or all(module_ready(m) for m in modules)


def all_ready() -> bool:
    """Every kernel a fit may run is compiled or cached."""
    return all(module_ready(m) for m in KERNEL_MODULES)
