"""Does the exact engine keep its limits? Wall time and peak memory of whole fits against ``time_limit``.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/engine_limits.py [--rows 10000,50000,200000] [--quick]``.

Each row is one ``SLIMClassifier`` / ``RiskScoreClassifier`` fit in a fresh process (so peak RSS is
the fit's), timed around ``fit`` only (imports excluded, data generation excluded), on generated data
with a planted 5-feature card: 50 binary features, logistic noise. It prints the limit, the wall
time, the overrun ratio, peak memory, status and gap, and the route's steps (ran / skipped and why).
Two more rows per estimator: the bundled default data (60 features) with ``max_size=None`` (the
fit that used to crash allocating the support kernel), and a first fit with an empty numba cache
(``NUMBA_CACHE_DIR`` pointed at a new folder) and ``time_limit=3``; the other fits load the kernels
that :func:`benchmarks.timing.compile_kernels` compiles first.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.timing import compile_kernels  # noqa: E402

CHILD = r"""
import json, resource, sys, time
import numpy as np
kind, rows, limit, data = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
from milpscore import SLIMClassifier
from milpscore.estimators import RiskScoreClassifier
if data == "default":
    from milpscore.data.datasets import load_default
    X, y = load_default()
    max_size = None
else:
    rng = np.random.default_rng(0)
    X = (rng.random((rows, 50)) < 0.3).astype(float)
    w = np.zeros(50); w[:5] = [3, -2, 2, 1, -1]
    y = (rng.random(rows) < 1 / (1 + np.exp(-(X @ w - 1)))).astype(int)
    max_size = 5
model = (SLIMClassifier(c0=1e-4, max_size=max_size, time_limit=limit) if kind == "slim"
         else RiskScoreClassifier(max_size=max_size, time_limit=limit))
t = time.perf_counter()
model.fit(X, y)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "status": model.status_, "gap": model.gap_,
                  "steps": [str(r) for r in model.fit_.steps]}))
"""


def run(kind: str, rows: int, limit: float, data: str, env: dict | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, kind, str(rows), str(limit), data], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=20 * limit + 600)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="10000,50000,200000")
    ap.add_argument("--limit", type=float, default=20.0)
    ap.add_argument("--quick", action="store_true", help="10,000 rows only, 5 s")
    args = ap.parse_args()
    rows = [10000] if args.quick else [int(r) for r in args.rows.split(",")]
    limit = 5.0 if args.quick else args.limit
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {os.cpu_count()} cores; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(compile_kernels())  # the fits load them from the cache (but the empty-cache rows)
    print(f"{'estimator':10} {'data':22} {'limit s':>7} {'wall s':>7} {'wall/limit':>10} {'peak MB':>8} "
          f"{'status':>9} {'gap':>8}  steps")
    cases = [(kind, n, limit, "generated", None) for n in rows for kind in ("slim", "riskslim")]
    cases += [(kind, 0, limit, "default", None) for kind in ("slim", "riskslim")]
    with tempfile.TemporaryDirectory() as empty:
        cases += [(kind, 0, 3.0, "default", {"NUMBA_CACHE_DIR": os.path.join(empty, kind)})
                  for kind in ("slim", "riskslim")]
        for kind, n, lim, data, env in cases:
            out = run(kind, n, lim, data, env)
            label = (f"{n} x 50 planted" if data == "generated" else
                     "default, max_size None" if env is None else "default, empty cache")
            if "error" in out:
                print(f"{kind:10} {label:22} {lim:7.1f} ERROR {out['error']}")
                continue
            print(f"{kind:10} {label:22} {lim:7.1f} {out['wall']:7.2f} {out['wall'] / lim:10.2f} {out['rss_mb']:8.0f} "
                  f"{out['status']:>9} {out['gap']:8.3g}  " + "; ".join(out["steps"]))


if __name__ == "__main__":
    main()
