"""Reproduce Table 1 of the Facets paper: 10-fold CV accuracy of SLIM, Lasso, Ridge, Facets,
convex rounding on the ../shared/data sets; writes docs/results.md.

Run: ``python benchmarks/reproduce.py [--datasets breastcancer mammo ...] [--folds 10]
[--time-limit 5] [--max-rows 2000]``. Defaults finish in under 20 minutes on 2 cores.

Protocol (stated in the generated document, with every difference from the paper):
* features: binary columns as given; other columns binarised at 3 thresholds
  (:class:`milpscore.data.binarize.ThresholdBinarizer`: quantiles, and for zero-inflated columns
  quantiles of the non-zero values; unsupervised, fitted on all rows); every method sees the
  same binary features;
* rows: a stratified, seeded subsample of at most ``--max-rows`` rows (adult has 32561);
* folds: stratified, shuffled with seed 0 (breastcancer: the published fold ids are 5 folds, we
  use our own 10);
* hyper-parameters fixed, not tuned by nested CV (the paper tuned Facets over a 2400-point grid):
  SLIM ``C0 = 0.01, points in [-5, 5]``, time limit per fold, and SLIM with ``C0 = 0.001`` (cards
  of the size Ustun & Rudin report); Lasso / Ridge = L1 / L2 logistic
  regression with ``C = 1``; Facets = convex Facets, logistic loss, ``lambda = 1e-3, grid_unit = 0.5``
  (ECOS); convex rounding = ternary weights, learned intercept, margin 1, LP + best of 100
  seeded randomized roundings.
"""
from __future__ import annotations

import argparse
import datetime
import sys
import warnings
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from threadpoolctl import threadpool_limits

from milpscore import ConvexRoundingClassifier, FacetsClassifier, SLIMClassifier
from milpscore.data.binarize import ThresholdBinarizer
from milpscore.metrics import accuracy, model_size

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import provenance  # noqa: E402
from timing import environment  # noqa: E402
DATA = ROOT.parent / "shared" / "data"
FILES = {"adult": "adult_data.csv", "breastcancer": "breastcancer_data.csv", "mammo": "mammo_data.csv",
         "mushroom": "mushroom_data.csv", "spambase": "spambase_data.csv"}
# Facets paper, Table 1 (mean 10-fold test accuracy): SLIM, Lasso, Ridge, Facets
PAPER = {"adult": (0.82, 0.82, 0.82, 0.70), "breastcancer": (0.97, 0.97, 0.97, 0.97),
         "mammo": (0.81, 0.80, 0.81, 0.80), "mushroom": (1.00, 1.00, 0.98, 0.92),
         "spambase": (0.93, 0.90, 0.74, 0.89)}
PAPER_COLUMNS = ("SLIM", "Lasso", "Ridge", "Facets")
METHODS = ("SLIM", "SLIM C0=0.001", "Lasso", "Ridge", "Facets", "convex rounding")


def paper_value(data: str, method: str) -> float | None:
    """The paper's Table 1 value of a method (both SLIM rows compare with its SLIM column)."""
    return dict(zip(PAPER_COLUMNS, PAPER[data])).get(method.split(" ")[0])


def load_frame(name: str, max_rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """The columns as given and labels in {-1, +1} of one shared data set (subsampled, stratified)."""
    frame = pd.read_csv(DATA / FILES[name])
    y = np.where(frame.iloc[:, 0].to_numpy() == 1, 1.0, -1.0)
    X = frame.iloc[:, 1:]
    if len(frame) > max_rows:
        keep, _ = train_test_split(np.arange(len(frame)), train_size=max_rows, random_state=seed, stratify=y)
        X, y = X.iloc[np.sort(keep)], y[np.sort(keep)]
    return X, y


def binarise(X: pd.DataFrame, y: np.ndarray, fit_rows: np.ndarray, thresholds: str = "quantile") -> np.ndarray:
    """Binary columns as given, the others at 3 thresholds, fitted on ``fit_rows`` (quantiles, or
    supervised: the label's boundary points by Gini splitting), applied to every row."""
    binary = [c for c in X.columns if set(np.unique(X[c])) <= {0, 1}]
    other = [c for c in X.columns if c not in binary]
    parts = [X[binary].astype(float)]
    if other:
        b = ThresholdBinarizer(max_cuts=3, thresholds=thresholds).fit(X[other].iloc[fit_rows], y[fit_rows])
        parts.append(b.transform(X[other]).astype(float))
    return pd.concat(parts, axis=1).to_numpy(float)


def load(name: str, max_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Binary features (quantile thresholds fitted on all rows) and labels of one shared data set."""
    X, y = load_frame(name, max_rows, seed)
    return binarise(X, y, np.arange(len(y))), y


def fit(method: str, X: np.ndarray, y: np.ndarray, time_limit: float, seed: int) -> tuple[np.ndarray, float, str]:
    """``(coef, intercept, status)`` of one method on one training fold (estimators = the pipeline)."""
    if method in ("Lasso", "Ridge"):
        m = LogisticRegression(l1_ratio=1.0 if method == "Lasso" else 0.0, C=1.0, solver="liblinear").fit(X, y)
        return m.coef_.ravel(), float(m.intercept_[0]), "converged"
    if method.startswith("SLIM"):
        m = SLIMClassifier(coef_bound=5, c0=0.001 if method.endswith("0.001") else 0.01, time_limit=time_limit)
    elif method == "Facets":
        m = FacetsClassifier(solver="ecos", loss="logistic", lam=1e-3, grid_unit=0.5, bound=10)
    else:
        m = ConvexRoundingClassifier(margin=1.0, weights="ternary", threshold=None, rounding="randomized",
                                     n_draws=100, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # constant models are reported in the size column
        m.fit(X, y)
    return m.coef_, m.intercept_, m.status_


def run(names: list[str], folds: int, time_limit: float, max_rows: int, thresholds: str = "quantile") -> pd.DataFrame:
    rows = []
    for name in names:
        raw, y = load_frame(name, max_rows)
        X = binarise(raw, y, np.arange(len(y))) if thresholds == "quantile" else None
        cv = StratifiedKFold(folds, shuffle=True, random_state=0)
        for k, (tr, te) in enumerate(cv.split(raw, y)):
            if thresholds == "supervised":  # learned from the labels: on the training rows of the fold only
                X = binarise(raw, y, tr, thresholds)
            for method in METHODS:
                t0 = time.perf_counter()
                coef, b, status = fit(method, X[tr], y[tr], time_limit, seed=k)
                rows.append({"data": name, "n": len(y), "d": X.shape[1], "method": method, "fold": k, "status": status,
                             "accuracy": accuracy(X[te], y[te], coef, b), "size": model_size(coef, 1e-6),
                             "time": time.perf_counter() - t0})
            print(f"{name} fold {k}: " + ", ".join(f"{r['method']} {r['accuracy']:.3f}" for r in rows[-len(METHODS):]),
                  flush=True)
    return pd.DataFrame(rows)


def _optimal(r: pd.Series) -> str:
    return f"{int(r['optimal'])}/{int(r['folds'])}" if r["method"].startswith(("SLIM", "Facets")) else "-"


def report(results: pd.DataFrame, args: argparse.Namespace, wall: float) -> str:
    g = results.groupby(["data", "method"])
    summary = pd.DataFrame({"accuracy": g["accuracy"].mean(), "std": g["accuracy"].std(ddof=0),
                            "size": g["size"].mean(), "time_s": g["time"].mean(),
                            "optimal": g["status"].apply(lambda st: int((st == "optimal").sum())),
                            "folds": g["status"].size()}).reset_index()
    protocol = __doc__.split("from the paper):")[1].strip()
    lines = ["# Results: 10-fold CV accuracy next to Table 1 of the Facets paper", "",
             f"Generated by `python benchmarks/reproduce.py {' '.join(args.argv)}` in {wall / 60:.1f} min "
             f"({platform.processor() or platform.machine()}, BLAS threads capped at 1 by threadpoolctl). "
             f"{args.stamp}.", "",
             "## Protocol", "", *[("* " + " ".join(item.split())) for item in protocol.split("* ") if item.strip()],
             *(["* **this run** (`--thresholds supervised`): the non-binary columns are cut at 3 thresholds chosen "
                "among the label's boundary points by Gini splitting (`formulations.bins.supervised_cut_points`), "
                "fitted on the training rows of each fold (`d` is that of the first fold)"]
               if args.thresholds == "supervised" else []), "",
             "## Mean test accuracy (ours) and the paper's Table 1", "",
             "| data | n | d | method | ours (mean +- std over folds) | paper | ours - paper | mean size | "
             "mean fit time (s) | folds solved to optimality |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        meta = results[results["data"] == r["data"]].iloc[0]
        paper = paper_value(r["data"], r["method"])
        diff = f"{r['accuracy'] - paper:+.3f}" if paper is not None else "n/a (not in Table 1)"
        lines.append(f"| {r['data']} | {meta['n']} | {meta['d']} | {r['method']} | {r['accuracy']:.3f} +- "
                     f"{r['std']:.3f} | {paper if paper is not None else '-'} | {diff} | {r['size']:.1f} | "
                     f"{r['time_s']:.2f} | {_optimal(r)} |")
    big = summary.assign(paper=[paper_value(d, m) for d, m in zip(summary["data"], summary["method"])])
    big = big[big["paper"].notna()].copy()
    big["diff"] = big["accuracy"] - big["paper"]
    far = big[big["diff"].abs() > 2 * big["std"].clip(lower=0.005)].sort_values("diff")
    slim = summary[summary["method"].str.startswith("SLIM")]
    lines += ["", "## Where we differ", "",
              f"* {len(big) - len(far)} of {len(big)} (data, method) cells are within two standard deviations "
              "(over folds) of the paper's value. Beyond that:"]
    lines += [f"  * {r['method']} on {r['data']}: {r['accuracy']:.3f} vs {r['paper']:.2f} ({r['diff']:+.3f})"
              for _, r in far.iterrows()] or ["  * none"]
    lines += ["* Our hyper-parameters are fixed; the paper tuned Facets on a 2400-point (lambda, gamma) grid (its "
              "Table 2) and took SLIM / Lasso / Ridge from Ustun & Rudin (2016), who tuned them. Our fixed "
              "`lambda = 1e-3` gives dense, mostly fractional Facets models (see the size column), close to "
              "Lasso/Ridge; the paper's Facets column reports its grid-searched models, so where our Facets is "
              "above the paper (e.g. adult, mushroom) the two columns describe different models.",
              f"* SLIM had {args.time_limit:g} s per fold: {int(slim['optimal'].sum())} of {int(slim['folds'].sum())} "
              "SLIM fits were proven optimal; the rest stopped at the time limit with a MIP gap (status "
              "`feasible`): their cards are the best found in that time, not proven optima (how much longer "
              "runs would change test accuracy is not measured here). SLIM's `C0 = 0.01` also buys sparsity "
              "with accuracy: its mean card sizes (size column) are far below those of the other methods; "
              "`C0 = 0.001` gives cards closer in size to those Ustun & Rudin (2016) report.",
              "* Continuous columns are binarised (3 cuts) for every method, including Lasso and Ridge; "
              "the paper's Lasso/Ridge used the original features. Large data sets are subsampled to "
              f"{args.max_rows} rows (stratified, seed 0).",
              "* Convex rounding is not in Table 1; its ternary weights with one global margin are the most "
              "constrained model here.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(FILES), choices=list(FILES))
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=5.0, help="seconds per SLIM fit")
    parser.add_argument("--max-rows", type=int, default=2000)
    parser.add_argument("--thresholds", choices=("quantile", "supervised"), default="quantile",
                        help="quantile thresholds fitted on all rows (default), or supervised ones fitted on each "
                             "training fold")
    parser.add_argument("--out", default=str(ROOT / "docs" / "results.md"))
    args = parser.parse_args()
    args.argv = sys.argv[1:]
    if not DATA.is_dir():
        raise SystemExit(f"shared data not found at {DATA}")
    args.stamp = f"{provenance()}, run {datetime.date.today().isoformat()}; at the start: {environment()}"
    print(environment(), "| accuracy benchmark: wall-clock times are single runs")
    t0 = time.perf_counter()
    with threadpool_limits(1):
        results = run(args.datasets, args.folds, args.time_limit, args.max_rows, args.thresholds)
    text = report(results, args, time.perf_counter() - t0)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
