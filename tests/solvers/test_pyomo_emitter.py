"""Pyomo emitter: same optimum through pyomo's HiGHS interface as through highspy directly."""
import numpy as np
import pytest

from formulations.slim import SLIM
from solvers import solve
from solvers.backends.highs import solve_highs
from solvers.backends.pyomo import to_pyomo
from solvers.result import Status
from standard_problems import linear_problems


@pytest.mark.parametrize("problem", [p for p in linear_problems() if p.status == "optimal"], ids=lambda p: p.name)
def test_pyomo_matches_direct(problem):
    r = solve(problem.program, backend="pyomo:highs")
    assert r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(problem.objective, abs=1e-7)


def test_pyomo_slim_equals_direct():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (30, 3)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - 0.5 + rng.normal(0, 0.7, 30) > 0, 1.0, -1.0)
    inst = SLIM(coef_bound=2, c0=0.01).instance(X, y)
    for program in (inst.exact(), inst.relaxed()):
        direct = solve_highs(program)
        via_pyomo = solve(program, backend="pyomo:highs")
        assert via_pyomo.objective == pytest.approx(direct.objective, abs=1e-7)


def test_pyomo_model_structure():
    from standard_problems import milp
    p = milp().program
    m = to_pyomo(p)
    assert len(m.x) == p.n_variables and len(m.rows) == p.n_rows
    assert all(m.x[j].is_integer() for j in range(p.n_variables))
