"""Backend registry, derived from what each backend module declares about itself.

Every backend module declares ``BACKENDS = {name: Backend(solve_function, capabilities)}``.
The registry imports each module once, qpsolvers-style (``try: import ... except ImportError``):
a backend whose solver library is missing is listed with the ``pip install`` that brings it.
:func:`solve` checks what a program needs (LP / MILP, SOC / EXP cones) against the backend's
capabilities before anything is built, and passes each backend only the common options it takes
(``time_limit``, ``node_limit``, ``mip_rel_gap``, ``threads``, ``seed``, ``verbose``,
``warm_start``); backend-specific options pass through unchanged.
"""
from __future__ import annotations

import importlib
import inspect

from formulations.errors import NotRepresentableError
from formulations.program import Program
from solvers.backends import Backend
from solvers.limits import Limits
from solvers.result import Result

#: backend modules and the package that makes each importable
_MODULES = (("solvers.backends.highs", "highspy"), ("solvers.backends.ecos", "ecos"), ("solvers.backends.cvxpy", "cvxpy"),
            ("solvers.backends.pyomo", "pyomo"), ("solvers.backends.scip", "pyscipopt"))
#: options the pipeline sends to every backend; a backend that does not take one ignores it
COMMON_OPTIONS = ("time_limit", "node_limit", "mip_rel_gap", "threads", "seed", "verbose", "warm_start")


def solver_options(limits: Limits) -> dict:
    """The common options of a solve within the started budget ``limits``: its seconds left (None:
    no limit), nodes, gap, threads and seed -- the one place the budget becomes the numbers a
    backend hands its solver."""
    return {"time_limit": limits.remaining(), "node_limit": limits.node_limit, "mip_rel_gap": limits.mip_rel_gap,
            "threads": limits.threads, "seed": limits.seed}


class SolverNotFound(ValueError):
    """Unknown backend name, or a backend whose solver library is not installed here."""


def _load() -> tuple[dict[str, Backend], dict[str, str]]:
    found: dict[str, Backend] = {}
    missing: dict[str, str] = {}
    for module_name, package in _MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # pragma: no cover - depends on the environment
            missing[module_name.rsplit(".", 1)[1]] = f"pip install {package} ({exc})"
            continue
        found.update(module.BACKENDS)
    return found, missing


_BACKENDS: dict[str, Backend] | None = None
_MISSING: dict[str, str] = {}


def backends() -> dict[str, Backend]:
    """Importable backends by name (loaded once)."""
    global _BACKENDS, _MISSING
    if _BACKENDS is None:
        _BACKENDS, _MISSING = _load()
    return _BACKENDS


def requirements(program: Program) -> set[str]:
    """What a program needs from a backend: LP or MILP, plus SOC / EXP cone support, plus
    ``"LAZY"`` (rows added during the solve) when the program carries a lazy oracle."""
    needs = {"MILP" if program.is_mip else "LP"}
    needs |= {kind.upper() for kind in program.cone_kinds}
    if getattr(program, "lazy", None) is not None:
        needs.add("LAZY")
    return needs


def available_backends() -> dict[str, frozenset[str]]:
    """Backends known by name and their capabilities (``pyomo:<solver>`` picks pyomo's solver)."""
    return {name: b.capabilities for name, b in backends().items()}


def capable_backends(program: Program) -> list[str]:
    """Names of the backends that can solve ``program``."""
    need = requirements(program)
    return sorted(name for name, b in backends().items() if need <= b.capabilities)


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (the part before ``:``), or a :class:`SolverNotFound` with the fix."""
    base = name.partition(":")[0]
    table = backends()
    if base in table:
        return table[base]
    if base in _MISSING:
        raise SolverNotFound(f"backend {base!r} is not installed here; {_MISSING[base]}")
    raise SolverNotFound(f"unknown backend {name!r}; choose one of {sorted(table)}")


def solve(program: Program, backend: str = "highs", **options) -> Result:
    """Solve ``program`` with a named backend (``"highs"``, ``"ecos"``, ``"pyomo:appsi_highs"``...)."""
    base, _, sub = backend.partition(":")
    entry = get_backend(backend)
    missing = requirements(program) - entry.capabilities
    if missing:
        raise NotRepresentableError(f"backend {base!r} cannot solve a program needing {sorted(missing)}; "
                                    f"use one of {capable_backends(program)}")
    accepted = inspect.signature(entry.solve).parameters
    for key in COMMON_OPTIONS:
        if key in options and key not in accepted:
            options.pop(key)
    if sub:
        options["solver"] = sub
    return entry.solve(program, **options)
