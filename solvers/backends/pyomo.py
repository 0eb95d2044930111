"""Pyomo emitter: a linear Program as a ``pyomo.ConcreteModel``, and solving it through pyomo.

For people who want to inspect the model, export it (``model.write('x.lp')``) or hand it to
another solver (gurobi, cbc, ...). Built from the sparse rows: variables are one indexed
``Var``; each row is a ``LinearExpression`` built from the CSR arrays (pyomo has no bulk
matrix API, so this is one expression per row, but no Python-level search).
``benchmarks/build.py`` times the build of the same SLIM program both ways (docs/benchmarks.md):
pyomo's indexed rules take tens of times the matrix path, before any hand-off to a solver, so
pyomo is an output, not the build path.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from formulations.errors import NotRepresentableError
from formulations.program import Program, column_names, row_names
from solvers.backends import Backend
from solvers.result import Result, Status, relative_gap

CAPABILITIES = frozenset({"LP", "MILP"})


def to_pyomo(program: Program):
    """ConcreteModel with variables ``x[j]`` (bounds, integrality), rows ``rows[i]``, objective."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    if program.cones:
        raise NotRepresentableError("to_pyomo handles linear programs only; use solvers.backends.cvxpy.to_cvxpy for cones")
    m = pyo.ConcreteModel()
    n = program.n_variables
    m.J = pyo.RangeSet(0, n - 1)
    finite = lambda v: None if not np.isfinite(v) else float(v)  # noqa: E731
    lb, ub = program.col_lb, program.col_ub
    m.x = pyo.Var(m.J, bounds=lambda _, j: (finite(lb[j]), finite(ub[j])),
                  within=lambda _, j: pyo.Integers if program.integer[j] else pyo.Reals)
    xs = [m.x[j] for j in range(n)]
    nz = np.flatnonzero(program.c)
    m.objective = pyo.Objective(expr=LinearExpression(constant=float(program.offset),
                                                      linear_coefs=program.c[nz].tolist(),
                                                      linear_vars=[xs[j] for j in nz]), sense=pyo.minimize)
    A = program.A.tocsr()
    indptr, indices, data = A.indptr, A.indices.tolist(), A.data.tolist()
    rlb, rub = program.row_lb, program.row_ub

    def row(_, i):
        a, b = indptr[i], indptr[i + 1]
        expr = LinearExpression(constant=0.0, linear_coefs=data[a:b], linear_vars=[xs[j] for j in indices[a:b]])
        return (finite(rlb[i]), expr, finite(rub[i]))

    m.I = pyo.RangeSet(0, program.n_rows - 1) if program.n_rows else pyo.Set(initialize=[])
    m.rows = pyo.Constraint(m.I, rule=row)
    return m


def solve_pyomo(program: Program, *, solver: str = "highs", time_limit: float | None = None,
                mip_rel_gap: float = 1e-6, threads: int = 1) -> Result:
    """Build with :func:`to_pyomo` and solve through pyomo's new solver interface.

    ``solver`` is a name of ``pyomo.contrib.solver`` (default ``"highs"``). A time limit returns
    the incumbent (status FEASIBLE), never an exception.
    """
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    t0 = time.perf_counter()
    m = to_pyomo(program)
    build_time = time.perf_counter() - t0
    opt = SolverFactory(solver)
    kwargs = dict(rel_gap=mip_rel_gap, threads=threads, raise_exception_on_nonoptimal_result=False,
                  load_solutions=False)
    if time_limit is not None:
        kwargs["time_limit"] = time_limit
    t1 = time.perf_counter()
    r = opt.solve(m, **kwargs)
    solve_time = time.perf_counter() - t1
    tc, ss = r.termination_condition, r.solution_status
    has_x = ss in (SolutionStatus.optimal, SolutionStatus.feasible)
    x = None
    if has_x:
        r.solution_loader.load_vars()
        x = np.array([m.x[j].value if m.x[j].value is not None else 0.0 for j in range(program.n_variables)])
    status_map = {TerminationCondition.convergenceCriteriaSatisfied: Status.OPTIMAL,
                  TerminationCondition.provenInfeasible: Status.INFEASIBLE,
                  TerminationCondition.unbounded: Status.UNBOUNDED,
                  TerminationCondition.infeasibleOrUnbounded: Status.INFEASIBLE_OR_UNBOUNDED,
                  TerminationCondition.maxTimeLimit: Status.FEASIBLE if has_x else Status.NO_SOLUTION_FOUND,
                  TerminationCondition.iterationLimit: Status.FEASIBLE if has_x else Status.NO_SOLUTION_FOUND}
    status = status_map.get(tc, Status.ERROR)
    objective = program.objective(x) if x is not None else float("nan")
    bound = r.objective_bound if r.objective_bound is not None else float("nan")
    bound = float(bound) if bound is not None else float("nan")
    gap = 0.0 if status == Status.OPTIMAL and not program.is_mip else relative_gap(objective, bound)
    return Result(status=status, x=x, objective=objective, bound=bound, gap=gap, solve_time=solve_time,
                  build_time=build_time, backend=f"pyomo:{solver}", message=str(tc))


# declared to solvers.registry (imported lazily there: no cycle)
BACKENDS = {"pyomo": Backend(solve_pyomo, CAPABILITIES)}


def write_pyomo_script(program: Program, path: str | Path, labels: Mapping[str, Sequence[str]] | None = None) -> Path:
    """Write a self-contained Python script that builds ``program`` as a Pyomo ``ConcreteModel``.

    The script needs only numpy and pyomo: the program's arrays are embedded as JSON, variables
    are indexed by readable names (:func:`formulations.program.column_names`), rows by
    ``block_k``. Running it with ``python model.py [solver]`` solves the model (default
    ``appsi_highs``) and prints the objective.
    """
    if program.cones:
        raise NotRepresentableError("a Pyomo script is written for linear programs only; this one has cones")
    A = program.A.tocsr()
    finite = lambda v: [None if not np.isfinite(x) else float(x) for x in np.asarray(v, dtype=float)]  # noqa: E731
    data = {"names": column_names(program, labels), "rows": row_names(program), "c": program.c.tolist(),
            "offset": float(program.offset), "lb": finite(program.col_lb), "ub": finite(program.col_ub),
            "integer": program.integer.astype(bool).tolist(), "indptr": A.indptr.tolist(),
            "indices": A.indices.tolist(), "data": A.data.tolist(), "row_lb": finite(program.row_lb),
            "row_ub": finite(program.row_ub)}
    script = f'''"""Pyomo model written by milpscore (solvers.backends.pyomo.write_pyomo_script). Run: python {Path(path).name} [solver]"""
import json
import sys

import pyomo.environ as pyo

DATA = json.loads({json.dumps(json.dumps(data))})


def build():
    m = pyo.ConcreteModel()
    names = DATA["names"]
    pos = {{n: k for k, n in enumerate(names)}}
    m.J = pyo.Set(initialize=names, ordered=True)
    m.x = pyo.Var(m.J, bounds=lambda _, j: (DATA["lb"][pos[j]], DATA["ub"][pos[j]]),
                  within=lambda _, j: pyo.Integers if DATA["integer"][pos[j]] else pyo.Reals)
    xs = [m.x[n] for n in names]
    m.objective = pyo.Objective(expr=DATA["offset"] + sum(c * x for c, x in zip(DATA["c"], xs) if c),
                                sense=pyo.minimize)
    ptr, idx, val = DATA["indptr"], DATA["indices"], DATA["data"]

    row_pos = {{r: i for i, r in enumerate(DATA["rows"])}}

    def row(_, r):
        i = row_pos[r]
        expr = sum(val[k] * xs[idx[k]] for k in range(ptr[i], ptr[i + 1]))
        return (DATA["row_lb"][i], expr, DATA["row_ub"][i])

    m.I = pyo.Set(initialize=DATA["rows"], ordered=True)
    m.rows = pyo.Constraint(m.I, rule=row)
    return m


if __name__ == "__main__":
    model = build()
    pyo.SolverFactory(sys.argv[1] if len(sys.argv) > 1 else "appsi_highs").solve(model)
    print("objective", pyo.value(model.objective))
'''
    path = Path(path)
    path.write_text(script)
    return path
