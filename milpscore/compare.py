"""Exact vs relaxed vs rounded vs heuristic solves on the same data: one pandas table.

:func:`compare` splits the data once (stratified, seeded), binds every requested formulation of
:data:`solvers.catalog.CATALOG` to the training part (**one** instance per formulation) and runs
each requested method through :func:`solvers.pipeline.run`. The relaxation is solved once per
formulation and is the source of the rounding and of the formulation's extra methods, so a
formulation appears here as soon as it has a catalog entry: there is no per-formulation code.

======================  =====================================================================
column                  meaning
======================  =====================================================================
formulation, method     catalog name and method (``exact``, ``relaxed``, ``rounding``,
                        ``heuristic`` or an extra method of the entry); ``label`` in words
settings                the spec's :data:`SETTINGS` the row was solved with (``c0=0.001
                        coef_bound=10``): a row's model and a model fitted elsewhere with other
                        settings are not comparable
status                  certificate of the pipeline's :class:`~solvers.pipeline.Fit`
objective               true objective of the returned model on the training data; for the
                        ``relaxed`` row the value of the relaxation (a lower bound)
bound                   best proven lower bound on the *exact* optimum known to that call (the
                        relaxation's value for rows that start from it)
gap                     ``(objective - bound) / max(|objective|, 1e-10)``
violation               largest constraint violation of the model in the exact program: 0 for
                        exact rows; a relaxed model violates integrality, and a rounded model
                        that misses a constraint shows by how much
integrality_gap         ``(exact objective - relaxed objective) / max(|exact objective|, 1e-10)``
                        of the formulation (same on each of its rows; nan without both)
build_time, solve_time  seconds building the instance and its programs (built once per
                        formulation, counted on each row) / solving (solver and heuristics)
total_time              wall time of the approach: the build, the call itself, and the
                        relaxation for the rows that start from it (rounding, extra methods)
train_/test_accuracy    accuracy of ``sign(score)`` on the training / held-out rows
train_/test_auc         ROC AUC of the score
size                    non-zero coefficients; ``integrity`` / ``magnitude`` in grid units
                        (``Model.extras["grid_unit"]``, else 1; :mod:`milpscore.metrics`)
======================  =====================================================================

Every ``(formulation, method)`` call has its own ``time_limit`` (an exact solve that runs to its
limit leaves the next row its whole budget); ``progress`` writes one line on stderr, rewritten in
place, when stderr is a terminal or when asked.

Each relaxation is the exact program with integrality dropped (or a convex program below it),
so ``relaxed.objective <= exact.bound <= exact.objective`` up to solver tolerances.

Features. A formulation sees the validated numeric columns, unless its spec has a
``design(X)`` hook (e.g. ordered one-hot bins of raw columns): then ``design`` receives the raw
training and test parts (array or DataFrame). When ``design(X_train)`` returns a fitted
transformer (an object with ``transform``) instead of an array, both parts are transformed by it,
so the test rows are encoded with the training bins.

The last column, ``message``, is the pipeline's account of the call (rejected starts, which
model was kept, the backend's message).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from solvers.catalog import CATALOG, Entry, get_entry
from solvers.limits import Limits
from solvers.result import relative_gap

if TYPE_CHECKING:
    import pandas as pd

    from solvers.pipeline import Fit

# pandas, scikit-learn and the pipeline are imported where they are used: ``import milpscore``
# binds ``compare`` eagerly (a function shadowing its own module must be bound before anything
# imports the module), and should not cost a scikit-learn import.

METHOD_LABELS = {
    "exact": "exact program",
    "relaxed": "relaxation",
    "rounding": "relaxation + rounding",
    "heuristic": "heuristic",
    "randomized_rounding": "randomized rounding",
    "local_search": "local search",
    "prox_rounding": "proximal path + rounding",
}
COLUMNS = ("formulation", "method", "label", "settings", "status", "objective", "bound", "gap", "violation",
           "integrality_gap", "build_time", "solve_time", "total_time", "train_accuracy", "test_accuracy",
           "train_auc", "test_auc", "size", "integrity", "magnitude", "message")
#: spec fields the ``settings`` column states (when the spec has them and they are set)
SETTINGS = ("c0", "coef_bound", "max_size", "lam", "loss", "grid_unit", "bound", "weights", "multiplier")
#: methods that do not start from the relaxed fit
_STANDALONE = ("exact", "relaxed", "heuristic")


def method_label(method: str) -> str:
    """Human-readable name of a method (``"local_search"`` -> ``"local search"``)."""
    return METHOD_LABELS.get(method, method.replace("_", " "))


def list_formulations() -> dict[str, tuple[str, ...]]:
    """Catalog formulations and the methods :func:`compare` can run for each."""
    return {name: entry.method_names for name, entry in CATALOG.items()}


# ------------------------------------------------------------------------------ arguments
def _check_arguments(formulations: Sequence[str], methods: Sequence[str] | None,
                     params: Mapping[str, Mapping[str, Any]] | None, time_limit: float | None,
                     test_size: float | None) -> tuple[list[Entry], dict[str, dict[str, Any]]]:
    formulations = list(formulations)
    unknown = [f for f in formulations if f not in CATALOG]
    if unknown:
        raise ValueError(f"formulations {unknown} are not in the catalog; available: {sorted(CATALOG)}")
    entries = [get_entry(f) for f in formulations]
    params = {k: dict(v or {}) for k, v in dict(params or {}).items()}
    bad = [k for k in params if k not in formulations]
    if bad:
        raise ValueError(f"params given for {bad}, which are not in formulations={list(formulations)}")
    if methods is not None:
        known = {m for entry in CATALOG.values() for m in entry.method_names}
        wrong = [m for m in methods if m not in known]
        if wrong:
            raise ValueError(f"methods {wrong} are unknown; the catalog's methods are {sorted(known)}")
        if not any(set(methods) & set(entry.method_names) for entry in entries):
            raise ValueError(f"none of the formulations {list(formulations)} supports methods {list(methods)}; "
                             f"supported: { {e.name: e.method_names for e in entries} }")
    Limits(time_limit=time_limit)  # checks time_limit (finite, > 0, or None) before any work
    if test_size and not 0 < test_size < 1:
        raise ValueError(f"test_size must lie in (0, 1) or be None, got {test_size}")
    return entries, params


def _split(X: Any, y_pm1: np.ndarray, test_size: float | None, seed: int):
    import pandas as pd
    import scipy.sparse as sp
    from sklearn.model_selection import train_test_split

    n = y_pm1.shape[0]
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if n_rows != n:
        raise ValueError(f"X has {n_rows} rows but y has {n} labels; they must match")
    if test_size:
        train, test = train_test_split(np.arange(n), test_size=test_size, random_state=seed, stratify=y_pm1)
    else:
        train, test = np.arange(n), None
    if sp.issparse(X):  # rows of a sparse table stay sparse (CSR row slicing)
        X = sp.csr_matrix(X)
        take = (lambda idx: X[idx])
    else:
        take = (lambda idx: X.iloc[idx]) if isinstance(X, pd.DataFrame) else (lambda idx: np.asarray(X)[idx])
    return take(train), y_pm1[train], (None if test is None else take(test)), (None if test is None else y_pm1[test])


def _dense(Z: Any) -> np.ndarray:
    import scipy.sparse as sp

    return np.asarray(Z.toarray() if sp.issparse(Z) else Z, dtype=float)


def _designs(spec: Any, X_train: Any, X_test: Any, numeric: tuple[np.ndarray, np.ndarray | None]):
    """Features the formulation sees (module docstring): ``design`` hook, else the numeric columns."""
    hook = getattr(spec, "design", None)
    if hook is None:
        return numeric
    first = hook(X_train)
    if hasattr(first, "transform"):
        return _dense(first.transform(X_train)), None if X_test is None else _dense(first.transform(X_test))
    return _dense(first), None if X_test is None else _dense(hook(X_test))


# ------------------------------------------------------------------------------------ rows
def fit_row(formulation: str, fit: Fit, X_train: Any, y_train: np.ndarray, X_test: Any = None,
            y_test: np.ndarray | None = None, *, build_time: float = 0.0, source: Fit | None = None) -> dict[str, Any]:
    """One row of the :func:`compare` table for a pipeline fit (columns :data:`COLUMNS`).

    ``X_*`` are the features the formulation saw, ``y_*`` labels in ``{-1, +1}``; ``build_time``
    is the instance's build, counted on the row; ``source`` the relaxed fit the method started
    from (its time is added to ``total_time``).
    """
    from milpscore.metrics import model_metrics

    method = fit.method
    objective = fit.objective
    if method == "relaxed" and fit.result is not None and np.isfinite(fit.result.objective):
        objective = float(fit.result.objective)  # the relaxation's value, not the fractional model's
    times = fit.times
    total = build_time + times.get("total", float("nan"))
    if method not in _STANDALONE and source is not None:
        total += source.times.get("total", 0.0)
    row = {"formulation": formulation, "method": method, "label": method_label(method), "status": fit.status.value,
           "objective": objective, "bound": fit.bound, "gap": relative_gap(objective, fit.bound),
           "violation": fit.violation, "build_time": build_time + times.get("build", 0.0),
           "solve_time": times.get("solve", 0.0) + times.get("heuristic", 0.0), "total_time": total,
           "message": fit.message}
    if fit.model is None:
        return {**row, "size": 0}
    unit = float(fit.model.extras.get("grid_unit", 1.0))
    kw = {"X_train": X_train, "y_train": y_train}
    if X_test is not None:
        kw.update(X_test=X_test, y_test=y_test)
    return {**row, **model_metrics(fit.model.coef, fit.model.intercept, unit, **kw)}


def _fits(instance: Any, entry: Entry, todo: Sequence[str], time_limit: float | None, seed: int,
          tick: Any = None) -> tuple[dict[str, Fit], Fit | None]:
    """Run ``todo`` on one instance; the relaxation once, as the source of the other methods.

    Every call gets its own budget of ``time_limit`` seconds, started when the call starts: an
    exact solve that runs to its limit leaves the next row's budget whole."""
    from solvers.pipeline import run

    def limits() -> Limits:  # a new, unstarted budget: the call starts its own clock
        return Limits(time_limit=time_limit, seed=seed)

    fits: dict[str, Fit] = {}
    relaxed = None
    if "relaxed" in todo or any(m not in _STANDALONE for m in todo):
        if tick is not None and "relaxed" in todo:
            tick(entry.name, "relaxed")
        relaxed = run(instance, "relaxed", limits=limits())
    for method in entry.method_names:
        if method not in todo:
            continue
        if tick is not None and method != "relaxed":
            tick(entry.name, method)
        if method == "relaxed":
            fits[method] = relaxed
        elif method in _STANDALONE:
            fits[method] = run(instance, method, limits=limits())
        else:
            fits[method] = run(instance, method, source=relaxed, limits=limits())
    return fits, relaxed


# --------------------------------------------------------------------------------- compare
def compare(X: Any, y: Any, formulations: Sequence[str] = ("slim",), methods: Sequence[str] | None = None, *,
            time_limit: float | None = 30.0, test_size: float | None = 0.3, seed: int = 0,
            params: Mapping[str, Mapping[str, Any]] | None = None, progress: bool | None = None) -> pd.DataFrame:
    """Run every method of every formulation on one seeded train/test split; one row each.

    Parameters
    ----------
    X : (n, d) features (array or DataFrame; raw columns for formulations with a ``design`` hook).
    y : (n,) two-valued labels (mapped as :func:`milpscore.data.validation.encode_labels`).
    formulations : names of :data:`solvers.catalog.CATALOG` (:func:`list_formulations`).
    methods : subset of the entries' ``method_names``; None runs every method of each formulation.
    time_limit : wall-clock seconds of each ``(formulation, method)`` call, its own budget
        (:class:`solvers.limits.Limits`, started when the call starts); a time-limited exact solve
        keeps its incumbent, status ``feasible``. None: no limit.
    test_size : share of rows held out (stratified); None or 0 trains on everything.
    seed : seeds the split and every randomised method (rounding draws, restarts).
    params : per-formulation keyword arguments of the spec, e.g. ``{"slim": {"c0": 0.01}}``; they
        override the entry's ``defaults`` and the spec's own defaults.
    progress : a one-line progress report on stderr (formulation, method, row k of N, elapsed
        seconds), rewritten in place; None (default): only when stderr is a terminal.

    Returns
    -------
    DataFrame with the columns :data:`COLUMNS` (module docstring), one row per
    ``(formulation, method)``; ``settings`` states the spec's :data:`SETTINGS` of the row (e.g.
    ``c0=0.001 coef_bound=10``), so rows fitted with other settings than a model elsewhere say so.
    """
    import pandas as pd

    from milpscore.data.validation import encode_labels, validate_features

    if isinstance(formulations, str):
        formulations = (formulations,)
    entries, params = _check_arguments(formulations, methods, params, time_limit, test_size)
    y_pm1, _ = encode_labels(y)
    X_train, y_train, X_test, y_test = _split(X, y_pm1, test_size, seed)
    numeric = None
    rows: list[dict[str, Any]] = []
    plan = {entry.name: entry.method_names if methods is None else tuple(m for m in entry.method_names if m in methods)
            for entry in entries}
    bar = _ProgressLine(sum(len(t) for t in plan.values())) if _show_progress(progress) else None
    for entry in entries:
        todo = plan[entry.name]
        if not todo:
            continue
        spec = entry.spec_class(**{**entry.defaults, **params.get(entry.name, {})})
        if numeric is None and getattr(spec, "design", None) is None:
            Z = validate_features(X_train)
            numeric = (Z, None if X_test is None else validate_features(X_test, n_features=Z.shape[1]))
        Z_train, Z_test = _designs(spec, X_train, X_test, numeric)
        t0 = time.perf_counter()
        instance = spec.instance(Z_train, y_train)
        if entry.exact_backend is not None:
            instance.exact()  # built once here (the instance caches it), shared by every method
        build = time.perf_counter() - t0
        fits, relaxed = _fits(instance, entry, todo, time_limit, seed, tick=None if bar is None else bar.tick)
        block = [fit_row(entry.name, fit, Z_train, y_train, Z_test, y_test, build_time=build, source=relaxed)
                 for fit in fits.values()]
        settings = _settings(spec)
        exact = fits.get("exact")
        relaxed_value = next((r["objective"] for r in block if r["method"] == "relaxed"), float("nan"))
        gap = (relative_gap(exact.objective, relaxed_value)
               if exact is not None and exact.model is not None and np.isfinite(relaxed_value) else float("nan"))
        for r in block:
            r["integrality_gap"] = gap
            r["settings"] = settings
        rows.extend(block)
    if bar is not None:
        bar.close()
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _settings(spec: Any) -> str:
    """``"c0=0.001 coef_bound=10"``: the :data:`SETTINGS` fields of a spec that are set."""
    from milpscore.data.binarize import format_number

    def text(value: Any) -> str:
        return format_number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)

    return " ".join(f"{name}={text(getattr(spec, name))}" for name in SETTINGS
                    if getattr(spec, name, None) is not None)


def _show_progress(progress: bool | None) -> bool:
    import sys

    return bool(progress) if progress is not None else sys.stderr.isatty()


class _ProgressLine:
    """``compare  3/8  slim exact  12 s``, rewritten in place on stderr; a summary line at the end."""

    def __init__(self, total: int) -> None:
        import sys

        self.total, self.done, self.stream, self.start = total, 0, sys.stderr, time.perf_counter()

    def tick(self, formulation: str, method: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        self.stream.write(f"\rcompare  {self.done}/{self.total}  {formulation} {method_label(method):<26} "
                          f"{elapsed:6.1f} s ")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write(f"\rcompare  {self.total} rows in {time.perf_counter() - self.start:.1f} s"
                          + " " * 30 + "\n")
        self.stream.flush()


__all__ = ["compare", "fit_row", "list_formulations", "method_label", "COLUMNS", "METHOD_LABELS", "SETTINGS"]
