"""SCIP backend: standard problems, limits, warm starts, and a lazy (cutting-plane) program in one tree."""
import os
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.logistic_cuts import with_lazy
from formulations.program import ProgramBuilder
from solvers import registry
from solvers.result import Status
from solvers.backends import scip as scip_backend
from solvers.backends.scip import STATUS_MAP, solve_scip
from standard_problems import linear_problems


@pytest.mark.parametrize("problem", linear_problems(), ids=lambda p: p.name)
def test_standard_problems(problem):
    r = solve_scip(problem.program)
    if problem.status == "optimal":
        assert r.status == Status.OPTIMAL
        assert r.objective == pytest.approx(problem.objective, abs=1e-7)
        assert problem.program.is_feasible(r.x, tol=1e-6)
        if problem.x is not None:
            np.testing.assert_allclose(r.x, problem.x, atol=1e-6)
    elif problem.status == "infeasible":
        assert r.status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED) and r.x is None
    else:
        assert r.status in (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


def test_registry_declares_scip_with_lazy_capability():
    caps = registry.available_backends()["scip"]
    assert {"LP", "MILP", "LAZY"} <= caps
    assert set(STATUS_MAP.values()) <= set(Status)


def _knapsack(n=40, seed=0):
    rng = np.random.default_rng(seed)
    b = ProgramBuilder()
    b.add_variables("x", n, lb=0, ub=1, integer=True, cost=-rng.integers(10, 100, n).astype(float))
    b.add_rows("cap", {"x": rng.integers(10, 100, (1, n)).astype(float)}, ub=float(n * 15))
    return b.build()


def test_node_limit_returns_incumbent_and_honest_gap():
    r = solve_scip(_knapsack(), node_limit=1, mip_rel_gap=0.0)
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    if r.status == Status.FEASIBLE:
        assert r.gap >= 0 and r.bound <= r.objective + 1e-9


def test_warm_start_is_used():
    p = _knapsack(seed=1)
    start = np.zeros(p.n_variables)
    r = solve_scip(p, warm_start=start, node_limit=1)
    assert r.has_solution
    with pytest.raises(ValueError, match="warm_start"):
        solve_scip(p, warm_start=np.zeros(3))


@dataclass(frozen=True)
class _SquareCuts:
    """Lazy oracle of ``t >= (x - 2.6)^2``: tangent rows at x, true objective ``(x - 2.6)^2 + 0.1 x``."""

    def cuts(self, x):
        v, g = (x[0] - 2.6) ** 2, 2 * (x[0] - 2.6)
        if x[1] >= v - 1e-9:
            return sp.csr_matrix((0, 2)), np.zeros(0)
        return sp.csr_matrix(np.array([[-g, 1.0]])), np.array([v - g * x[0]])

    def value(self, x):
        return (x[0] - 2.6) ** 2 + 0.1 * x[0]


def _lazy_program():
    b = ProgramBuilder()
    b.add_variables("coef", 1, lb=-10, ub=10, integer=True, cost=0.1)
    b.add_variables("loss", 1, lb=0.0, ub=np.inf, cost=1.0)
    b.add_rows("cuts", {"coef": np.array([[0.0]]), "loss": np.array([[1.0]])}, lb=0.0)
    return with_lazy(b.build(), _SquareCuts())


def test_lazy_program_in_one_tree():
    p = _lazy_program()
    r = solve_scip(p, mip_rel_gap=1e-9)
    assert r.status == Status.OPTIMAL
    assert r.x[0] == 3.0  # (0.4)^2 + 0.3 = 0.46 < (0.6)^2 + 0.2 = 0.56
    assert r.objective == pytest.approx(0.46, abs=1e-9)
    assert r.bound <= 0.46 + 1e-9 and r.raw["lazy_rows"] >= 1


def test_lazy_relaxation_converges_to_the_continuous_optimum():
    r = solve_scip(_lazy_program().relax(), mip_rel_gap=1e-9)
    assert r.status == Status.OPTIMAL
    assert r.x[0] == pytest.approx(2.55, abs=1e-3)  # minimiser of (x - 2.6)^2 + 0.1 x
    assert r.bound <= 0.2575 + 1e-9  # true continuous optimum 0.0025 + 0.255
    assert r.objective == pytest.approx(0.2575, abs=1e-4)


def test_cones_are_refused():
    from formulations.errors import NotRepresentableError

    b = ProgramBuilder()
    b.add_variables("x", 2, lb=-1, ub=1)
    b.add_cones("soc", 2, {"x": np.eye(2)})
    with pytest.raises(NotRepresentableError, match="ecos"):
        solve_scip(b.build())


def test_an_aborted_solve_keeps_its_incumbent_without_a_bound():
    """SCIP aborts on an LP failure it cannot resolve (``model.optimize()`` raises "SCIP: error in LP
    solver!"): the result keeps a feasible incumbent as FEASIBLE with no bound, or is an ERROR without one."""
    from pyscipopt import Model

    from solvers.backends.scip import _failed

    program = _knapsack(5)
    model = Model()
    model.hideOutput()
    variables = [model.addVar(vtype="B", obj=float(c)) for c in program.c]
    failed = _failed(model, program, variables, None, 0.0, 0.0, Exception("SCIP: error in LP solver!"))
    assert failed.status == Status.ERROR and failed.x is None and "error in LP solver" in failed.message
    sol = model.createSol()
    for v in variables:
        model.setSolVal(sol, v, 0.0)
    assert model.addSol(sol)
    kept = _failed(model, program, variables, None, 0.0, 0.0, Exception("SCIP: error in LP solver!"))
    assert kept.status == Status.FEASIBLE and np.array_equal(kept.x, np.zeros(5))
    assert kept.objective == program.objective(np.zeros(5)) and kept.bound == -np.inf and kept.gap == np.inf


def test_soplex_tolerance_notices_are_dropped_and_every_other_line_kept(capfd):
    """SoPlex (without GMP) writes its tolerance notice straight to file descriptor 2 whenever SCIP
    tightens the LP's tolerance; around ``optimize`` that line is dropped, any other line comes through,
    and nothing is held back when not quiet."""
    notice = b"Cannot set feasibility tolerance to small value 1e-11 without GMP - using 1e-10.\n"
    with scip_backend._without_soplex_notices(True):
        os.write(2, notice + b"SCIP: something else\n" + notice)
    out, err = capfd.readouterr()
    assert out == "" and err == "SCIP: something else\n"
    with scip_backend._without_soplex_notices(False):
        os.write(2, notice)
    assert capfd.readouterr().err == notice.decode()
