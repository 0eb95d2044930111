"""Benchmark: exact Facets (integer weights) vs its convex relaxation on real data sets.

Run: ``python benchmarks/facets.py [--time-limit 60] [--datasets breastcancer mammo]``.

For each data set of the shared data folder and each loss, one table row per method, all on the
same objective ``(1/n) sum_i loss_i + lam * Facets(coef / grid_unit)`` (Belahcene et al. 2020,
eqs. 3, 8-9), every method run by :func:`solvers.pipeline.run` on one
:class:`formulations.facets.Facets` instance:

* ``relaxed-ecos`` — the convex program on ECOS (the reference of the ``time x`` column);
* ``relaxed-lp`` (hinge) — the same LP on HiGHS; ``prox-fista`` / ``prox-ista`` (logistic) —
  the proximal path of the paper (section 5); ``prox-rounding`` — FISTA rounded to the grid;
* ``rounded`` — the relaxed model rounded to the nearest grid point (intercept kept);
* ``exact`` — integer ``coef / grid_unit``: HiGHS MILP (hinge) or tangent cutting planes with a
  certified gap (logistic), started from the rounded relaxation (the catalog heuristic).

Columns: true objective, proven lower bound and relative gap, wall seconds (medians of interleaved
rounds, :mod:`benchmarks.timing`; the time-limited exact solve runs once) and ratio to
``relaxed-ecos``, integrity (share of ``coef / grid_unit`` within 1e-6 of an integer), non-zeros
and training accuracy. BLAS is capped at one thread (printed).

The grid unit (and the box, in grid units) is chosen per data set for its feature scale
(:data:`GRIDS`), the same for every method: breastcancer's features take values 1..10, so its
hinge and logistic optima have coefficients of about 0.02-0.2 and a grid of 0.5 would round every
one of them to 0 (the empty model: the first version of this script compared against that);
its grid is 0.1 with a box of 10 units. mammo's features are binary (and one 1..4 density), so
coefficients are of order 1: grid 0.5, box 5 units. ``--grid-unit`` / ``--bound`` override both.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from formulations.facets import Facets  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.pipeline import Fit, run  # noqa: E402
from timing import Timing, environment, interleaved  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: per data set: (grid unit, box in grid units), matched to the scale of its features
GRIDS = {"breastcancer": (0.1, 10), "mammo": (0.5, 5)}


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_csv(DATA / f"{name}_data.csv")
    return df.iloc[:, 1:].to_numpy(float), np.where(df.iloc[:, 0].to_numpy() > 0, 1.0, -1.0)


def row(X: np.ndarray, y: np.ndarray, label: str, fit: Fit, grid_unit: float, seconds: Timing) -> dict:
    model = fit.model
    points = model.coef / grid_unit if model is not None else np.full(X.shape[1], np.nan)
    rounds = f" ({fit.result.iterations} rounds)" if fit.result is not None and "cutting" in fit.result.message else ""
    return {"method": label, "status": fit.status.value + rounds, "objective": fit.objective, "bound": fit.bound,
            "gap": fit.gap, "seconds": seconds.median, "min-max s": seconds.spread() if seconds.rounds > 1 else "1 run",
            "integrity": float(np.mean(np.abs(points - np.round(points)) <= 1e-6)),
            "nonzeros": int(np.sum(np.abs(points) > 1e-6)),
            "accuracy": float(np.mean(np.sign(model.scores(X)) == y)) if model is not None else np.nan}


def bench(name: str, loss: str, lam: float, grid_unit: float, bound: int, time_limit: float,
          rounds: int) -> pd.DataFrame:
    X, y = load(name)
    inst = Facets(loss, lam=lam, grid_unit=grid_unit, bound=bound).instance(X, y)
    limits = Limits(time_limit=time_limit, mip_rel_gap=1e-4)
    relaxed = run(inst, "relaxed", "ecos", limits=limits)
    cases = {"relaxed-ecos": lambda: run(inst, "relaxed", "ecos", limits=limits)}
    if loss == "hinge":
        cases["relaxed-lp"] = lambda: run(inst, "relaxed", "highs", limits=limits)
    else:
        for accelerated, label in ((True, "prox-fista"), (False, "prox-ista")):
            cases[label] = lambda accelerated=accelerated: run(
                inst, "relaxed", "prox", limits=limits,
                options={"accelerated": accelerated, "tol": 1e-8, "max_iter": 100000})
        cases["prox-rounding"] = lambda: run(inst, "prox_rounding", limits=limits, source=relaxed)
    cases["rounded"] = lambda: run(inst, "rounding", limits=limits, source=relaxed)
    timings = interleaved(cases, rounds)  # the program is built once per instance (cached) before the rounds
    exact = run(inst, "exact", limits=limits)  # time-limited: one run
    once = exact.times.get("total", np.nan)
    timings["exact"] = Timing(once, once, once, 1, exact)
    table = pd.DataFrame([row(X, y, label, t.value, grid_unit, t) for label, t in timings.items()])
    table.insert(0, "loss", loss)
    table.insert(0, "data", f"{name} {X.shape[0]}x{X.shape[1]} grid {grid_unit:g} box {bound}")
    table["time x"] = table["seconds"] / timings["relaxed-ecos"].median
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per exact solve")
    parser.add_argument("--datasets", nargs="+", default=["breastcancer", "mammo"])
    parser.add_argument("--lam", type=float, default=0.01)
    parser.add_argument("--grid-unit", type=float, default=None, help="default: per data set (GRIDS)")
    parser.add_argument("--bound", type=int, default=None, help="box in grid units; default: per data set")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with threadpool_limits(1):
        print(environment(), f"| lam={args.lam}, time limit {args.time_limit:g} s per exact solve (one run); "
              f"the other methods: medians of {args.rounds} interleaved rounds")
        tables = []
        for name in args.datasets:
            grid, box = GRIDS.get(name, (0.5, 5))
            grid, box = args.grid_unit or grid, args.bound or box
            tables += [bench(name, loss, args.lam, grid, box, args.time_limit, args.rounds)
                       for loss in ("hinge", "logistic")]
    table = pd.concat(tables, ignore_index=True)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.5g}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
