"""Certified on every fold? SLIM and RiskSLIM on the shared sets and generated look-alikes (issue 31).

For each data set and estimator, 5-fold stratified CV (the folds of ``benchmarks/risk_scores.py``:
``StratifiedKFold(5, shuffle=True, random_state=0)``), at most 5 features, points -5..5, each fold's
exact fit limited to ``--fold-limit`` seconds (one wall-clock budget for the whole fit, heuristic
included), certified at relative gap 1e-4:

* ``SLIM`` -- ``SLIMClassifier(c0=1e-4, coef_bound=5, max_size=5, mip_rel_gap=1e-4)``;
* ``RiskSLIM m=1`` -- ``RiskScoreClassifier(c0=1e-6, coef_bound=5, max_size=5)``;
* ``RiskSLIM auto`` -- the same with ``multiplier="auto"`` (its grid shares the fold's budget).

Printed per (set, estimator): folds proven optimal of those run, mean gap of the unproven folds,
mean seconds per fold, mean test AUC, and FasterRisk's mean test AUC on the same folds (k = 5,
points -5..5, its own environment ``benchmarks/.peers-fasterrisk``; blank when that is absent).

Data. The shared sets ``../shared/data/<name>_data.csv`` are loaded by ``risk_scores.load``
(spambase binarised at its feature medians; breastcancer's 1-10 scales kept as integers).
``gen<seed>`` is a generated table that looks like the unseen tables of issue 31: 500-6000 rows,
a mix of binary, few-valued (3-6 levels) and continuous columns driven by shared latent factors
(correlated), a label drawn from a logistic model of a few of the raw columns with the intercept
set for a class balance of 10-50 %; the numeric columns are binarised by
``milpscore.data.binarize.ThresholdBinarizer`` (quantile thresholds, label-free, fitted on the whole
table) to 20-60 binary columns. The seed fixes the table.

``wide<width>s<seed>`` (issue 41) is a wide look-alike: 5,000-10,000 rows of continuous columns
correlated through 4 latent factors (every third one skewed), each cut by ``ThresholdBinarizer`` at
3-5 quantile thresholds (``x >= t``: one column's indicators are nested) until ``width`` binary
columns (120, 240, 480 in the issue), a label from a logistic model of 4-6 raw columns, 5-40 %
positives. ``int<seed>`` is a few-valued integer look-alike: 300-10,000 rows of 10-40 correlated
columns of integers 0..10 (3-11 levels each, kept as integers: points per unit), 10-50 % positives.
Each row's ``gap unproven`` is the mean over unproven folds (``inf`` if any fold had no bound).
``--n-jobs`` sets every fit's ``n_jobs`` (default 1: one core).

    OPENBLAS_NUM_THREADS=1 python benchmarks/certify_all.py --fold-limit 20 --sets breastcancer,mammo,gen0
    OPENBLAS_NUM_THREADS=1 python benchmarks/certify_all.py --fold-limit 60 --folds 2 --sets wide120s0,int0
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from milpscore.data.binarize import ThresholdBinarizer  # noqa: E402
from milpscore.estimators import RiskScoreClassifier, SLIMClassifier  # noqa: E402
from risk_scores import FASTERRISK_PY, fasterrisk_auc, load  # noqa: E402
from timing import compile_kernels, environment  # noqa: E402

SHARED = ("breastcancer", "mammo", "mushroom", "spambase", "adult")
MAX_SIZE, POINTS, GAP = 5, 5, 1e-4
ESTIMATORS = {
    "SLIM": lambda limit, jobs=1: SLIMClassifier(c0=1e-4, coef_bound=POINTS, max_size=MAX_SIZE, mip_rel_gap=GAP,
                                                 time_limit=limit, n_jobs=jobs),
    "RiskSLIM m=1": lambda limit, jobs=1: RiskScoreClassifier(c0=1e-6, coef_bound=POINTS, max_size=MAX_SIZE,
                                                              mip_rel_gap=GAP, time_limit=limit, n_jobs=jobs),
    "RiskSLIM auto": lambda limit, jobs=1: RiskScoreClassifier(c0=1e-6, coef_bound=POINTS, max_size=MAX_SIZE,
                                                               mip_rel_gap=GAP, time_limit=limit, multiplier="auto",
                                                               n_jobs=jobs),
}


def generated(seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """A look-alike table (module docstring): binarised features, labels in {-1, 1}, a description."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(500, 6001))
    n_bin, n_few, n_cont = (int(v) for v in rng.integers([3, 2, 3], [12, 7, 10]))
    n_factors = 3
    latent = rng.normal(size=(n, n_factors))
    def column() -> np.ndarray:  # a latent mix plus its own noise: columns correlate through the factors
        return latent @ rng.normal(0, 1, n_factors) + rng.normal(0, 1.0, n)
    columns = {}
    for j in range(n_bin):
        z = column()
        columns[f"b{j}"] = (z > np.quantile(z, rng.uniform(0.2, 0.8))).astype(float)
    for j in range(n_few):
        z = column()
        levels = int(rng.integers(3, 7))
        columns[f"f{j}"] = np.searchsorted(np.quantile(z, np.linspace(0, 1, levels + 1)[1:-1]), z).astype(float)
    for j in range(n_cont):
        z = column()
        columns[f"c{j}"] = np.round(np.exp(z / 2) if j % 2 else z * 10 + 50, 2)
    raw = pd.DataFrame(columns)
    standard = ((raw - raw.mean()) / raw.std()).to_numpy()
    chosen = rng.choice(raw.shape[1], size=4, replace=False)
    score = standard[:, chosen] @ rng.choice([-1.5, -1.0, 1.0, 1.5], size=4)
    balance = rng.uniform(0.1, 0.5)
    intercept = -np.quantile(score + rng.logistic(size=n), 1 - balance)
    y = np.where(score + intercept + rng.logistic(size=n) > 0, 1.0, -1.0)
    for cuts in (4, 3, 2):  # the most cuts per column keeping the width at most 60
        X = ThresholdBinarizer(max_cuts=cuts).fit_transform(raw).to_numpy(float)
        X = X[:, X.std(axis=0) > 0]
        if X.shape[1] <= 60:
            break
    return X, y, f"{n_bin} binary, {n_few} few-valued, {n_cont} continuous; {np.mean(y > 0):.0%} positive"


def _latent_columns(rng: np.random.Generator, n: int, count: int, n_factors: int = 4) -> np.ndarray:
    """``count`` continuous columns of ``n`` rows correlated through ``n_factors`` shared factors."""
    latent = rng.normal(size=(n, n_factors))
    return latent @ rng.normal(0, 1, (n_factors, count)) + rng.normal(0, 1.0, (n, count))


def _logistic_label(rng: np.random.Generator, raw: np.ndarray, low: float, high: float) -> np.ndarray:
    """Labels in {-1, 1} from a logistic model of 4-6 standardised raw columns, the intercept set
    for a positive share drawn in ``[low, high]``."""
    n, d = raw.shape
    standard = (raw - raw.mean(axis=0)) / np.maximum(raw.std(axis=0), 1e-12)
    chosen = rng.choice(d, size=int(rng.integers(4, 7)), replace=False)
    score = standard[:, chosen] @ rng.choice([-1.5, -1.0, -0.5, 0.5, 1.0, 1.5], size=chosen.size)
    balance = rng.uniform(low, high)
    noise = rng.logistic(size=n)
    intercept = -np.quantile(score + noise, 1 - balance)
    return np.where(score + intercept + noise > 0, 1.0, -1.0)


def wide(width: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """A wide look-alike (issue 41): 5,000-10,000 rows of correlated continuous columns, each cut by
    :class:`~milpscore.data.binarize.ThresholdBinarizer` at 3-5 quantile thresholds (``x >= t``: the
    indicators of one column are nested), until ``width`` binary columns; 5-40 % positives."""
    rng = np.random.default_rng(10_000 + 1000 * width + seed)
    n = int(rng.integers(5000, 10_001))
    raw = _latent_columns(rng, n, width // 3 + 1)
    raw[:, ::3] = np.round(np.exp(raw[:, ::3] / 2), 2)  # some skewed columns, as measured data are
    blocks, total = [], 0
    for j in range(raw.shape[1]):
        cuts = int(rng.integers(3, 6))
        block = ThresholdBinarizer(max_cuts=cuts).fit_transform(pd.DataFrame({f"c{j}": raw[:, j]})).to_numpy(float)
        block = block[:, block.std(axis=0) > 0][:, :width - total]
        blocks.append(block)
        total += block.shape[1]
        if total >= width:
            break
    X = np.hstack(blocks)
    y = _logistic_label(rng, raw[:, :len(blocks)], 0.05, 0.40)
    return X, y, f"{len(blocks)} continuous columns at 3-5 thresholds; {np.mean(y > 0):.0%} positive"


def few_valued(seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """A few-valued integer look-alike (issue 41): 300-10,000 rows of 10-40 correlated columns of
    integers 0..10 (each with 3-11 levels, points per unit), 10-50 % positives."""
    rng = np.random.default_rng(20_000 + seed)
    n = int(rng.integers(300, 10_001))
    d = int(rng.integers(10, 41))
    raw = _latent_columns(rng, n, d, n_factors=3)
    X = np.empty((n, d))
    for j in range(d):
        levels = int(rng.integers(3, 12))
        edges = np.quantile(raw[:, j], np.sort(rng.uniform(0.02, 0.98, levels - 1)))
        X[:, j] = np.searchsorted(edges, raw[:, j]) * (10 // (levels - 1))
    X = X[:, X.std(axis=0) > 0]
    y = _logistic_label(rng, X, 0.10, 0.50)
    return X, y, f"{X.shape[1]} integer columns 0..10; {np.mean(y > 0):.0%} positive"


def dataset(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    if name.startswith("gen"):
        return generated(int(name[3:]))
    found = re.fullmatch(r"wide(\d+)s(\d+)", name)
    if found:
        return wide(int(found[1]), int(found[2]))
    if re.fullmatch(r"int\d+", name):
        return few_valued(int(name[3:]))
    X, y = load(name)
    return X, y, "shared"


def first_fold(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The training rows of the first of the five folds of table ``name`` (:func:`dataset`), and a line
    that says what they are."""
    X, y, about = dataset(name)
    train, _ = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    return X[train], y[train], f"{name}: fold 1 of 5, {train.size} x {X.shape[1]}, {about}"


def run_folds(make, X, y, splits, limit, jobs=1):
    rows = []
    for tr, te in splits:
        est = make(limit, jobs)
        t = time.perf_counter()
        est.fit(X[tr], y[tr])
        rows.append({"status": est.status_, "gap": est.gap_, "seconds": time.perf_counter() - t,
                     "auc": roc_auc_score(y[te], est.decision_function(X[te]))})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SHARED + ("gen0", "gen1", "gen2")),
                    help="comma-separated: shared set names and gen<seed> for generated look-alikes")
    ap.add_argument("--fold-limit", type=float, default=60.0, help="seconds per fold's fit")
    ap.add_argument("--folds", type=int, default=5, help="how many of the 5 folds to run (the first ones)")
    ap.add_argument("--estimators", default=",".join(ESTIMATORS), help=f"comma-separated of {list(ESTIMATORS)}")
    ap.add_argument("--n-jobs", type=int, default=1, help="n_jobs of every fit (threads of the blocked screen, "
                    "workers of the support enumeration)")
    ap.add_argument("--quick", action="store_true", help="breastcancer, mammo and gen0, 2 folds of 5 s")
    args = ap.parse_args()
    if args.quick:
        args.sets, args.folds, args.fold_limit = "breastcancer,mammo,gen0", 2, 5.0
    names = [s for s in args.sets.split(",") if s]
    estimators = [e for e in args.estimators.split(",") if e]
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if unknown:
        ap.error(f"unknown --estimators {unknown}; choose from {list(ESTIMATORS)}")
    if not 1 <= args.folds <= 5:
        ap.error("--folds must be 1..5")
    print(environment(), f"| OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; "
          f"max_size {MAX_SIZE}, points -{POINTS}..{POINTS}, gap {GAP:g}, {args.fold_limit:g} s per fold, "
          f"{args.folds} of 5 folds, " + ("one thread" if args.n_jobs == 1 else f"n_jobs {args.n_jobs}") +
          "; the machine is shared (load above)")
    print(compile_kernels(), flush=True)
    table = []
    for name in names:
        X, y, about = dataset(name)
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, {about}", flush=True)
        splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[:args.folds]
        fr = fasterrisk_auc(X, y, splits, MAX_SIZE) if FASTERRISK_PY.exists() else None
        for label in estimators:
            folds = run_folds(ESTIMATORS[label], X, y, splits, args.fold_limit, args.n_jobs)
            unproven = folds[folds["status"] != "optimal"]
            row = {"set": name, "n x d": f"{X.shape[0]}x{X.shape[1]}", "estimator": label,
                   "proven": f"{len(folds) - len(unproven)}/{len(folds)}",
                   "gap unproven": float(f"{unproven['gap'].mean():.3g}") if len(unproven) else np.nan,
                   "mean s": round(float(folds["seconds"].mean()), 1), "AUC": round(float(folds["auc"].mean()), 4),
                   "FasterRisk AUC": np.nan if fr is None or "auc" not in fr else round(fr["auc"], 4)}
            table.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=False), flush=True)
    print()
    print(pd.DataFrame(table).to_string(index=False))
    if FASTERRISK_PY.exists():
        print("FasterRisk: k = 5, points -5..5, same folds, its own environment (not certified).")


if __name__ == "__main__":
    main()
