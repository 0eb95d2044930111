"""Certified at scale: RiskSLIM and SLIM fits from 10^4 rows up, time, peak memory, certificate (issue 31).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/scale.py [--sizes 1e4,1e5,1e6] [--estimators riskslim,slim]
[--binary 40] [--continuous 0] [--time-limit 1800]``.

Data (generated in the child process, seed 0): ``--binary`` 0/1 columns with frequencies 0.3-0.7
and ``--continuous`` standard normal variables, each cut at the quintiles of N(0, 1) into 4 threshold columns
``x >= q`` (the binarisation a user does); the label is drawn from a planted logistic card on 5
columns with **non-integer** weights (2.6, -1.7, 1.4, 0.8, -0.6; intercept -1), so the integer
optimum is not the generating model and the certificate has work to do (with integer planted
weights the continuous floor of the whole box often certifies the planted card at once).

Each fit runs in a fresh process (``RiskScoreClassifier(c0=1e-6)`` / ``SLIMClassifier(c0=1e-4)``,
points -5..5, ``max_size=5``, ``mip_rel_gap=1e-4``, one thread, ``time_limit`` per fit), timed around
``fit`` (input checks, row merging, heuristic, exact route: all a user's call does). Peak memory is
the child's maximum resident set size (``getrusage``), data included: the float64 table a user
holds is 8 bytes per cell (``data GiB``: the peak before the fit, the table generated in blocks). ``slope`` is the log-log slope of the fit time between consecutive
sizes (1: linear in the rows). ``planted`` says whether the fitted card uses exactly the 5 planted
columns. The load average is printed first: the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.planted import WEIGHTS  # noqa: E402
from benchmarks.timing import compile_kernels, environment  # noqa: E402


CHILD = r"""
import json, resource, sys, time
import numpy as np
kind, rows, binary, continuous, limit = sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3]), int(sys.argv[4]), \
    float(sys.argv[5])
from benchmarks.planted import table
from milpscore.estimators import RiskScoreClassifier, SLIMClassifier
X, y = table(rows, binary, continuous)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
make = {"riskslim": lambda: RiskScoreClassifier(c0=1e-6, coef_bound=5, max_size=5, mip_rel_gap=1e-4, time_limit=limit),
        "slim": lambda: SLIMClassifier(c0=1e-4, coef_bound=5, max_size=5, mip_rel_gap=1e-4, time_limit=limit)}[kind]
model = make()
t = time.perf_counter()
model.fit(X, y)
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
steps = "; ".join((f"{r.step} {r.seconds:.1f} s" + (f" ({r.message})" if "stopped" in r.message else "")) if r.ran
                  else f"{r.step} skipped" for r in model.fit_.steps)
print(json.dumps({"wall": wall, "peak": peak, "data_peak": before, "status": model.status_, "gap": model.gap_,
                  "objective": model.objective_, "bound": model.bound_, "coef": model.coef_.tolist(),
                  "intercept": model.intercept_,
                  "planted": sorted(np.flatnonzero(model.coef_).tolist()) == [0, 1, 2, 3, 4],
                  "times": {k: round(v, 1) for k, v in model.fit_.times.items()}, "steps": steps}))
"""


def run(kind: str, rows: float, binary: int, continuous: int, limit: float) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, kind, str(rows), str(binary), str(continuous), str(limit)],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    if done.returncode:
        return {"status": f"failed ({done.stderr.strip().splitlines()[-1][:80] if done.stderr.strip() else done.returncode})"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6", help="comma-separated row counts")
    ap.add_argument("--estimators", default="riskslim,slim", help="comma-separated of riskslim, slim")
    ap.add_argument("--binary", type=int, default=40, help="0/1 columns")
    ap.add_argument("--continuous", type=int, default=0, help="normal variables, 4 threshold columns each")
    ap.add_argument("--time-limit", type=float, default=1800.0, help="seconds per fit")
    args = ap.parse_args()
    if args.binary < 5:
        ap.error("--binary must be at least 5 (the planted card)")
    sizes = [float(s) for s in args.sizes.split(",") if s]
    kinds = [k for k in args.estimators.split(",") if k]
    if any(k not in ("riskslim", "slim") for k in kinds):
        ap.error("--estimators: riskslim, slim")
    columns = args.binary + 4 * args.continuous
    print(environment(), f"| {args.binary} binary + {args.continuous} continuous (4 thresholds each) = {columns} "
          f"columns; planted weights {WEIGHTS}; max_size 5, points -5..5, gap 1e-4, {args.time_limit:g} s per fit, "
          "one thread")
    print(compile_kernels(), flush=True)
    table = []
    for kind in kinds:
        previous = None
        for rows in sizes:
            out = run(kind, rows, args.binary, args.continuous, args.time_limit)
            wall = out.get("wall", math.nan)
            slope = math.log(wall / previous[1]) / math.log(rows / previous[0]) if previous and wall > 0 else math.nan
            row = {"estimator": kind, "rows": f"{rows:.0e}", "columns": columns, "status": out["status"],
                   "gap": out.get("gap", math.nan), "fit s": round(wall, 1), "slope": round(slope, 2),
                   "peak GiB": round(out.get("peak", math.nan) / 2**30, 2),
                   "data GiB": round(out.get("data_peak", math.nan) / 2**30, 2), "planted": out.get("planted"),
                   "phases s": out.get("times"), "steps": out.get("steps")}
            table.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=False), flush=True)
            previous = (rows, wall) if wall == wall else None
    print()
    with pd.option_context("display.max_colwidth", 120, "display.width", 250):
        print(pd.DataFrame(table).to_string(index=False))
    print(environment())


if __name__ == "__main__":
    main()
