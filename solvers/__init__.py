"""How to solve: backends (HiGHS, ECOS, pyomo, cvxpy) and algorithms (proximal, rounding, search).

Every backend takes a :class:`formulations.program.Program` and returns a
:class:`solvers.result.Result`. :func:`solvers.registry.solve` dispatches by name.
"""
from solvers.result import Result, Status
from solvers.registry import solve, available_backends

__all__ = ["Result", "Status", "solve", "available_backends"]
