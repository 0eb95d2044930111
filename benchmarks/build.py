"""Benchmark: SLIM program build time, our matrix builder + highspy passModel vs idiomatic pyomo.

Run: ``python benchmarks/build.py [--skip-pyomo-large] [--rounds 5]``. Every case is warmed up
once, then timed in interleaved rounds (:mod:`benchmarks.timing`): medians with min-max; ratios
against the idiomatic pyomo model (indexed constraint rules) measured in the same run. The pyomo
time stops at the finished ConcreteModel: handing it to HiGHS costs several seconds more, so the
ratio is conservative (it understates our advantage).
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

from formulations.slim import SLIM  # noqa: E402
from solvers.backends.highs import to_highs  # noqa: E402
from timing import environment, interleaved  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def ours(X, y, merge):
    """Instance (merged rows, big-M) + Program + highspy passModel: the model HiGHS can run."""
    inst = SLIM(c0=1e-3, merge_duplicates=merge).instance(X, y)
    to_highs(inst.exact())
    return inst.n_rows_kept


def pyomo_idiomatic(X, y, U=10, c0=1e-3):
    """The same MILP, written the way a pyomo user would: indexed rules, one row per sample."""
    import pyomo.environ as pyo

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
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-pyomo-large", action="store_true", help="skip pyomo on the 1e5 x 100 instance")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    frame = pd.read_csv(DATA / "adult_data.csv")
    Xa, ya = frame.iloc[:, 1:].to_numpy(float), np.where(frame.iloc[:, 0] > 0, 1.0, -1.0)
    rng = np.random.default_rng(0)
    Xs = rng.integers(0, 2, (100_000, 100)).astype(float)
    ys = np.where(Xs @ rng.normal(size=100) + rng.normal(0, 2, 100_000) > 0, 1.0, -1.0)
    parser_rounds = args.rounds
    rows = []
    with threadpool_limits(1):
        print(environment(), f"| medians of {parser_rounds} interleaved rounds after one warm-up call each")
        for name, X, y in (("adult 32561x36", Xa, ya), ("synthetic 1e5x100", Xs, ys)):
            cases = {"ours merged": lambda: ours(X, y, True), "ours all rows": lambda: ours(X, y, False)}
            if not (args.skip_pyomo_large and X.shape[0] > 50_000):
                cases["pyomo rules"] = lambda: pyomo_idiomatic(X, y)
            t = interleaved(cases, parser_rounds)
            pyomo = t["pyomo rules"].median if "pyomo rules" in t else float("nan")
            rows.append({"instance": name, "rows kept (merged)": t["ours merged"].value,
                         "ours merged [s]": t["ours merged"].median, "min-max": t["ours merged"].spread(),
                         "ours all rows [s]": t["ours all rows"].median, "min-max ": t["ours all rows"].spread(),
                         "pyomo rules [s]": pyomo, "min-max  ": t["pyomo rules"].spread() if "pyomo rules" in t else "-",
                         "pyomo / ours all rows": pyomo / t["ours all rows"].median,
                         "pyomo / ours merged": pyomo / t["ours merged"].median})
    print("build = SLIM instance + Program + highspy passModel (ours) | finished ConcreteModel, no hand-off (pyomo)")
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
