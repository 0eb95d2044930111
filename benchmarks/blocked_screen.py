"""The blocked saturated-loss screen against the support enumeration's bounder, and SLIM's least Bayes error over supports (issue 41).

On the first training fold (``StratifiedKFold(5, shuffle=True, random_state=0)``) of each ``--sets``
table of ``benchmarks/certify_all.py`` (``max_size`` 5, points -5..5):

1. RiskSLIM (C0 1e-6, multiplier 1): the heuristic's incumbent, then the seconds per support of
   the support enumeration's bounder (:meth:`solvers.exact.supports.SparseLogistic.bounder`: bit
   sets of all the rows, saturated-loss screen then box fits) on :data:`SAMPLES` chunks of 4096
   supports spread over the listing, and of the blocked screen
   (:func:`solvers.exact.blocked_entropy.screen_all`, rows blocked by the first two columns) on
   :data:`SAMPLES` pairs of first columns spread over the pairs, both at the incumbent's prune level,
   in the same run; their ratio; and the projected seconds of each for all ``C(d, 5)`` supports;
2. with ``--limit``: the whole exact fit (route) of that fold, its status, bound, gap and steps;
3. with ``--auto``: RiskSLIM with ``multiplier="auto"`` (:func:`solvers.multipliers.solve_multipliers`,
   :data:`solvers.multipliers.MULTIPLIERS`) in one budget of ``--auto`` seconds on that fold: per
   multiplier its status, objective, bound and seconds, and its ``blocked`` step's sentence (the first
   multiplier screens; the later ones start from its survivors, :mod:`solvers.exact.screen`), and the
   certificate over all of them;
4. SLIM (C0 1e-4): the heuristic's objective, the floor step's bound (Bayes error of all the
   columns) and the least Bayes error of any 5 columns (:func:`solvers.exact.support_bayes_floor.
   least_bayes_error`, with its seconds), and the gap each leaves.

    OPENBLAS_NUM_THREADS=1 python benchmarks/blocked_screen.py --sets wide120s0,wide240s0 --limit 60
    OPENBLAS_NUM_THREADS=1 python benchmarks/blocked_screen.py --sets wide120s1 --auto 600 --no-slim
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from certify_all import first_fold  # noqa: E402
from formulations.riskslim import RiskSLIM  # noqa: E402
from formulations.slim import SLIM  # noqa: E402
from solvers.catalog import CATALOG  # noqa: E402
from solvers.exact.blocked_entropy import CALL_SUPPORTS, screen_all, xlogx_table  # noqa: E402
from solvers.exact.blocked_supports import _label  # noqa: E402
from solvers.exact.box_logistic import label_bits  # noqa: E402
from solvers.exact.floor import bayes_floor  # noqa: E402
from solvers.exact.support_bayes_floor import least_bayes_error  # noqa: E402
from solvers.exact.sparse_logistic import SparseLogistic  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.multipliers import MULTIPLIERS, certificate, solve_multipliers  # noqa: E402
from solvers.pipeline import solve_exact  # noqa: E402
from solvers.result import prune_level  # noqa: E402
from timing import compile_kernels, environment, load  # noqa: E402

#: sampled chunks (old) and pairs (new)
SAMPLES = 40


def rates(inst, incumbent: float) -> tuple[float, float]:
    """Seconds per support of the enumeration's bounder and of the blocked screen (module docstring)."""
    problem = SparseLogistic.from_instance(inst)
    level = prune_level(incumbent, 1e-4)
    bound, lister = problem.bounder(), problem.listers()[0]
    bound(lister.next(16), level)
    took = listed = 0
    for i in range(SAMPLES):
        chunk = lister.at(int((i + 0.5) * lister.total / SAMPLES)).next(4096)
        t = time.perf_counter()
        bound(chunk, level)
        took, listed = took + time.perf_counter() - t, listed + chunk.shape[0]
    old = took / listed
    data, free, size = problem.data, problem.free, problem.max_size
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(data.X, data.y > 0, data.weights)
    bits_pos, n_pos = _label(bits_pos, valid_pos, free)
    bits_neg, n_neg = _label(bits_neg, valid_neg, free)
    xlogx = xlogx_table(n_pos, n_neg, unit_pos, unit_neg)
    cutoff = (level - problem.offset) / problem.loss_cost
    d = free.size
    pairs = [(a, b) for b in range(1, d - size + 2) for a in range(b)]
    out = np.empty((1 << 14, size), np.int64)
    columns = np.arange(d, dtype=np.int64)
    took = listed = 0
    for i in range(SAMPLES):
        a, b = pairs[int((i + 0.5) * len(pairs) / SAMPLES)]
        t = time.perf_counter()
        for count, *_ in screen_all(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, xlogx, columns, a, b, size,
                                    cutoff, out, False, CALL_SUPPORTS):
            listed += count
        took += time.perf_counter() - t
    return old, took / listed


def auto(X: np.ndarray, y: np.ndarray, limit: float) -> None:
    """RiskSLIM ``multiplier="auto"`` in one budget of ``limit`` seconds (module docstring, part 3)."""
    def instance_for(m: float):
        return RiskSLIM(coef_bound=5, c0=1e-6, max_size=5, multiplier=m).instance(X, y)

    t = time.perf_counter()
    fits = solve_multipliers(instance_for(MULTIPLIERS[0]), instance_for, MULTIPLIERS,
                             Limits(time_limit=limit, mip_rel_gap=1e-4).started())
    status, gap, bound = certificate(fits, 1e-4)
    print(f"  RiskSLIM auto, {limit:g} s: {status.value}, gap {gap:.4g}, bound {bound:.7f}, "
          f"{time.perf_counter() - t:.1f} s | load {load()}")
    for f in fits:
        row = f.row()
        blocked = "" if f.fit is None else next((str(r) for r in f.fit.steps if str(r).startswith("blocked")), "")
        print(f"    m={f.multiplier:g}: {row['status']}, objective {row['objective']:.7f}, bound {row['bound']:.7f}, "
              f"{row['seconds']:.1f} s{' | ' + blocked if blocked else ''}{' | ' + f.skipped if f.skipped else ''}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="wide120s0", help="comma-separated table names of benchmarks/certify_all.py")
    ap.add_argument("--limit", type=float, default=0.0, help="seconds of the whole RiskSLIM fit (0: not run)")
    ap.add_argument("--auto", type=float, default=0.0, help="seconds of the whole multiplier='auto' fit (0: not run)")
    ap.add_argument("--no-slim", action="store_true", help="skip SLIM's part")
    args = ap.parse_args()
    print(environment(), f"| OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; "
          "max_size 5, points -5..5, first fold of 5, one thread; the machine is shared (load above)")
    print(compile_kernels(), flush=True)
    for name in [s for s in args.sets.split(",") if s]:
        X, y, said = first_fold(name)
        print(said, flush=True)
        inst = RiskSLIM(coef_bound=5, c0=1e-6, max_size=5).instance(X, y)
        t = time.perf_counter()
        start = CATALOG["riskslim"].heuristic_function(inst, Limits(time_limit=30).started(), 0)
        incumbent = inst.objective(start)
        heuristic = time.perf_counter() - t
        old, new = rates(inst, incumbent)
        total = math.comb(X.shape[1], 5)
        print(f"  RiskSLIM: incumbent {incumbent:.7f} ({heuristic:.1f} s); per support: enumeration's bounder "
              f"{old * 1e9:.0f} ns, blocked screen {new * 1e9:.0f} ns, ratio {old / new:.2f}; all {total} supports: "
              f"{old * total:.0f} s against {new * total:.0f} s | load {load()}", flush=True)
        if args.limit > 0:
            fit = solve_exact(inst, limits=Limits(time_limit=args.limit, mip_rel_gap=1e-4))
            print(f"  RiskSLIM fit, {args.limit:g} s: {fit.status.value}, objective {fit.objective:.7f}, bound "
                  f"{fit.bound:.7f}, gap {fit.gap:.4g}, {fit.times['total']:.1f} s | load {load()}")
            for record in fit.steps:
                print(f"    {record}", flush=True)
        if args.auto > 0:
            auto(X, y, args.auto)
        if args.no_slim:
            continue
        slim = SLIM(c0=1e-4, coef_bound=5, max_size=5).instance(X, y)
        t = time.perf_counter()
        model = CATALOG["slim"].heuristic_function(slim, Limits(time_limit=30).started(), 0)
        objective = slim.objective(model)
        heuristic = time.perf_counter() - t
        floor = bayes_floor(slim)
        t = time.perf_counter()
        least, message = least_bayes_error(slim.X, slim.y, slim.weights, np.arange(slim.X.shape[1]), 5,
                                           Limits.untimed(), ceiling=objective)
        seconds = time.perf_counter() - t
        print(f"  SLIM: heuristic objective {objective:.6f} ({heuristic:.1f} s); floor step {floor:.6f} (gap "
              f"{(objective - floor) / objective:.3f}); least Bayes error of 5 columns {least:.6f} (gap "
              f"{(objective - least) / objective:.3f}, {seconds:.1f} s) | load {load()}", flush=True)


if __name__ == "__main__":
    main()
