"""Command line: ``milpscore fit [CSV] [--target COL] ...`` prints a SLIM score card and the
exact (MILP) vs relaxed (LP) comparison table.

Without a CSV the bundled default data are used (:func:`milpscore.datasets.load_default`).
Problems with the input are reported in one line on stderr with exit code 2, no traceback.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np
import pandas as pd

from milpscore.binarize import ThresholdBinarizer
from milpscore.datasets import load_default
from milpscore.estimators.slim import SLIMClassifier


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="milpscore", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="learn a SLIM score card and compare exact vs relaxed solves")
    f.add_argument("csv", nargs="?", help="CSV file with a header row (default: bundled breast-cancer data)")
    f.add_argument("--target", help="label column (default: the first column)")
    f.add_argument("--time-limit", type=float, default=20.0, help="seconds for the MILP (default 20)")
    f.add_argument("--max-size", type=int, default=None, help="maximum number of features in the card")
    f.add_argument("--coef-bound", type=int, default=10, help="points lie in -U..U (default 10)")
    f.add_argument("--c0", type=float, default=0.01, help="L0 cost per feature, in training error rate (default 0.01)")
    f.add_argument("--binarize", type=int, default=0, metavar="K",
                   help="binarise numeric columns at K quantile thresholds (default: use columns as they are)")
    return p


def _load(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.Series, str]:
    if args.csv is None:
        X, y = load_default()
        return X, y, "bundled breast-cancer data (scikit-learn), binarised"
    try:
        frame = pd.read_csv(args.csv)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {args.csv!r}: {exc}") from None
    target = args.target or frame.columns[0]
    if target not in frame.columns:
        raise ValueError(f"--target {target!r} is not a column of {args.csv}; columns: {list(frame.columns)[:10]}")
    X = frame.drop(columns=target)
    if args.binarize:
        X = ThresholdBinarizer(max_cuts=args.binarize).fit_transform(X)
    return X, frame[target], f"{args.csv} (target {target!r})"


def comparison_table(model: SLIMClassifier, X: pd.DataFrame, y: pd.Series) -> pd.DataFrame:
    """Exact MILP vs LP relaxation: objective, bound, gap, time, train accuracy, status."""
    rows = []
    exact, relaxed = model.result_, model.relaxed_result_
    rows.append({"program": "exact (MILP)", "status": exact.status.value, "objective": exact.objective,
                 "bound": exact.bound, "gap": exact.gap, "time_s": exact.solve_time + exact.build_time,
                 "train_accuracy": model.score(X, y)})
    if relaxed is not None:
        acc = float("nan")
        if relaxed.has_solution:
            Xa = X.to_numpy(dtype=float)
            n = Xa.shape[1]
            scores = Xa @ relaxed.x[:n] + relaxed.x[n]
            acc = float(np.mean(model.classes_[(scores > 0).astype(int)] == np.asarray(y)))
        rows.append({"program": "relaxed (LP)", "status": relaxed.status.value, "objective": relaxed.objective,
                     "bound": relaxed.bound, "gap": relaxed.gap, "time_s": relaxed.solve_time + relaxed.build_time,
                     "train_accuracy": acc})
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        X, y, source = _load(args)
        model = SLIMClassifier(coef_bound=args.coef_bound, c0=args.c0, max_size=args.max_size,
                               time_limit=args.time_limit, relaxed=True).fit(X, y)
    except (ValueError, TypeError) as exc:
        print(f"milpscore: error: {exc}", file=sys.stderr)
        return 2
    info = model.fit_info_
    print(f"data: {source}: {info['n_rows']} rows ({info['n_rows_kept']} distinct), {X.shape[1]} features; "
          f"labels {model.labels_.describe()}\n")
    print(model.scorecard_)
    print()
    with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
        print(comparison_table(model, X, y).to_string(index=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
