"""What each part of the certified RiskSLIM solve gives: a printed table, not a timed test.

One data set (``--data``, default breastcancer: points -5..5, at most ``--max-size`` features, C0
1e-6), one solve per configuration, gap 1e-4, ``--limit`` seconds each: the RiskSLIM route
(``solvers.exact.riskslim_route``: the support enumeration of ``solvers.exact.supports``, then SCIP's
lazy-cut tree when the enumeration is skipped or does not prove the optimum; the "steps" column
says which ran) with and without the heuristic start, then SCIP's lazy-cut tree alone, outside the
route (LCPA, Ustun & Rudin 2019, Algorithm 2), in full and with one of its parts switched off: the
heuristic start (and with it the bound tightening it feeds), polishing of integral points,
bound tightening (cut-off rows from the start's value), root cut rounds, the initial cut pool.
Time-limited MILP solves run once each (no rounds): read differences of a few percent as noise.

    OPENBLAS_NUM_THREADS=1 python benchmarks/riskslim_ablation.py --data breastcancer
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from formulations.riskslim import RiskSLIM  # noqa: E402
from risk_scores import load  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.pipeline import solve_exact  # noqa: E402
from timing import compile_kernels, environment  # noqa: E402

CONFIGS = (
    ("route (default)", None, True, {}),
    ("route, no heuristic start", None, False, {}),
    ("scip: LCPA, every part", "scip", True, {}),
    ("scip: no heuristic start (no tightening)", "scip", False, {}),
    ("scip: no polishing", "scip", True, {"polish": False}),
    ("scip: no bound tightening", "scip", True, {"tighten": False}),
    ("scip: no root cut rounds", "scip", True, {"root_cuts": 0}),
    ("scip: no initial cut pool", "scip", True, {"initial_cuts": False}),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="breastcancer")
    ap.add_argument("--max-size", type=int, default=5)
    ap.add_argument("--limit", type=float, default=60.0)
    args = ap.parse_args()
    print(environment(), f"| {args.data}, points -5..5, max_size={args.max_size}, C0=1e-6, gap 1e-4, "
          f"{args.limit:g} s each, one thread")
    print(compile_kernels(), flush=True)
    inst = RiskSLIM(max_size=args.max_size, c0=1e-6).instance(*load(args.data))
    rows = []
    for label, backend, heuristic, options in CONFIGS:
        t = time.perf_counter()
        fit = solve_exact(inst, backend, limits=Limits(time_limit=args.limit, mip_rel_gap=1e-4), heuristic=heuristic,
                          options=options)
        rows.append({"configuration": label, "status": fit.status.value, "seconds": round(time.perf_counter() - t, 2),
                     "objective": round(fit.objective, 7), "bound": round(fit.bound, 7), "gap": float(f"{fit.gap:.3g}"),
                     "nodes": fit.result.nodes,
                     "steps": "+".join(r.step for r in fit.steps if r.ran) if fit.steps else fit.result.backend})
        print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
