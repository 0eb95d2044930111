"""Benchmark: SLIM program build time, our matrix builder + highspy passModel vs idiomatic pyomo.

Run: ``python benchmarks/build.py [--skip-pyomo-large]``. Prints one table; ratios are against
the idiomatic pyomo model (indexed constraint rules) measured in the same run. The build of
(b) stops at the finished ConcreteModel (handing it to HiGHS costs several seconds more,
../shared/API-NOTES.md), so the ratio understates our advantage.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from formulations.slim import SLIM
from solvers.highs import to_highs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def ours(X, y, merge):
    t0 = time.perf_counter()
    inst = SLIM(c0=1e-3, merge_duplicates=merge).instance(X, y)
    h = to_highs(inst.exact())
    return time.perf_counter() - t0, inst.n_rows_kept, h


def pyomo_idiomatic(X, y, U=10, c0=1e-3):
    """The same MILP, written the way a pyomo user would: indexed rules, one row per sample."""
    import pyomo.environ as pyo

    t0 = time.perf_counter()
    n, d = X.shape
    inst = SLIM(c0=c0, merge_duplicates=False).instance(X, y)
    Xl, yl, M, w = inst.X.tolist(), inst.y.tolist(), inst.big_m.tolist(), inst.weights.tolist()
    lo, hi = inst.intercept_bounds
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, d - 1)
    m.lam = pyo.Var(m.J, bounds=(-U, U), within=pyo.Integers)
    m.b0 = pyo.Var(bounds=(lo, hi), within=pyo.Integers)
    m.z = pyo.Var(m.I, within=pyo.Binary)
    m.a = pyo.Var(m.J, within=pyo.Binary)
    m.t = pyo.Var(m.J, bounds=(0, U))
    m.obj = pyo.Objective(expr=sum(w[i] * m.z[i] for i in m.I) + c0 * sum(m.a[j] for j in m.J)
                          + inst.epsilon * sum(m.t[j] for j in m.J))
    m.loss = pyo.Constraint(m.I, rule=lambda m, i: M[i] * m.z[i] + yl[i] * (
        sum(Xl[i][j] * m.lam[j] for j in m.J) + m.b0) >= 1.0)
    m.l0u = pyo.Constraint(m.J, rule=lambda m, j: m.lam[j] <= U * m.a[j])
    m.l0l = pyo.Constraint(m.J, rule=lambda m, j: m.lam[j] >= -U * m.a[j])
    m.l1p = pyo.Constraint(m.J, rule=lambda m, j: m.t[j] >= m.lam[j])
    m.l1n = pyo.Constraint(m.J, rule=lambda m, j: m.t[j] >= -m.lam[j])
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-pyomo-large", action="store_true", help="skip pyomo on the 1e5 x 100 instance")
    args = parser.parse_args()
    frame = pd.read_csv(DATA / "adult_data.csv")
    Xa, ya = frame.iloc[:, 1:].to_numpy(float), np.where(frame.iloc[:, 0] > 0, 1.0, -1.0)
    rng = np.random.default_rng(0)
    Xs = rng.integers(0, 2, (100_000, 100)).astype(float)
    ys = np.where(Xs @ rng.normal(size=100) + rng.normal(0, 2, 100_000) > 0, 1.0, -1.0)
    rows = []
    with threadpool_limits(1):
        for name, X, y in (("adult 32561x36", Xa, ya), ("synthetic 1e5x100", Xs, ys)):
            t_merged, kept, _ = ours(X, y, True)
            t_full, _, _ = ours(X, y, False)
            t_pyomo = float("nan") if (args.skip_pyomo_large and X.shape[0] > 50_000) else pyomo_idiomatic(X, y)
            rows.append({"instance": name, "rows kept (merged)": kept, "ours merged [s]": t_merged,
                         "ours all rows [s]": t_full, "pyomo rules [s]": t_pyomo,
                         "pyomo / ours all rows": t_pyomo / t_full, "pyomo / ours merged": t_pyomo / t_merged})
    print("BLAS threads: 1 (threadpoolctl); build = SLIM instance + Program + highspy passModel")
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
