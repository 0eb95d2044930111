"""HiGHS backend: a linear :class:`~formulations.program.Program` (LP or MILP) solved by highspy.

The whole model goes to HiGHS in one ``passModel`` call with CSC arrays (no per-row Python).
A solution is reported whenever HiGHS says its primal solution is feasible, so a MILP stopped at
its time limit returns ``Status.FEASIBLE`` with the incumbent, the dual bound and the gap.
"""
from __future__ import annotations

import time

import numpy as np
import highspy

from formulations.program import Program
from solvers import progress
from solvers.backends.cutting_planes import solve_cutting_planes
from solvers.backends.highs_model import new_highs, run_interruptibly, to_highs, write_model  # noqa: F401
from solvers.backends import Backend
from solvers.limits import interrupted
from solvers.result import Result, Status, relative_gap

CAPABILITIES = frozenset({"LP", "MILP", "LAZY"})  # LAZY: restart loop of solvers.backends.cutting_planes

_MS = highspy.HighsModelStatus
STATUS_MAP = {
    _MS.kOptimal: Status.OPTIMAL,
    _MS.kInfeasible: Status.INFEASIBLE,
    _MS.kUnbounded: Status.UNBOUNDED,
    _MS.kUnboundedOrInfeasible: Status.INFEASIBLE_OR_UNBOUNDED,
    _MS.kTimeLimit: Status.FEASIBLE,
    _MS.kIterationLimit: Status.FEASIBLE,
    _MS.kSolutionLimit: Status.FEASIBLE,
    _MS.kInterrupt: Status.FEASIBLE,
    _MS.kObjectiveBound: Status.FEASIBLE,
    _MS.kObjectiveTarget: Status.FEASIBLE,
}
_FEASIBLE_SOLUTION = 2  # kSolutionStatusFeasible
def solve_highs(program: Program, *, time_limit: float | None = None, mip_rel_gap: float = 1e-6,
                threads: int = 1, verbose: bool = False, warm_start: np.ndarray | None = None,
                node_limit: int | None = None, seed: int = 0, options: dict | None = None) -> Result:
    """Solve an LP or MILP with HiGHS.

    Parameters
    ----------
    time_limit : seconds (None: no limit). At the limit a MILP returns ``FEASIBLE`` with its
        incumbent (or ``NO_SOLUTION_FOUND``), the dual bound and the gap.
    mip_rel_gap : relative MIP gap at which HiGHS stops (it reports OPTIMAL then).
    threads : HiGHS threads (1 is the safe default on 2-core machines).
    node_limit : branch-and-bound node limit (``mip_max_nodes``); with no time limit and one
        thread the run is reproducible.
    seed : HiGHS ``random_seed``.
    warm_start : full variable vector used as MIP start (``setSolution``); it is kept only if
        HiGHS finds it feasible.
    options : further raw HiGHS options, e.g. ``{"mip_heuristic_effort": 0.2}``.

    A program with a lazy oracle (``program.lazy``) is solved by the restart loop of
    :func:`solvers.backends.cutting_planes.solve_cutting_planes` (objective = the oracle's true value).
    """
    if program.lazy is not None:
        return solve_cutting_planes(program, time_limit=time_limit, mip_rel_gap=mip_rel_gap, threads=threads,
                                    warm_start=warm_start, node_limit=node_limit, seed=seed, verbose=verbose,
                                    options=options)
    t0 = time.perf_counter()
    h = to_highs(program, verbose=verbose, threads=threads, time_limit=time_limit, mip_rel_gap=mip_rel_gap,
                 node_limit=node_limit, seed=seed, options=options)
    if warm_start is not None:
        start = np.asarray(warm_start, dtype=np.float64)
        if start.shape != (program.n_variables,):
            raise ValueError(f"warm_start has shape {start.shape}; program has {program.n_variables} variables")
        sol = highspy.HighsSolution()
        sol.col_value = start.tolist()
        sol.value_valid = True
        h.setSolution(sol)
    report = progress.current()
    if report is not None and program.is_mip:
        h.cbMipInterrupt += lambda e: report(e.data_out.running_time, e.data_out.mip_primal_bound,
                                             e.data_out.mip_dual_bound, e.data_out.mip_gap)
    build_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    if not run_interruptibly(h, time_limit):
        why = "interrupted" if interrupted() else "time limit reached"
        return Result(status=Status.NO_SOLUTION_FOUND, x=None, objective=float("nan"), bound=-np.inf, gap=float("inf"),
                      solve_time=time.perf_counter() - t1, build_time=build_time, backend="highs",
                      message=f"{why}: HiGHS did not reach a callback in time; its run was left behind")
    solve_time = time.perf_counter() - t1
    return _result(h, program, build_time, solve_time)


def _result(h: highspy.Highs, program: Program, build_time: float, solve_time: float) -> Result:
    model_status = h.getModelStatus()
    info = h.getInfo()
    has_x = info.primal_solution_status == _FEASIBLE_SOLUTION
    status = STATUS_MAP.get(model_status, Status.ERROR)
    if status == Status.FEASIBLE and not has_x:
        status = Status.NO_SOLUTION_FOUND
    if status == Status.OPTIMAL and not has_x:
        status = Status.ERROR
    x = np.array(h.getSolution().col_value, dtype=float) if has_x else None
    objective = program.objective(x) if x is not None else float("nan")
    if program.is_mip:
        bound = float(info.mip_dual_bound)
        if not np.isfinite(bound) and x is None:
            bound = -np.inf
        if x is not None:
            # HiGHS can report a dual bound above its own solution's objective (on SLIM with the
            # L1 tie-breaker, by 9e-6 once the tree is pruned at its gap tolerance): no valid
            # bound exceeds a feasible objective
            bound = min(bound, objective)
        nodes = int(info.mip_node_count)
    else:
        bound = objective if status == Status.OPTIMAL else float("nan")
        nodes = 0
    if status == Status.OPTIMAL and not program.is_mip:
        gap = 0.0
    else:
        gap = relative_gap(objective, bound) if x is not None else float("inf")
    return Result(status=status, x=x, objective=objective, bound=bound, gap=gap,
                  solve_time=solve_time, build_time=build_time,
                  iterations=int(max(info.simplex_iteration_count, 0) + max(info.ipm_iteration_count, 0)),
                  nodes=nodes, backend="highs", message=h.modelStatusToString(model_status),
                  raw={"model_status": model_status, "mip_gap": float(info.mip_gap)})


# declared to solvers.registry (imported lazily there: no cycle)
BACKENDS = {"highs": Backend(solve_highs, CAPABILITIES)}
