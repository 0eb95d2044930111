"""Benchmark: SLIM program build time, our matrix builder + highspy passModel vs idiomatic pyomo, on EQUAL programs.

Run: ``python benchmarks/build.py [--skip-pyomo-large] [--rounds 5]``. Both sides build the same
MILP from the same :class:`formulations.slim.SLIMInstance` data: the rows the instance keeps
(merged duplicates with summed weights, or every row with ``merge_duplicates=False``), per-row
big-M, the L0 and L1 rows, and the instance's conflict rows ``z_p + z_q >= 1``
(``SLIMInstance.conflicting_rows``, at most 20000): the pyomo model adds one row per pair, so
neither side has rows the other lacks. Every timed call starts from the raw ``(X, y)``: ours =
``SLIM(...).instance(X, y)`` + ``exact()`` + ``to_highs`` (the model HiGHS can run); pyomo = the same
instance, its conflict pairs, and the ConcreteModel built with indexed rules (the pyomo time
stops at the finished model: handing it to HiGHS costs several seconds more, so the ratio
understates our advantage). Equality is checked, untimed, on every instance: rows, columns and
non-zeros of both models, and on merged adult the LP relaxation value of both by HiGHS (pyomo's
model written to an LP file and read back; the all-rows LP takes minutes: sizes only there).
Every case is warmed up once, then timed in interleaved rounds (:mod:`benchmarks.timing`):
medians with min-max; ratios in the same run.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from formulations.slim import SLIM  # noqa: E402
from solvers.backends.highs import new_highs, to_highs  # noqa: E402
from timing import environment, interleaved  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
C0 = 1e-3


def ours(X, y, merge):
    """Instance + exact Program (conflict rows included) + highspy passModel."""
    inst = SLIM(c0=C0, merge_duplicates=merge).instance(X, y)
    return to_highs(inst.exact())


def pyomo_idiomatic(X, y, merge, U=10):
    """The same MILP written the way a pyomo user would: indexed rules, one row per kept sample,
    one per conflict pair of the instance."""
    import pyomo.environ as pyo

    inst = SLIM(c0=C0, merge_duplicates=merge).instance(X, y)
    pos, neg = inst.conflicting_rows()
    n, d = inst.X.shape
    Xl, yl, M, w = inst.X.tolist(), inst.y.tolist(), inst.big_m.tolist(), inst.weights.tolist()
    lo, hi = inst.intercept_bounds
    m = pyo.ConcreteModel()
    m.I, m.J, m.K = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, d - 1), pyo.RangeSet(0, pos.size - 1)
    m.lam = pyo.Var(m.J, bounds=(-U, U), within=pyo.Integers)
    m.b0 = pyo.Var(bounds=(lo, hi), within=pyo.Integers if inst.integer_intercept else pyo.Reals)
    m.z = pyo.Var(m.I, within=pyo.Binary)
    m.a = pyo.Var(m.J, within=pyo.Binary)
    m.t = pyo.Var(m.J, bounds=(0, U))
    m.obj = pyo.Objective(expr=sum(w[i] * m.z[i] for i in m.I) + C0 * sum(m.a[j] for j in m.J)
                          + inst.epsilon * sum(m.t[j] for j in m.J))
    m.loss = pyo.Constraint(m.I, rule=lambda m, i: M[i] * m.z[i] + yl[i] * (
        sum(Xl[i][j] * m.lam[j] for j in m.J) + m.b0) >= 1.0)
    m.l0u = pyo.Constraint(m.J, rule=lambda m, j: m.lam[j] <= U * m.a[j])
    m.l0l = pyo.Constraint(m.J, rule=lambda m, j: m.lam[j] >= -U * m.a[j])
    m.l1p = pyo.Constraint(m.J, rule=lambda m, j: m.t[j] >= m.lam[j])
    m.l1n = pyo.Constraint(m.J, rule=lambda m, j: m.t[j] >= -m.lam[j])
    P, Q = pos.tolist(), neg.tolist()
    m.conflicts = pyo.Constraint(m.K, rule=lambda m, k: m.z[P[k]] + m.z[Q[k]] >= 1)
    return m


def _size_and_lp(h, lp_check: bool) -> tuple[int, int, int, float]:
    """(rows, columns, non-zeros, LP relaxation value or nan) of a loaded Highs model."""
    lp = h.getLp()
    value = float("nan")
    if lp_check:
        h.setOptionValue("solve_relaxation", True)
        h.setOptionValue("output_flag", False)
        h.run()
        value = h.getInfo().objective_function_value
    return lp.num_row_, lp.num_col_, len(lp.a_matrix_.value_), value


def equal_programs(X, y, merge, lp_check: bool) -> str:
    """Untimed: both models' sizes and LP values, side by side."""
    ours_h = ours(X, y, merge)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "pyomo.lp")
        pyomo_idiomatic(X, y, merge).write(path, io_options={"symbolic_solver_labels": False})
        theirs = new_highs()
        theirs.setOptionValue("output_flag", False)
        theirs.readModel(path)
        a, b = _size_and_lp(ours_h, lp_check), _size_and_lp(theirs, lp_check)
    same = a[:3] == b[:3] and (not lp_check or abs(a[3] - b[3]) <= 1e-9 * max(1.0, abs(a[3])))
    return (f"rows/cols/nnz ours {a[0]}/{a[1]}/{a[2]}, pyomo {b[0]}/{b[1]}/{b[2]}; LP bound ours {a[3]:.6g}, "
            f"pyomo {b[3]:.6g}: {'equal' if same else 'DIFFERENT'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-pyomo-large", action="store_true", help="skip pyomo on the 1e5 x 100 instance")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    frame = pd.read_csv(DATA / "adult_data.csv")
    Xa, ya = frame.iloc[:, 1:].to_numpy(float), np.where(frame.iloc[:, 0] > 0, 1.0, -1.0)
    rng = np.random.default_rng(0)
    Xs = rng.integers(0, 2, (100_000, 100)).astype(float)
    ys = np.where(Xs @ rng.normal(size=100) + rng.normal(0, 2, 100_000) > 0, 1.0, -1.0)
    rows, checks = [], []
    with threadpool_limits(1):
        print(environment(), f"| medians of {args.rounds} interleaved rounds after one warm-up call each")
        # the synthetic rows are all distinct: merged and all rows are the same program there
        for name, X, y, merges in (("adult 32561x36", Xa, ya, (True, False)), ("synthetic 1e5x100", Xs, ys, (True,))):
            for merge in merges:
                label = f"{name}, {'merged rows' if merge else 'all rows'}"
                cases = {"ours": lambda: ours(X, y, merge)}
                if not (args.skip_pyomo_large and X.shape[0] > 50_000):
                    cases["pyomo"] = lambda: pyomo_idiomatic(X, y, merge)
                    checks.append(f"{label}: " + equal_programs(X, y, merge, lp_check=merge and X.shape[0] <= 50_000))
                t = interleaved(cases, args.rounds)
                inst = SLIM(c0=C0, merge_duplicates=merge).instance(X, y)
                pyomo = t["pyomo"].median if "pyomo" in t else float("nan")
                rows.append({"instance": label, "sample rows": inst.n_rows_kept,
                             "conflict rows": int(inst.conflicting_rows()[0].size),
                             "ours [s]": t["ours"].median, "ours min-max": t["ours"].spread(),
                             "pyomo [s]": pyomo, "pyomo min-max": t["pyomo"].spread() if "pyomo" in t else "-",
                             "pyomo / ours": pyomo / t["ours"].median})
    print("build from raw (X, y): ours = SLIM instance + Program + highspy passModel | pyomo = the same instance "
          "and conflict pairs + finished ConcreteModel, no hand-off")
    print("same program on both sides (untimed check):")
    for line in checks:
        print("  " + line)
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
