"""Command line: ``milpscore fit | predict | export | compare | crf | warmup``.

``milpscore fit [CSV]`` learns a card (``--formulation`` a catalog name: slim, riskslim, facets,
facets_logistic, fused, convex_rounding, eye) on a CSV whose label column is ``--target`` (default: the first
column), or on the bundled default data; prints what it read, then the card, held-out metrics
(``--test-size``, ``--cv``) and, for exact formulations, the exact-vs-relaxed table;
``--output model.json`` saves it (:mod:`milpscore.model_files.persist`). ``milpscore predict model.json CSV``
writes, per row, the card's total ``points``, the ``prediction`` and (risk scores) the
``probability``. ``milpscore export CSV --to model.lp|.mps|.py`` writes the program with readable
names; ``milpscore compare CSV`` prints the comparison table.

Columns become 0/1 indicators by :class:`milpscore.data.binarize.ThresholdBinarizer`: numeric columns
that are not 0/1 at quantile thresholds (``--binarize K``; 0 keeps them as values; or
``--thresholds supervised``, chosen among the label's boundary points on the training rows),
text columns one indicator per level (``--max-categories K`` most frequent, the rest "other
levels"), missing values refused or given an indicator (``--missing indicator``), special codes
(``--special-values -7,-8,-9``) an indicator each and kept out of the thresholds. The fused table
bins its own columns. The model file carries the transformation, so ``predict`` applies it to raw
rows. Problems with the input are reported in one line on stderr with exit code 2, no traceback.

Output: the card, metrics and tables on stdout; with ``--format json`` or ``html`` stdout carries
only that document and the data summary goes to stderr. Notes (an empty card, a solve stopped by
its time limit) go to stderr as one line each.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from formulations.constraints import AtMost, Monotone, threshold_groups
from milpscore.crf import cli as crf_cli
from milpscore.data.binarize import ThresholdBinarizer
from milpscore.compare import fit_row
from milpscore.data.validation import encode_labels
from milpscore.data.datasets import load_default
from milpscore.interrupt import exit_code, stop_on_sigint

#: how the table names the two programs
PROGRAMS = {"exact": "exact", "relaxed": "relaxed"}
#: formulations ``fit`` and ``export`` take (catalog names)
FORMULATIONS = ("slim", "riskslim", "facets", "facets_logistic", "fused", "convex_rounding", "eye")


# ------------------------------------------------------------------------------- parser
def _parser() -> argparse.ArgumentParser:
    from milpscore import __version__

    p = argparse.ArgumentParser(prog="milpscore", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"milpscore {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="learn a card; print it, held-out metrics and the exact-vs-relaxed table")
    _data_flags(f)
    _model_flags(f)
    f.add_argument("--test-size", type=float, default=0.0, help="share of rows held out (stratified; default 0)")
    f.add_argument("--cv", type=int, default=0, metavar="K",
                   help="also report K-fold cross-validated metrics (the main fit and the K folds share --time-limit)")
    f.add_argument("--output", help="save the fitted model as JSON (milpscore predict reads it)")
    f.add_argument("--format", choices=("text", "json", "html"), default="text",
                   help="how to print the result (json / html: stdout carries only that document)")
    pr = sub.add_parser("predict", help="score the rows of a CSV with a saved model: points, prediction, probability")
    pr.add_argument("model", help="model JSON written by milpscore fit --output")
    pr.add_argument("csv", help="CSV with the model's columns (extra columns are ignored)")
    pr.add_argument("--output", help="write the predictions as CSV here (default: stdout)")
    ex = sub.add_parser("export", help="write the program a fit would solve (LP / MPS / Pyomo script)")
    _data_flags(ex)
    _model_flags(ex)
    ex.add_argument("--to", required=True, help="output path: .lp, .mps or .py (Pyomo)")
    ex.add_argument("--relaxed", action="store_true", help="write the relaxation instead of the exact program")
    cp = sub.add_parser("compare", help="exact vs relaxed vs rounded vs heuristics, one table")
    _data_flags(cp)
    cp.add_argument("--formulations", default="slim",
                    help="comma-separated catalog names (default slim; milpscore.compare.list_formulations())")
    cp.add_argument("--methods", default=None, help="comma-separated methods (default: all of each)")
    cp.add_argument("--time-limit", type=float, default=20.0, help="seconds of each (formulation, method) row")
    cp.add_argument("--test-size", type=float, default=0.3, help="held-out share (default 0.3)")
    cp.add_argument("--seed", type=int, default=0)
    cp.add_argument("--max-size", type=int, default=None, help="maximum card size, for formulations that have one")
    cp.add_argument("--coef-bound", type=int, default=None, help="points lie in -U..U, where the formulation has U")
    cp.add_argument("--c0", type=float, default=None, help="L0 cost per feature (slim, riskslim)")
    cp.add_argument("--lam", type=float, default=None, help="penalty weight (facets, fused, eye)")
    cp.add_argument("--progress", action="store_true", help="a progress line on stderr even when it is not a terminal")
    cp.add_argument("--quiet", action="store_true", help="no progress line")
    crf_cli.add_parser(sub)
    sub.add_parser("warmup", help="compile the exact engine's numba kernels into the cache now (otherwise "
                                  "the first exact fit in a fresh environment compiles them)")
    return p


def _numbers(text: str) -> list[float]:
    """``--special-values -7,-8,-9``: comma-separated finite numbers."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers such as -7,-8,-9, got {text!r}") from None
    if not values or not np.isfinite(values).all():
        raise argparse.ArgumentTypeError(f"expected comma-separated finite numbers such as -7,-8,-9, got {text!r}")
    return values


def _names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _data_flags(p: argparse.ArgumentParser) -> None:
    # "-7,-8,-9" is a value, not an option (argparse only knows "-7" as a negative number)
    p._negative_number_matcher = re.compile(r"^-\d[\d.,eE+-]*$")
    p.add_argument("csv", nargs="?", help="CSV file with a header row (default: bundled breast-cancer data)")
    p.add_argument("--target", help="label column, two-valued (default: the first column)")
    p.add_argument("--binarize", type=int, default=3, metavar="K",
                   help="binarise numeric columns that are not 0/1 at K quantile thresholds each "
                        "(default 3; 0 uses the columns as they are)")
    p.add_argument("--thresholds", choices=("quantile", "supervised"), default="quantile",
                   help="quantile thresholds (default), or supervised: chosen among the label's boundary points "
                        "by Gini splitting, on the training rows only")
    p.add_argument("--missing", choices=("error", "indicator"), default="error",
                   help="missing values: refuse them (default), or give each column that has some an "
                        "'is missing' indicator (its thresholds are 0 on those rows)")
    p.add_argument("--special-values", type=_numbers, default=[], metavar="V,V,...",
                   help="codes with a meaning of their own in numeric columns (e.g. -7,-8,-9 = no record): "
                        "an indicator each, kept out of the thresholds")
    p.add_argument("--max-categories", type=int, default=10, metavar="K",
                   help="text columns: an indicator for each of the K most frequent levels, one for the other "
                        "levels (default 10)")
    p.add_argument("--categorical", type=_names, default=[], metavar="COL,COL,...",
                   help="numeric columns to treat as categories (codes)")


def _multiplier(text: str) -> float | str:
    """``--multiplier``: a number > 0 or ``auto``."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'auto', got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'auto', got {text!r}")
    return value


def _formulation(text: str) -> str:
    """``--formulation``: a name of :data:`FORMULATIONS`."""
    if text not in FORMULATIONS:
        raise argparse.ArgumentTypeError(f"unknown formulation {text!r}; choose one of {', '.join(FORMULATIONS)}")
    return text


def _n_jobs(text: str) -> int:
    """``--n-jobs``: a non-zero integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(f"--n-jobs takes a non-zero integer (1: one process, -1: all cores), "
                                         f"got {text!r}")
    return value


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--formulation", type=_formulation, default="slim", metavar="NAME",
                   help=f"what to fit: {', '.join(FORMULATIONS)} (default slim)")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds for the whole fit (default 60; a proven fit returns earlier)")
    p.add_argument("--memory-limit", type=float, default=None, metavar="MB",
                   help="MiB one step of the exact solve may allocate (slim, riskslim; default half the memory "
                        "available); a step over it is skipped and the next one runs")
    p.add_argument("--n-jobs", type=_n_jobs, default=1, metavar="N",
                   help="processes that bound the supports of the exact solve, or threads that screen them "
                        "(slim, riskslim; default 1; -1: all cores); the certificate is that of one process")
    p.add_argument("--max-size", type=int, default=None, help="maximum number of features in the card")
    p.add_argument("--coef-bound", type=int, default=None, help="points lie in -U..U (formulation default)")
    p.add_argument("--c0", type=float, default=None, help="L0 cost per feature (slim default 0.01)")
    p.add_argument("--lam", type=float, default=None, help="penalty weight (facets, fused, eye)")
    p.add_argument("--multiplier", type=_multiplier, default=None,
                   help="riskslim: risk = logistic(total score / multiplier) (default 1); 'auto' solves each of "
                        "1, 1.5, 2, 3, 4, 6, 8 and keeps the least loss")
    p.add_argument("--one-threshold-per-variable", action="store_true",
                   help="at most one 'x >= t' indicator of each variable (slim, riskslim, facets)")
    p.add_argument("--increasing", action="append", default=[], metavar="VARS",
                   help="points never decrease along these variables (comma-separated; a binarised variable's "
                        "thresholds, or a column kept as it is: its points >= 0; repeatable) (slim, riskslim, facets)")
    p.add_argument("--decreasing", action="append", default=[], metavar="VARS",
                   help="points never increase along these variables (as --increasing)")
    p.add_argument("--at-most", action="append", default=[], metavar="K:VARS",
                   help="at most K of these variables on the card (comma-separated, each with all its "
                        "indicators; repeatable), e.g. --at-most 1:radius,perimeter,area (slim, riskslim, facets)")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and of randomised methods")
    p.add_argument("--pos-label", default=None, help="the class the points score for (default: the larger label)")
    p.add_argument("--verbose", action="store_true", help="print the solver's log")
    p.add_argument("--quiet", action="store_true", help="no live progress line on stderr")


# ------------------------------------------------------------------------------- data
def _binarizer(args: argparse.Namespace) -> ThresholdBinarizer:
    if args.binarize < 0:
        raise ValueError(f"--binarize must be >= 0 (thresholds per column; 0 keeps the columns), got {args.binarize}")
    if args.max_categories < 1:
        raise ValueError(f"--max-categories must be >= 1, got {args.max_categories}")
    return ThresholdBinarizer(max_cuts=args.binarize, thresholds=args.thresholds, missing=args.missing,
                              special_values=args.special_values, max_categories=args.max_categories,
                              categorical=args.categorical)


def _preprocess(args: argparse.Namespace, X: pd.DataFrame, y: pd.Series | None = None
                ) -> tuple[pd.DataFrame, str, ThresholdBinarizer]:
    """The indicators of ``X``, a line saying what was made, and the fitted binariser (supervised
    thresholds are learned from ``y``: pass training rows only)."""
    binarizer = _binarizer(args).fit(X, y)
    return binarizer.transform(X), _describe(binarizer, args), binarizer


def _describe(binarizer: ThresholdBinarizer, args: argparse.Namespace) -> str:
    """One line: what the binariser made of the columns, and the flag that changes each part."""
    ops = pd.Series([op for _, op, _ in binarizer.rules_], dtype=object)
    cols = lambda *kinds: sorted({c for c, op, _ in binarizer.rules_ if op in kinds})  # noqa: E731
    parts = []
    if (ops == ">=").any():
        chosen = (f"supervised, from {sum(binarizer.boundary_points_.values())} boundary points"
                  if args.thresholds == "supervised" else "quantiles")
        parts.append(f"binarised {len(cols('>='))} non-binary column(s) into {int((ops == '>=').sum())} threshold "
                     f"indicators ({chosen}; at most {args.binarize} per column; --binarize K to change, 0 to keep "
                     "them)")
    if (ops == "value").any():
        parts.append(f"{len(cols('value'))} non-binary column(s) used as they are (--binarize 0): {cols('value')[:5]}")
    if ops.isin(["==", "other"]).any():
        parts.append(f"{len(cols('==', 'other'))} text column(s) into {int(ops.isin(['==', 'other']).sum())} level "
                     f"indicators (at most {args.max_categories} levels each, then 'other levels')")
    if (ops == "special").any():
        parts.append(f"{int((ops == 'special').sum())} special-value indicator(s) in {len(cols('special'))} column(s)")
    if (ops == "missing").any():
        parts.append(f"missing-value indicators for {cols('missing')[:5]}"
                     + (" ..." if len(cols("missing")) > 5 else ""))
    return "; ".join(parts)


def _read_csv(path: str) -> pd.DataFrame:
    try:
        with open(path, newline="") as handle:
            header = next(csv.reader(handle), None)
        frame = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path!r}: {exc}") from None
    if header is not None:
        repeated = sorted({c for c in header if header.count(c) > 1})
        if repeated:
            raise ValueError(f"{path} repeats the column name(s) {repeated[:5]} in its header; every column needs "
                             "its own name: rename the copies")
    return frame


def _check_target(frame: pd.DataFrame, target: str, path: str, chosen: bool) -> None:
    """A two-valued label column with no missing cell, or a message naming it and the fix."""
    y = frame[target]
    how = f"--target {target!r}" if chosen else f"the label column {target!r} (the first column)"
    hint = "" if chosen else "; name the label column with --target NAME"
    if y.isna().any():
        raise ValueError(f"{how} of {path} is empty in {int(y.isna().sum())} row(s): drop those rows{hint}")
    values = pd.unique(y)
    if len(values) != 2:
        two = [c for c in frame.columns if c != target and frame[c].nunique(dropna=True) == 2][:5]
        shown = ", ".join(repr(v.item() if isinstance(v, np.generic) else v) for v in values[:5])
        raise ValueError(f"{how} of {path} has {len(values)} distinct value(s) ({shown}"
                         f"{', ...' if len(values) > 5 else ''}); milpscore learns two-class labels{hint}"
                         + (f" (two-valued columns: {two})" if two and len(values) != 1 else "")
                         + ("" if len(values) < 2 or not chosen else "; map the labels to two classes first"))


def _load(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.Series, str]:
    if args.csv is None:
        X, y = load_default()
        return X, y, "bundled breast-cancer data (scikit-learn)"
    frame = _read_csv(args.csv)
    if len(frame) == 0:
        raise ValueError(f"{args.csv} has a header ({len(frame.columns)} column(s)) but no data rows")
    target = args.target or frame.columns[0]
    if target not in frame.columns:
        raise ValueError(f"--target {target!r} is not a column of {args.csv}; columns: {list(frame.columns)[:10]}")
    if frame.shape[1] < 2:
        raise ValueError(f"{args.csv} has only the label column {target!r}; it needs feature columns too")
    _check_target(frame, target, args.csv, args.target is not None)
    return frame.drop(columns=target), frame[target], f"{args.csv} (target {target!r})"


# ----------------------------------------------------------------------------- models
#: the formulations that take operational constraints (``--increasing``, ``--decreasing``, ``--at-most``)
CONSTRAINED = ("slim", "riskslim", "facets", "facets_logistic")


def _variable_columns(flag: str, variable: str, columns: Sequence[str], thresholds: dict[str, list[str]]) -> list[str]:
    """The design columns of ``variable``: its ``"<variable> >= <t>"`` indicators (``thresholds``, the
    columns' :func:`formulations.constraints.threshold_groups`), its other indicators (``==``,
    ``is missing``), or the column itself when it was kept as it is."""
    indicators = thresholds.get(variable) or \
        [c for c in columns if str(c).startswith((f"{variable} == ", f"{variable} is missing"))]
    if indicators:
        return indicators
    if variable in columns:
        return [variable]
    names = list(dict.fromkeys(str(c).split(" >= ")[0].split(" == ")[0].split(" is missing")[0] for c in columns))
    raise ValueError(f"{flag}: {variable!r} is not a variable of the design; its variables: {names[:12]}"
                     + (" ..." if len(names) > 12 else ""))


def _variables(flag: str, text: str) -> list[str]:
    names = [v.strip() for v in text.split(",") if v.strip()]
    if not names:
        raise ValueError(f"{flag} takes comma-separated variable names, got {text!r}")
    return names


def cli_constraints(args: argparse.Namespace, columns: Sequence[str]) -> tuple:
    """The operational constraints of ``--increasing``, ``--decreasing`` and ``--at-most`` on the design's
    ``columns`` (:mod:`formulations.constraints`: ``Monotone`` over each variable's thresholds, ``AtMost`` over
    the indicators of the variables named). Errors name the flag and the variable."""
    out: list[Any] = []
    thresholds = threshold_groups(columns)
    for flag, direction in (("--increasing", "increasing"), ("--decreasing", "decreasing")):
        for text in getattr(args, direction, []):
            out += [Monotone(_variable_columns(flag, v, columns, thresholds), direction)
                    for v in _variables(flag, text)]
    for text in getattr(args, "at_most", []):
        k, sep, rest = text.partition(":")
        if not sep or not k.strip().isdigit():
            raise ValueError(f"--at-most takes K:VARS, a count and comma-separated variables (e.g. 1:a,b), "
                             f"got {text!r}")
        columns_of = [c for v in _variables("--at-most", rest)
                      for c in _variable_columns("--at-most", v, columns, thresholds)]
        out.append(AtMost(columns_of, int(k)))
    return tuple(out)


def estimator(args: argparse.Namespace, columns: Sequence[str] | None = None) -> Any:
    """The estimator of ``--formulation`` with the flags the user set (others keep its defaults); the
    design's ``columns`` resolve the constraint flags (:func:`cli_constraints`)."""
    from milpscore import (ConvexRoundingClassifier, EYEClassifier, FacetsClassifier, FusedScoreClassifier,
                           RiskScoreClassifier, SLIMClassifier)

    set_ = {k: v for k, v in {"max_size": args.max_size, "coef_bound": args.coef_bound, "c0": args.c0,
                              "lam": args.lam, "multiplier": args.multiplier}.items() if v is not None}
    common = {"time_limit": args.time_limit, "verbose": args.verbose}
    rules: dict[str, Any] = {"one_threshold_per_variable": True} if args.one_threshold_per_variable else {}
    pick = lambda *names: {k: set_[k] for k in names if k in set_}  # noqa: E731
    name = args.formulation
    common["pos_label"] = args.pos_label
    asked = [f for f, v in (("--increasing", getattr(args, "increasing", [])),
                            ("--decreasing", getattr(args, "decreasing", [])),
                            ("--at-most", getattr(args, "at_most", []))) if v]
    if asked and name not in CONSTRAINED:
        raise ValueError(f"{', '.join(asked)} apply to {', '.join(CONSTRAINED)}, not --formulation {name}")
    if asked:
        if columns is None:
            raise ValueError(f"{', '.join(asked)} need the design's columns (estimator(args, columns))")
        rules["constraints"] = cli_constraints(args, list(columns))
    memory = {"memory_limit": getattr(args, "memory_limit", None), "n_jobs": getattr(args, "n_jobs", 1)}
    if name == "slim":
        return SLIMClassifier(**{"c0": 0.01, **pick("max_size", "coef_bound", "c0")}, seed=args.seed, relaxed=True,
                              **common, **rules, **memory)
    if name == "riskslim":
        return RiskScoreClassifier(**pick("max_size", "coef_bound", "c0", "multiplier"), seed=args.seed, **common,
                                   **rules, **memory)
    if name in ("facets", "facets_logistic"):
        return FacetsClassifier(solver="highs-exact", loss="hinge" if name == "facets" else "logistic", **pick("lam"),
                                seed=args.seed, relaxed=True, **common, **rules)
    if name == "fused":
        return FusedScoreClassifier(**pick("lam", "max_size"), seed=args.seed, relaxed=True, **common)
    if name == "convex_rounding":
        return ConvexRoundingClassifier(rounding="exact", **pick("max_size"), random_state=args.seed, **common)
    return EYEClassifier(**pick("lam"), verbose=args.verbose, pos_label=args.pos_label)


def _design(args: argparse.Namespace, X: pd.DataFrame, y: pd.Series
            ) -> tuple[pd.DataFrame, str, ThresholdBinarizer | None]:
    if args.formulation == "fused":  # the fused table bins its own columns
        if args.missing != "error" or args.special_values or args.categorical or args.thresholds != "quantile":
            raise ValueError("the fused table bins its own columns: --missing, --special-values, --categorical and "
                             "--thresholds apply to the other formulations")
        return X, "", None
    return _preprocess(args, X, y)


def _progress(args: argparse.Namespace) -> Any:
    """A live progress line on stderr (incumbent, bound, gap) unless ``--quiet`` or not a terminal."""
    import contextlib

    from solvers.progress import ProgressLine, reporting

    if args.quiet or args.verbose or not sys.stderr.isatty():
        return contextlib.nullcontext()
    return reporting(ProgressLine(sys.stderr))


def _notes(caught: list[warnings.WarningMessage]) -> None:
    """Warnings of the fit as one ``milpscore: note:`` line each on stderr (no file, no line number)."""
    seen = []
    for w in caught:
        if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning)):
            continue
        text = str(w.message)
        if text not in seen:
            seen.append(text)
            print(f"milpscore: note: {text}", file=sys.stderr)


def metrics(model: Any, X: Any, y: Any) -> dict[str, float]:
    """Accuracy and AUC of a fitted model on ``(X, y)``; for risk scores also the calibration error."""
    from sklearn.metrics import roc_auc_score

    labels = model.classes_
    truth = np.asarray(y) == labels[1]
    out = {"accuracy": float(np.mean(model.predict(X) == np.asarray(y, dtype=object).astype(labels.dtype)))}
    out["auc"] = float(roc_auc_score(truth, model.decision_function(X))) if 0 < truth.mean() < 1 else float("nan")
    if hasattr(model, "predict_proba"):
        from milpscore.cards.risk_table import calibration

        out["ece"] = calibration(model.coef_, model.intercept_, model._validated(X), truth.astype(float)).ece
    return out


def comparison_table(model: Any, X: pd.DataFrame, y: pd.Series) -> pd.DataFrame:
    """Exact vs relaxed fits of a fitted model: status, objective, bound, gap, time, accuracy.

    Rows are :func:`milpscore.compare.fit_row` of the model's pipeline fits (``fit_`` and, when
    the model was fitted with ``relaxed=True``, ``relaxed_fit_``).
    """
    Z = model._validated(X)
    Z = Z.toarray() if hasattr(Z, "toarray") else Z  # the fused table's one-hot bins
    y_pm1, _ = encode_labels(y, pos_label=getattr(model, "pos_label", None))
    fits = [model.fit_] + ([model.relaxed_fit_] if getattr(model, "relaxed_fit_", None) is not None else [])
    rows = [fit_row(model.fit_.method, fit, Z, y_pm1) for fit in fits]
    table = pd.DataFrame(rows)
    table.insert(0, "program", [f"{PROGRAMS.get(fit.method, fit.method)} ({fit.result.backend if fit.result else '-'})"
                                for fit in fits])
    return table[["program", "status", "objective", "bound", "gap", "violation", "total_time", "train_accuracy"]]


def _fit_within(model, Z, y, budget):
    """Fit ``model`` on ``(Z, y)`` within ``budget`` (a started share of the command's budget; None:
    the model's own ``time_limit``, started by its fit). Estimators without a budget (the CRF)
    take none."""
    if budget is not None and "time_limit" in model.get_params():
        return model.fit(Z, y, limits=budget)
    return model.fit(Z, y)


def _cross_validated(args: argparse.Namespace, X: pd.DataFrame, y: pd.Series, budget) -> dict[str, str]:
    """K-fold metrics; fold ``i`` gets an equal share of what is left of the command's ``budget``."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    scores: dict[str, list[float]] = {}
    folds = StratifiedKFold(args.cv, shuffle=True, random_state=args.seed).split(X, y)
    for i, (train, test) in enumerate(folds):
        Z_train, _, binarizer = _design(args, X.iloc[train], y.iloc[train])
        model = clone(estimator(args, Z_train.columns))
        _fit_within(model, Z_train, y.iloc[train], None if budget is None else budget.share(1.0 / (args.cv - i)))
        Z_test = binarizer.transform(X.iloc[test]) if binarizer is not None else X.iloc[test]
        for key, value in metrics(model, Z_test, y.iloc[test]).items():
            scores.setdefault(key, []).append(value)
    return {f"cv {key}": f"{np.mean(v):.4f} +- {np.std(v):.4f} ({args.cv} folds)" for key, v in scores.items()}


# ---------------------------------------------------------------------------- commands
def _fit(args: argparse.Namespace) -> int:
    from sklearn.model_selection import train_test_split

    X, y, source = _load(args)
    if not 0 <= args.test_size < 1:
        raise ValueError(f"--test-size must lie in [0, 1), got {args.test_size}")
    if args.cv == 1 or args.cv < 0:
        raise ValueError(f"--cv must be 0 (off) or at least 2 folds, got {args.cv}")
    X_train, X_test, y_train, y_test = (train_test_split(X, y, test_size=args.test_size, stratify=y,
                                                         random_state=args.seed)
                                        if args.test_size > 0 else (X, None, y, None))
    Z_train, note, binarizer = _design(args, X_train, y_train)
    _, labels = encode_labels(y_train, pos_label=args.pos_label)
    head = (f"data: {source}: {len(X_train)} training rows, {X.shape[1]} columns"
            + (f" -> {Z_train.shape[1]} indicator features" if binarizer is not None else "")
            + f"; labels {labels.describe()}")
    summary = sys.stdout if args.format == "text" else sys.stderr  # stdout carries only the JSON / HTML
    print(head + (f"\n{note}" if note else ""), file=summary, flush=True)  # before the solve
    with _progress(args), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # one budget: with --cv K the main fit takes one of K + 1 shares, the folds the rest
        model = estimator(args, Z_train.columns)
        budget = model._limits().started() if args.cv and "time_limit" in model.get_params() else None
        _fit_within(model, Z_train, y_train, None if budget is None else budget.share(1.0 / (args.cv + 1)))
        report = {"train " + k: v for k, v in metrics(model, Z_train, y_train).items()}
        if X_test is not None:
            Z_test = binarizer.transform(X_test) if binarizer is not None else X_test
            report.update({"test " + k: v for k, v in metrics(model, Z_test, y_test).items()})
        if args.cv:
            report.update(_cross_validated(args, X, y, budget))
    _notes(caught)
    if args.output:
        from milpscore.model_files.persist import save_model

        save_model(model, args.output, binarizer, target=str(y.name))
    info = model.fit_info_
    if "n_rows_kept" in info:
        head += f" ({info['n_rows_kept']} distinct rows solved)"
    table = comparison_table(model, Z_train, y_train) if model.fit_.method == "exact" else None
    if args.format == "json":
        from milpscore.model_files.persist import model_to_dict

        document = {"data": head, "metrics": report, "model": model_to_dict(model, binarizer, str(y.name))}
        print(json.dumps(document, indent=1, default=str))
    elif args.format == "html":
        from milpscore.cards.html_page import fit_page  # a complete page, every string escaped, the CSV's base name

        print(fit_page(model.scorecard_, head, report, table, data_path=args.csv))
    else:
        print()
        print(model.scorecard_)
        print()
        print("\n".join(f"{k}: {v if isinstance(v, str) else f'{v:.4f}'}" for k, v in report.items()))
        if table is not None:
            print()
            with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
                print(table.to_string(index=False))
        if args.output:
            print(f"\nmodel saved to {args.output}")
    return 0


def card_points(model: Any, frame: pd.DataFrame) -> np.ndarray:
    """Each row's total on the saved card: the sum of the points of the card rows it meets.

    The card (:mod:`milpscore.cards.scorecard`) prints the points in units of ``grid_unit`` for Facets
    (else model units) and predicts the positive class when ``points + card intercept > 0``, so
    ``points = decision_function / unit - card intercept``."""
    estimator_ = model.data["estimator"]
    unit = float(estimator_["params"].get("grid_unit") or 1.0) if estimator_["class"] == "FacetsClassifier" else 1.0
    points = np.round(model.decision_function(frame) / unit - float(model.data["card"]["intercept"]), 9) + 0.0
    return points.astype(np.int64) if np.array_equal(points, np.round(points)) else points  # "4", not "4.0"


def _predict(args: argparse.Namespace) -> int:
    from milpscore.model_files.persist import load_model

    model = load_model(args.model)
    frame = _read_csv(args.csv)
    schema = model.data["schema"]
    missing = [c for c in schema["columns"] if c not in frame.columns]
    if missing:
        label = schema.get("target")
        extra = [c for c in frame.columns if c not in schema["columns"] and c != label]
        raise ValueError(f"columns {missing[:5]} of the model are missing from {args.csv}"
                         + (f" (it has {extra[:5]}, which the model does not use: renamed?)" if extra else ""))
    out = pd.DataFrame({"points": card_points(model, frame), "prediction": model.predict(frame)})
    if model.data["model"]["link"] == "logistic":
        out["probability"] = model.predict_proba(frame)[:, 1]
    if args.output:
        out.to_csv(args.output, index=False)
        print(f"{len(out)} predictions written to {args.output}")
    else:
        print(out.to_csv(index=False), end="")
    return 0


def _export(args: argparse.Namespace) -> int:
    from solvers.backends.pyomo import write_program

    X, y, _ = _load(args)
    Z, _, _ = _design(args, X, y)
    est = estimator(args, Z.columns)
    instance = est.build_instance(Z, y)
    program = instance.relaxed() if args.relaxed else instance.exact()
    names = est._coef_names()
    size = program.blocks["coef"].stop - program.blocks["coef"].start
    labels = {"coef": names} if len(names) == size else None
    meaning = write_program(program, args.to, labels, time_limit=args.time_limit)
    print(f"{'continuous relaxation, ' if args.relaxed else ''}{meaning} of {args.formulation} ({program.n_variables} "
          f"variables, {program.n_rows} rows) written to {args.to}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from milpscore.compare import compare

    X, y, source = _load(args)
    if args.thresholds == "supervised":
        raise ValueError("--thresholds supervised learns from the labels and compare binarises all rows before "
                         "splitting: use it with fit (whose binariser sees only the training rows)")
    Z, note, _ = _preprocess(args, X)
    methods = args.methods.split(",") if args.methods else None
    print(f"data: {source}" + (f"; {note}" if note else ""), flush=True)
    progress = False if args.quiet else (True if args.progress else None)
    names = [f.strip() for f in args.formulations.split(",")]
    table = compare(Z, y, names, methods, time_limit=args.time_limit, test_size=args.test_size or None,
                    seed=args.seed, progress=progress, params=_compare_params(args, names))
    cols = [c for c in ("formulation", "method", "settings", "status", "objective", "bound", "gap", "violation",
                        "size", "train_accuracy", "test_accuracy", "test_auc", "total_time") if c in table.columns]
    with pd.option_context("display.width", 200, "display.max_colwidth", 40, "display.float_format", "{:.4g}".format):
        print(table[cols].to_string(index=False))
    return 0


def _compare_params(args: argparse.Namespace, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--c0`` etc. for each formulation whose spec has that field (the others keep their defaults)."""
    import dataclasses

    from solvers.catalog import CATALOG

    given = {k: v for k, v in {"max_size": args.max_size, "coef_bound": args.coef_bound, "c0": args.c0,
                               "lam": args.lam}.items() if v is not None}
    out = {}
    for name in dict.fromkeys(names):
        if name in CATALOG and given:
            fields = {f.name for f in dataclasses.fields(CATALOG[name].spec_class)}
            out[name] = {k: v for k, v in given.items() if k in fields}
    return out


def _warmup(args: argparse.Namespace) -> int:
    from solvers.warmup import compile_exclusively

    compile_exclusively()
    return 0


COMMANDS = {"fit": _fit, "predict": _predict, "export": _export, "compare": _compare, "crf": crf_cli.run,
            "warmup": _warmup}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with stop_on_sigint():  # a first Ctrl-C stops the solve and prints the best model; a second exits
            return exit_code(COMMANDS[args.command](args), command_line=argv is None)
    except (ValueError, TypeError, KeyError, RuntimeError) as exc:
        print(f"milpscore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
