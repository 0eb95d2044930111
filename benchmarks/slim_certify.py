"""How far SLIM's exact solve gets on each backend: a printed table, not a timed test.

Per data set (the default card data: scikit-learn's breast cancer binarised, 60 features, C0 0.01;
``../shared/data`` breastcancer and mammo: integer features, C0 1e-3; with ``--sets
adult,spambase,mushroom`` those sets binarised and subsampled to 2000 rows as in ``reproduce.py``,
C0 0.01; points -10..10, margin 1) and
per backend: the status, the first time the certified gap reached 1e-2 and 1e-4 ("-" if it did
not within ``--limit`` seconds, then the gap at the limit is the one shown), incumbent and bound,
all on the true objective (pipeline certificates). The times to a gap come from the steps' and
backends' progress reports (:mod:`solvers.progress`: HiGHS's MIP callback, SCIP's node events, the
box search and the support enumeration); ``--trace`` also prints every report (bound and incumbent
over time). Backends:

* ``route`` (SLIM's default, ``solve_exact(instance)``): the route table of
  ``solvers.exact.slim_route`` from the heuristic start -- the sign-cover LP bound, the support
  enumeration with Bayes-error bounds (0/1 features), the box search (integer features of more
  values, at most 16: breastcancer and mammo), HiGHS on the MILP strengthened with the LP's cuts;
  "solved by" lists the steps that ran, the note is the last one's account;
* ``route-no<step>`` (e.g. ``route-nobox_search``): the route without that step;
  ``route:<step>+<step>`` (e.g. ``route:box_search``): only those steps, in the table's order, from
  the heuristic start (``solvers.exact.route.run_route`` on the shortened table);
* ``highs`` (the plain big-M MILP, outside the route), ``scip`` (the same MILP), and, when
  ``benchmarks/.peers-gurobi`` exists (``python benchmarks/peers.py setup``), ``gurobi``: the same
  MILP, plain (no start), written as MPS and solved by Gurobi in its own environment
  (``gurobi_worker.py``) with Gurobi's own incumbent and bound; the pip wheel's size-limited
  licence refuses models over 2000 variables or constraints (the 2000-row sets), which the row
  says; ``--rows 1000`` subsamples the binarised sets to a size it takes (the
  ``slim_certify-licence`` run of ``report.py``).

Ablations: a backend name may carry switches, ``-noheuristic`` (no start: the pipeline's heuristic
is off) and ``-noconflicts`` (the program without its rows ``z_p + z_q >= 1`` for conflicting rows),
e.g. ``--backends highs-noheuristic,highs-noconflicts,route-noheuristic``. Each solve runs once
(time-limited MILP solves).

    OPENBLAS_NUM_THREADS=1 python benchmarks/slim_certify.py --limit 60
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from formulations.slim import SLIM  # noqa: E402
from milpscore.data.datasets import load_default  # noqa: E402
from solvers.catalog import entry_for  # noqa: E402
from solvers.exact.route import StepRecord, run_route  # noqa: E402
from solvers.exact.slim_route import ROUTE  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.feasibility import FEASIBILITY_TOL, violation  # noqa: E402
from solvers.pipeline import HEURISTIC_SHARE, solve_exact  # noqa: E402
from solvers.progress import reporting  # noqa: E402
from solvers.result import relative_gap  # noqa: E402
from timing import compile_kernels, environment  # noqa: E402
import peers  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
C0 = {"default": 0.01, "breastcancer": 1e-3, "mammo": 1e-3, "adult": 0.01, "spambase": 0.01, "mushroom": 0.01}
#: larger sets, binarised and subsampled as in reproduce.py (the docs/results.md protocol)
BINARISED = ("adult", "spambase", "mushroom")
STEPS = tuple(step.name for step in ROUTE)


def load(name: str, rows: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels in {-1, 1} of one set (the binarised ones subsampled to ``rows``)."""
    if name == "default":
        X, y = load_default()
        return X.to_numpy(float), np.where(np.asarray(y) == "malignant", 1.0, -1.0)
    if name in BINARISED:
        from reproduce import load as load_binarised

        return load_binarised(name, rows)
    df = pd.read_csv(DATA / f"{name}_data.csv")
    return df.iloc[:, 1:].to_numpy(float), np.where(df.iloc[:, 0].to_numpy() > 0, 1.0, -1.0)


def first_time(trace: list[tuple[float, float, float]], gap: float) -> str:
    """First reported time (s) at which relative_gap(incumbent, bound) <= gap, or "-"."""
    for t, incumbent, bound in trace:
        if relative_gap(incumbent, bound) <= gap:
            return f"{t:.1f}"
    return "-"


def route_steps(solver: str, switches: list[str]) -> tuple[str, ...] | None:
    """The steps of the SLIM route a backend name runs (None: the catalog's full route through
    ``solve_exact``; module docstring)."""
    dropped = {switch[2:] for switch in switches if switch[2:] in STEPS}
    if solver.startswith("route:"):
        kept = set(solver[len("route:"):].split("+"))
        if kept - set(STEPS):
            raise SystemExit(f"unknown steps {sorted(kept - set(STEPS))} in {solver!r}; the steps are {STEPS}")
        steps = tuple(name for name in STEPS if name in kept and name not in dropped)
        if not steps:
            raise SystemExit(f"{solver!r} with its switches keeps no step")
        return steps
    if solver == "route":
        return None if not dropped else tuple(name for name in STEPS if name not in dropped)
    if dropped:
        raise SystemExit(f"steps can be dropped from a route only, not from {solver!r}")
    return ()


def solve_steps(inst, steps: tuple[str, ...], limits: Limits, heuristic: bool):
    """The SLIM route shortened to ``steps`` from the pipeline's heuristic start (given the same
    share of the time as in ``solve_exact``), within one started ``limits``."""
    limits = limits.started()
    start = entry_for(inst.spec).heuristic_function(inst, limits.share(HEURISTIC_SHARE), limits.seed) \
        if heuristic else None
    return run_route(tuple(step for step in ROUTE if step.name in steps), inst, start, limits,
                     lambda model: violation(inst, model) <= FEASIBILITY_TOL)


def account(records: tuple[StepRecord, ...]) -> tuple[str, str]:
    """"solved by" (the steps that ran) and the note (the last one's account) of a route."""
    ran = [r for r in records if r.ran]
    if not ran:
        return "route: no step", f"{records[0].step} skipped: {records[0].reason}"[:70]
    return "route: " + "+".join(r.step for r in ran), ran[-1].message[:70]


def gurobi(inst, limit: float) -> dict:
    """Gurobi on the plain MILP (module docstring): status, seconds, objective, bound and trace."""
    import json
    import subprocess
    import tempfile

    from solvers.backends.highs import write_model

    program = inst.exact()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_model(program, Path(tmp) / "slim.mps")
        done = subprocess.run([str(peers.python(peers.GUROBI_ENV)), str(Path(__file__).parent / "gurobi_worker.py"),
                               str(path), str(limit), "1e-4"], capture_output=True, text=True)
    if done.returncode:
        return {"status": f"error: {done.stderr.strip().splitlines()[-1][:60]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="default,breastcancer,mammo")
    ap.add_argument("--backends", default="route,highs,scip" + (",gurobi" if peers.python(peers.GUROBI_ENV).exists()
                                                                else ""))
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--rows", type=int, default=2000, help="rows of the binarised sets (Gurobi's size-limited "
                    "licence takes spambase and mushroom at 1000)")
    ap.add_argument("--trace", action="store_true", help="print every progress report (bound over time)")
    args = ap.parse_args()
    print(environment(), f"| points -10..10, margin 1, gap 1e-4, {args.limit:g} s per solve, one thread")
    print(compile_kernels(), flush=True)
    rows = []
    for name in args.sets.split(","):
        X, y = load(name, args.rows)
        inst = SLIM(c0=C0[name], coef_bound=10).instance(X, y)
        for backend in args.backends.split(","):
            solver, *switches = backend.split("-")
            unknown = set(switches) - {"noheuristic", "noconflicts"} - {f"no{step}" for step in STEPS}
            if unknown:
                raise SystemExit(f"unknown switches {sorted(unknown)} in backend {backend!r}")
            steps = route_steps(solver, switches)
            case = inst
            if "noconflicts" in switches:
                import formulations.slim as slim_module

                kept, slim_module.MAX_CONFLICT_PAIRS = slim_module.MAX_CONFLICT_PAIRS, 0
                case = SLIM(c0=C0[name], coef_bound=10).instance(X, y)
                assert "conflicts" not in case.exact().row_blocks  # built (and cached) without them
                slim_module.MAX_CONFLICT_PAIRS = kept
            if solver == "gurobi":
                run = gurobi(case, args.limit)
                assert case.exact().offset == 0.0  # the MPS objective is the program's
                trace = [tuple(moment) for moment in run.get("trace", [])]
                if "objective" in run:
                    trace.append((run["runtime"], run["objective"], run["bound"]))
                nan = float("nan")
                objective, bound = trace[-1][1:] if trace else (nan, nan)
                outcome = {"status": run["status"].split(":")[0].replace("time limit", "feasible"),
                           "seconds": run.get("runtime", nan), "objective": objective, "bound": bound,
                           "gap": relative_gap(objective, bound) if trace else nan, "size": -1,
                           "solved by": f"gurobi {run.get('version', '')}".strip(),
                           "note": run["status"][:70] + " (Gurobi's own certificate)"}
            else:
                trace = []
                t = time.perf_counter()
                limits = Limits(time_limit=args.limit, mip_rel_gap=1e-4)
                heuristic = "noheuristic" not in switches
                with reporting(lambda _, incumbent, bound, __: trace.append((time.perf_counter() - t, incumbent,
                                                                             bound))):
                    if steps:  # a shortened route
                        fit = solve_steps(case, steps, limits, heuristic)
                        records = fit.records
                    else:  # the full route (None) or a backend outside it
                        fit = solve_exact(case, None if steps is None else solver, limits=limits,
                                          heuristic=heuristic)
                        records = fit.steps
                seconds = time.perf_counter() - t
                trace.append((seconds, fit.objective, fit.bound))  # the certificate itself (true objective)
                if records:
                    solved_by, note = account(records)
                else:
                    solved_by, note = fit.result.backend, fit.result.message.split("; ")[-1][:70]
                outcome = {"status": fit.status.value, "seconds": seconds, "objective": fit.objective,
                           "bound": fit.bound, "gap": relative_gap(fit.objective, fit.bound),
                           "size": int(np.count_nonzero(fit.model.coef)) if fit.model is not None else -1,
                           "solved by": solved_by, "note": note}
            if args.trace:
                for moment in trace:
                    print(f"  {name} {backend}: {moment[0]:8.2f} s  incumbent {moment[1]:.6g}  bound {moment[2]:.6g}")
            rows.append({"data": name, "n x d": f"{X.shape[0]}x{X.shape[1]}", "C0": C0[name], "backend": backend,
                         "status": outcome["status"], "seconds": round(outcome["seconds"], 1),
                         "to gap 1e-2 s": first_time(trace, 1e-2), "to gap 1e-4 s": first_time(trace, 1e-4),
                         "objective": round(outcome["objective"], 6), "bound": round(outcome["bound"], 6),
                         "gap": float(f"{outcome['gap']:.3g}"), "size": outcome["size"],
                         "solved by": outcome["solved by"], "note": outcome["note"]})
            print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
