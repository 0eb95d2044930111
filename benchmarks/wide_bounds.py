"""Why wide tables stay unproven: RiskSLIM's bounds on a wide look-alike, and what screening would rule out (issue 41).

On one table of ``benchmarks/certify_all.py`` (``--set``, default ``wide120s0``; ``max_size`` 5, points
-5..5, C0 1e-6, multiplier 1) it prints

1. the floors (:mod:`solvers.exact.floor`): the box floor (``instance.loss_floor()``, the tangent at
   the loss minimiser over the whole box) and the hull floor (:func:`~solvers.exact.floor.hull_floor`
   run to convergence), with their seconds;
2. safe screening with integrality: for each feature ``j`` a certified lower bound on the loss of
   every model that uses it (``|lambda_j| >= 1``: the box relaxation with ``lambda_j >= 1``, and with
   ``lambda_j <= -1``, each minimised by L-BFGS-B from the full fit and certified by its Frank-Wolfe
   bound; the lesser of the two), against the incumbent of a heuristic run (a feature whose bound
   reaches the incumbent could be dropped with a proof); how many would be dropped, and the bounds'
   quantiles;
3. the exact fit's incumbent and bound over time (``--limit`` seconds, the route with the progress
   reporter), and its steps.

    OPENBLAS_NUM_THREADS=1 python benchmarks/wide_bounds.py --set wide120s0 --limit 600
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from certify_all import dataset  # noqa: E402
from formulations.riskslim import RiskSLIM  # noqa: E402
from solvers import progress  # noqa: E402
from solvers.exact.floor import SparseBox, hull_floor  # noqa: E402
from solvers.heuristics.riskslim import heuristic  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.pipeline import solve_exact  # noqa: E402
from timing import compile_kernels, environment, load  # noqa: E402


def certified(data, theta: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> float:
    """Frank-Wolfe bound of the loss over the box ``[lb, ub]`` (points + intercept) at ``theta``."""
    d = theta.size - 1
    value, g, g0 = data.gradient(theta[:d], theta[d])
    grad = np.append(g, g0)
    return float(value + np.minimum(grad * (lb - theta), grad * (ub - theta)).sum())


def screening(inst, incumbent: float) -> tuple[np.ndarray, float]:
    """Per feature, the certified bound on the loss of every model using it (module docstring)."""
    data, cs = inst.data, inst.coefficients
    d = cs.lb.size
    lo, hi = inst.intercept_bounds
    start = np.append(*inst.continuous_fit())

    def f(theta):
        value, g, g0 = data.gradient(theta[:d], theta[d])
        return value, np.append(g, g0)

    t = time.perf_counter()
    bounds = np.empty(d)
    for j in range(d):
        best = np.inf
        for side in (1.0, -1.0):
            lb, ub = np.append(cs.lb, lo).astype(float), np.append(cs.ub, hi).astype(float)
            if side > 0:
                lb[j] = max(lb[j], 1.0)
            else:
                ub[j] = min(ub[j], -1.0)
            if lb[j] > ub[j]:
                continue
            found = minimize(f, np.clip(start, lb, ub), jac=True, method="L-BFGS-B", bounds=list(zip(lb, ub)),
                             options={"maxiter": 200})
            best = min(best, certified(data, found.x, lb, ub))
            if best < incumbent:
                break
        bounds[j] = best
    return bounds, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="wide120s0", help="a table name of benchmarks/certify_all.py")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds of the exact fit (part 3)")
    ap.add_argument("--heuristic-limit", type=float, default=30.0, help="seconds of the heuristic (part 2)")
    args = ap.parse_args()
    print(environment(), f"| OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; "
          "max_size 5, points -5..5, C0 1e-6, multiplier 1, one thread; the machine is shared (load above)")
    print(compile_kernels(), flush=True)
    X, y, about = dataset(args.set)
    inst = RiskSLIM(coef_bound=5, c0=1e-6, max_size=5).instance(X, y)
    print(f"{args.set}: {X.shape[0]} x {X.shape[1]}, {about}", flush=True)

    t = time.perf_counter()
    box_floor = inst.loss_floor()
    t_box = time.perf_counter() - t
    t = time.perf_counter()
    hull, steps, _ = hull_floor(inst.data, SparseBox.from_instance(inst), inst.continuous_fit(), Limits.untimed())
    t_hull = time.perf_counter() - t
    print(f"1. box floor {box_floor:.7f} ({t_box:.1f} s); hull floor {hull:.7f} ({steps} gradient steps, "
          f"{t_hull:.1f} s) | load {load()}", flush=True)

    model = heuristic(inst, Limits(time_limit=args.heuristic_limit).started(), 0)
    incumbent = inst.loss(model)
    bounds, seconds = screening(inst, incumbent)
    q = np.quantile(bounds, [0, 0.25, 0.5, 0.75, 1])
    print(f"2. heuristic incumbent loss {incumbent:.7f} ({args.heuristic_limit:g} s); features every model using "
          f"which has loss >= the incumbent (screened out): {int((bounds >= incumbent).sum())} of {bounds.size}; "
          f"their bounds' quantiles 0/25/50/75/100 % {' '.join(f'{v:.5f}' for v in q)} ({seconds:.1f} s) "
          f"| load {load()}", flush=True)

    seen = []
    with progress.reporting(lambda elapsed, inc, bound, gap: seen.append((elapsed, inc, bound))):
        fit = solve_exact(inst, limits=Limits(time_limit=args.limit, mip_rel_gap=1e-4))
    print(f"3. exact fit, {args.limit:g} s: {fit.status.value}, objective {fit.objective:.7f}, bound {fit.bound:.7f}, "
          f"gap {fit.gap:.4f}, {fit.times['total']:.1f} s | load {load()}")
    for record in fit.steps:
        print(f"   {record}")
    marks = [m for m in (1, 2, 5, 10, 20, 30, 60, 120, 180, 300, 450, 600, 900, 1200) if m <= args.limit] + [args.limit]
    for mark in dict.fromkeys(marks):
        before = [s for s in seen if s[0] <= mark]
        if before:
            elapsed, inc, bound = before[-1]
            print(f"   by {mark:6.0f} s: incumbent {inc:.7f}, bound {bound:.7f}, gap {(inc - bound) / inc:.4f}")


if __name__ == "__main__":
    main()
