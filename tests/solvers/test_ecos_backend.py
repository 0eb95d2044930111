"""ECOS backend on standard conic problems with closed-form optima, and against cvxpy-Clarabel."""
import numpy as np
import pytest
import scipy.sparse as sp

from formulations.errors import NotRepresentableError
from formulations.program import ProgramBuilder
from solvers.backends.cvxpy import solve_clarabel
from solvers.backends.ecos import EXP_CONE_ORDER, solve_ecos, to_ecos
from solvers.registry import solve
from solvers.result import Status


def lp_program():
    """min -x1 - x2 s.t. x1 + 2 x2 <= 4, 3 x1 + x2 <= 6, x >= 0: optimum (1.6, 1.2), -2.8."""
    b = ProgramBuilder()
    b.add_variables("x", 2, lb=0.0, cost=[-1.0, -1.0])
    b.add_rows("r", {"x": [[1.0, 2.0], [3.0, 1.0]]}, ub=[4.0, 6.0])
    return b.build()


def soc_program(a=(1.0, 2.0)):
    """min ||x - a|| s.t. x1 + x2 = 0: the distance |a1 + a2| / sqrt(2) from a to the line."""
    b = ProgramBuilder()
    b.add_variables("x", 2)
    b.add_variables("t", 1, cost=1.0)
    b.add_rows("line", {"x": [[1.0, 1.0]]}, lb=0.0, ub=0.0)
    b.add_cones("soc", 3, {"t": [[1.0], [0.0], [0.0]], "x": [[0, 0], [1, 0], [0, 1]]},
                constant=[0.0, -a[0], -a[1]])
    return b.build()


def exp_program(u=1.0, v=2.0):
    """min w s.t. (u, v, w) in K_exp with u, v fixed by bounds: w = v exp(u / v)."""
    b = ProgramBuilder()
    b.add_variables("uv", 2, lb=[u, v], ub=[u, v])
    b.add_variables("w", 1, cost=1.0)
    b.add_cones("exp", 3, {"uv": [[1, 0], [0, 1], [0, 0]], "w": [[0], [0], [1]]})
    return b.build()


def test_lp_optimum():
    r = solve_ecos(lp_program())
    assert r.status == Status.OPTIMAL and r.raw["accurate"]
    np.testing.assert_allclose(r.x, [1.6, 1.2], atol=1e-7)
    assert r.objective == pytest.approx(-2.8, abs=1e-7)
    assert r.bound == pytest.approx(-2.8, abs=1e-6) and r.gap < 1e-7


def test_soc_distance_to_line():
    r = solve_ecos(soc_program((1.0, 2.0)))
    assert r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(3 / np.sqrt(2), rel=1e-7)
    np.testing.assert_allclose(r.x[:2], [-0.5, 0.5], atol=1e-6)


@pytest.mark.parametrize("u, v", [(1.0, 2.0), (-1.0, 0.5), (3.0, 1.5)])
def test_exp_cone_order_matches_closed_form(u, v):
    """v exp(u / v): a wrong permutation (ECOS's (x, y, z) taken as cvxpy's) fails this."""
    r = solve_ecos(exp_program(u, v))
    assert r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(v * np.exp(u / v), rel=1e-7)
    assert EXP_CONE_ORDER == (0, 2, 1)


def test_exp_cone_epigraph_of_exponential():
    """min t s.t. t >= exp(x), x >= 1: t = e at x = 1."""
    b = ProgramBuilder()
    b.add_variables("x", 1, lb=1.0)
    b.add_variables("t", 1, cost=1.0)
    b.add_cones("exp", 3, {"x": [[1.0], [0], [0]], "t": [[0.0], [0], [1]]}, constant=[0, 1, 0])
    r = solve_ecos(b.build())
    assert r.objective == pytest.approx(np.e, rel=1e-8)


def test_offset_and_bound():
    p = lp_program()
    from dataclasses import replace
    r = solve_ecos(replace(p, offset=10.0))
    assert r.objective == pytest.approx(7.2, abs=1e-7) and r.bound == pytest.approx(7.2, abs=1e-6)


def test_infeasible_rows():
    b = ProgramBuilder()
    b.add_variables("x", 2, cost=1.0)
    b.add_rows("r", {"x": [[1.0, 1.0], [1.0, 1.0]]}, lb=[1.0, -np.inf], ub=[np.inf, 0.0])
    r = solve_ecos(b.build())
    assert r.status == Status.INFEASIBLE and r.x is None and not r.has_solution


def test_infeasible_cone():
    """||x|| <= t with t <= -1 is empty."""
    b = ProgramBuilder()
    b.add_variables("t", 1, ub=-1.0)
    b.add_variables("x", 2, cost=1.0)
    b.add_cones("soc", 3, {"t": [[1.0], [0], [0]], "x": [[0, 0], [1, 0], [0, 1]]})
    assert solve_ecos(b.build()).status == Status.INFEASIBLE


def test_empty_row_with_impossible_bounds_is_infeasible():
    b = ProgramBuilder()
    b.add_variables("x", 1, lb=0.0, ub=1.0, cost=1.0)
    b.add_rows("zero", {"x": sp.csr_matrix((1, 1))}, lb=1.0)
    r = solve_ecos(b.build())
    assert r.status == Status.INFEASIBLE and "no nonzero" in r.message


def test_unbounded():
    b = ProgramBuilder()
    b.add_variables("x", 2, lb=0.0, cost=[-1.0, 0.0])
    b.add_rows("r", {"x": [[0.0, 1.0]]}, ub=1.0)
    r = solve_ecos(b.build())
    assert r.status == Status.UNBOUNDED and r.x is None and r.bound == -np.inf


def test_iteration_limit_is_reported_honestly():
    r = solve_ecos(soc_program(), max_iters=1)
    assert r.status in (Status.FEASIBLE, Status.NO_SOLUTION_FOUND)
    assert r.raw["exit_flag"] == -1 and not r.raw["accurate"]
    if r.status == Status.FEASIBLE:
        assert soc_program().is_feasible(r.x, 1e-6)


def test_integer_program_refused_with_pointer_to_highs():
    b = ProgramBuilder()
    b.add_variables("x", 2, lb=0, ub=3, integer=True, cost=-1.0)
    with pytest.raises(NotRepresentableError, match="highs"):
        solve_ecos(b.build())


def test_bad_options():
    with pytest.raises(TypeError, match="unknown ECOS options"):
        solve_ecos(lp_program(), tolerance=1e-3)
    with pytest.raises(ValueError, match="max_iters"):
        solve_ecos(lp_program(), max_iters=0)
    with pytest.raises(ValueError, match="feastol"):
        solve_ecos(lp_program(), feastol=-1.0)


def test_ecos_data_layout():
    """Linear rows first (inequalities split, bounds as rows), equalities apart, then cones."""
    data = to_ecos(soc_program())
    assert data["dims"] == {"l": 0, "q": [3], "e": 0}
    assert data["A"].shape == (1, 3) and data["b"].tolist() == [0.0]
    data = to_ecos(exp_program())
    assert data["dims"]["e"] == 1 and data["A"].shape == (2, 3)  # two fixed columns


def random_conic_program(seed: int):
    """Bounded random program with linear rows, two SOC blocks and an exp-cone block, feasible at 0."""
    rng = np.random.default_rng(seed)
    d, m, k = 6, 5, 4
    b = ProgramBuilder()
    b.add_variables("x", d, lb=-2.0, ub=2.0, cost=rng.normal(size=d))
    b.add_variables("t", k, cost=rng.uniform(0.5, 1.0, size=k))
    b.add_rows("lin", {"x": rng.normal(size=(m, d))}, lb=-1.0, ub=rng.uniform(0.5, 2.0, size=m))
    b.add_rows("eq", {"x": rng.normal(size=(1, d))}, lb=0.0, ub=0.0)
    for dim in (3, 5):  # ||F_i x|| <= 3 + g_i x, two blocks of 2 cones
        D = rng.normal(size=(2 * dim, d))
        e = np.zeros(2 * dim)
        e[0::dim] = 3.0
        b.add_cones("soc", dim, {"x": D}, e)
    # t_i >= exp(a_i . x): (a_i x, 1, t_i)
    a = rng.normal(size=(k, d))
    parts_x = [a, np.zeros((k, d)), np.zeros((k, d))]
    parts_t = [np.zeros((k, k)), np.zeros((k, k)), np.eye(k)]
    b.add_cones("exp", 3, {"x": ProgramBuilder.interleave(parts_x), "t": ProgramBuilder.interleave(parts_t)},
                constant=np.tile([0.0, 1.0, 0.0], k))
    return b.build()


@pytest.mark.parametrize("seed", range(4))
def test_random_conic_programs_agree_with_clarabel(seed):
    program = random_conic_program(seed)
    ours, ref = solve_ecos(program), solve_clarabel(program)
    assert ours.status == ref.status == Status.OPTIMAL
    assert ours.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-7)
    assert program.is_feasible(ours.x, tol=1e-6)


def test_registry_dispatch():
    r = solve(soc_program(), backend="ecos")
    assert r.backend == "ecos" and r.objective == pytest.approx(3 / np.sqrt(2), rel=1e-7)
