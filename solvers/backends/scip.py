"""SCIP backend (PySCIPOpt): LP / MILP programs, and cutting-plane programs in one branch-and-bound tree.

The model is built from the program's sparse arrays: one variable per column, one linear
constraint per CSR row (the row's slice of indices and values, no per-term search).

Programs with a lazy oracle (``program.lazy``: ``cuts(x) -> (rows, lb)``, ``value(x)``) are solved
by the lattice cutting-plane algorithm (Ustun & Rudin 2019, Algorithm 2) inside ONE tree: a
constraint handler (:class:`_LazyHandler`) with a negative enforcement priority sees integral LP
solutions (after the integrality handler) and adds the oracle's rows there; it also checks every
candidate solution (heuristics, warm starts) and adds rows at fractional LP solutions at the root
(``root_cuts`` rounds, Kelley's cutting planes for a stronger root bound). Dual reductions are
switched off (``misc/allowstrongdualreds``, ``misc/allowweakdualreds``): SCIP cannot see the rows
the oracle has not produced yet. When the oracle has ``polish(x) -> x' | None`` (a better feasible
vector near ``x``), integral points met in the tree are polished by a primal heuristic
(:class:`_Polisher`) and submitted with ``trySol``.

For lazy programs ``objective = lazy.value(x)`` (the true objective) and ``bound`` is SCIP's dual
bound. The bound is valid for the true problem: every node LP is a relaxation (the oracle's rows
under-estimate the loss), and a node closed by accepting its LP point ``x`` had LP value ``c x <=``
the true values in the node; accepting ``x`` with its loss variable up to the oracle's
``tolerance`` below the true loss only makes SCIP's incumbent value optimistic, which the true
``objective`` corrects (the gap then includes it; SCIP's own gap limit is ``mip_rel_gap / 2``).
A point whose rows were already added and that still looks violated (LP round-off) is accepted.
SCIP is single-threaded: ``threads`` is ignored.
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import replace

import numpy as np
from pyscipopt import SCIP_EVENTTYPE, SCIP_HEURTIMING, SCIP_PARAMSETTING, SCIP_RESULT, Conshdlr, Eventhdlr, Heur, Model
from pyscipopt.scip import Expr, ExprCons, Term

from formulations.errors import NotRepresentableError
from formulations.program import Program
from solvers import progress
from solvers.backends import Backend
from solvers.limits import interrupted
from solvers.result import Result, Status, relative_gap

#: SCIP's status string -> Status (a limit with an incumbent is FEASIBLE; see _result)
STATUS_MAP = {
    "optimal": Status.OPTIMAL,
    "gaplimit": Status.OPTIMAL,  # within mip_rel_gap, as HiGHS reports it
    "infeasible": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "inforunbd": Status.INFEASIBLE_OR_UNBOUNDED,
    "timelimit": Status.FEASIBLE,
    "nodelimit": Status.FEASIBLE,
    "totalnodelimit": Status.FEASIBLE,
    "stallnodelimit": Status.FEASIBLE,
    "memlimit": Status.FEASIBLE,
    "sollimit": Status.FEASIBLE,
    "bestsollimit": Status.FEASIBLE,
    "restartlimit": Status.FEASIBLE,
    "primallimit": Status.FEASIBLE,
    "duallimit": Status.FEASIBLE,
    "userinterrupt": Status.FEASIBLE,
}
#: polish only integral points whose true objective is within this relative distance of the incumbent
POLISH_GAP = 0.1
#: rounds of oracle rows at fractional LP solutions of the root node (Kelley) for lazy programs
ROOT_CUTS = 0


def _bound(v: float) -> float | None:
    return None if not np.isfinite(v) else float(v)


class _Lazy:
    """State shared by the constraint handler and the polishing heuristic of one solve."""

    def __init__(self, model: Model, variables: list, terms: list, lazy, root_cuts: int):
        self.model, self.variables, self.terms, self.lazy = model, variables, terms, lazy
        self.root_cuts = root_cuts
        self.rows_added = 0
        self.root_rounds = 0
        self.polish_queue: list[np.ndarray] = []
        self.seen: set[bytes] = set()
        self.cut_at: set[bytes] = set()
        self.cutoff_rows = 0
        self.repeats = 0
        self.polished = 0
        self.best = np.inf

    def point(self, solution=None) -> np.ndarray:
        get = self.model.getSolVal
        return np.array([get(solution, v) for v in self.variables])

    def new_rows(self, x: np.ndarray):
        """The oracle's rows at ``x``, or None when there are none or they were added before (the LP
        holds them already: the violation left is round-off, not a new cut)."""
        rows, lb = self.lazy.cuts(x)
        if rows.shape[0] == 0:
            return None
        rows = rows.tocsr()
        key = rows.indices.tobytes() + rows.data.tobytes() + np.asarray(lb, dtype=float).tobytes()
        if key in self.cut_at:
            self.repeats += 1
            return None
        return rows, lb, key

    def add(self, x: np.ndarray) -> int:
        found = self.new_rows(x)
        if found is None:
            return 0
        rows, lb, key = found
        self.cut_at.add(key)
        self.rows_added += _add_rows(self.model, self.terms, rows, lb, f"lazy{self.rows_added}_")
        return rows.shape[0]


def _add_rows(model: Model, terms: list, rows, lb: np.ndarray, prefix: str) -> int:
    """Add ``rows @ x >= lb`` (CSR) as global linear constraints; returns the number added."""
    rows = rows.tocsr()
    for i in range(rows.shape[0]):
        lo, hi = rows.indptr[i], rows.indptr[i + 1]
        expr = Expr({terms[j]: float(v) for j, v in zip(rows.indices[lo:hi].tolist(), rows.data[lo:hi].tolist())})
        model.addCons(ExprCons(expr, lhs=float(lb[i]), rhs=None), name=f"{prefix}{i}", local=False, removable=False)
    return rows.shape[0]


class _LazyHandler(Conshdlr):
    """Adds the oracle's rows at integral LP / pseudo solutions; rejects candidates that need rows."""

    def __init__(self, state: _Lazy):
        self.state = state

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        x = self.state.point(solution)
        if self.state.new_rows(x) is None:
            return {"result": SCIP_RESULT.FEASIBLE}
        self.state.polish_queue.append(x)
        return {"result": SCIP_RESULT.INFEASIBLE}

    def _enforce(self):
        x = self.state.point()
        if self.state.add(x) == 0:
            return {"result": SCIP_RESULT.FEASIBLE}
        self.state.polish_queue.append(x)
        return {"result": SCIP_RESULT.CONSADDED}

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        return self._enforce()

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return self._enforce()

    def conssepalp(self, constraints, nusefulconss):
        state = self.state
        if self.model.getDepth() > 0 or state.root_rounds >= state.root_cuts:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        state.root_rounds += 1
        added = state.add(state.point())
        return {"result": SCIP_RESULT.CONSADDED if added else SCIP_RESULT.DIDNOTFIND}

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        for v in self.state.variables:  # the oracle may produce rows over any variable, either sign
            self.model.addVarLocksType(v, locktype, nlockspos + nlocksneg, nlockspos + nlocksneg)


class _Polisher(Heur):
    """Polishes points queued by the handler (``lazy.polish``) and submits the improving ones."""

    def __init__(self, state: _Lazy, integer: np.ndarray):
        self.state, self.integer = state, integer

    def heurexec(self, heurtiming, nodeinfeasible):
        state, found = self.state, False
        queue, state.polish_queue = state.polish_queue[-20:], []
        incumbent = min(state.best, self.model.getPrimalbound())
        for x in queue:
            key = np.round(x[self.integer]).tobytes()
            if key in state.seen or state.lazy.value(x) > incumbent + POLISH_GAP * abs(incumbent):
                continue
            state.seen.add(key)
            better = state.lazy.polish(x)
            state.polished += 1
            value = state.lazy.value(better)
            if value >= min(state.best, self.model.getPrimalbound()) - 1e-12:
                continue
            sol = self.model.createSol(self)
            try:
                for v, val in zip(state.variables, better.tolist()):
                    self.model.setSolVal(sol, v, val)
            except Exception:  # presolve fixed a variable (dual reductions) to another value: not admissible
                self.model.freeSol(sol)
                continue
            if self.model.trySol(sol, printreason=False):
                state.best = value
                found = True
        return {"result": SCIP_RESULT.FOUNDSOL if found else SCIP_RESULT.DIDNOTFIND}


class _Progress(Eventhdlr):
    """Reports ``(elapsed, incumbent, bound, gap)`` after every solved node (:mod:`solvers.progress`)."""

    def __init__(self, report):
        self.report = report

    def eventinit(self):
        self.model.catchEvent(SCIP_EVENTTYPE.NODESOLVED, self)

    def eventexit(self):
        self.model.dropEvent(SCIP_EVENTTYPE.NODESOLVED, self)

    def eventexec(self, event):
        m = self.model
        finite = lambda v: v if abs(v) < 1e19 else float("inf") * (1 if v > 0 else -1)  # noqa: E731
        self.report(m.getSolvingTime(), finite(m.getPrimalbound()), finite(m.getDualbound()), m.getGap())
        return {}


class _Interrupt(Eventhdlr):
    """Stops the solve (SCIP keeps its incumbent) at the next LP or node after :func:`solvers.limits.interrupt`."""

    EVENTS = SCIP_EVENTTYPE.NODESOLVED | SCIP_EVENTTYPE.LPSOLVED

    def eventinit(self):
        self.model.catchEvent(self.EVENTS, self)

    def eventexit(self):
        self.model.dropEvent(self.EVENTS, self)

    def eventexec(self, event):
        if interrupted():
            self.model.interruptSolve()
        return {}


def build_model(program: Program, verbose: bool = False) -> tuple[Model, list, list]:
    """A SCIP model of ``program`` (no cones): variables, then one linear constraint per CSR row."""
    if program.cones:
        raise NotRepresentableError(f"the SCIP backend solves LP/MILP programs only; this one has cones "
                                    f"{sorted(program.cone_kinds)}: use 'ecos' or 'cvxpy'")
    model = Model()
    model.hideOutput(not verbose)
    names = [f"{block}_{k}" for block, sl in program.blocks.items() for k in range(sl.stop - sl.start)]
    if len(names) != program.n_variables:
        names = [f"x_{j}" for j in range(program.n_variables)]
    variables = [model.addVar(name=names[j], vtype="I" if program.integer[j] else "C",
                              lb=_bound(program.col_lb[j]), ub=_bound(program.col_ub[j]), obj=float(program.c[j]))
                 for j in range(program.n_variables)]
    if program.offset:
        model.addObjoffset(float(program.offset))
    terms = [Term(v) for v in variables]
    A = program.A.tocsr()
    indptr, indices, data = A.indptr, A.indices.tolist(), A.data.tolist()
    for i in range(program.n_rows):
        lo, hi = indptr[i], indptr[i + 1]
        lb, ub = _bound(program.row_lb[i]), _bound(program.row_ub[i])
        if lo == hi:
            if (lb is not None and lb > 1e-9) or (ub is not None and ub < -1e-9):
                raise ValueError(f"row {i} has no terms but bounds [{lb}, {ub}] exclude 0: the program is infeasible")
            continue
        if lb is None and ub is None:
            continue
        expr = Expr({terms[j]: v for j, v in zip(indices[lo:hi], data[lo:hi])})
        model.addCons(ExprCons(expr, lhs=lb, rhs=ub), name=f"r{i}")
    return model, variables, terms


def solve_scip(program: Program, *, time_limit: float | None = None, mip_rel_gap: float = 1e-6, threads: int = 1,
               node_limit: int | None = None, seed: int = 0, verbose: bool = False,
               warm_start: np.ndarray | None = None, root_cuts: int = ROOT_CUTS, polish: bool = True,
               tighten: bool = True, initial_cuts: bool = True, options: dict | None = None) -> Result:
    """Solve an LP / MILP / lazy (cutting-plane) program with SCIP (module docstring).

    Parameters
    ----------
    time_limit : seconds (``limits/time``); node_limit : ``limits/nodes``; mip_rel_gap : ``limits/gap``.
    seed : ``randomization/randomseedshift``. threads : ignored (SCIP is single-threaded).
    warm_start : full vector of ``program`` offered as a start (kept only if SCIP accepts it).
    root_cuts : rounds of oracle rows at fractional root LP solutions (lazy programs).
    polish, tighten, initial_cuts : lazy programs: polish integral points of the tree with the
        oracle's polisher; add the oracle's cut-off rows valid below the start's value (bound
        tightening); keep the program's initial cut pool (row block ``"cuts"``). Each is on by
        default; switching one off measures what it gives (``benchmarks/riskslim_ablation.py``).
    options : further raw SCIP parameters, e.g. ``{"presolving/maxrounds": 0}``.
    """
    t0 = time.perf_counter()
    lazy = getattr(program, "lazy", None)
    if not initial_cuts and "cuts" in program.row_blocks:
        start = program.row_blocks["cuts"].start
        if program.row_blocks["cuts"].stop != program.n_rows:
            raise ValueError("initial_cuts=False needs the 'cuts' row block last in the program")
        program = replace(program, A=program.A[:start], row_lb=program.row_lb[:start], row_ub=program.row_ub[:start],
                          row_blocks={k: v for k, v in program.row_blocks.items() if k != "cuts"})
    model, variables, terms = build_model(program, verbose)
    if time_limit is not None:
        if time_limit <= 0:
            raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
        model.setParam("limits/time", float(time_limit))
    if node_limit is not None:
        model.setParam("limits/nodes", int(node_limit))
    model.setParam("limits/gap", float(mip_rel_gap))
    model.setParam("limits/absgap", 0.0)
    model.setParam("randomization/randomseedshift", int(seed))
    state = None
    if lazy is not None:
        model.setParam("misc/allowstrongdualreds", False)
        model.setParam("misc/allowweakdualreds", False)
        model.setParam("numerics/feastol", 1e-8)
        model.setParam("limits/gap", 0.5 * float(mip_rel_gap))  # room for the oracle's tolerance
        model.setPresolve(SCIP_PARAMSETTING.FAST)
        state = _Lazy(model, variables, terms, lazy, int(root_cuts))
        model.includeConshdlr(_LazyHandler(state), "lazycuts", "rows of the program's lazy oracle",
                              sepapriority=-1, enfopriority=-1, chckpriority=-1, sepafreq=1, propfreq=-1,
                              eagerfreq=-1, needscons=False)
        if polish and hasattr(lazy, "polish"):
            model.includeHeur(_Polisher(state, program.integer), "lazypolish", "polish integral points of the tree", "P",
                              priority=-1, freq=1, timingmask=SCIP_HEURTIMING.AFTERLPNODE | SCIP_HEURTIMING.AFTERPSEUDONODE)
    for key, value in (options or {}).items():
        model.setParam(key, value)
    if warm_start is not None:
        start = np.asarray(warm_start, dtype=float)
        if start.shape != (program.n_variables,):
            raise ValueError(f"warm_start has shape {start.shape}; program has {program.n_variables} variables")
        sol = model.createSol()
        for v, val in zip(variables, start.tolist()):
            model.setSolVal(sol, v, val)
        model.addSol(sol)
        if state is not None:
            state.best = lazy.value(start)
            if tighten and hasattr(lazy, "cutoff_rows"):  # rows valid for every solution better than the start
                rows, lb = lazy.cutoff_rows(state.best)
                state.cutoff_rows = _add_rows(model, terms, rows, lb, "cutoff")
    report = progress.current()
    if report is not None:
        model.includeEventhdlr(_Progress(report), "milpscore_progress", "reports incumbent, bound and gap")
    model.setParam("misc/catchctrlc", False)  # Python's SIGINT handler sets the flag _Interrupt polls
    model.includeEventhdlr(_Interrupt(), "milpscore_interrupt", "stops the solve after a Ctrl-C")
    build_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    error = _optimize(model, quiet=not verbose)
    if error is not None:
        return _failed(model, program, variables, state, build_time, time.perf_counter() - t1, error)
    return _result(model, program, variables, state, build_time, time.perf_counter() - t1)


#: a line SoPlex (SCIP's LP solver, built without GMP) writes to stderr each time SCIP tightens the LP's
#: feasibility tolerance below 1e-10 to recover from numerical trouble; it uses 1e-10, and says so
SOPLEX_NOTICE = re.compile(r"Cannot set feasibility tolerance to small value \S+ without GMP - using \S+\.")


@contextlib.contextmanager
def _without_soplex_notices(quiet: bool):
    """Within the block (when ``quiet``), file descriptor 2 goes to a temporary file, whose lines are
    written back to stderr afterwards, but :data:`SOPLEX_NOTICE`'s: a library call prints nothing it was
    not asked for (on a wide table SCIP's recoveries printed it hundreds of times a minute)."""
    if not quiet:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            kept = [line for line in caught.read().decode(errors="replace").splitlines(keepends=True)
                    if not SOPLEX_NOTICE.fullmatch(line.strip())]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def _optimize(model: Model, quiet: bool = True) -> Exception | None:
    """``model.optimize()`` (SoPlex's tolerance notices dropped when ``quiet``,
    :func:`_without_soplex_notices`); SCIP's own abort (an LP failure it cannot resolve raises "SCIP: error
    in LP solver!") is returned, an exception of ours (a callback's) raised."""
    try:
        with _without_soplex_notices(quiet):
            model.optimize()
    except Exception as error:
        if not str(error).startswith("SCIP"):
            raise
        return error
    return None


def _failed(model: Model, program: Program, variables: list, state: _Lazy | None, build_time: float,
            solve_time: float, error: Exception) -> Result:
    """The result of a solve SCIP aborted: its incumbent, if it had one, as ``FEASIBLE`` with no bound
    (the tree it abandoned proves nothing), else ``ERROR``; the message names SCIP's error."""
    try:
        best = model.getBestSol() if model.getNSols() > 0 else None
        x = np.array([model.getSolVal(best, v) for v in variables]) if best is not None else None
    except Exception:  # the aborted model may not answer either
        x = None
    if x is not None:
        x[program.integer] = np.round(x[program.integer])
        if not program.is_feasible(x, tol=1e-6):
            x = None
    lazy = getattr(program, "lazy", None)
    objective = float("nan") if x is None else (lazy.value(x) if lazy is not None else program.objective(x))
    return Result(status=Status.FEASIBLE if x is not None else Status.ERROR, x=x, objective=objective,
                  bound=-math.inf, gap=math.inf, solve_time=solve_time, build_time=build_time, backend="scip",
                  message=f"SCIP stopped on an error: {error}")


def _result(model: Model, program: Program, variables: list, state: _Lazy | None, build_time: float,
            solve_time: float) -> Result:
    scip_status = model.getStatus()
    status = STATUS_MAP.get(scip_status, Status.ERROR)
    best = model.getBestSol() if model.getNSols() > 0 else None
    x = np.array([model.getSolVal(best, v) for v in variables]) if best is not None else None
    if x is not None:
        x[program.integer] = np.round(x[program.integer])
    if status == Status.FEASIBLE and x is None:
        status = Status.NO_SOLUTION_FOUND
    if status == Status.OPTIMAL and x is None:
        status = Status.ERROR
    lazy = getattr(program, "lazy", None)
    if x is None:
        objective = float("nan")
    else:
        objective = lazy.value(x) if lazy is not None else program.objective(x)
    bound = float(model.getDualbound())
    if x is not None and status == Status.OPTIMAL and not program.is_mip and lazy is None:
        gap = 0.0
    else:
        gap = relative_gap(objective, bound) if x is not None else float("inf")
    raw = {"scip_status": scip_status, "lp_iterations": int(model.getNLPIterations())}
    if state is not None:
        raw.update(lazy_rows=state.rows_added, cutoff_rows=state.cutoff_rows, repeats=state.repeats, root_rounds=state.root_rounds, polished=state.polished)
    return Result(status=status, x=x, objective=objective, bound=bound, gap=gap, solve_time=solve_time,
                  build_time=build_time, iterations=raw["lp_iterations"], nodes=int(model.getNNodes()),
                  backend="scip", message=scip_status, raw=raw)


# declared to solvers.registry (imported lazily there: no cycle)
BACKENDS = {"scip": Backend(solve_scip, frozenset({"LP", "MILP", "LAZY"}))}
