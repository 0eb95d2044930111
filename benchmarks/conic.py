"""Benchmark: conic backends on logistic + L1 and logistic + EYE (n=5000, d=50).

Run: ``python benchmarks/conic.py [--n 5000] [--d 50] [--repeats 1]``. The same
:class:`~formulations.program.Program` (2n exponential cones, one SOC for EYE) is solved by

* ``ecos``        -- ``solvers.ecos.solve_ecos``: ``ecos.solve`` called directly (the reference);
* ``clarabel``    -- Clarabel through cvxpy (``solvers.cvxpy.solve_clarabel``);
* ``cvxpy-ecos``  -- ECOS through cvxpy (``to_cvxpy`` + cvxpy's own canonicalisation);
* ``fista``       -- FISTA with the penalty's prox (``solvers.proximal``, tol 1e-9), no program.

Times are wall-clock seconds (best of ``--repeats``), BLAS capped to one thread; ratios are
against ``ecos`` measured in the same run; ``rel. diff`` is the objective difference to ECOS.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from formulations.losses import Logistic  # noqa: E402
from formulations.base import Model  # noqa: E402
from formulations.penalized import PenalizedProgram  # noqa: E402
from formulations.penalties import EYE, L1  # noqa: E402
from solvers.cvxpy import solve_clarabel, solve_cvxpy  # noqa: E402
from solvers.ecos import solve_ecos  # noqa: E402
from solvers.proximal import fista  # noqa: E402


def make_data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    theta = np.zeros(d)
    theta[: d // 5] = rng.normal(size=d // 5)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ theta))), 1.0, -1.0)
    r = np.zeros(d)
    r[: d // 10] = 1.0
    r[d // 5: d // 5 + d // 10] = 1.0  # half the known factors are irrelevant
    return X, y, r


def warm_up() -> None:
    """Solve a tiny problem with every backend first: imports and cvxpy's first-call costs stay out."""
    X, y, r = make_data(50, 10, seed=1)
    program = PenalizedProgram(EYE(r, 0.01)).instance(X, y).relaxed()
    solve_ecos(program), solve_clarabel(program), solve_cvxpy(program, solver="ECOS")
    fista(Logistic(X, y), EYE(r, 0.01), tol=1e-6)


def run(n: int, d: int, repeats: int) -> pd.DataFrame:
    warm_up()
    X, y, r = make_data(n, d)
    lam = 0.01
    rows = []
    for label, penalty in (("logistic + L1", L1(lam)), ("logistic + EYE", EYE(r, lam))):
        t0 = time.perf_counter()
        instance = PenalizedProgram(penalty).instance(X, y)
        program = instance.relaxed()
        build = time.perf_counter() - t0
        backends = {
            "ecos": lambda: solve_ecos(program),
            "clarabel": lambda: solve_clarabel(program),
            "cvxpy-ecos": lambda: solve_cvxpy(program, solver="ECOS"),
            "fista": lambda: fista(Logistic(X, y), penalty, tol=1e-9, max_iter=200_000),
        }
        reference = None
        for name, call in backends.items():
            best, result = np.inf, None
            for _ in range(repeats):
                t1 = time.perf_counter()
                result = call()
                best = min(best, time.perf_counter() - t1)
            if name == "fista":
                objective = instance.objective(Model(result.x, result.raw["intercept"]))
                total = best
            else:
                objective = result.objective
                total = build + best
            if reference is None:
                reference = (objective, total)
            rows.append({"problem": label, "backend": name, "status": result.status.value,
                         "build s": build if name != "fista" else 0.0, "solve s": best, "total s": total,
                         "objective": objective,
                         "rel. diff": abs(objective - reference[0]) / abs(reference[0]),
                         "time / ecos": total / reference[1]})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with threadpool_limits(1):
        print(f"BLAS threads: 1 (threadpoolctl.threadpool_limits(1)); n={args.n}, d={args.d}, "
              f"repeats={args.repeats}, lam=0.01")
        table = run(args.n, args.d, args.repeats)
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
