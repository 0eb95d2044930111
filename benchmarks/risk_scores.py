"""Certified logistic risk scores (RiskSLIM) on open-source solvers: a printed table, not a timed test.

For each data set (points -5..5, at most ``--max-size`` features, C0 1e-6): the full-data exact solve
by ``RiskScoreClassifier`` (heuristic start, then the RiskSLIM route of
``solvers.exact.riskslim_route``: support enumeration with convex bounds, then SCIP's lazy-cut tree
where that is skipped or does not prove the optimum; the "steps" column says which ran;
``--backend scip`` or ``highs`` bypasses the route): time to a certified relative gap <= 1e-4 or
the gap at the limit, objective, bound, size;
then the 5-fold test AUC (per-fold limit ``--fold-limit``) and, with ``--fasterrisk``, FasterRisk's
(Liu et al. 2022; run in its own environment, ``benchmarks/.peers-fasterrisk`` made by ``python
benchmarks/peers.py setup``, k = max_size, points -5..5). ``--multiplier auto`` solves each
multiplier of ``RiskScoreClassifier``'s grid and keeps the least loss.

    OPENBLAS_NUM_THREADS=1 python benchmarks/risk_scores.py --sets breastcancer,mammo,issue37 --fasterrisk

Data: ``../shared/data/<name>_data.csv`` (label first, 0/1); spambase is binarised at the feature
medians; ``issue37`` is scikit-learn's breast-cancer data binarised as ``x >= median`` (30
binary features; the instance of risk-slim issue #37).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from milpscore.estimators import RiskScoreClassifier  # noqa: E402
import peers  # noqa: E402
from timing import compile_kernels, environment  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
FASTERRISK_PY = peers.python(peers.FASTERRISK_ENV)
_FR_SCRIPT = """
import json, sys, time, numpy as np
from fasterrisk.fasterrisk import RiskScoreOptimizer, RiskScoreClassifier
from sklearn.metrics import roc_auc_score
d = np.load(sys.argv[1]); k = int(sys.argv[2]); out = []
for f in range(int(d['folds'])):
    tr, te = d[f'train{f}'], d[f'test{f}']
    t = time.perf_counter()
    opt = RiskScoreOptimizer(X=d['X'][tr], y=d['y'][tr], k=k, lb=-5, ub=5)
    opt.optimize()
    m, b0, betas = opt.get_models(model_index=0)
    clf = RiskScoreClassifier(m, b0, betas)
    out.append({'auc': roc_auc_score(d['y'][te], clf.predict_prob(d['X'][te])), 'time': time.perf_counter() - t})
print(json.dumps(out))
"""


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "issue37":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return (X >= np.median(X, axis=0)).astype(float), np.where(y > 0, 1.0, -1.0)  # risk-slim #37: x >= median
    df = pd.read_csv(DATA / f"{name}_data.csv")
    X, y = df.iloc[:, 1:].to_numpy(float), np.where(df.iloc[:, 0].to_numpy() > 0, 1.0, -1.0)
    if name == "spambase":
        X = (X > np.median(X, axis=0)).astype(float)
    return X, y


def exact(X, y, max_size, limit, gap=1e-4, multiplier=1.0, backend=None):
    est = RiskScoreClassifier(max_size=max_size, c0=1e-6, multiplier=multiplier, backend=backend, time_limit=limit,
                              mip_rel_gap=gap)
    t = time.perf_counter()
    est.fit(X, y)
    return est, time.perf_counter() - t


def fasterrisk_auc(X, y, splits, max_size):
    if not FASTERRISK_PY.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        arrays = {"X": X, "y": y, "folds": len(splits)}
        for f, (tr, te) in enumerate(splits):
            arrays[f"train{f}"], arrays[f"test{f}"] = tr, te
        np.savez(path, **arrays)
        run = subprocess.run([str(FASTERRISK_PY), "-c", _FR_SCRIPT, path, str(max_size)], capture_output=True,
                             text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        if run.returncode:
            return {"error": run.stderr.strip().splitlines()[-1]}
        folds = json.loads(run.stdout.strip().splitlines()[-1])
    return {"auc": float(np.mean([f["auc"] for f in folds])), "time": float(np.mean([f["time"] for f in folds]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="breastcancer,mammo,issue37,mushroom,spambase,adult")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds of the full-data exact solve")
    ap.add_argument("--limit37", type=float, default=300.0, help="seconds for the issue37 instance")
    ap.add_argument("--fold-limit", type=float, default=10.0, help="seconds per CV fold (0: skip CV)")
    ap.add_argument("--max-size", type=int, default=5)
    ap.add_argument("--fasterrisk", action="store_true")
    ap.add_argument("--multiplier", type=lambda v: v if v == "auto" else float(v), default=1.0,
                    help="risk = logistic(score / multiplier); 'auto': RiskScoreClassifier's grid")
    ap.add_argument("--backend", default=None, help="exact backend outside the route ('scip', 'highs'; default: "
                    "the RiskSLIM route)")
    args = ap.parse_args()
    print(environment(), f"| OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; points -5..5, "
          f"max_size={args.max_size}, C0=1e-6, multiplier {args.multiplier}, backend {args.backend or 'route'}, "
          "one thread")
    print(compile_kernels(), flush=True)
    rows = []
    for name in args.sets.split(","):
        X, y = load(name)
        limit = args.limit37 if name == "issue37" else args.limit
        est, seconds = exact(X, y, args.max_size, limit, multiplier=args.multiplier, backend=args.backend)
        row = {"data": name, "n x d": f"{X.shape[0]}x{X.shape[1]}", "rows kept": est.instance_.X.shape[0],
               "m": est.multiplier_, "status": est.status_, "time_s": round(seconds, 2),
               "heur_s": round(est.fit_.times.get("heuristic", 0), 2), "objective": round(est.objective_, 7),
               "bound": round(est.bound_, 7), "gap": float(f"{est.gap_:.3g}"), "size": int(np.count_nonzero(est.coef_)),
               "nodes": est.result_.nodes if est.result_ else 0, "backend": est.result_.backend if est.result_ else "",
               "steps": "+".join(r.step for r in est.fit_.steps if r.ran)}
        if args.fold_limit > 0:
            splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
            aucs, gaps = [], []
            for tr, te in splits:
                f, _ = exact(X[tr], y[tr], args.max_size, args.fold_limit, multiplier=args.multiplier,
                             backend=args.backend)
                aucs.append(roc_auc_score(y[te], f.decision_function(X[te])))
                gaps.append(f.gap_)
            row["cv_auc"] = round(float(np.mean(aucs)), 4)
            row["cv_max_gap"] = float(f"{max(gaps):.3g}")
            if args.fasterrisk:
                fr = fasterrisk_auc(X, (y > 0).astype(float) * 2 - 1, splits, args.max_size)
                row["fasterrisk_auc"] = None if fr is None else round(fr.get("auc", float("nan")), 4)
                row["fasterrisk_s"] = None if fr is None else round(fr.get("time", float("nan")), 2)
        rows.append(row)
        print(pd.DataFrame([row]).to_string(index=False), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
