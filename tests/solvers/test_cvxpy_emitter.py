"""cvxpy emitter: same feasible set and objective as the Program; solve_cvxpy / solve_clarabel."""
import itertools

import numpy as np
import pytest

from formulations.errors import NotRepresentableError
from formulations.program import ProgramBuilder
from solvers.backends.cvxpy import solve_clarabel, solve_cvxpy, to_cvxpy
from solvers.backends.highs import solve_highs
from solvers.result import Status

from tests.solvers.test_ecos_backend import exp_program, lp_program, random_conic_program, soc_program


def _constraints_hold(problem, x, tol=1e-7):
    problem.variables()[0].value = x
    return all(c.violation().max() <= tol if np.ndim(c.violation()) else c.violation() <= tol
               for c in problem.constraints)


@pytest.mark.parametrize("seed", range(3))
def test_feasibility_agrees_with_program_on_random_points(seed):
    """At random points, cvxpy's constraints hold exactly when Program.violations says so."""
    program = random_conic_program(seed)
    problem = to_cvxpy(program)
    rng = np.random.default_rng(100 + seed)
    agree, inside = 0, 0
    x0 = solve_clarabel(program).x
    for scale in (0.0, 0.05, 0.3, 1.0, 3.0):
        for _ in range(8):
            x = x0 + scale * rng.normal(size=program.n_variables)
            x[program.blocks["t"]] = np.abs(x[program.blocks["t"]]) * 5 * rng.uniform()  # vary exp feasibility
            ours = program.is_feasible(x, tol=1e-7)
            theirs = _constraints_hold(problem, x, tol=1e-7)
            agree += ours == theirs
            inside += ours
    assert agree == 40 and 0 < inside < 40
    problem.variables()[0].value = x0
    assert problem.objective.value == pytest.approx(program.objective(x0), rel=1e-12)


def test_standard_problems_known_optima():
    assert solve_cvxpy(lp_program()).objective == pytest.approx(-2.8, abs=1e-6)
    assert solve_cvxpy(soc_program()).objective == pytest.approx(3 / np.sqrt(2), rel=1e-6)
    assert solve_clarabel(exp_program(1.0, 2.0)).objective == pytest.approx(2 * np.exp(0.5), rel=1e-6)
    r = solve_cvxpy(exp_program(-1.0, 0.5), solver="ECOS")
    assert r.backend == "cvxpy:ECOS" and r.objective == pytest.approx(0.5 * np.exp(-2), rel=1e-6)


def test_infeasible_and_unbounded():
    b = ProgramBuilder()
    b.add_variables("x", 1, lb=1.0, ub=2.0, cost=1.0)
    b.add_rows("r", {"x": [[1.0]]}, ub=0.0)
    assert solve_clarabel(b.build()).status == Status.INFEASIBLE
    b = ProgramBuilder()
    b.add_variables("x", 1, cost=-1.0)
    r = solve_clarabel(b.build())
    assert r.status == Status.UNBOUNDED and r.x is None


def test_milp_through_cvxpy_highs_matches_enumeration():
    """max 5a + 4b + 3c s.t. 2a + 3b + c <= 5, 4a + b + 2c <= 11, 3a + 4b + 2c <= 8, integer 0..3."""
    b = ProgramBuilder()
    b.add_variables("y", 1, lb=0.0, ub=0.5, cost=-1.0)  # one continuous column among integers
    b.add_variables("x", 3, lb=0, ub=3, integer=True, cost=[-5.0, -4.0, -3.0])
    A = np.array([[2.0, 3, 1], [4, 1, 2], [3, 4, 2]])
    rhs = np.array([5.0, 11, 8])
    b.add_rows("cap", {"x": A}, ub=rhs)
    program = b.build()
    best = min(-np.dot([5, 4, 3], z) for z in itertools.product(range(4), repeat=3) if np.all(A @ z <= rhs)) - 0.5
    r = solve_cvxpy(program, solver="HIGHS")
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(best)
    assert solve_highs(program).objective == pytest.approx(best)
    np.testing.assert_allclose(r.x[1:], np.round(r.x[1:]))
    assert r.x[0] == pytest.approx(0.5)


def test_clarabel_refuses_integer_programs():
    b = ProgramBuilder()
    b.add_variables("x", 1, lb=0, ub=1, integer=True)
    with pytest.raises(NotRepresentableError, match="highs"):
        solve_clarabel(b.build())


def test_unknown_solver_named():
    with pytest.raises(ValueError, match="not installed"):
        solve_cvxpy(lp_program(), solver="NOT_A_SOLVER")


def test_problem_is_readable():
    text = str(to_cvxpy(soc_program()))
    assert "SOC" in text and "minimize" in text
