"""Benchmark: fused-lasso hinge ILP (exact) vs its LP relaxation and the binarsity proximal path on spambase.

For 5 and 10 bins per variable (57 continuous features, 4601 rows; quantile bins; identical rows
merged), everything through :mod:`solvers.pipeline` on one instance per binning:

* ``relaxed``  -- the LP relaxation (continuous points; its value bounds the ILP below);
* ``prox``     -- the binarsity proximal path (FISTA on a Huberised hinge, delta = 0.1); its
  objective is eq. (1) at its points;
* ``exact``    -- the ILP (HiGHS, time-limited), cold;
* ``exact+LP start`` / ``exact+prox start`` -- the ILP warm-started from the LP / prox points
  rounded into the table (:func:`solvers.pipeline.solve_rounded`).

Start columns: ``start_obj`` is the true objective of the start, ``start`` says whether the
pipeline accepted it (checked with ``violations``) and whether the exact solve improved on it;
``nodes`` is HiGHS' branch-and-bound node count.

What a start changes: the starts are not rejected (every one passes the pipeline's
``violations`` check and HiGHS reports "MIP start solution is feasible"). With a 20 s limit HiGHS
spends the whole budget at the root node (``nodes`` = 0: root LP and cut separation on ~4.5k rows
and 2e5 non-zeros), so the final model is the better of HiGHS' own root incumbent (none, when
its root LP does not end within the limit: the cold ``exact`` row then has no model and no bound)
and the start; the dual bound does not move (a start helps the primal side only). The figures of
each run are in docs/benchmarks.md.

Takes about 4-5 minutes. BLAS is capped to one thread. Every solve here is time-limited, so there
are no interleaved rounds (:mod:`benchmarks.timing`): one run each, the machine line printed first.

Run: ``python benchmarks/fused.py [--time-limit 20] [--lam 1.0] [--max-points 3]``.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from formulations.fused import FusedLassoHinge  # noqa: E402
from milpscore.data.binning import OrderedBinner  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.pipeline import solve_exact, solve_relaxed, solve_rounded  # noqa: E402
from timing import environment  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "spambase_data.csv"


def start_state(fit, start) -> str:
    """Whether the pipeline accepted ``start`` (its ``violations`` check, reported in ``fit.message``)
    and whether the exact solve improved on it (objectives; ties return the solver's copy of it)."""
    if start is None:
        return ""
    if "start rejected" in fit.message:
        return "rejected"
    return "accepted, improved" if fit.objective < start.objective - 1e-9 else "accepted, not improved"


def run(n_bins: int, lam: float, max_points: int, time_limit: float) -> list[dict]:
    data = pd.read_csv(DATA)
    y = np.where(data.pop(data.columns[0]).to_numpy() > 0, 1.0, -1.0)
    binner = OrderedBinner(n_bins=n_bins).fit(data)
    onehot = binner.transform(data)
    t0 = time.perf_counter()
    instance = FusedLassoHinge(lam=lam, points_ub=max_points, blocks=[v.n_bins for v in binner.variables_]).instance(
        onehot, y)
    instance.exact()
    build = time.perf_counter() - t0
    limits = Limits(time_limit=time_limit, mip_rel_gap=1e-4)
    fits = {"relaxed": solve_relaxed(instance, "highs"),
            "prox": solve_relaxed(instance, "prox", options={"tol": 1e-5, "max_iter": 20000})}
    starts = {"LP": solve_rounded(instance, fits["relaxed"]), "prox": solve_rounded(instance, fits["prox"])}
    fits["exact"] = solve_exact(instance, limits=limits)
    for name, start in starts.items():
        fits[f"exact+{name} start"] = solve_exact(instance, start=start, limits=limits)
    program = instance.exact()
    rows = []
    for kind, fit in fits.items():
        start = starts.get(kind.removeprefix("exact+").removesuffix(" start")) if kind.startswith("exact+") else None
        if fit.model is None:  # none found within the limit
            accuracy, used_vars, ranges = np.nan, 0, 0
        else:
            points = instance.points(fit.model)
            correct = np.where(points.scores(instance.X) > 0, 1.0, -1.0) == instance.y
            accuracy = float(instance.weights @ correct / instance.weights.sum())  # merged rows carry their counts
            used_vars, ranges = int(points.used.sum()), points.n_ranges(1e-6)
        rows.append({"bins/var": n_bins, "program": kind, "bins": onehot.shape[1], "rows_kept": instance.X.shape[0],
                     "vars": program.n_variables, "build_s": build, "solve_s": fit.times.get("total", np.nan),
                     "status": fit.status.value, "objective": fit.objective, "bound": fit.bound, "gap": fit.gap,
                     "nodes": fit.result.nodes if fit.result is not None else 0,
                     "start_obj": start.objective if start is not None else np.nan,
                     "start": start_state(fit, start), "accuracy": accuracy,
                     "used_vars": used_vars, "ranges": ranges})
        if kind.startswith("exact"):
            print(f"  {n_bins:>2} bins/var, {kind:<16}: {fit.message}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per ILP solve")
    parser.add_argument("--lam", type=float, default=1.0, help="lambda of eq. (1)")
    parser.add_argument("--max-points", type=int, default=3, help="points per bin in 0..max")
    args = parser.parse_args()
    if not DATA.is_file():
        raise SystemExit(f"spambase not found at {DATA}")
    with threadpool_limits(1):
        print(environment(), f"| HiGHS threads: 1; lambda={args.lam}, "
              f"points 0..{args.max_points}, ILP time limit {args.time_limit:g}s; pipeline messages:")
        rows = [r for n_bins in (5, 10) for r in run(n_bins, args.lam, args.max_points, args.time_limit)]
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 250)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("\nratios against the relaxed LP (same run):")
    for n_bins, grp in table.groupby("bins/var"):
        r = grp.iloc[0]
        for _, e in grp.iloc[1:].iterrows():
            print(f"  {n_bins:>2} bins/var, {e.program:<16}: solve x{e.solve_s / r.solve_s:.1f}, "
                  f"objective x{e.objective / r.objective:.3f}, accuracy {e.accuracy:.4f} vs {r.accuracy:.4f}, "
                  f"ranges {e.ranges} vs {r.ranges}")


if __name__ == "__main__":
    main()
