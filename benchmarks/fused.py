"""Benchmark: fused-lasso hinge ILP (exact) vs its LP relaxation on spambase.

For 5 and 10 bins per variable (57 continuous features, 4601 rows; quantile bins), prints build
time, solve time, objective, bound / gap, training accuracy and the number of ranges in the
card for the relaxed LP (continuous points, the reference), the binarsity proximal path
(continuous points, FISTA on a Huberised hinge, delta = 0.1; objective is eq. (1) at its points),
the exact ILP (HiGHS, time-limited, cold) and the exact ILP started from the rounded LP or prox
points (``FusedLassoHinge.lift``; ``build_s`` includes that lift), with ratios against the relaxed
LP measured in the same run. Takes about 3-4 minutes. BLAS is capped to one thread.

Run: ``python benchmarks/fused.py [--time-limit 20] [--penalty 1.0] [--max-points 3]``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from formulations.fused import FusedLassoHinge  # noqa: E402
from milpscore.binning import OrderedBinner  # noqa: E402
from milpscore.estimators.fused import binarsity_points, builder_objective  # noqa: E402
from solvers.highs import solve_highs  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "spambase_data.csv"


def run(n_bins: int, penalty: float, max_points: int, time_limit: float) -> list[dict]:
    data = pd.read_csv(DATA)
    y = np.where(data.pop(data.columns[0]).to_numpy() > 0, 1.0, -1.0)
    binner = OrderedBinner(n_bins=n_bins).fit(data)
    onehot = binner.transform(data)
    sizes = [v.n_bins for v in binner.variables_]
    rows, starts = [], {}
    for kind in ("relaxed", "prox", "exact", "exact+LP start", "exact+prox start"):
        builder = FusedLassoHinge(penalty=penalty, points_ub=max_points)
        t0 = time.perf_counter()
        program = builder.exact(onehot, y, sizes)
        if kind == "relaxed":
            program = program.relax()
        start = starts.get(kind.removeprefix("exact+").removesuffix(" start"))
        start = None if start is None else builder.lift(np.clip(np.round(start), 0, max_points))
        build = time.perf_counter() - t0
        if kind == "prox":
            points, result = binarsity_points(onehot, y, np.ones(len(y)), sizes, builder, smoothing=0.1, tol=1e-5)
            objective, bound, gap = builder_objective(program, builder, points), np.nan, np.nan
        else:
            result = solve_highs(program, time_limit=None if kind == "relaxed" else time_limit, mip_rel_gap=1e-4,
                                 warm_start=start)
            points = builder.decode(result.x)
            objective, bound, gap = result.objective, result.bound, result.gap
        starts[{"relaxed": "LP", "prox": "prox"}.get(kind, kind)] = points.theta
        accuracy = float(np.mean(np.where(points.scores(onehot) > 0, 1.0, -1.0) == y))
        rows.append({"bins/var": n_bins, "program": kind, "bins": onehot.shape[1],
                     "vars": program.n_variables, "rows": program.n_rows, "build_s": build,
                     "solve_s": result.solve_time, "status": result.status.value,
                     "objective": objective, "bound": bound, "gap": gap,
                     "accuracy": accuracy, "used_vars": int(points.used.sum()), "ranges": points.n_ranges(1e-6)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per ILP solve")
    parser.add_argument("--penalty", type=float, default=1.0, help="lambda of eq. (1)")
    parser.add_argument("--max-points", type=int, default=3, help="points per bin in 0..max")
    args = parser.parse_args()
    if not DATA.is_file():
        raise SystemExit(f"spambase not found at {DATA}")
    with threadpool_limits(1):
        print(f"BLAS threads: 1 (threadpoolctl); HiGHS threads: 1; lambda={args.penalty}, "
              f"points 0..{args.max_points}, ILP time limit {args.time_limit:g}s")
        rows = [r for n_bins in (5, 10) for r in run(n_bins, args.penalty, args.max_points, args.time_limit)]
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("\nratios against the relaxed LP (same run):")
    for n_bins, grp in table.groupby("bins/var"):
        r = grp.iloc[0]
        for _, e in grp.iloc[1:].iterrows():
            print(f"  {n_bins:>2} bins/var, {e.program:<15}: build x{e.build_s / r.build_s:.2f}, "
                  f"solve x{e.solve_s / r.solve_s:.1f}, objective x{e.objective / r.objective:.3f}, "
                  f"accuracy {e.accuracy:.4f} vs {r.accuracy:.4f}, ranges {e.ranges} vs {r.ranges}")


if __name__ == "__main__":
    main()
