"""Small standard programs with known optima, reused by every backend that claims the capability.

Following cvxpy's ``solver_test_helpers``: each entry gives the program, its optimal objective
and (where unique) its optimal solution, or the expected infeasible / unbounded status.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from formulations.program import Program, ProgramBuilder


@dataclass(frozen=True)
class StandardProblem:
    name: str
    program: Program
    objective: float | None  # None for infeasible / unbounded
    x: np.ndarray | None
    status: str  # "optimal", "infeasible", "unbounded"
    capability: str  # "LP", "MILP", "SOC", "EXP"


def lp() -> StandardProblem:
    """max x + y s.t. 2x + y <= 4, x + 3y <= 6, x, y >= 0: optimum (1.2, 1.6), value 2.8."""
    b = ProgramBuilder()
    b.add_variables("x", 2, lb=0.0, cost=[-1.0, -1.0])
    b.add_rows("r", {"x": np.array([[2.0, 1.0], [1.0, 3.0]])}, ub=[4.0, 6.0])
    return StandardProblem("lp", b.build(), -2.8, np.array([1.2, 1.6]), "optimal", "LP")


def lp_equality_offset() -> StandardProblem:
    """min x0 + 2 x1 + 3 x2 + 5 s.t. x0 + x1 + x2 = 1, x >= 0: optimum e_0, value 6."""
    b = ProgramBuilder()
    b.add_variables("x", 3, lb=0.0, cost=[1.0, 2.0, 3.0])
    b.offset = 5.0
    b.add_rows("sum", {"x": np.ones((1, 3))}, lb=1.0, ub=1.0)
    return StandardProblem("lp_equality_offset", b.build(), 6.0, np.array([1.0, 0.0, 0.0]), "optimal", "LP")


def milp() -> StandardProblem:
    """max x + y, 2x + 2y <= 7, -x + y <= 0.5, x, y integer in [0, 10]: value 3 (LP: 3.5)."""
    b = ProgramBuilder()
    b.add_variables("x", 2, lb=0.0, ub=10.0, integer=True, cost=[-1.0, -1.0])
    b.add_rows("r", {"x": np.array([[2.0, 2.0], [-1.0, 1.0]])}, ub=[7.0, 0.5])
    return StandardProblem("milp", b.build(), -3.0, None, "optimal", "MILP")


def knapsack() -> StandardProblem:
    """0-1 knapsack, values (10, 13, 7, 8), weights (5, 6, 3, 4), capacity 10: value 21 (items 1, 3)."""
    b = ProgramBuilder()
    b.add_variables("x", 4, lb=0.0, ub=1.0, integer=True, cost=-np.array([10.0, 13.0, 7.0, 8.0]))
    b.add_rows("capacity", {"x": np.array([[5.0, 6.0, 3.0, 4.0]])}, ub=10.0)
    return StandardProblem("knapsack", b.build(), -21.0, np.array([0.0, 1.0, 0.0, 1.0]), "optimal", "MILP")


def infeasible_lp() -> StandardProblem:
    """x >= 1 and x <= 0."""
    b = ProgramBuilder()
    b.add_variables("x", 1, lb=-np.inf, cost=1.0)
    b.add_rows("r", {"x": np.array([[1.0], [1.0]])}, lb=[1.0, -np.inf], ub=[np.inf, 0.0])
    return StandardProblem("infeasible_lp", b.build(), None, None, "infeasible", "LP")


def unbounded_lp() -> StandardProblem:
    """min -x with x >= 0 free above."""
    b = ProgramBuilder()
    b.add_variables("x", 1, lb=0.0, cost=-1.0)
    b.add_rows("r", {"x": np.array([[1.0]])}, lb=0.0)
    return StandardProblem("unbounded_lp", b.build(), None, None, "unbounded", "LP")


def linear_problems() -> list[StandardProblem]:
    return [lp(), lp_equality_offset(), milp(), knapsack(), infeasible_lp(), unbounded_lp()]
