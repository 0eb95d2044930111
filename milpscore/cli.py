"""Command line: ``milpscore fit [CSV] [--target COL] ...`` prints a SLIM score card and the
exact (MILP) vs relaxed (LP) comparison table.

Without a CSV the bundled default data are used (:func:`milpscore.datasets.load_default`).
Numeric columns that are not 0/1 are binarised at quantile thresholds
(:class:`milpscore.binarize.ThresholdBinarizer`, ``--binarize K`` thresholds per column; ``0``
keeps them as they are) and the number of thresholds made is printed.
Problems with the input are reported in one line on stderr with exit code 2, no traceback.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np
import pandas as pd

from milpscore.binarize import ThresholdBinarizer
from milpscore.compare import fit_row
from milpscore.data import encode_labels, validate_features
from milpscore.datasets import load_default
from milpscore.estimators.slim import SLIMClassifier

#: how the table names the two programs
PROGRAMS = {"exact": "exact (MILP)", "relaxed": "relaxed (LP)"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="milpscore", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="learn a SLIM score card and compare exact vs relaxed solves")
    f.add_argument("csv", nargs="?", help="CSV file with a header row (default: bundled breast-cancer data)")
    f.add_argument("--target", help="label column (default: the first column)")
    f.add_argument("--time-limit", type=float, default=20.0,
                   help="seconds for the whole fit: heuristic, MILP and LP (default 20)")
    f.add_argument("--max-size", type=int, default=None, help="maximum number of features in the card")
    f.add_argument("--coef-bound", type=int, default=10, help="points lie in -U..U (default 10)")
    f.add_argument("--c0", type=float, default=0.01, help="L0 cost per feature, in training error rate (default 0.01)")
    f.add_argument("--binarize", type=int, default=3, metavar="K",
                   help="binarise numeric columns that are not 0/1 at K quantile thresholds each "
                        "(default 3; 0 uses the columns as they are)")
    return p


def _binarise(X: pd.DataFrame, max_cuts: int) -> tuple[pd.DataFrame, str]:
    """Non-binary columns to ``column >= t`` indicators; a line saying what was made."""
    if max_cuts < 0:
        raise ValueError(f"--binarize must be >= 0 (thresholds per column; 0 keeps the columns), got {max_cuts}")
    validate_features(X)  # NaN / non-numeric columns are named before anything is made
    binarizer = ThresholdBinarizer(max_cuts=max(max_cuts, 1)).fit(X)
    wide = list(dict.fromkeys(col for col, op, _ in binarizer.rules_ if op == ">="))
    if not wide:
        return X, ""
    if max_cuts == 0:
        return X, f"{len(wide)} non-binary column(s) used as they are (--binarize 0): {wide[:5]}"
    made = sum(op == ">=" for _, op, _ in binarizer.rules_)
    return binarizer.transform(X), (f"binarised {len(wide)} non-binary column(s) into {made} threshold indicators "
                                    f"(at most {max_cuts} per column; --binarize K to change, 0 to keep them)")


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
    return frame.drop(columns=target), frame[target], f"{args.csv} (target {target!r})"


def comparison_table(model: SLIMClassifier, X: pd.DataFrame, y: pd.Series) -> pd.DataFrame:
    """Exact MILP vs LP relaxation of a fitted model: status, objective, bound, gap, time, accuracy.

    Rows are :func:`milpscore.compare.fit_row` of the model's pipeline fits (``fit_`` and, when
    the model was fitted with ``relaxed=True``, ``relaxed_fit_``).
    """
    Z = validate_features(X)
    y_pm1, _ = encode_labels(y)
    fits = [model.fit_] + ([model.relaxed_fit_] if getattr(model, "relaxed_fit_", None) is not None else [])
    rows = [fit_row("slim", fit, Z, y_pm1) for fit in fits]
    table = pd.DataFrame(rows)
    table.insert(0, "program", [PROGRAMS.get(m, m) for m in table["method"]])
    return table[["program", "status", "objective", "bound", "gap", "violation", "total_time", "train_accuracy"]]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        X, y, source = _load(args)
        X, note = _binarise(X, args.binarize)
        model = SLIMClassifier(coef_bound=args.coef_bound, c0=args.c0, max_size=args.max_size,
                               time_limit=args.time_limit, relaxed=True).fit(X, y)
    except (ValueError, TypeError) as exc:
        print(f"milpscore: error: {exc}", file=sys.stderr)
        return 2
    info = model.fit_info_
    print(f"data: {source}: {info['n_rows']} rows ({info['n_rows_kept']} distinct), {X.shape[1]} features; "
          f"labels {model.labels_.describe()}")
    if note:
        print(note)
    print()
    print(model.scorecard_)
    print()
    with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
        print(comparison_table(model, X, y).to_string(index=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
