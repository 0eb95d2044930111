"""Outer approximation: exact integer programs with a smooth convex loss, solved by HiGHS MILPs.

The loss ``sum_i c_i f(z_i)`` (``z = M x + o``, ``f`` convex: logistic, squared) is replaced by
epigraph variables ``t_i`` cut by tangents ``t_i >= f(z0) + f'(z0) (z_i - z0)``
(:class:`formulations.facets.LossOuterApproximation`). Tangents under-estimate ``f``, so the
MILP's dual bound is a lower bound ``L`` on the exact optimum; the true objective ``U`` of any
incumbent (after its intercept is re-optimised exactly) is an upper bound. Each round adds,
as one sparse row block, the tangents at the incumbent's arguments that it violates, warm-starts
HiGHS with the best model so far and re-solves, until ``(U - L) / |U| <= tol``: the reported
gap is then a *certified* gap on the true objective (Kelley's cutting planes inside a MILP;
Duran & Grossmann's outer approximation for a loss that is a sum of 1-D convex terms).
"""
from __future__ import annotations

import time

import highspy
import numpy as np

from formulations.facets import LOSS_1D, LossOuterApproximation
from solvers.highs import to_highs
from solvers.result import Result, Status, relative_gap

_FEASIBLE_SOLUTION = 2  # highspy kSolutionStatusFeasible
_MS = highspy.HighsModelStatus


def solve_outer_approximation(oa: LossOuterApproximation, *, tol: float = 1e-4,
                              time_limit: float | None = None, max_rounds: int = 200,
                              threads: int = 1, warm_start: np.ndarray | None = None,
                              verbose: bool = False) -> Result:
    """Solve the exact program of ``oa`` to a certified relative gap ``tol`` on the true loss.

    Parameters
    ----------
    oa : the outer-approximation MILP (e.g. ``FacetsProgram.outer_approximation(X, y)``).
    tol : relative gap ``(objective - bound) / |objective|`` at which to stop (> 0).
    time_limit : overall seconds; on expiry the best incumbent is returned as ``FEASIBLE``
        with its certified bound and gap (``NO_SOLUTION_FOUND`` without one).
    max_rounds : cutting-plane rounds (each a warm-started MILP); reaching it gives ``FEASIBLE``.
    threads : HiGHS threads.
    warm_start : a full vector of ``oa.program`` (e.g. from ``lift``) used as first incumbent.

    Returns
    -------
    Result with ``objective`` the true objective of ``x``, ``bound`` the best MILP dual bound,
    ``gap = relative_gap(objective, bound)``, ``iterations`` the rounds, ``nodes`` the total
    branch-and-bound nodes and ``raw["history"]`` the (objective, bound) of every round.
    """
    if not tol > 0:
        raise ValueError(f"tol must be > 0 (a relative gap), got {tol}")
    if time_limit is not None and time_limit <= 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
    if int(max_rounds) < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    t0 = time.perf_counter()
    program = oa.program
    h = to_highs(program)
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("mip_rel_gap", float(tol) / 4)  # leaves room for the tangent error
    build_time = time.perf_counter() - t0

    best_x, best, bound = None, np.inf, -np.inf
    history, nodes, cuts, rounds = [], 0, 0, 0
    if warm_start is not None:
        start = np.asarray(warm_start, dtype=float)
        if start.shape != (program.n_variables,):
            raise ValueError(f"warm_start has shape {start.shape}; the program has {program.n_variables} variables")
        best_x = polish(oa, start)
        best = oa.true_objective(best_x)
        cuts += _add_cuts(h, oa, oa.arguments(best_x), np.arange(oa.offset.size))  # tangents at the start
    status, message = Status.FEASIBLE, "round limit reached"
    for rounds in range(1, int(max_rounds) + 1):
        if time_limit is not None:
            remaining = time_limit - (time.perf_counter() - t0)
            if remaining <= 0:
                message = "time limit reached"
                break
            h.setOptionValue("time_limit", float(remaining))
        if best_x is not None:
            h.setSolution(program.n_variables, np.arange(program.n_variables, dtype=np.int32), best_x)
        h.run()
        info, model_status = h.getInfo(), h.getModelStatus()
        nodes += int(max(info.mip_node_count, 0))
        if model_status in (_MS.kInfeasible, _MS.kUnboundedOrInfeasible, _MS.kUnbounded):
            status = {_MS.kInfeasible: Status.INFEASIBLE, _MS.kUnbounded: Status.UNBOUNDED}.get(
                model_status, Status.INFEASIBLE_OR_UNBOUNDED)
            message = h.modelStatusToString(model_status)
            break
        if model_status == _MS.kOptimal or np.isfinite(info.mip_dual_bound):
            bound = max(bound, float(info.mip_dual_bound))
        if info.primal_solution_status != _FEASIBLE_SOLUTION:
            message = f"MILP stopped without incumbent: {h.modelStatusToString(model_status)}"
            break
        x_milp = np.array(h.getSolution().col_value, dtype=float)
        x = polish(oa, x_milp)
        value = oa.true_objective(x)
        improved = value < best
        if improved:
            best, best_x = value, x
        history.append((best, bound))
        if relative_gap(best, bound) <= tol:
            status, message = Status.OPTIMAL, f"certified relative gap <= {tol:g}"
            break
        if model_status != _MS.kOptimal:
            message = f"time limit reached in round {rounds}: {h.modelStatusToString(model_status)}"
            break
        z_milp = oa.arguments(x_milp)
        violated = np.flatnonzero(x_milp[oa.loss_block] < LOSS_1D[oa.loss][0](z_milp) - 1e-9)
        if violated.size == 0 and not improved:
            message = "no violated tangent: the gap left is the inner MILP gap"
            break
        # tangents the MILP point violates, and (when it improved) at the polished incumbent
        z_new = oa.arguments(best_x) if improved else np.zeros(0)
        cuts += _add_cuts(h, oa, np.r_[z_milp[violated], z_new], np.r_[violated, np.arange(z_new.size)])
    if best_x is None:
        status = status if status in (Status.INFEASIBLE, Status.UNBOUNDED,
                                      Status.INFEASIBLE_OR_UNBOUNDED) else Status.NO_SOLUTION_FOUND
    return Result(status=status, x=best_x, objective=best if best_x is not None else float("nan"),
                  bound=bound, gap=relative_gap(best, bound) if best_x is not None else float("inf"),
                  solve_time=time.perf_counter() - t0 - build_time, build_time=build_time,
                  iterations=rounds, nodes=nodes, backend="highs-outer-approximation", message=message,
                  raw={"history": history, "cuts": cuts, "tol": tol})


def _add_cuts(h: highspy.Highs, oa: LossOuterApproximation, z0: np.ndarray, samples: np.ndarray) -> int:
    """Append the tangents at ``z0`` to the loaded model as one sparse row block."""
    rows, lb = oa.cuts(z0, samples)
    rows = rows.tocsr()
    h.addRows(rows.shape[0], lb.astype(np.float64), np.full(lb.size, highspy.kHighsInf), int(rows.nnz),
              rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32), rows.data.astype(np.float64))
    return rows.shape[0]


def polish(oa: LossOuterApproximation, x: np.ndarray) -> np.ndarray:
    """Re-optimise the intercept exactly for fixed other variables; set ``t_i = f(z_i)``.

    The intercept is the variable of block ``"intercept"`` (a column of the argument matrix
    ``M``); the true objective is convex in it, so its derivative is bisected on the column
    bounds (60 halvings: exact to machine precision on any box). The arguments ``z`` are then
    recomputed; the result satisfies every tangent row (tangents lie below ``f``), so it is a
    valid MILP start.
    """
    x = np.array(x, dtype=float)
    program = oa.program
    value, slope = LOSS_1D[oa.loss]
    if "intercept" in program.blocks:
        j = program.blocks["intercept"].start
        lo, hi = float(program.col_lb[j]), float(program.col_ub[j])
        column = oa.argument[:, j].toarray().ravel()
        base = oa.arguments(x) - column * x[j]
        derivative = lambda b: float(oa.weights @ (slope(base + column * b) * column)) + program.c[j]  # noqa: E731
        if hi > lo:
            if derivative(lo) >= 0:
                x[j] = lo
            elif derivative(hi) <= 0:
                x[j] = hi
            else:
                a, b = lo, hi
                for _ in range(60):
                    mid = 0.5 * (a + b)
                    a, b = (mid, b) if derivative(mid) < 0 else (a, mid)
                x[j] = 0.5 * (a + b)
    z = oa.arguments(x)
    x[oa.argument_block] = z
    x[oa.loss_block] = value(z)
    return x
