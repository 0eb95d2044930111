"""Backend registry: a name -> the function that solves a Program, with declared capabilities.

``solve(program, backend="highs", **options)`` checks the program's needs (MILP, SOC, EXP)
against the backend's ``CAPABILITIES`` before importing anything heavy, and raises a
:class:`SolverNotFound` error naming the alternatives for an unknown backend.
"""
from __future__ import annotations

import importlib

from formulations.errors import NotRepresentableError
from formulations.program import Program
from solvers.result import Result

# name -> (module, solve function, capabilities)
_BACKENDS: dict[str, tuple[str, str, frozenset[str]]] = {
    "highs": ("solvers.highs", "solve_highs", frozenset({"LP", "MILP"})),
    "ecos": ("solvers.ecos", "solve_ecos", frozenset({"LP", "SOC", "EXP"})),
    "clarabel": ("solvers.cvxpy", "solve_clarabel", frozenset({"LP", "SOC", "EXP"})),
    "cvxpy": ("solvers.cvxpy", "solve_cvxpy", frozenset({"LP", "MILP", "SOC", "EXP"})),
    "pyomo": ("solvers.pyomo", "solve_pyomo", frozenset({"LP", "MILP"})),
}


class SolverNotFound(ValueError):
    """Unknown backend name, or a backend that cannot be imported here."""


def requirements(program: Program) -> set[str]:
    """What a program needs from a backend: LP or MILP, plus SOC / EXP cone support."""
    needs = {"MILP" if program.is_mip else "LP"}
    needs |= {kind.upper() for kind in program.cone_kinds}
    return needs


def available_backends() -> dict[str, frozenset[str]]:
    """Backends known by name and their capabilities (``pyomo:<solver>`` picks pyomo's solver)."""
    return {name: caps for name, (_, _, caps) in _BACKENDS.items()}


def solve(program: Program, backend: str = "highs", **options) -> Result:
    """Solve ``program`` with a named backend (``"highs"``, ``"ecos"``, ``"pyomo:appsi_highs"``...)."""
    base, _, sub = backend.partition(":")
    if base not in _BACKENDS:
        raise SolverNotFound(f"unknown backend {backend!r}; choose one of {sorted(_BACKENDS)}")
    module_name, function_name, caps = _BACKENDS[base]
    missing = requirements(program) - caps
    if missing:
        able = sorted(n for n, (_, _, c) in _BACKENDS.items() if requirements(program) <= c)
        raise NotRepresentableError(
            f"backend {base!r} cannot solve a program needing {sorted(missing)}; use one of {able}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SolverNotFound(f"backend {base!r} is not importable here ({exc}); "
                             "reinstall with `pip install milpscore`") from exc
    if sub:
        options["solver"] = sub
    return getattr(module, function_name)(program, **options)
