"""cvxpy emitter and backends: a :class:`~formulations.program.Program` as a ``cvxpy.Problem``.

``to_cvxpy`` writes the program with one vector variable ``x`` (named ``"x"``) and whole-matrix
constraints, so users can inspect it (``print(problem)``), hand it to any cvxpy solver, and tests
can use it as an independent oracle (cvxpy does its own canonicalisation and cone ordering):

* linear rows: ``A_eq x == b`` for ``row_lb == row_ub``, ``A x <= ub`` and ``A x >= lb`` for the
  other finite bounds; column bounds on the sub-vectors with finite bounds;
* a second-order block ``D x + e`` of ``count`` cones of dimension ``dim``: one
  ``cp.SOC(t, X, axis=1)`` with ``t`` the first coordinates and ``X`` a ``(count, dim - 1)``
  matrix (one cone per row);
* an exponential block: one ``cp.ExpCone(u, v, w)`` with vector arguments (same convention as
  the Program: ``v exp(u / v) <= w``).

``solve_clarabel`` is ``solve_cvxpy(program, solver="CLARABEL")``: the second conic backend beside
ECOS. ECOS stays the default: on the same programs (logistic + L1 / EYE / Facets, n=5000, d=50)
Clarabel is not ahead of direct ECOS on every problem (the times: ``benchmarks/conic.py``'s
section of docs/benchmarks.md, with the idiomatic cvxpy model on both solvers beside them).
"""
from __future__ import annotations

import time

import numpy as np

from formulations.program import EXP, SOC, Cone, Program
from solvers.backends import Backend
from solvers.result import Result, Status, relative_gap

CAPABILITIES = frozenset({"LP", "MILP", "SOC", "EXP"})

#: cvxpy status string -> Status (``user_limit``: decided by whether a point came back).
STATUS_MAP = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.IMPRECISE,
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.UNBOUNDED,
    "infeasible_or_unbounded": Status.INFEASIBLE_OR_UNBOUNDED,
    "user_limit": Status.FEASIBLE,
    "solver_error": Status.ERROR,
}


def _coordinates(cone: Cone, x):
    """The ``dim`` coordinate expressions of a cone block, each a vector over the ``count`` cones."""
    return [cone.D[k::cone.dim] @ x + cone.e[k::cone.dim] for k in range(cone.dim)]


def to_cvxpy(program: Program):
    """The ``cvxpy.Problem`` equivalent to ``program`` (variable ``x`` = ``problem.variables()[0]``).

    Integer variables are declared with ``cp.Variable(n, integer=[...])``, so a MILP needs a
    mixed-integer cvxpy solver (``HIGHS``). The objective is ``c @ x + offset``.
    """
    import cvxpy as cp

    n = program.n_variables
    integer = np.flatnonzero(program.integer)
    x = cp.Variable(n, name="x", integer=(integer,) if integer.size else False)
    A = program.A.tocsr()
    lb, ub = program.row_lb, program.row_ub
    eq = np.isfinite(lb) & (lb == ub)
    up = ~eq & np.isfinite(ub)
    lo = ~eq & np.isfinite(lb)
    constraints = []
    if eq.any():
        constraints.append(A[eq] @ x == lb[eq])
    if up.any():
        constraints.append(A[up] @ x <= ub[up])
    if lo.any():
        constraints.append(A[lo] @ x >= lb[lo])
    for bound, side in ((program.col_lb, 1), (program.col_ub, -1)):
        idx = np.flatnonzero(np.isfinite(bound))
        if idx.size:
            constraints.append(side * x[idx] >= side * bound[idx])
    for cone in program.cones:
        if cone.count == 0:
            continue
        parts = _coordinates(cone, x)
        if cone.kind == SOC:
            if cone.dim == 1:
                constraints.append(parts[0] >= 0)
            else:
                constraints.append(cp.SOC(parts[0], cp.vstack(parts[1:]), axis=0))
        elif cone.kind == EXP:
            constraints.append(cp.ExpCone(*parts))
        else:  # pragma: no cover - Program validates kinds
            raise ValueError(f"unknown cone kind {cone.kind!r}")
    objective = cp.Minimize(program.c @ x + program.offset)
    return cp.Problem(objective, constraints)


def solve_cvxpy(program: Program, *, solver: str = "CLARABEL", verbose: bool = False,
                **options) -> Result:
    """Solve ``program`` through cvxpy with a named cvxpy solver.

    Parameters
    ----------
    solver : cvxpy solver name (``"CLARABEL"``, ``"ECOS"``, ``"SCS"``, ``"HIGHS"`` for MILPs, ...);
        ``cp.installed_solvers()`` lists what is available.
    **options : passed to ``problem.solve`` (solver options such as ``max_iter``).

    The result's ``build_time`` is the time to write the cvxpy problem, ``solve_time`` the time of
    ``problem.solve`` (cvxpy's canonicalisation included); ``raw`` holds cvxpy's status and its
    solver statistics. A solver failure (``cp.SolverError``) gives ``Status.ERROR``.
    """
    import cvxpy as cp

    solver = str(solver).upper()
    if solver not in cp.installed_solvers():
        raise ValueError(f"cvxpy solver {solver!r} is not installed; choose one of {cp.installed_solvers()}")
    t0 = time.perf_counter()
    problem = to_cvxpy(program)
    build_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    try:
        problem.solve(solver=solver, verbose=verbose, **options)
    except cp.error.SolverError as exc:
        return Result(status=Status.ERROR, backend=f"cvxpy:{solver}", message=str(exc),
                      build_time=build_time, solve_time=time.perf_counter() - t1, gap=float("inf"))
    solve_time = time.perf_counter() - t1
    status = STATUS_MAP.get(problem.status, Status.ERROR)
    value = problem.variables()[0].value
    x = None if value is None else np.asarray(value, dtype=float).reshape(-1)
    if status == Status.FEASIBLE and x is None:
        status = Status.NO_SOLUTION_FOUND
    if status.has_solution and x is None:
        status = Status.ERROR
    if not status.has_solution:
        x = None
    stats = problem.solver_stats
    objective = program.objective(x) if x is not None else float("nan")
    if status == Status.OPTIMAL:
        bound = objective if not program.is_mip else float("nan")
        gap = 0.0 if not program.is_mip else float("nan")
    elif status == Status.UNBOUNDED:
        bound, gap = -np.inf, float("inf")
    elif status == Status.INFEASIBLE:
        bound, gap = np.inf, float("inf")
    else:
        bound = float("nan")
        gap = relative_gap(objective, bound) if x is not None else float("inf")
    return Result(status=status, x=x, objective=objective, bound=bound, gap=gap,
                  solve_time=solve_time, build_time=build_time,
                  iterations=int(getattr(stats, "num_iters", 0) or 0), backend=f"cvxpy:{solver}",
                  message=str(problem.status),
                  raw={"cvxpy_status": problem.status, "solver_name": getattr(stats, "solver_name", solver),
                       "solver_time": getattr(stats, "solve_time", None), "problem_value": problem.value})


def solve_clarabel(program: Program, *, verbose: bool = False, **options) -> Result:
    """Solve a continuous conic ``program`` with Clarabel through cvxpy (see :func:`solve_cvxpy`)."""
    if program.is_mip:
        from formulations.errors import NotRepresentableError

        raise NotRepresentableError(
            "Clarabel solves continuous conic programs; this program has integer variables. "
            "Use backend 'highs' for a MILP, or solve program.relax().")
    return solve_cvxpy(program, solver="CLARABEL", verbose=verbose, **options)


# declared to solvers.registry (imported lazily there: no cycle)
BACKENDS = {"cvxpy": Backend(solve_cvxpy, CAPABILITIES),
            "clarabel": Backend(solve_clarabel, frozenset({"LP", "SOC", "EXP"}))}
