"""Exact vs relaxed vs rounded vs local search on the same data: one pandas table.

:func:`compare` splits the data once (stratified, seeded), runs every requested method of every
requested formulation on the training part, and returns one row per ``(formulation, method)``:

======================  =====================================================================
column                  meaning
======================  =====================================================================
formulation, method     registry name and method (``exact``, ``relaxed``, ``rounding``,
                        ``local_search``); ``label`` is the human-readable method name
status                  :class:`solvers.result.Status` value of the solve
objective               the formulation's objective of the returned model (training data)
bound                   best proven lower bound on the *exact* optimum known to that method
                        (the relaxation's value for relaxed / rounded / local-search rows)
gap                     ``(objective - bound) / max(|objective|, 1e-10)``
integrality_gap         ``(exact objective - relaxed objective) / max(|exact objective|, 1e-10)``
                        of the formulation (same on each of its rows; nan without both solves)
build_time, solve_time  seconds (program construction; solver / heuristic)
train_/test_accuracy    accuracy of ``sign(score)`` on the training / held-out rows
train_/test_auc         ROC AUC of the score
size                    non-zero coefficients; ``integrity`` / ``magnitude`` in grid units
                        (:mod:`milpscore.metrics`)
======================  =====================================================================

Because every relaxation here is the exact program with integrality dropped (or a convex
program that lies below it), ``relaxed.objective <= exact.bound <= exact.objective``: the
relaxation is a valid lower bound and ``integrality_gap >= 0`` up to solver tolerances.

Formulations plug in through a small registry (:func:`register_formulation`); an adapter is a
function ``adapter(X, y, context) -> list[MethodFit]`` that runs the methods in
``context.methods`` on training data ``X`` (as given by the user; DataFrame or array) and
labels ``y`` in ``{-1, +1}``. The built-in adapters live in :mod:`milpscore.compare_adapters`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from milpscore.data import encode_labels
from milpscore.metrics import auc, integrity, magnitude, model_size
from solvers.result import Result, relative_gap

METHOD_LABELS = {
    "exact": "exact MILP",
    "relaxed": "LP/conic relaxation",
    "rounding": "relaxation + rounding",
    "prox_rounding": "proximal path + rounding",
    "local_search": "local search",
}
COLUMNS = ("formulation", "method", "label", "status", "objective", "bound", "gap", "integrality_gap",
           "build_time", "solve_time", "train_accuracy", "test_accuracy", "train_auc", "test_auc", "size",
           "integrity", "magnitude")


@dataclass
class MethodFit:
    """One method's model and solver account, as an adapter returns it.

    Attributes
    ----------
    method : key of :data:`METHOD_LABELS`.
    coef : (d,) coefficients in model units; intercept : float.
    result : the solve (status, objective, bound, gap, times); ``objective`` / ``bound`` /
        ``gap`` of the row come from it unless ``objective`` / ``bound`` are given here.
    unit : grid unit for integrity and magnitude (``gamma`` for Facets, 1 otherwise).
    scores : optional ``scores(X) -> (n,)`` for models whose features are not the raw columns
        (e.g. a fused points table applied to binned data); default ``X @ coef + intercept``.
    """

    method: str
    coef: np.ndarray
    intercept: float
    result: Result
    unit: float = 1.0
    objective: float | None = None
    bound: float | None = None
    scores: Callable[[Any], np.ndarray] | None = None


@dataclass(frozen=True)
class FitContext:
    """What an adapter is asked to do: methods, time limit (s per solve), seed, parameters."""

    methods: tuple[str, ...]
    time_limit: float | None
    seed: int
    params: dict[str, Any] = field(default_factory=dict)


Adapter = Callable[[Any, np.ndarray, FitContext], list[MethodFit]]


@dataclass(frozen=True)
class Formulation:
    """A registered formulation: its adapter and the methods it supports."""

    name: str
    adapter: Adapter
    methods: tuple[str, ...]
    description: str = ""


FORMULATIONS: dict[str, Formulation] = {}


def register_formulation(name: str, methods: Sequence[str], description: str = "") -> Callable[[Adapter], Adapter]:
    """Decorator adding an adapter to :data:`FORMULATIONS` under ``name``."""
    unknown = [m for m in methods if m not in METHOD_LABELS]
    if unknown:
        raise ValueError(f"methods {unknown} are not among {list(METHOD_LABELS)}")

    def wrap(adapter: Adapter) -> Adapter:
        FORMULATIONS[name] = Formulation(name, adapter, tuple(methods), description)
        return adapter

    return wrap


def _features(X: Any) -> np.ndarray:
    return X.to_numpy(dtype=float) if isinstance(X, pd.DataFrame) else np.asarray(X, dtype=float)


def _row(name: str, fit: MethodFit, X_train, y_train, X_test, y_test) -> dict[str, Any]:
    res = fit.result
    objective = res.objective if fit.objective is None else fit.objective
    bound = res.bound if fit.bound is None else fit.bound
    scorer = fit.scores or (lambda Z: _features(Z) @ np.asarray(fit.coef, dtype=float) + fit.intercept)
    row: dict[str, Any] = {"formulation": name, "method": fit.method, "label": METHOD_LABELS[fit.method],
                           "status": res.status.value, "objective": float(objective), "bound": float(bound),
                           "gap": relative_gap(objective, bound) if np.isfinite(bound) else res.gap,
                           "build_time": res.build_time, "solve_time": res.solve_time}
    for split, X, y in (("train", X_train, y_train), ("test", X_test, y_test)):
        if X is None:
            row[f"{split}_accuracy"] = row[f"{split}_auc"] = float("nan")
            continue
        s = np.asarray(scorer(X), dtype=float)
        row[f"{split}_accuracy"] = float(np.mean(np.where(s > 0, 1.0, -1.0) == y))
        row[f"{split}_auc"] = auc(s[:, None], y, np.ones(1), 0.0)
    row.update(size=model_size(fit.coef), integrity=integrity(fit.coef, fit.unit), magnitude=magnitude(fit.coef, fit.unit))
    return row


def _check_methods(methods: Sequence[str] | None, formulations: Sequence[str]) -> tuple[str, ...] | None:
    if methods is None:
        return None
    bad = [m for m in methods if m not in METHOD_LABELS]
    if bad:
        raise ValueError(f"methods {bad} are unknown; choose from {list(METHOD_LABELS)}")
    if not any(set(methods) & set(FORMULATIONS[f].methods) for f in formulations):
        raise ValueError(f"none of the formulations {list(formulations)} supports methods {list(methods)}; "
                         f"supported: { {f: FORMULATIONS[f].methods for f in formulations} }")
    return tuple(methods)


def compare(X: Any, y: Any, formulations: Sequence[str] = ("slim",), methods: Sequence[str] | None = None, *,
            time_limit: float | None = 30.0, test_size: float | None = 0.3, seed: int = 0,
            params: dict[str, dict[str, Any]] | None = None, progress: bool = True) -> pd.DataFrame:
    """Run every method of every formulation on one seeded train/test split; one row each.

    Parameters
    ----------
    X : (n, d) features (array or DataFrame; the fused formulation takes raw mixed columns).
    y : (n,) two-valued labels (mapped as :func:`milpscore.data.encode_labels`).
    formulations : names in :data:`FORMULATIONS` (``list_formulations()``).
    methods : subset of :data:`METHOD_LABELS`; None runs every method each formulation supports.
    time_limit : seconds per solve (MILPs keep their incumbent at the limit, status ``feasible``).
    test_size : share of rows held out (stratified); None or 0 trains on everything.
    seed : seeds the split and every randomised method (rounding draws, restarts).
    params : per-formulation keyword arguments, e.g. ``{"slim": {"c0": 0.01, "coef_bound": 5}}``.
    progress : show a tqdm progress bar over the formulations.

    Returns
    -------
    DataFrame with the columns :data:`COLUMNS` (module docstring), one row per
    ``(formulation, method)``.
    """
    import milpscore.compare_adapters  # noqa: F401  (registers the built-in formulations)

    if isinstance(formulations, str):
        formulations = (formulations,)
    unknown = [f for f in formulations if f not in FORMULATIONS]
    if unknown:
        raise ValueError(f"formulations {unknown} are not registered; available: {list_formulations()}")
    params = dict(params or {})
    bad = [k for k in params if k not in formulations]
    if bad:
        raise ValueError(f"params given for {bad}, which are not in formulations={list(formulations)}")
    wanted = _check_methods(methods, formulations)
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 seconds or None, got {time_limit}")
    y_pm1, _ = encode_labels(y)
    n = y_pm1.shape[0]
    if (X.shape[0] if hasattr(X, "shape") else len(X)) != n:
        raise ValueError(f"X has {X.shape[0]} rows but y has {n} labels; they must match")
    if test_size:
        if not 0 < test_size < 1:
            raise ValueError(f"test_size must lie in (0, 1) or be None, got {test_size}")
        idx_train, idx_test = train_test_split(np.arange(n), test_size=test_size, random_state=seed, stratify=y_pm1)
    else:
        idx_train, idx_test = np.arange(n), None
    take = (lambda idx: X.iloc[idx]) if isinstance(X, pd.DataFrame) else (lambda idx: np.asarray(X)[idx])
    X_train, y_train = take(idx_train), y_pm1[idx_train]
    X_test, y_test = (take(idx_test), y_pm1[idx_test]) if idx_test is not None else (None, None)
    rows = []
    bar = _progress_bar(formulations) if progress else None
    for name in formulations if bar is None else bar:
        spec = FORMULATIONS[name]
        todo = spec.methods if wanted is None else tuple(m for m in spec.methods if m in wanted)
        if not todo:
            continue
        if bar is not None:
            bar.set_postfix_str(name)
        t0 = time.perf_counter()
        fits = spec.adapter(X_train, y_train, FitContext(todo, time_limit, seed, dict(params.get(name, {}))))
        block = [_row(name, fit, X_train, y_train, X_test, y_test) for fit in fits]
        exact = [r["objective"] for r in block if r["method"] == "exact"]
        relaxed = [r["objective"] for r in block if r["method"] == "relaxed"]
        gap = (relative_gap(exact[0], relaxed[0]) if exact and relaxed and np.isfinite(relaxed[0])
               else float("nan"))
        for r in block:
            r["integrality_gap"] = gap
        rows.extend(block)
        if bar is not None:
            bar.set_postfix_str(f"{name}: {time.perf_counter() - t0:.1f}s")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _progress_bar(formulations: Sequence[str]) -> Any:
    from tqdm.auto import tqdm

    return tqdm(formulations, desc="compare")


def list_formulations() -> dict[str, tuple[str, ...]]:
    """Registered formulations and the methods each supports."""
    import milpscore.compare_adapters  # noqa: F401

    return {name: spec.methods for name, spec in FORMULATIONS.items()}
