"""ECOS backend: a continuous conic :class:`~formulations.program.Program` solved by ``ecos.solve``.

ECOS solves (Domahidi, Chu and Boyd, ECC 2013)

.. math::

    \\min_x\\; c^\\top x \\quad\\text{s.t.}\\quad A x = b,\\quad h - G x \\in
    \\mathbb{R}_+^{l} \\times Q_{q_1} \\times \\dots \\times Q_{q_N} \\times K_{\\exp}^{e},

with the rows of ``G`` in that order: nonnegative rows, then each second-order cone, then the
exponential cones, three rows each. The translation from a Program is:

* linear rows with ``row_lb == row_ub`` and fixed columns (``col_lb == col_ub``) become
  equalities ``A x = b``; every other finite row or column bound becomes one nonnegative row
  (``a x <= ub`` as ``ub - a x >= 0``, ``a x >= lb`` as ``a x - lb >= 0``);
* a cone ``D x + e`` becomes ``G = -D``, ``h = e``;
* an exponential cone in the Program's (cvxpy) convention ``(u, v, w)``,
  ``v exp(u / v) <= w``, is permuted to ECOS's ``(x, y, z)``, ``z exp(x / z) <= y``, that is
  ``(u, w, v)`` (the order ``[0, 2, 1]`` of cvxpy's ``ecos_conif.py``; checked in the tests on a
  problem with a closed-form optimum).

Integer programs are refused: ECOS_BB returned ``infeasible_inaccurate`` on a tiny MILP that
HiGHS solved to optimality, so mixed-integer programs go to HiGHS (``backend="highs"``).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from formulations.errors import NotRepresentableError
from formulations.program import EXP, SOC, Program
from solvers.backends import Backend
from solvers.result import Result, Status, relative_gap

CAPABILITIES = frozenset({"LP", "SOC", "EXP"})

#: ECOS's exponential-cone order in terms of the Program's (cvxpy) coordinates (u, v, w).
EXP_CONE_ORDER = (0, 2, 1)

#: ECOS exit code -> (status, accurate). Codes from ``ecos.h``: 0 optimal, 1 primal
#: infeasible, 2 dual infeasible (unbounded), +10 the same with reduced accuracy, -1 maximum
#: iterations, -2 numerical problems, -3 iterate left the cone, -4 interrupted, -7 fatal.
STATUS_MAP: dict[int, tuple[Status, bool]] = {
    0: (Status.OPTIMAL, True),
    1: (Status.INFEASIBLE, True),
    2: (Status.UNBOUNDED, True),
    10: (Status.IMPRECISE, False),
    11: (Status.INFEASIBLE, False),
    12: (Status.UNBOUNDED, False),
    -1: (Status.FEASIBLE, False),
    -2: (Status.ERROR, False),
    -3: (Status.ERROR, False),
    -4: (Status.FEASIBLE, False),
    -7: (Status.ERROR, False),
}
#: Exit codes after which ECOS's last iterate may still be a usable (feasible) point.
_LIMIT_CODES = (-1, -4)

_ECOS_OPTIONS = ("feastol", "abstol", "reltol", "feastol_inacc", "abstol_inacc", "reltol_inacc",
                 "max_iters", "nitref")


def to_ecos(program: Program) -> dict:
    """ECOS data ``{c, G, h, dims, A, b}`` of a continuous ``program`` (see module docstring).

    ``G`` and ``A`` are CSC matrices; ``A`` and ``b`` are None when there is no equality.
    Empty rows (no nonzero) are dropped; an empty row whose bounds exclude 0 raises
    ``ValueError`` (the program is infeasible as written).
    """
    if program.is_mip:
        raise NotRepresentableError(
            f"ECOS solves continuous conic programs; this program has {int(program.integer.sum())} "
            "integer variables. Solve the MILP with backend 'highs', or solve program.relax() with ECOS.")
    n = program.n_variables
    A = program.A.tocsr()
    lb, ub = program.row_lb, program.row_ub
    nnz_per_row = np.diff(A.indptr)
    empty = nnz_per_row == 0
    if np.any(empty & ((lb > 0) | (ub < 0))):
        i = int(np.flatnonzero(empty & ((lb > 0) | (ub < 0)))[0])
        raise ValueError(f"row {i} has no nonzero but bounds [{lb[i]}, {ub[i]}] exclude 0")
    keep = ~empty
    eq_rows = keep & np.isfinite(lb) & (lb == ub)
    up_rows = keep & ~eq_rows & np.isfinite(ub)
    lo_rows = keep & ~eq_rows & np.isfinite(lb)

    clb, cub = program.col_lb, program.col_ub
    fixed = np.isfinite(clb) & (clb == cub)
    up_cols = np.flatnonzero(~fixed & np.isfinite(cub))
    lo_cols = np.flatnonzero(~fixed & np.isfinite(clb))
    fixed_cols = np.flatnonzero(fixed)
    unit = lambda cols: sp.csr_matrix((np.ones(cols.size), (np.arange(cols.size), cols)),  # noqa: E731
                                      shape=(cols.size, n))

    G_parts = [A[up_rows], -A[lo_rows], unit(up_cols), -unit(lo_cols)]
    h_parts = [ub[up_rows], -lb[lo_rows], cub[up_cols], -clb[lo_cols]]
    n_linear = sum(part.shape[0] for part in G_parts)
    soc_sizes: list[int] = []
    for cone in program.cones:
        if cone.kind == SOC:
            G_parts.append(-cone.D)
            h_parts.append(cone.e)
            soc_sizes.extend([cone.dim] * cone.count)
    n_exp = 0
    for cone in program.cones:
        if cone.kind == EXP:
            order = (3 * np.arange(cone.count)[:, None] + np.array(EXP_CONE_ORDER)[None, :]).reshape(-1)
            G_parts.append(-cone.D[order])
            h_parts.append(cone.e[order])
            n_exp += cone.count
    G = sp.vstack(G_parts, format="csc")
    h = np.concatenate(h_parts).astype(float)
    A_eq = sp.vstack([A[eq_rows], unit(fixed_cols)], format="csc")
    b_eq = np.concatenate([lb[eq_rows], clb[fixed_cols]]).astype(float)
    dims = {"l": int(n_linear), "q": soc_sizes, "e": int(n_exp)}
    if A_eq.shape[0] == 0:
        A_eq, b_eq = None, None
    return {"c": np.asarray(program.c, dtype=float), "G": sp.csc_matrix(G), "h": h, "dims": dims,
            "A": None if A_eq is None else sp.csc_matrix(A_eq), "b": b_eq}


def solve_ecos(program: Program, *, max_iters: int = 100, feastol: float | None = None,
               abstol: float | None = None, reltol: float | None = None, verbose: bool = False,
               feasibility_tol: float = 1e-6, **options) -> Result:
    """Solve a continuous LP / SOCP / exponential-cone program with ECOS.

    Parameters
    ----------
    program : continuous :class:`~formulations.program.Program` (integer programs raise
        :class:`NotRepresentableError`: use HiGHS, or ``program.relax()``).
    max_iters : interior-point iteration limit (ECOS default 100).
    feastol, abstol, reltol : ECOS tolerances (None keeps ECOS's defaults 1e-8, 1e-8, 1e-8).
    verbose : print ECOS's log.
    feasibility_tol : after an iteration limit or interruption, the last iterate is returned
        as ``FEASIBLE`` only if :meth:`Program.violations` are within this tolerance.
    **options : further ECOS options among ``feastol_inacc``, ``abstol_inacc``,
        ``reltol_inacc``, ``nitref``.

    Returns
    -------
    Result with ``bound`` = ECOS's dual objective (+ offset) at optimality, and ``raw`` holding
    ECOS's accuracy flags: ``exit_flag``, ``infostring``, ``accurate`` (False for the
    ``*_inaccurate`` exits and limits), ``pcost``, ``dcost``, ``pres``, ``dres``, ``pinf``,
    ``dinf``, ``gap``, ``relgap``, and the duals ``y`` (equalities) and ``z`` (cone rows).
    """
    unknown = set(options) - set(_ECOS_OPTIONS)
    if unknown:
        raise TypeError(f"unknown ECOS options {sorted(unknown)}; known: {list(_ECOS_OPTIONS)}")
    if int(max_iters) <= 0:
        raise ValueError(f"max_iters must be a positive integer, got {max_iters}")
    t0 = time.perf_counter()
    try:
        data = to_ecos(program)
    except ValueError as exc:
        if isinstance(exc, NotRepresentableError):
            raise
        return Result(status=Status.INFEASIBLE, backend="ecos", message=str(exc),
                      build_time=time.perf_counter() - t0, gap=float("inf"))
    kwargs = {"max_iters": int(max_iters), "verbose": bool(verbose), **options}
    for key, value in (("feastol", feastol), ("abstol", abstol), ("reltol", reltol)):
        if value is not None:
            if value <= 0:
                raise ValueError(f"{key} must be > 0, got {value}")
            kwargs[key] = float(value)
    build_time = time.perf_counter() - t0
    import ecos  # lazy: importing the backend module must not require ECOS

    t1 = time.perf_counter()
    if program.n_variables == 0:
        return Result(status=Status.OPTIMAL, x=np.zeros(0), objective=program.offset,
                      bound=program.offset, gap=0.0, backend="ecos", build_time=build_time)
    sol = ecos.solve(data["c"], data["G"], data["h"], data["dims"], data["A"], data["b"], **kwargs)
    solve_time = time.perf_counter() - t1
    return _result(program, sol, build_time, solve_time, feasibility_tol)


def _result(program: Program, sol: dict, build_time: float, solve_time: float,
            feasibility_tol: float) -> Result:
    info = sol["info"]
    code = int(info["exitFlag"])
    status, accurate = STATUS_MAP.get(code, (Status.ERROR, False))
    x = np.asarray(sol["x"], dtype=float)
    raw = {"exit_flag": code, "infostring": str(info.get("infostring", "")), "accurate": accurate,
           **{k: float(info[k]) for k in ("pcost", "dcost", "pres", "dres", "pinf", "dinf", "gap", "relgap")
              if k in info and info[k] is not None},
           "y": np.asarray(sol.get("y", np.zeros(0))), "z": np.asarray(sol.get("z", np.zeros(0)))}
    if code in _LIMIT_CODES and not program.is_feasible(x, feasibility_tol):
        status = Status.NO_SOLUTION_FOUND
    has_x = status.has_solution
    objective = program.objective(x) if has_x else float("nan")
    if status == Status.OPTIMAL:
        bound = float(info["dcost"]) + program.offset
        gap = relative_gap(objective, bound)
    elif status == Status.UNBOUNDED:
        bound, gap = -np.inf, float("inf")
    elif status == Status.INFEASIBLE:
        bound, gap = np.inf, float("inf")
    else:
        bound = float("nan")
        gap = float("nan") if has_x else float("inf")
    return Result(status=status, x=x if has_x else None, objective=objective, bound=bound, gap=gap,
                  solve_time=solve_time, build_time=build_time, iterations=int(info.get("iter", 0)),
                  backend="ecos", message=raw["infostring"], raw=raw)


# declared to solvers.registry (imported lazily there: no cycle)
BACKENDS = {"ecos": Backend(solve_ecos, CAPABILITIES)}
