"""Command line: ``milpscore fit | predict | export | compare``.

``milpscore fit [CSV]`` learns a card (``--formulation slim|riskscore|facets|fused|rounding|eye``)
on a CSV whose label column is ``--target`` (default: the first column), or on the bundled default
data; prints the card, held-out metrics (``--test-size``, ``--cv``) and, for exact formulations,
the exact-vs-relaxed table; ``--output model.json`` saves it (:mod:`milpscore.persist`).
``milpscore predict model.json CSV`` scores new rows; ``milpscore export CSV --to model.lp|.mps|.py``
writes the program with readable names; ``milpscore compare CSV`` prints the comparison table.
Numeric columns that are not 0/1 are binarised at quantile thresholds (``--binarize K``; 0 keeps
them; the fused table bins its own columns), or with ``--thresholds supervised`` at thresholds
chosen among the label's boundary points on the training rows (``fit``, ``export``). Problems with the input are reported in one line
on stderr with exit code 2, no traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

import numpy as np
import pandas as pd

from milpscore.binarize import ThresholdBinarizer
from milpscore.compare import fit_row
from milpscore.data import encode_labels, validate_features
from milpscore.datasets import load_default

#: how the table names the two programs
PROGRAMS = {"exact": "exact", "relaxed": "relaxed"}
FORMULATIONS = ("slim", "riskscore", "facets", "fused", "rounding", "eye")


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
    f.add_argument("--cv", type=int, default=0, metavar="K", help="also report K-fold cross-validated metrics")
    f.add_argument("--output", help="save the fitted model as JSON (milpscore predict reads it)")
    f.add_argument("--format", choices=("text", "json", "html"), default="text", help="how to print the result")
    pr = sub.add_parser("predict", help="score the rows of a CSV with a saved model")
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
    cp.add_argument("--formulations", default="slim", help="comma-separated catalog names (default slim)")
    cp.add_argument("--methods", default=None, help="comma-separated methods (default: all of each)")
    cp.add_argument("--time-limit", type=float, default=20.0, help="seconds per (formulation, method)")
    cp.add_argument("--test-size", type=float, default=0.3, help="held-out share (default 0.3)")
    cp.add_argument("--seed", type=int, default=0)
    return p


def _data_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("csv", nargs="?", help="CSV file with a header row (default: bundled breast-cancer data)")
    p.add_argument("--target", help="label column (default: the first column)")
    p.add_argument("--binarize", type=int, default=3, metavar="K",
                   help="binarise numeric columns that are not 0/1 at K quantile thresholds each "
                        "(default 3; 0 uses the columns as they are)")
    p.add_argument("--thresholds", choices=("quantile", "supervised"), default="quantile",
                   help="quantile thresholds (default), or supervised: chosen among the label's boundary points "
                        "by Gini splitting, on the training rows only")


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


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--formulation", choices=FORMULATIONS, default="slim", help="what to fit (default slim)")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds for the whole fit (default 60; a proven fit returns earlier)")
    p.add_argument("--max-size", type=int, default=None, help="maximum number of features in the card")
    p.add_argument("--coef-bound", type=int, default=None, help="points lie in -U..U (formulation default)")
    p.add_argument("--c0", type=float, default=None, help="L0 cost per feature (slim default 0.01)")
    p.add_argument("--lam", type=float, default=None, help="penalty weight (facets, fused, eye)")
    p.add_argument("--multiplier", type=_multiplier, default=None,
                   help="riskscore: risk = logistic(total score / multiplier) (default 1); 'auto' solves each of "
                        "1, 1.5, 2, 3, 4, 6, 8 and keeps the least loss")
    p.add_argument("--one-threshold-per-variable", action="store_true",
                   help="at most one 'x >= t' indicator of each variable (slim, riskscore, facets)")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and of randomised methods")
    p.add_argument("--pos-label", default=None, help="the class the points score for (default: the larger label)")
    p.add_argument("--verbose", action="store_true", help="print the solver's log")
    p.add_argument("--quiet", action="store_true", help="no live progress line on stderr")


# ------------------------------------------------------------------------------- data
def _binarise(X: pd.DataFrame, max_cuts: int, y: pd.Series | None = None, thresholds: str = "quantile"
              ) -> tuple[pd.DataFrame, str, ThresholdBinarizer | None]:
    """Non-binary columns to ``column >= t`` indicators; a line saying what was made; the binariser
    (supervised thresholds are learned from ``y``: pass training rows only)."""
    if max_cuts < 0:
        raise ValueError(f"--binarize must be >= 0 (thresholds per column; 0 keeps the columns), got {max_cuts}")
    validate_features(X)  # NaN / non-numeric columns are named before anything is made
    binarizer = ThresholdBinarizer(max_cuts=max(max_cuts, 1), thresholds=thresholds).fit(X, y)
    wide = list(dict.fromkeys(col for col, op, _ in binarizer.rules_ if op == ">="))
    if not wide:
        return X, "", None
    if max_cuts == 0:
        return X, f"{len(wide)} non-binary column(s) used as they are (--binarize 0): {wide[:5]}", None
    made = sum(op == ">=" for _, op, _ in binarizer.rules_)
    chosen = (f"supervised, from {sum(binarizer.boundary_points_.values())} boundary points"
              if thresholds == "supervised" else "quantiles")
    return binarizer.transform(X), (f"binarised {len(wide)} non-binary column(s) into {made} threshold indicators "
                                    f"({chosen}; at most {max_cuts} per column; --binarize K to change, 0 to keep "
                                    "them)"), binarizer


def _read_csv(path: str) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path!r}: {exc}") from None


def _load(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.Series, str]:
    if args.csv is None:
        X, y = load_default()
        return X, y, "bundled breast-cancer data (scikit-learn)"
    frame = _read_csv(args.csv)
    target = args.target or frame.columns[0]
    if target not in frame.columns:
        raise ValueError(f"--target {target!r} is not a column of {args.csv}; columns: {list(frame.columns)[:10]}")
    return frame.drop(columns=target), frame[target], f"{args.csv} (target {target!r})"


# ----------------------------------------------------------------------------- models
def estimator(args: argparse.Namespace) -> Any:
    """The estimator of ``--formulation`` with the flags the user set (others keep its defaults)."""
    from milpscore import (ConvexRoundingClassifier, EYEClassifier, FacetsClassifier, FusedScoreClassifier,
                           RiskScoreClassifier, SLIMClassifier)

    set_ = {k: v for k, v in {"max_size": args.max_size, "coef_bound": args.coef_bound, "c0": args.c0,
                              "lam": args.lam, "multiplier": args.multiplier}.items() if v is not None}
    common = {"time_limit": args.time_limit, "verbose": args.verbose}
    otpv = {"one_threshold_per_variable": True} if args.one_threshold_per_variable else {}
    pick = lambda *names: {k: set_[k] for k in names if k in set_}  # noqa: E731
    name = args.formulation
    common["pos_label"] = args.pos_label
    if name == "slim":
        return SLIMClassifier(**{"c0": 0.01, **pick("max_size", "coef_bound", "c0")}, seed=args.seed, relaxed=True,
                              **common, **otpv)
    if name == "riskscore":
        return RiskScoreClassifier(**pick("max_size", "coef_bound", "c0", "multiplier"), seed=args.seed, **common,
                                   **otpv)
    if name == "facets":
        return FacetsClassifier(solver="highs-exact", loss="logistic", **pick("lam"), seed=args.seed, relaxed=True,
                                **common, **otpv)
    if name == "fused":
        return FusedScoreClassifier(**pick("lam", "max_size"), seed=args.seed, relaxed=True, **common)
    if name == "rounding":
        return ConvexRoundingClassifier(rounding="exact", **pick("max_size"), random_state=args.seed, **common)
    return EYEClassifier(**pick("lam"), verbose=args.verbose, pos_label=args.pos_label)


def _design(args: argparse.Namespace, X: pd.DataFrame, y: pd.Series
            ) -> tuple[pd.DataFrame, str, ThresholdBinarizer | None]:
    if args.formulation == "fused":  # the fused table bins its own columns
        return X, "", None
    return _binarise(X, args.binarize, y, args.thresholds)


def _progress(args: argparse.Namespace) -> Any:
    """A live progress line on stderr (incumbent, bound, gap) unless ``--quiet`` or not a terminal."""
    import contextlib

    from solvers.progress import ProgressLine, reporting

    if args.quiet or args.verbose or not sys.stderr.isatty():
        return contextlib.nullcontext()
    return reporting(ProgressLine(sys.stderr))


def metrics(model: Any, X: Any, y: Any) -> dict[str, float]:
    """Accuracy and AUC of a fitted model on ``(X, y)``; for risk scores also the calibration error."""
    from sklearn.metrics import roc_auc_score

    labels = model.classes_
    truth = np.asarray(y) == labels[1]
    out = {"accuracy": float(np.mean(model.predict(X) == np.asarray(y, dtype=object).astype(labels.dtype)))}
    out["auc"] = float(roc_auc_score(truth, model.decision_function(X))) if 0 < truth.mean() < 1 else float("nan")
    if hasattr(model, "predict_proba"):
        from milpscore.risk_table import calibration

        out["ece"] = calibration(model.coef_, model.intercept_, model._validated(X), truth.astype(float)).ece
    return out


def comparison_table(model: Any, X: pd.DataFrame, y: pd.Series) -> pd.DataFrame:
    """Exact vs relaxed fits of a fitted model: status, objective, bound, gap, time, accuracy.

    Rows are :func:`milpscore.compare.fit_row` of the model's pipeline fits (``fit_`` and, when
    the model was fitted with ``relaxed=True``, ``relaxed_fit_``).
    """
    Z = model._validated(X)
    Z = Z.toarray() if hasattr(Z, "toarray") else Z  # the fused table's one-hot bins
    y_pm1, _ = encode_labels(y)
    fits = [model.fit_] + ([model.relaxed_fit_] if getattr(model, "relaxed_fit_", None) is not None else [])
    rows = [fit_row(model.fit_.method, fit, Z, y_pm1) for fit in fits]
    table = pd.DataFrame(rows)
    table.insert(0, "program", [f"{PROGRAMS.get(fit.method, fit.method)} ({fit.result.backend if fit.result else '-'})"
                                for fit in fits])
    return table[["program", "status", "objective", "bound", "gap", "violation", "total_time", "train_accuracy"]]


def _cross_validated(args: argparse.Namespace, X: pd.DataFrame, y: pd.Series) -> dict[str, str]:
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    scores: dict[str, list[float]] = {}
    for train, test in StratifiedKFold(args.cv, shuffle=True, random_state=args.seed).split(X, y):
        Z_train, _, binarizer = _design(args, X.iloc[train], y.iloc[train])
        model = clone(estimator(args)).fit(Z_train, y.iloc[train])
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
    with _progress(args):
        model = estimator(args).fit(Z_train, y_train)
    report = {"train " + k: v for k, v in metrics(model, Z_train, y_train).items()}
    if X_test is not None:
        Z_test = binarizer.transform(X_test) if binarizer is not None else X_test
        report.update({"test " + k: v for k, v in metrics(model, Z_test, y_test).items()})
    if args.cv:
        report.update(_cross_validated(args, X, y))
    if args.output:
        from milpscore.persist import save_model

        save_model(model, args.output, binarizer)
    info = model.fit_info_
    head = (f"data: {source}: {info.get('n_rows', len(X_train))} training rows"
            + (f" ({info['n_rows_kept']} distinct)" if "n_rows_kept" in info else "")
            + f", {Z_train.shape[1]} features; labels {model.labels_.describe()}")
    table = comparison_table(model, Z_train, y_train) if model.fit_.method == "exact" else None
    if args.format == "json":
        from milpscore.persist import model_to_dict

        print(json.dumps({"data": head, "metrics": report, "model": model_to_dict(model, binarizer)}, indent=1,
                         default=str))
    elif args.format == "html":
        rows = "".join(f"<tr><td>{k}</td><td>{v if isinstance(v, str) else f'{v:.4f}'}</td></tr>"
                       for k, v in report.items())
        print(f"<p>{head}</p>{model.scorecard_.to_html()}<table>{rows}</table>"
              + (table.to_html(index=False, float_format="{:.4g}".format) if table is not None else ""))
    else:
        print(head)
        if note:
            print(note)
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


def _predict(args: argparse.Namespace) -> int:
    from milpscore.persist import load_model

    model = load_model(args.model)
    frame = _read_csv(args.csv)
    out = pd.DataFrame({"score": model.decision_function(frame), "prediction": model.predict(frame)})
    if model.data["model"]["link"] == "logistic":
        out["probability"] = model.predict_proba(frame)[:, 1]
    if args.output:
        out.to_csv(args.output, index=False)
        print(f"{len(out)} predictions written to {args.output}")
    else:
        print(out.to_csv(index=False), end="")
    return 0


def _export(args: argparse.Namespace) -> int:
    from solvers.backends.highs import write_model
    from solvers.backends.pyomo import write_pyomo_script

    X, y, _ = _load(args)
    Z, _, _ = _design(args, X, y)
    est = estimator(args)
    instance = est.build_instance(Z, y)
    program = instance.relaxed() if args.relaxed else instance.exact()
    names = est._coef_names()
    size = program.blocks["coef"].stop - program.blocks["coef"].start
    labels = {"coef": names} if len(names) == size else None
    writer = write_pyomo_script if args.to.lower().endswith(".py") else write_model
    writer(program, args.to, labels)
    print(f"{'relaxed' if args.relaxed else 'exact'} program of {args.formulation} ({program.n_variables} variables, "
          f"{program.n_rows} rows) written to {args.to}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from milpscore.compare import compare

    X, y, source = _load(args)
    if args.thresholds == "supervised":
        raise ValueError("--thresholds supervised learns from the labels and compare binarises all rows before "
                         "splitting: use it with fit (whose binariser sees only the training rows)")
    Z, note, _ = _binarise(X, args.binarize)
    methods = args.methods.split(",") if args.methods else None
    table = compare(Z, y, [f.strip() for f in args.formulations.split(",")], methods, time_limit=args.time_limit,
                    test_size=args.test_size or None, seed=args.seed, progress=sys.stderr.isatty())
    print(f"data: {source}" + (f"; {note}" if note else ""))
    cols = [c for c in ("formulation", "method", "status", "objective", "bound", "gap", "violation", "size",
                        "train_accuracy", "test_accuracy", "test_auc", "total_time") if c in table.columns]
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(table[cols].to_string(index=False))
    return 0


COMMANDS = {"fit": _fit, "predict": _predict, "export": _export, "compare": _compare}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (ValueError, TypeError, KeyError, RuntimeError) as exc:
        print(f"milpscore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
