"""Cutting-plane programs on HiGHS: a restart loop over a program's lazy oracle.

A program with ``program.lazy`` (:class:`formulations.program.LazyOracle`) is a relaxation of the
true problem: rows are missing (e.g. tangents of a convex loss, :mod:`formulations.tangent_cuts`).
HiGHS cannot add rows inside its branch and bound, so the loop first cuts the LP relaxation
(:func:`_lp_phase`: Kelley's method on the LP, integrality dropped, until the LP bound stops
rising), then each round solves the MILP (or LP) as it stands, asks the oracle for the rows the solution violates (``lazy.cuts``), appends them as one
sparse block, warm-starts HiGHS with the best point so far (``setSolution``) and re-solves.

Certificate. Every round's program is a relaxation, so its dual bound is a lower bound ``L`` on
the true optimum (the best over rounds is kept). The objective reported is the true objective
``U = lazy.value(x)`` of the best point met (after ``lazy.polish`` when the oracle offers it):
an upper bound. The loop stops when ``(U - L) / |U| <= mip_rel_gap`` (``OPTIMAL``), at a time /
node / round limit (``FEASIBLE`` with the honest gap), or when the oracle has no row left to add
(the gap left is then the inner MILP gap, ``mip_rel_gap / 4``). SCIP adds the same rows inside
one tree (:mod:`solvers.backends.scip`).
"""
from __future__ import annotations

import time
from dataclasses import replace

import highspy
import numpy as np

from formulations.program import Program
from solvers.backends.highs_model import set_limits, to_highs
from solvers.result import Result, Status, relative_gap

_MS = highspy.HighsModelStatus
_FEASIBLE_SOLUTION = 2  # kSolutionStatusFeasible
#: share of mip_rel_gap given to each round's MILP (the rest is room for the missing rows)
INNER_GAP_SHARE = 0.25
#: rounds without a better incumbent or bound after which the loop gives up (LP round-off)
STALL_ROUNDS = 5
#: most LP rounds of the cutting-plane phase before branching, and the relative rise counted as progress
LP_ROUNDS, LP_STALL = 200, 1e-6
#: HiGHS row tolerance inside the loop (the oracle's rows are cut at 1e-9 shortfalls)
FEASIBILITY_TOL = 1e-9


#: HiGHS model statuses that end the rounds without a point, and the status each gives
_NO_POINT = {_MS.kInfeasible: Status.INFEASIBLE, _MS.kUnbounded: Status.UNBOUNDED,
             _MS.kUnboundedOrInfeasible: Status.INFEASIBLE_OR_UNBOUNDED}


def _inner_highs(program: Program, mip_rel_gap: float, threads: int, seed: int, verbose: bool,
                 options: dict | None) -> highspy.Highs:
    """The HiGHS model of the program without its lazy oracle, solved again in every round."""
    # HiGHS accepts MILP points violating rows by mip_feasibility_tolerance (1e-6 by default): a
    # tangent violated by less would come back unchanged in every round
    return to_highs(replace(program, lazy=None), verbose=verbose, threads=threads, seed=seed,
                    mip_rel_gap=float(mip_rel_gap) * INNER_GAP_SHARE, options={
                        "mip_feasibility_tolerance": FEASIBILITY_TOL, "primal_feasibility_tolerance": FEASIBILITY_TOL,
                        **(options or {})})


def _raised(bound: float, round_bound: float) -> tuple[float, bool]:
    """The best bound with a round's bound, and whether the round raised it (beyond round-off)."""
    if not np.isfinite(round_bound):
        return bound, False
    return max(bound, round_bound), bool(round_bound > bound + 1e-12 * max(1.0, abs(bound)))


def _cut(h: highspy.Highs, lazy, x_round: np.ndarray, stalled: int) -> tuple[int, str | None]:
    """Add the oracle's rows cutting off the round's point: ``(rows added, None)``, or ``(0, why the
    rounds stop)`` when there is none or the rounds stalled."""
    rows, lb = lazy.cuts(x_round)
    if rows.shape[0] == 0:
        return 0, "no row left to add: the gap left is the inner MILP gap"
    if stalled >= STALL_ROUNDS:
        return 0, f"no progress in {STALL_ROUNDS} rounds (round-off of the added rows)"
    return _add_rows(h, rows, lb), None


def _checked_oracle(program: Program, time_limit: float | None, mip_rel_gap: float, max_rounds: int):
    """``program.lazy``, after checking the arguments of :func:`solve_cutting_planes`."""
    if program.lazy is None:
        raise ValueError("solve_cutting_planes needs a program with a lazy oracle (program.lazy)")
    if time_limit is not None and time_limit <= 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
    if not mip_rel_gap >= 0:
        raise ValueError(f"mip_rel_gap must be >= 0, got {mip_rel_gap}")
    if int(max_rounds) < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    return program.lazy


def _start(program: Program, lazy, polish, warm_start: np.ndarray | None) -> tuple[np.ndarray | None, float]:
    """The first incumbent ``(x, lazy objective)``: the polished warm start if feasible, else ``(None, inf)``."""
    if warm_start is None:
        return None, np.inf
    start = np.asarray(warm_start, dtype=float)
    if start.shape != (program.n_variables,):
        raise ValueError(f"warm_start has shape {start.shape}; the program has {program.n_variables} variables")
    start = polish(start)
    return (start, lazy.value(start)) if program.is_feasible(start, tol=1e-7) else (None, np.inf)


def _round_limits(h: highspy.Highs, seconds_left: float | None, node_limit: int | None, nodes: int) -> str | None:
    """Give the next round what is left of the time and nodes; the reason to stop when nothing is."""
    if seconds_left is not None:
        if seconds_left <= 0:
            return "time limit reached"
        set_limits(h, seconds=float(seconds_left))
    if node_limit is not None:
        if nodes >= node_limit:
            return "node limit reached"
        set_limits(h, nodes=int(node_limit - nodes))
    return None


def solve_cutting_planes(program: Program, *, time_limit: float | None = None, mip_rel_gap: float = 1e-6,
                         threads: int = 1, warm_start: np.ndarray | None = None, node_limit: int | None = None,
                         seed: int = 0, verbose: bool = False, max_rounds: int = 500,
                         options: dict | None = None) -> Result:
    """Solve ``program`` (with ``program.lazy``) by HiGHS restarts to a certified gap on the true objective.

    Parameters
    ----------
    time_limit : overall seconds (None: none); at expiry the best point is returned as ``FEASIBLE``.
    mip_rel_gap : certified relative gap ``(U - L) / |U|`` at which to stop (``OPTIMAL``).
    threads, seed, verbose, options : HiGHS options (``options``: raw HiGHS options).
    warm_start : a full vector used as first incumbent (polished, and its rows added) when the
        oracle finds it feasible; HiGHS checks it again on ``setSolution``.
    node_limit : branch-and-bound nodes over all rounds.
    max_rounds : restarts; reaching it gives ``FEASIBLE``.

    Returns
    -------
    Result with ``x`` the best point, ``objective = lazy.value(x)``, ``bound`` the best dual bound
    of the rounds, ``iterations`` the rounds, ``nodes`` the total nodes, ``raw["history"]`` the
    ``(objective, bound)`` of every round and ``raw["cuts"]`` the rows added.
    """
    lazy = _checked_oracle(program, time_limit, mip_rel_gap, max_rounds)
    t0 = time.perf_counter()
    n = program.n_variables
    polish = getattr(lazy, "polish", None) or (lambda x: x)
    h = _inner_highs(program, mip_rel_gap, threads, seed, verbose, options)
    build_time = time.perf_counter() - t0

    best_x, best = _start(program, lazy, polish, warm_start)
    bound = -np.inf
    history: list[tuple[float, float]] = []
    nodes = cuts = rounds = stalled = 0
    deadline = None if time_limit is None else t0 + time_limit
    cuts, lp_rounds = _lp_phase(h, program, lazy, deadline)
    status, message = Status.FEASIBLE, f"round limit {max_rounds} reached"
    for rounds in range(1, int(max_rounds) + 1):
        reached = _round_limits(h, None if deadline is None else deadline - time.perf_counter(), node_limit, nodes)
        if reached:
            message = reached
            break
        if best_x is not None and program.is_mip:
            h.setSolution(n, np.arange(n, dtype=np.int32), best_x)
        h.run()
        info, model_status = h.getInfo(), h.getModelStatus()
        nodes += int(max(info.mip_node_count, 0))
        if model_status in _NO_POINT:
            status, message = _NO_POINT[model_status], h.modelStatusToString(model_status)
            break
        bound, progress = _raised(bound, float(info.mip_dual_bound) if program.is_mip else (
            float(info.objective_function_value) if model_status == _MS.kOptimal else -np.inf))
        if info.primal_solution_status != _FEASIBLE_SOLUTION:
            message = f"stopped without a solution: {h.modelStatusToString(model_status)}"
            break
        x_round = np.array(h.getSolution().col_value, dtype=float)
        candidate = polish(x_round)
        value = lazy.value(candidate)
        if best_x is None or value < best - 1e-15 * max(1.0, abs(best)):
            best, best_x, progress = value, candidate, True
        history.append((best, bound))
        if relative_gap(best, bound) <= mip_rel_gap:
            status, message = Status.OPTIMAL, f"certified relative gap <= {mip_rel_gap:g} in {rounds} rounds"
            break
        if model_status != _MS.kOptimal:
            message = f"round {rounds} stopped: {h.modelStatusToString(model_status)}"
            break
        stalled = 0 if progress else stalled + 1
        added, message = _cut(h, lazy, x_round, stalled)
        if message:
            break
        cuts += added
    if best_x is None and status not in _NO_POINT.values():
        status = Status.NO_SOLUTION_FOUND
    has_x = best_x is not None
    return Result(status=status, x=best_x, objective=best if has_x else float("nan"), bound=bound,
                  gap=relative_gap(best, bound) if has_x else float("inf"),
                  solve_time=time.perf_counter() - t0 - build_time, build_time=build_time, iterations=rounds,
                  nodes=nodes, backend="highs", message=f"cutting planes: {message}",
                  raw={"history": history, "cuts": cuts, "rounds": rounds, "lp_rounds": lp_rounds})


def _lp_phase(h: highspy.Highs, program: Program, lazy, deadline: float | None,
              max_rounds: int = LP_ROUNDS) -> tuple[int, int]:
    """Kelley's cutting planes on the LP relaxation before any branching (the RiskSLIM paper's initial
    cut pool from the convex relaxation, Ustun & Rudin 2019, section 4): integrality dropped, each
    LP solution cut by the oracle (its rows are valid everywhere), until no row is violated, the LP
    value stops rising (relative :data:`LP_STALL` over :data:`STALL_ROUNDS` rounds) or the clock runs
    out; integrality is then restored. The phase only adds rows: its LP values are not taken as
    the certified bound (an LP optimum is accurate to HiGHS' dual tolerance only, and on a tiny
    objective that was seen to exceed the true optimum); the MILP rounds give the bound. Returns
    ``(rows added, LP rounds)``.
    """
    integer = np.flatnonzero(program.integer).astype(np.int32)
    if integer.size == 0:
        return 0, 0
    h.changeColsIntegrality(integer.size, integer, np.zeros(integer.size, dtype=np.uint8))
    bound, added, rounds, flat = -np.inf, 0, 0, 0
    try:
        for rounds in range(1, max_rounds + 1):
            if deadline is not None:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    break
                set_limits(h, seconds=float(remaining))
            h.run()
            if h.getModelStatus() != _MS.kOptimal:
                break
            value = float(h.getInfo().objective_function_value)
            flat = flat + 1 if value <= bound + LP_STALL * max(1.0, abs(bound)) else 0
            bound = max(bound, value)
            rows, lb = lazy.cuts(np.array(h.getSolution().col_value, dtype=float))
            if rows.shape[0] == 0 or flat >= STALL_ROUNDS:
                break
            added += _add_rows(h, rows, lb)
    finally:
        h.changeColsIntegrality(integer.size, integer, np.ones(integer.size, dtype=np.uint8))
    return added, rounds


def _add_rows(h: highspy.Highs, rows, lb: np.ndarray) -> int:
    """Append ``rows @ x >= lb`` to the loaded model as one sparse row block."""
    rows = rows.tocsr()
    lb = np.asarray(lb, dtype=np.float64)
    h.addRows(rows.shape[0], lb, np.full(lb.size, highspy.kHighsInf), int(rows.nnz),
              rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32), rows.data.astype(np.float64))
    return rows.shape[0]
