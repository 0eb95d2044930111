"""One result type for every backend: why it stopped (Status) and what it has (Result).

Following OR-Tools MathOpt and pyomo's new solver interface, the status separates *why the
solver stopped* from *whether a primal solution exists*: a MILP stopped at its time limit with an
incumbent is ``FEASIBLE`` and carries ``x``, ``objective``, ``bound`` and ``gap``.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Status(str, enum.Enum):
    """Termination status of a solve."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"  # stopped at a limit (time, gap, iterations) with an incumbent
    INTERRUPTED = "interrupted"  # stopped by a Ctrl-C (solvers.limits.interrupt) with an incumbent
    NO_SOLUTION_FOUND = "no_solution_found"  # stopped at a limit with no incumbent
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    IMPRECISE = "imprecise"  # a solution with reduced accuracy (e.g. ECOS 'inaccurate')
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE, Status.INTERRUPTED, Status.IMPRECISE)


@dataclass(frozen=True)
class Result:
    """Outcome of one solve.

    Attributes
    ----------
    status : :class:`Status`.
    x : primal solution (None when the solver has none).
    objective : objective value of ``x`` (nan when none).
    bound : best proven lower bound on the optimum (minimisation; nan when unknown).
    gap : relative gap ``(objective - bound) / max(|objective|, 1e-10)`` (0 at optimality,
        inf when no solution, nan when unknown).
    solve_time, build_time : seconds.
    iterations : simplex / interior-point / proximal iterations; nodes : branch-and-bound nodes.
    backend : name of the backend; message : solver's own words; raw : solver-specific extras.

    Frozen: the status a backend reached is never relabelled afterwards. The pipeline
    (:mod:`solvers.pipeline`) reports its own certificate on the true objective in a ``Fit``.
    """

    status: Status
    x: np.ndarray | None = None
    objective: float = float("nan")
    bound: float = float("nan")
    gap: float = float("nan")
    solve_time: float = 0.0
    build_time: float = 0.0
    iterations: int = 0
    nodes: int = 0
    backend: str = ""
    message: str = ""
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def has_solution(self) -> bool:
        return self.x is not None and self.status.has_solution

    def summary(self) -> dict[str, Any]:
        """Flat dict for tables: status, objective, bound, gap, times, iterations, nodes."""
        return {"backend": self.backend, "status": self.status.value, "objective": self.objective,
                "bound": self.bound, "gap": self.gap, "build_time": self.build_time,
                "solve_time": self.solve_time, "iterations": self.iterations, "nodes": self.nodes}

    def __repr__(self) -> str:
        return (f"Result(status={self.status.value}, objective={self.objective:.6g}, "
                f"bound={self.bound:.6g}, gap={self.gap:.3g}, solve_time={self.solve_time:.3g}s, "
                f"backend={self.backend!r})")


def relative_gap(objective: float, bound: float) -> float:
    """Relative gap ``(objective - bound) / max(|objective|, 1e-10)`` (0 when bound >= objective)."""
    if not np.isfinite(objective):
        return float("inf")
    if not np.isfinite(bound):
        return float("inf") if bound == -np.inf else float("nan")
    return float(max(0.0, objective - bound) / max(abs(objective), 1e-10))


#: absolute slack of every optimality certificate (objectives are O(1) fractions of weighted error)
CERTIFICATE_ABS_TOL = 1e-9


def certified(objective: float, bound: float, mip_rel_gap: float) -> bool:
    """The one certificate test: a feasible model of true objective ``objective`` is optimal within
    ``mip_rel_gap`` when ``objective - bound <= mip_rel_gap * max(|objective|, 1e-10) + 1e-9``."""
    return bool(np.isfinite(objective) and np.isfinite(bound) and
                objective - bound <= mip_rel_gap * max(abs(objective), 1e-10) + CERTIFICATE_ABS_TOL)


def prune_level(incumbent: float, mip_rel_gap: float) -> float:
    """Objective below which a region can still hold a model that beats ``incumbent`` by more than
    the gap tolerance of :func:`certified` (``inf`` without an incumbent)."""
    return incumbent - mip_rel_gap * max(abs(incumbent), 1e-10) if math.isfinite(incumbent) else math.inf
