"""risk-slim on CPLEX next to RiskScoreClassifier: the same RiskSLIM problem on the generated tables (issue 31).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/riskslim_cplex.py [--sizes 1e4,1e5] [--time-limit 600]``
(risk-slim's environment: ``python benchmarks/peers.py setup``; without it its rows are skipped).

Data: ``benchmarks/planted.py``'s tables (40 binary columns, a planted 5-column card with
non-integer weights, seed 0), the rows of ``benchmarks/scale.py``. Problem on both sides: mean
logistic loss + ``c0 = 1e-6`` per non-zero point, points in ``-5..5``, at most 5 of them, the
integer intercept in the box :class:`formulations.riskslim.RiskSLIM` derives (it holds an optimal
intercept of every model; risk-slim is given the same box), optimality gap ``1e-4``, one thread,
``--time-limit`` seconds per fit.

* ours: ``RiskScoreClassifier(...).fit(X, y)`` in a fresh process (``scale.py``'s child), timed around
  ``fit`` (input checks, row merging, heuristic, the exact route).
* risk-slim: ``benchmarks/riskslim_cplex_worker.py`` in its own environment, timed around its data
  dictionary, coefficient set and ``run_lattice_cpa`` (initialisation, then the lattice
  cutting-plane algorithm in one CPLEX tree with lazy cuts, Community Edition from PyPI). The data
  file is written before the clock starts.

Both models are scored by one numpy function of this script (``objective``); ``status`` is
"optimal" only when the side's own bound is within the gap of that objective. Peak memory is each
process's maximum resident set size, data included.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.planted import table  # noqa: E402
from benchmarks.scale import run as run_ours  # noqa: E402
from benchmarks.timing import compile_kernels, environment  # noqa: E402
from formulations.riskslim import RiskSLIM  # noqa: E402

ENV = Path(os.environ.get("MILPSCORE_RISKSLIM", ROOT / "benchmarks" / ".peers-riskslim"))
C0, BOUND, SIZE, GAP, BINARY = 1e-6, 5, 5, 1e-4, 40


def objective(X: np.ndarray, y: np.ndarray, coef: np.ndarray, intercept: float) -> float:
    """Mean logistic loss plus ``C0`` per non-zero point: the RiskSLIM objective, scored the same way for both."""
    return float(np.logaddexp(0.0, -y * (X @ coef + intercept)).mean() + C0 * np.count_nonzero(coef))


def run_riskslim(X: np.ndarray, y: np.ndarray, box: tuple[int, int], limit: float) -> dict:
    """risk-slim's fit in its environment (the worker's JSON), or the reason it has none."""
    python = ENV / "bin" / "python"
    if not python.exists():
        return {"status": "skipped: no risk-slim environment (python benchmarks/peers.py setup)"}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        np.savez(path, X=X, y=y)
        done = subprocess.run([str(python), str(ROOT / "benchmarks" / "riskslim_cplex_worker.py"), str(path),
                               str(limit), str(box[0]), str(box[1]), str(C0), str(BOUND), str(SIZE), str(GAP)],
                              capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return {"status": f"failed: {last[:100]}"}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5", help="comma-separated row counts")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per fit")
    args = ap.parse_args()
    print(environment(), f"| {BINARY} binary columns, planted card; c0 {C0:g}, points -{BOUND}..{BOUND}, at most "
          f"{SIZE}, gap {GAP:g}, {args.time_limit:g} s per fit, one thread")
    print(compile_kernels(), flush=True)
    rows_out = []
    for rows in (int(float(s)) for s in args.sizes.split(",") if s):
        X, y = table(rows, BINARY, 0)
        box = RiskSLIM(coef_bound=BOUND, c0=C0, max_size=SIZE).instance(X, y).intercept_bounds
        ours = run_ours("riskslim", rows, BINARY, 0, args.time_limit)
        peer = run_riskslim(X, y, box, args.time_limit)
        models = {}
        if "coef" in ours:
            models["ours"] = (np.asarray(ours["coef"]), ours["intercept"], ours["bound"])
        if "solution" in peer:
            rho = np.asarray(peer["solution"])
            models["risk-slim"] = (rho[1:], rho[0], peer["bound"])
        scored = {name: objective(X, y, coef, b) for name, (coef, b, _) in models.items()}
        for name, out in (("ours", ours), ("risk-slim", peer)):
            value, bound = scored.get(name, math.nan), models[name][2] if name in models else math.nan
            proven = math.isfinite(value) and bound >= value - GAP * max(abs(value), 1e-10)
            rows_out.append({"rows": f"{rows:.0e}", "solver": name,
                             "status": ("optimal" if proven else "feasible") if name in models else out["status"],
                             "objective": value, "bound": bound, "seconds": round(out.get("wall", math.nan), 1),
                             "peak GiB": round(out.get("peak", math.nan) / 2**30, 2),
                             "points": None if name not in models else
                             {int(j): int(v) for j, v in enumerate(models[name][0]) if v},
                             "intercept": None if name not in models else int(models[name][1])})
        pair = [r for r in rows_out if r["rows"] == f"{rows:.0e}"]
        if len(scored) == 2:
            pair[1]["ours / risk-slim s"] = round(pair[0]["seconds"] / pair[1]["seconds"], 3)
            pair[1]["same objective"] = bool(abs(scored["ours"] - scored["risk-slim"]) <= 1e-9)
        print(pd.DataFrame(pair).to_string(index=False, header=False), flush=True)
    print()
    print("intercept box (both sides): derived by formulations.riskslim.RiskSLIM per table")
    with pd.option_context("display.max_colwidth", 80, "display.width", 250):
        print(pd.DataFrame(rows_out).to_string(index=False))
    print(environment())


if __name__ == "__main__":
    main()
