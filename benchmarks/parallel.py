"""Bounding the supports on more than one core: whole RiskSLIM fits, serial vs ``n_jobs=2`` vs a dask cluster.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/parallel.py [--rows 5000] [--features 80] [--max-size 5]
[--kind riskslim|slim-box|slim-orthants]``.

``--kind slim-orthants``: the orthant search (:mod:`solvers.exact.monotone_supports`) on ``n_jobs=2``
threads against one thread: whole fits of ``certify_all.py``'s ``"SLIM"`` (C0 1e-4, points -5..5, at most
5 features, gap 1e-4) on the first training fold of few-valued integer look-alikes (``--sets``, default
``int502,int503,int602,int670``; ``--limit`` seconds, default 60), each fit in a fresh process, the order
alternating (``--rounds``, default 1). With a time limit the route decides from the projected screen whether the search starts,
so the threads may prove what one thread does not: status, gap and seconds are printed per fit; two
proven fits must agree on the objective (threads may return another model of it), else the script
exits non-zero.

``--kind slim-box``: whole ``SLIMClassifier(c0=0.005, coef_bound=3, max_size=10)`` fits on features
valued 0..3 (``--rows 1500 --features 10 --max-size 10`` by default for this kind), where the route's
box search (:mod:`solvers.exact.box_cover`) proves the optimum: its root box split into boxes
searched by the workers. (With supports of at most 8 features the orthant search,
:mod:`solvers.exact.monotone_supports`, proves such tables first and the box search never runs.)
The rest of this docstring is the default kind.

One generated instance (a planted 5-feature card, 0/1 features, logistic noise;
``RiskScoreClassifier(max_size=5, time_limit=None)``, so every fit bounds all ``C(d, 5)`` supports
and certifies). With 80 features bounding the 24 million supports dominates the fit (the
heuristic, serial, is a small part of it); with ``--features 40`` (658,008 supports) it takes about
as much CPU as starting two worker processes
(interpreter, imports, kernels from the numba cache), which then bounds the speed-up. Each fit runs in a fresh process, timed around
``fit`` only (imports and data generation excluded): ``n_jobs=1``; ``n_jobs=2`` (local loky
processes, their start-up included: they start during the heuristic); and ``n_jobs=-1`` inside
``joblib.parallel_backend("dask")`` with a ``LocalCluster(n_workers=2, processes=True,
threads_per_worker=1)`` started before the fit (its start-up printed apart; the workers' imports
and kernel loads at their first task are in the fit). Rounds are interleaved
(:func:`benchmarks.timing.interleaved`); the ratio is serial median / median. Every fit must return
the same model, objective, bound and status, else the script says so and exits non-zero. The
machine's load is printed before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import Measured, compile_kernels, environment, interleaved  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
mode, rows, features, max_size, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
from joblib import parallel_backend
from milpscore.estimators import RiskScoreClassifier, SLIMClassifier
rng = np.random.default_rng(0)
n_jobs = {"serial": 1, "loky": 2, "dask": -1}[mode]
if kind == "riskslim":
    X = (rng.random((rows, features)) < 0.3).astype(float)
    w = np.zeros(features); w[:5] = [3, -2, 2, 1, -1]
    y = (rng.random(rows) < 1 / (1 + np.exp(-(X @ w - 1)))).astype(int)
    model = RiskScoreClassifier(max_size=max_size, time_limit=None, n_jobs=n_jobs)
else:
    X = rng.integers(0, 4, (rows, features)).astype(float)
    y = (X[:, :4] @ np.array([1.0, -1.0, 0.5, 0.7]) + rng.normal(0, 1.5, rows) > 0.5).astype(int)
    model = SLIMClassifier(c0=0.005, coef_bound=3, max_size=max_size, time_limit=None, n_jobs=n_jobs)
cluster_seconds = 0.0
if mode == "dask":
    from dask.distributed import Client, LocalCluster
    t = time.perf_counter()
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    cluster_seconds = time.perf_counter() - t
    with parallel_backend("dask"):
        t = time.perf_counter()
        model.fit(X, y)
        wall = time.perf_counter() - t
    client.close()
    cluster.close()
else:
    t = time.perf_counter()
    model.fit(X, y)
    wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "cluster": cluster_seconds, "status": model.status_, "objective": model.fit_.objective,
                  "bound": model.fit_.bound, "coef": model.coef_.tolist(), "intercept": float(model.intercept_),
                  "heuristic": model.fit_.times.get("heuristic", float("nan")),
                  "steps": [str(r) for r in model.fit_.steps]}))
"""

MODES = {"serial": "n_jobs=1", "loky": "n_jobs=2 (loky)", "dask": "dask LocalCluster, 2 workers"}

ORTHANT_CHILD = r"""
import json, sys, time
name, limit, n_jobs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
from benchmarks.certify_all import ESTIMATORS, first_fold
X, y, _ = first_fold(name)
model = ESTIMATORS["SLIM"](limit, n_jobs)
t = time.perf_counter()
model.fit(X, y)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "status": model.status_, "objective": model.fit_.objective, "bound": model.fit_.bound,
                  "gap": model.fit_.gap, "steps": [str(r) for r in model.fit_.steps if r.ran]}))
"""
ORTHANT_MODES = {"serial": 1, "threads": 2}


def orthant_fit(name: str, limit: float, n_jobs: int) -> Measured:
    done = subprocess.run([sys.executable, "-c", ORTHANT_CHILD, name, str(limit), str(n_jobs)], capture_output=True,
                          text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, timeout=3600,
                          cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise RuntimeError(f"{name} n_jobs={n_jobs} fit failed: {done.stderr.strip()[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return Measured(out["wall"], out)


def orthant_main(sets: list[str], limit: float, rounds: int) -> None:
    """``--kind slim-orthants`` (module docstring)."""
    from benchmarks.certify_all import first_fold

    print(environment())
    print(compile_kernels())
    print(f"certify_all's SLIM (C0 1e-4, points -5..5, max_size 5, gap 1e-4, time_limit {limit:g} s) on each set's "
          f"first training fold, n_jobs=1 against n_jobs=2 (threads of the orthant search); every fit in a fresh "
          f"process, {rounds} round(s), the order alternating; status and values of the last round")
    print()
    print("| set | n x d | n_jobs | wall s (median) | status | gap | objective | bound | one thread / two |")
    print("|---|---|---|---|---|---|---|---|---|")
    same = True
    for name in sets:
        X, _, _ = first_fold(name)
        runs: dict[str, list[Measured]] = {mode: [] for mode in ORTHANT_MODES}
        for r in range(rounds):  # the order alternates between rounds and sets
            modes = list(ORTHANT_MODES)
            for mode in (modes if (r + sets.index(name)) % 2 == 0 else modes[::-1]):
                runs[mode].append(orthant_fit(name, limit, ORTHANT_MODES[mode]))
        wall = {mode: float(np.median([m.seconds for m in found])) for mode, found in runs.items()}
        for mode, jobs in ORTHANT_MODES.items():
            v = runs[mode][-1].value
            print(f"| {name} | {X.shape[0]}x{X.shape[1]} | {jobs} | {wall[mode]:.1f} | {v['status']} | {v['gap']:.3g} | "
                  f"{v['objective']:.9g} | {v['bound']:.9g} | {wall['serial'] / wall[mode]:.2f} |", flush=True)
        proven = [runs[m][-1].value for m in ORTHANT_MODES if runs[m][-1].value["status"] == "optimal"]
        if len(proven) == 2 and abs(proven[0]["objective"] - proven[1]["objective"]) > 1e-9:
            same = False
            print(f"{name}: the proven objectives differ")
    print()
    print(f"proven objectives agree: {'yes' if same else 'NO'}")
    print(environment())
    if not same:
        sys.exit(1)


def fit(mode: str, rows: int, features: int, max_size: int, kind: str) -> Measured:
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(rows), str(features), str(max_size), kind],
                          capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
                          timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} fit failed: {done.stderr.strip()[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return Measured(out["wall"], out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("riskslim", "slim-box", "slim-orthants"), default="riskslim")
    ap.add_argument("--sets", default="int502,int503,int602,int670", help="slim-orthants: certify_all's int<seed> sets")
    ap.add_argument("--limit", type=float, default=60.0, help="slim-orthants: seconds per fit")
    ap.add_argument("--rows", type=int, default=None, help="5000 (riskslim), 1500 (slim-box)")
    ap.add_argument("--features", type=int, default=None, help="80 (riskslim), 10 (slim-box)")
    ap.add_argument("--max-size", type=int, default=None, help="5 (riskslim), the features (slim-box)")
    ap.add_argument("--rounds", type=int, default=None, help="5 (1 for slim-orthants)")
    args = ap.parse_args()
    if args.kind == "slim-orthants":
        orthant_main([s for s in args.sets.split(",") if s], args.limit, args.rounds or 1)
        return
    args.rounds = args.rounds or 5
    box = args.kind == "slim-box"
    args.rows = args.rows or (1500 if box else 5000)
    args.features = args.features or (10 if box else 80)
    args.max_size = args.max_size or (args.features if box else 5)
    print(environment())
    print(compile_kernels())
    if box:
        print(f"SLIMClassifier(c0=0.005, coef_bound=3, max_size={args.max_size}, time_limit=None): {args.rows} rows x "
              f"{args.features} features valued 0..3, every fit in a fresh process; {args.rounds} interleaved rounds")
    else:
        print(f"RiskScoreClassifier(max_size={args.max_size}, time_limit=None): {args.rows} rows x {args.features} "
              f"binary features (planted 5-feature card), every fit in a fresh process; "
              f"{args.rounds} interleaved rounds")
    timings = interleaved({mode: (lambda mode=mode: fit(mode, args.rows, args.features, args.max_size, args.kind))
                           for mode in MODES}, rounds=args.rounds, warmup=False)
    serial = timings["serial"]
    print()
    print("| fit | wall s (median) | min-max | speed-up vs serial | heuristic s | status | objective | bound |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, label in MODES.items():
        t, v = timings[mode], timings[mode].value
        print(f"| {label} | {t.median:.2f} | {t.spread()} | {serial.median / t.median:.2f}x | {v['heuristic']:.2f} | "
              f"{v['status']} | {v['objective']:.9g} | {v['bound']:.9g} |")
    print()
    print(f"dask LocalCluster start-up (before the fit, not in its time): {timings['dask'].value['cluster']:.2f} s")
    for mode in MODES:
        print(f"{MODES[mode]} steps: " + "; ".join(timings[mode].value["steps"]))
    # the box search's boxes start from the incumbent known when they are sent: the same certified
    # objective, possibly another model of it (the support enumeration returns the serial one)
    keys = ("status", "objective") + (() if box else ("bound", "coef", "intercept"))

    def equal(key: str, a, b) -> bool:
        return abs(a - b) <= 1e-9 if box and key == "objective" else a == b

    same = all(equal(k, timings[m].value[k], serial.value[k]) for k in keys for m in MODES)
    print(f"same {', '.join(keys)} in every fit: {'yes' if same else 'NO'}")
    print(environment())
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
