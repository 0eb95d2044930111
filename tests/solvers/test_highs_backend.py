"""HiGHS backend on the standard problems, warm starts, time limits, export."""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import highspy

from formulations.errors import NotRepresentableError
from formulations.program import ProgramBuilder
from solvers import solve
from solvers.backends.highs import solve_highs, write_model
from solvers.backends.highs_model import new_highs, run_interruptibly
from solvers.result import Status
from standard_problems import linear_problems


@pytest.mark.parametrize("problem", linear_problems(), ids=lambda p: p.name)
def test_standard_problems(problem):
    r = solve_highs(problem.program)
    if problem.status == "optimal":
        assert r.status == Status.OPTIMAL
        assert r.objective == pytest.approx(problem.objective, abs=1e-8)
        assert problem.program.is_feasible(r.x, tol=1e-7)
        if problem.x is not None:
            np.testing.assert_allclose(r.x, problem.x, atol=1e-7)
        assert r.gap == pytest.approx(0.0, abs=1e-6)
    elif problem.status == "infeasible":
        assert r.status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)
        assert r.x is None
    else:
        assert r.status in (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


def test_relaxation_is_lower_bound():
    from standard_problems import milp
    p = milp().program
    assert solve_highs(p.relax()).objective == pytest.approx(-3.5)
    assert solve_highs(p).objective == pytest.approx(-3.0)


def test_registry_rejects_conic_program_for_highs():
    b = ProgramBuilder()
    b.add_variables("t", 1, cost=1.0)
    b.add_variables("x", 2, lb=1.0)
    b.add_cones("soc", 3, {"t": np.array([[1.0], [0], [0]]), "x": np.array([[0, 0], [1.0, 0], [0, 1.0]])})
    with pytest.raises(NotRepresentableError, match="ecos"):
        solve(b.build(), backend="highs")


def test_unknown_backend_named():
    from standard_problems import lp
    with pytest.raises(ValueError, match="unknown backend 'gurobbi'"):
        solve(lp().program, backend="gurobbi")


def _hard_knapsack(n=60, seed=0):
    """Random multi-constraint 0-1 knapsack: many nodes, so a tiny time limit binds."""
    rng = np.random.default_rng(seed)
    b = ProgramBuilder()
    b.add_variables("x", n, lb=0, ub=1, integer=True, cost=-rng.integers(50, 100, n).astype(float))
    W = rng.integers(20, 60, (5, n)).astype(float)
    b.add_rows("cap", {"x": W}, ub=W.sum(axis=1) / 2)
    return b.build()


def test_time_limit_returns_incumbent_not_exception():
    p = _hard_knapsack()
    start = np.zeros(p.n_variables)  # feasible: take nothing
    r = solve_highs(p, time_limit=0.05, warm_start=start)
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert r.x is not None and p.is_feasible(r.x)
    assert r.objective <= 0.0 + 1e-9  # never worse than the start
    assert r.bound <= r.objective + 1e-9
    if r.status == Status.FEASIBLE:
        assert r.gap >= 0


def test_warm_start_kept_when_feasible():
    from standard_problems import knapsack
    p = knapsack().program
    r = solve_highs(p, warm_start=np.array([0.0, 1.0, 0.0, 1.0]), options={"mip_max_nodes": 0})
    assert r.objective == pytest.approx(-21.0)


def test_warm_start_shape_checked():
    from standard_problems import knapsack
    with pytest.raises(ValueError, match="warm_start has shape"):
        solve_highs(knapsack().program, warm_start=np.zeros(3))


def test_write_lp_and_mps_read_back(tmp_path):
    from standard_problems import milp
    p = milp().program
    for suffix in (".lp", ".mps"):
        path = write_model(p, tmp_path / f"model{suffix}")
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(path))
        h.run()
        assert h.getInfo().objective_function_value == pytest.approx(-3.0)
    assert "x_0" in (tmp_path / "model.lp").read_text()


def test_the_time_limit_holds_through_root_cut_rounds(shared_data):
    """SLIM's MILP on spambase, warm-started: HiGHS's root cut rounds ran 2-4 s past a 2 s limit
    (they look at neither its clock nor its callbacks); the run is left behind once the limit and
    its grace pass."""
    import pandas as pd

    from formulations.slim import SLIM
    from solvers.backends.highs_model import OVERRUN_GRACE
    from solvers.heuristics.slim import heuristic
    from solvers.limits import Limits

    data = pd.read_csv(shared_data / "spambase_data.csv")
    y = np.where(data.iloc[:, 0].to_numpy() > 0, 1, -1)
    instance = SLIM().instance(data.iloc[:, 1:].to_numpy(float), y)
    program, start = instance.exact(), instance.lift(heuristic(instance, Limits(time_limit=1.0).started()))
    t0 = time.perf_counter()
    r = solve_highs(program, time_limit=2.0, warm_start=start)
    assert time.perf_counter() - t0 <= 2.0 + OVERRUN_GRACE + 0.5
    assert r.status in (Status.FEASIBLE, Status.NO_SOLUTION_FOUND)
    assert r.bound == -np.inf or r.bound <= r.objective


def long_run(integer: bool, size: int = 6000, density: float = 0.004):
    """A Highs whose run takes seconds (a minute at the default size) and has no time limit of its own: a
    ``size`` x ``size`` sparse LP (or MILP)."""
    rng = np.random.default_rng(0)
    m = n = size
    A = sp.random(m, n, density=density, random_state=1, format="csc") + sp.eye(m, n, format="csc")
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = -rng.uniform(1, 2, n)
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, 1e30)
    lp.row_lower_, lp.row_upper_ = np.full(m, -1e30), rng.uniform(1, 2, m)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h = new_highs(time_limit=None, options={"presolve": "off", "mip_heuristic_effort": 0.0})
    h.passModel(lp)
    return h


def test_a_run_left_behind_stops_at_its_next_simplex_iteration():
    """A run past its time limit and grace is left behind; it must then stop within a moment (the simplex
    callback subscribed when it is left), not run on for its whole LP in the background."""
    assert not run_interruptibly(long_run(integer=False), 0.05)
    left = time.perf_counter()
    while any(t.name == "highs-run" and t.is_alive() for t in threading.enumerate()) and time.perf_counter() - left < 30:
        time.sleep(0.01)
    assert time.perf_counter() - left < 3.0


def test_a_process_that_exits_with_a_run_left_behind_exits_cleanly():
    """A MILP left behind inside HiGHS when the interpreter exits made the process abort, some of the time
    ('terminate called without an active exception', exit code 134) after its results were printed: three
    processes must all exit with 0. The MILP's root LP takes a few seconds (HiGHS looks at no callback
    inside it, so the exit waits for it)."""
    root = Path(__file__).resolve().parents[2]
    script = ("from test_highs_backend import long_run\nfrom solvers.backends.highs_model import run_interruptibly\n"
              "h = long_run(integer=True, size=2000, density=0.006)\nprint(run_interruptibly(h, 0.05))\n")  # h destroyed at exit, as a caller's
    path = os.pathsep.join(str(p) for p in (root, root / "tests", root / "tests" / "solvers"))
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=root,
                              env={**os.environ, "PYTHONPATH": path})
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "False" and "terminate called" not in done.stderr


def test_a_limit_reset_between_runs_counts_from_the_next_run():
    """HiGHS's ``time_limit`` is compared with its run clock, the sum over every ``run()`` of the object:
    ``set_limits`` sets it from the clock on, so a loop of LPs (the sign-cover rounds) gives each run the
    seconds it is told. After eight runs, three times the longest single run is enough for a ninth (a
    limit of that many seconds of the whole clock stops it at once)."""
    from solvers.backends.highs_model import set_limits

    rng = np.random.default_rng(0)
    n = 300
    h = new_highs()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, n
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = -rng.random(n), np.zeros(n), np.full(n, highspy.kHighsInf)
    lp.row_lower_, lp.row_upper_ = np.full(n, -highspy.kHighsInf), np.ones(n)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = np.arange(0, n * n + 1, n), np.tile(np.arange(n), n)
    lp.a_matrix_.value_ = rng.random(n * n)
    h.passModel(lp)
    longest = 0.0
    for _ in range(8):
        h.clearSolver()
        before = h.getRunTime()
        h.run()
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        longest = max(longest, h.getRunTime() - before)
    assert h.getRunTime() > 3.0 * longest  # (so a limit on the whole clock would stop the next run)
    set_limits(h, seconds=3.0 * longest)
    assert h.getOptionValue("time_limit")[1] == pytest.approx(h.getRunTime() + 3.0 * longest)
    h.clearSolver()
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
