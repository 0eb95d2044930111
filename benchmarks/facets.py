"""Benchmark: exact Facets (integer weights) vs its convex relaxation on real data sets.

Run: ``python benchmarks/facets.py [--time-limit 60] [--datasets breastcancer mammo]``.

For each data set of ``../shared/data`` and each loss, one table row per method, all on the same
objective ``(1/n) sum_i loss_i + lam * Facets(coef / gamma)`` (eqs. 3, 8-9):

* ``relaxed-ecos`` — the convex program on ECOS (the reference of the ``time x`` column);
* ``relaxed-lp`` (hinge) — the same LP on HiGHS; ``prox-fista`` / ``prox-ista`` (logistic) —
  the proximal path of the paper (section 5);
* ``rounded`` — the relaxed model rounded to the grid ``gamma Z`` (intercept re-optimised for
  the logistic loss): what one gets without the exact solve;
* ``exact`` — integer ``coef / gamma``: HiGHS MILP (hinge) or outer approximation with a
  certified gap (logistic), warm-started from ``rounded``.

Columns: true objective, proven lower bound and relative gap (exact), seconds and ratio to
``relaxed-ecos`` measured in the same run, integrity (share of ``coef / gamma`` within 1e-6 of
an integer), non-zeros and training accuracy. BLAS is capped at one thread (printed).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info, threadpool_limits

from formulations.facets import FacetsProgram
from formulations.losses import Logistic
from solvers.ecos import solve_ecos
from solvers.highs import solve_highs
from solvers.outer_approximation import polish, solve_outer_approximation
from solvers.proximal import proximal_gradient

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_csv(DATA / f"{name}_data.csv")
    return df.iloc[:, 1:].to_numpy(float), np.where(df.iloc[:, 0].to_numpy() > 0, 1.0, -1.0)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def row(fp, X, y, method, coef, b, seconds, bound=np.nan, gap=np.nan, status=""):
    points = coef / fp.gamma
    return {"method": method, "status": status, "objective": fp.objective_value(X, y, coef, b),
            "bound": bound, "gap": gap, "seconds": seconds,
            "integrity": float(np.mean(np.abs(points - np.round(points)) <= 1e-6)),
            "nonzeros": int(np.sum(np.abs(points) > 1e-6)),
            "accuracy": float(np.mean(np.sign(X @ coef + b) == y))}


def bench(name: str, loss: str, lam: float, gamma: float, bound: int, time_limit: float) -> pd.DataFrame:
    X, y = load(name)
    fp = FacetsProgram(loss, lam=lam, gamma=gamma, bound=bound)
    rows = []
    relaxed = fp.relaxed(X, y)
    res, t_ref = timed(lambda: solve_ecos(relaxed))
    coef, b = fp.decode(res.x, relaxed)
    rows.append(row(fp, X, y, "relaxed-ecos", coef, b, t_ref, res.bound, res.gap, res.status.value))
    start = gamma * np.clip(np.round(coef / gamma), -bound, bound)
    if loss == "hinge":
        lp, t = timed(lambda: solve_highs(relaxed))
        rows.append(row(fp, X, y, "relaxed-lp", *fp.decode(lp.x, relaxed), t, lp.bound, lp.gap, lp.status.value))
        exact = fp.exact(X, y)
        rows.append(row(fp, X, y, "rounded", start, b, 0.0))
        warm = fp.lift(exact, X, y, start, float(np.clip(b, *fp.intercept_range(X, y))))
        ex, t = timed(lambda: solve_highs(exact, time_limit=time_limit, mip_rel_gap=1e-4, warm_start=warm))
        rows.append(row(fp, X, y, "exact-milp", *fp.decode(ex.x, exact), t, ex.bound, ex.gap, ex.status.value))
    else:
        data = Logistic(X, y)
        for accelerated, label in ((True, "prox-fista"), (False, "prox-ista")):
            pr, t = timed(lambda: proximal_gradient(data, fp.penalty(), accelerated=accelerated, tol=1e-8,
                                                    max_iter=100000))
            rows.append(row(fp, X, y, label, pr.x, pr.raw["intercept"], t, status=pr.status.value))
        oa = fp.outer_approximation(X, y)
        warm = polish(oa, fp.lift(oa.program, X, y, start, 0.0))
        rows.append(row(fp, X, y, "rounded", *fp.decode(warm, oa.program), 0.0))
        ex, t = timed(lambda: solve_outer_approximation(oa, tol=1e-4, time_limit=time_limit, warm_start=warm))
        rows.append(row(fp, X, y, "exact-oa", *fp.decode(ex.x, oa.program), t, ex.bound, ex.gap,
                        f"{ex.status.value} ({ex.iterations} rounds)"))
    table = pd.DataFrame(rows)
    table.insert(0, "loss", loss)
    table.insert(0, "data", f"{name} {X.shape[0]}x{X.shape[1]}")
    table["time x"] = table["seconds"] / t_ref
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per exact solve")
    parser.add_argument("--datasets", nargs="+", default=["breastcancer", "mammo"])
    parser.add_argument("--lam", type=float, default=0.01)
    parser.add_argument("--gamma", type=float, default=0.5)
    parser.add_argument("--bound", type=int, default=5)
    args = parser.parse_args()
    with threadpool_limits(1):
        blas = sorted({(i["internal_api"], i["num_threads"]) for i in threadpool_info()})
        print(f"BLAS threads (threadpoolctl): {blas}; lam={args.lam} gamma={args.gamma} bound={args.bound} "
              f"time limit {args.time_limit:g} s per exact solve")
        tables = [bench(name, loss, args.lam, args.gamma, args.bound, args.time_limit)
                  for name in args.datasets for loss in ("hinge", "logistic")]
    table = pd.concat(tables, ignore_index=True)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.5g}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
