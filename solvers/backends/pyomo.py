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
from solvers.backends.highs_model import write_model
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


def program_meaning(program: Program) -> str:
    """What an exported ``program`` is: ``"exact program"``, or for a program with a lazy oracle
    (its true objective is not linear) ``"relaxation (N tangent cuts of the logistic loss)"``: the
    rows are a finite subset of the oracle's cuts, so its optimum is a lower bound only."""
    if program.lazy is None:
        return "exact program"
    cuts = program.row_blocks.get("cuts")
    n = 0 if cuts is None else cuts.stop - cuts.start
    if _logistic(program) is not None:
        return f"relaxation ({n} tangent cuts of the logistic loss)"
    return f"relaxation ({n} cuts of the {type(program.lazy).__name__} oracle; the true objective is not linear)"


def _logistic(program: Program) -> dict | None:
    """The logistic loss of a RiskSLIM-type program (:class:`formulations.logistic_cuts.LogisticCuts`)
    as JSON values: merged rows (sparse), labels, weights, multiplier and the variables it binds."""
    lazy = program.lazy
    data = getattr(lazy, "data", None)
    if data is None or not all(hasattr(lazy, a) for a in ("coef", "intercept", "loss_index")) \
            or not all(hasattr(data, a) for a in ("X", "y", "weights", "scale")):
        return None
    X = np.asarray(data.X, dtype=float)
    rows = [[np.flatnonzero(r).tolist(), r[r != 0].tolist()] for r in X]
    return {"coef": list(range(lazy.coef.start, lazy.coef.stop)), "intercept": int(lazy.intercept),
            "loss": int(lazy.loss_index), "rows": rows, "y": np.asarray(data.y, dtype=float).tolist(),
            "weights": np.asarray(data.weights, dtype=float).tolist(), "scale": float(data.scale)}


def write_pyomo_script(program: Program, path: str | Path, labels: Mapping[str, Sequence[str]] | None = None,
                       time_limit: float = 60.0) -> Path:
    """Write a self-contained Python script that builds ``program`` as a Pyomo ``ConcreteModel``.

    The script needs only pyomo: the program's arrays are embedded as one JSON string literal
    (``repr`` of ``json.dumps``: no name, label or path is ever spliced into the code), variables
    are indexed by readable names (:func:`formulations.program.column_names`), rows by
    ``block_k``. ``python model.py [--solver NAME] [--time-limit S] [--quiet]`` solves it (default
    ``appsi_highs``, ``time_limit`` seconds) and prints its progress and the objective.

    A RiskSLIM-type program (lazy logistic oracle) is written as the *exact* model: the loss
    variable ``L`` is bound by the nonlinear constraint ``L >= sum_i v_i log(1 + exp(-y_i (x_i .
    coef + intercept) / m))`` (Ustun & Rudin 2019, eq. 1) beside the embedded tangent rows, which
    are valid cuts. A MINLP solver (``--solver``) takes the whole model; with a MILP solver the
    script runs the cutting-plane algorithm (Ustun & Rudin 2019, Algorithm 1): solve the MILP,
    add the tangent at its solution, stop when the true objective meets the bound.
    """
    if program.cones:
        raise NotRepresentableError("a Pyomo script is written for linear programs only; this one has cones")
    logistic = _logistic(program)
    if program.lazy is not None and logistic is None:
        raise NotRepresentableError(f"the true objective of this program ({program_meaning(program)}) has no "
                                    "Pyomo form here; export it as .lp / .mps (a relaxation)")
    time_limit = float(time_limit)
    if not (time_limit > 0 and np.isfinite(time_limit)):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    A = program.A.tocsr()
    finite = lambda v: [None if not np.isfinite(x) else float(x) for x in np.asarray(v, dtype=float)]  # noqa: E731
    meaning = "exact program" if program.integer.any() else "exact program (continuous: no integer variables)"
    data = {"meaning": meaning,
            "names": column_names(program, labels), "rows": row_names(program), "c": program.c.tolist(),
            "offset": float(program.offset), "lb": finite(program.col_lb), "ub": finite(program.col_ub),
            "integer": program.integer.astype(bool).tolist(), "indptr": A.indptr.tolist(),
            "indices": A.indices.tolist(), "data": A.data.tolist(), "row_lb": finite(program.row_lb),
            "row_ub": finite(program.row_ub), "logistic": logistic, "time_limit": time_limit}
    path = Path(path)
    path.write_text(_SCRIPT.replace("@DATA@", repr(json.dumps(data))))
    return path


#: the script; ``@DATA@`` becomes one Python string literal (``repr``) holding the JSON data
_SCRIPT = '''"""Pyomo model written by milpscore (solvers.backends.pyomo.write_pyomo_script).

Run: python THIS_FILE [--solver NAME] [--time-limit SECONDS] [--quiet]
MEANING (below) says whether this is the exact program or a relaxation.
"""
import argparse
import json
import math
import time

import pyomo.environ as pyo

DATA = json.loads(@DATA@)
MEANING = DATA["meaning"]


def build():
    """The model: variables x[name], rows[block_k], objective; with a logistic loss also the
    expression loss_exact and the constraint loss_definition (L >= loss_exact)."""
    m = pyo.ConcreteModel()
    names = DATA["names"]
    pos = {n: k for k, n in enumerate(names)}
    m.J = pyo.Set(initialize=names, ordered=True)
    m.x = pyo.Var(m.J, bounds=lambda _, j: (DATA["lb"][pos[j]], DATA["ub"][pos[j]]),
                  within=lambda _, j: pyo.Integers if DATA["integer"][pos[j]] else pyo.Reals)
    xs = [m.x[n] for n in names]
    m.objective = pyo.Objective(expr=DATA["offset"] + sum(c * x for c, x in zip(DATA["c"], xs) if c),
                                sense=pyo.minimize)
    ptr, idx, val = DATA["indptr"], DATA["indices"], DATA["data"]
    row_pos = {r: i for i, r in enumerate(DATA["rows"])}

    def row(_, r):
        i = row_pos[r]
        expr = sum(val[k] * xs[idx[k]] for k in range(ptr[i], ptr[i + 1]))
        return (DATA["row_lb"][i], expr, DATA["row_ub"][i])

    m.I = pyo.Set(initialize=DATA["rows"], ordered=True)
    m.rows = pyo.Constraint(m.I, rule=row)
    lg = DATA["logistic"]
    if lg is not None:
        coef, b, s = [xs[j] for j in lg["coef"]], xs[lg["intercept"]], lg["scale"]
        m.loss_exact = pyo.Expression(expr=sum(
            v * pyo.log(1 + pyo.exp(-yi * (sum(a * coef[j] for j, a in zip(*r)) + b) / s))
            for r, yi, v in zip(lg["rows"], lg["y"], lg["weights"])))
        m.loss_definition = pyo.Constraint(expr=xs[lg["loss"]] >= m.loss_exact)
        m.tangents = pyo.ConstraintList()
    return m


def _solve(opt, m, seconds, tee):
    r = opt.solve(m, timelimit=max(seconds, 0.05), tee=tee, load_solutions=False)
    ok = len(r.solution) > 0 or str(r.solver.termination_condition) == "optimal"
    if ok:
        m.solutions.load_from(r)
    return r, ok


def _tangent(m, values):
    """Loss and tangent of the logistic loss at the current point (plain floats)."""
    lg = DATA["logistic"]
    coef = [values[j] for j in lg["coef"]]
    b, s = values[lg["intercept"]], lg["scale"]
    loss, grad, g0 = 0.0, [0.0] * len(coef), 0.0
    for (cols, vals), yi, v in zip(lg["rows"], lg["y"], lg["weights"]):
        z = yi * (sum(a * coef[j] for j, a in zip(cols, vals)) + b) / s
        loss += v * (math.log1p(math.exp(-z)) if z > -30 else -z + math.log1p(math.exp(z)))
        r = -v * yi / (1 + math.exp(z)) / s if z > -700 else -v * yi / s
        for j, a in zip(cols, vals):
            grad[j] += r * a
        g0 += r
    return loss, coef, b, grad, g0


def solve(m, solver="appsi_highs", time_limit=DATA["time_limit"], quiet=False):
    """Solve and print progress; returns (status, best objective, bound)."""
    t0 = time.perf_counter()
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    say(f"{MEANING}: {len(DATA['names'])} variables, {len(DATA['rows'])} rows; solver {solver}, "
        f"time limit {time_limit:g} s")
    opt = pyo.SolverFactory(solver)
    lg = DATA["logistic"]
    if lg is None or solver != "appsi_highs":
        r, ok = _solve(opt, m, time_limit, not quiet)
        status = str(r.solver.termination_condition)
        best = pyo.value(m.objective) if ok else float("nan")
        say(f"status {status}; objective {best!r}; {time.perf_counter() - t0:.1f} s")
        return status, best, r.problem.lower_bound
    m.loss_definition.deactivate()  # cutting planes: the MILP with tangents, then the next tangent
    xs = [m.x[n] for n in DATA["names"]]
    L = xs[lg["loss"]]
    best, bound, status, k = float("inf"), -float("inf"), "time limit", 0
    while time.perf_counter() - t0 < time_limit:
        r, ok = _solve(opt, m, time_limit - (time.perf_counter() - t0), False)
        if not ok:
            status = str(r.solver.termination_condition)
            break
        values = [x.value or 0.0 for x in xs]
        loss, coef, b, grad, g0 = _tangent(m, values)
        milp = pyo.value(m.objective)
        dual = r.problem.lower_bound  # the MILP's bound: tangents under-estimate the loss, so a bound here too
        bound = max(bound, milp if dual is None or not math.isfinite(dual) else dual)
        best = min(best, milp - values[lg["loss"]] + loss)
        k += 1
        gap = (best - bound) / max(abs(best), 1e-9)
        say(f"round {k}: objective {best:.10g}  bound {bound:.10g}  gap {gap:.2e}  {time.perf_counter() - t0:.1f} s")
        if gap <= 1e-6 or values[lg["loss"]] >= loss - 1e-9:
            status = "optimal"
            break
        m.tangents.add(L >= loss + sum(g * (pyo_c - c) for g, pyo_c, c in
                                       zip(grad, [xs[j] for j in lg["coef"]], coef)) + g0 * (xs[lg["intercept"]] - b))
    say(f"status {status}; objective {best!r}; bound {bound!r}; {k} MILP solves; {time.perf_counter() - t0:.1f} s")
    return status, best, bound


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=MEANING)
    parser.add_argument("--solver", default="appsi_highs", help="a pyomo solver name (default appsi_highs)")
    parser.add_argument("--time-limit", type=float, default=DATA["time_limit"], help="seconds (default %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    args = parser.parse_args()
    model = build()
    status, objective, bound = solve(model, args.solver, args.time_limit, args.quiet)
    print("objective", objective)
'''


def write_program(program: Program, path: str | Path, labels: Mapping[str, Sequence[str]] | None = None,
                  time_limit: float = 60.0) -> str:
    """Write ``program`` by suffix (``.lp`` / ``.mps`` through HiGHS, ``.py`` Pyomo script) and say
    what the file holds: the LP / MPS file of a program with a lazy oracle is a *relaxation*,
    stated in a header comment (``\\`` lines in LP, ``*`` lines in MPS); the ``.py`` script is the
    exact program (:func:`write_pyomo_script`). Returns that meaning (for the caller's message)."""
    path = Path(path)
    if path.suffix.lower() == ".py":
        write_pyomo_script(program, path, labels, time_limit)
        return "exact program (Pyomo, nonlinear logistic loss)" if program.lazy is not None else "exact program"
    write_model(program, path, labels)
    meaning = program_meaning(program)
    if program.lazy is not None:
        mark = "\\" if path.suffix.lower() == ".lp" else "*"
        note = [f"{meaning.upper()} written by milpscore.",
                "The true objective is not linear: these rows are a finite set of valid cuts (rows named cuts_k),",
                "so the optimum of this file is a LOWER BOUND on the true optimum, not the model a fit returns.",
                "Export to .py for the exact program (Pyomo, with the nonlinear loss)."]
        path.write_text("".join(f"{mark} {line}\n" for line in note) + path.read_text())
    return meaning
