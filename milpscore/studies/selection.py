"""Model selection: cross-validated (lambda, grid unit) grids for Facets, Table 2 counts, paths.

Our estimators are scikit-learn classifiers, so ``sklearn.model_selection.GridSearchCV`` and
``cross_val_score`` work on them directly (tested for every estimator). This module adds what
scikit-learn does not record:

* :func:`path_grid` — the grid search of the Facets paper (Belahcene et al., ACML 2020,
  section 6): for every ``(lambda, grid_unit)`` it fits on each CV fold and records the mean test
  accuracy, the mean *integrity* of ``coef_ / grid_unit``, whether the model is *null* (all weights
  zero), *fully integral*, and *optimal* (fully integral and as accurate as the best grid point:
  "23 [integral models] achieve maximal accuracy");
* :func:`table2` — the counts of the paper's Table 2 (grid points, null, integral, optimal),
  with a ``fractional`` column so that ``null + integral + fractional = grid points``;
* :func:`regularisation_path` — coefficients on the full data along ``lambda`` (Figure 3, right),
  warm-started along the grid (:func:`solvers.proximal.path.regularisation_path`) for proximal estimators.

Parallelism goes through joblib: ``n_jobs`` processes locally, or any joblib backend in force,
e.g. a dask cluster when one machine is not enough (``pip install 'milpscore[dask]'``)::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")        # or Client(LocalCluster(...))
    with joblib.parallel_backend("dask"):
        grid = path_grid(X, y, lambdas, grid_units, n_jobs=-1)

Every fit is seeded through ``seed`` (the folds) and returns the same table on any backend.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from milpscore.data.validation import validate_xy
from milpscore.metrics import accuracy, integrity, magnitude, model_size


def _default_facets() -> Any:
    from milpscore.estimators.facets import FacetsClassifier

    return FacetsClassifier(solver="ecos", loss="logistic", bound=10)


def _default_path_estimator() -> Any:
    from milpscore.estimators.facets import FacetsClassifier

    return FacetsClassifier(solver="prox", loss="logistic", bound=10)


def _positive_grid(values: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be a non-empty sequence of finite numbers >= 0, got {values!r}")
    return arr


def _proximal_parts(estimator: Any, X: np.ndarray, y: np.ndarray, names: list[str]):
    """``(family, loss, options)`` when ``estimator`` fits by the proximal path, else None.

    The estimator is a preset of :class:`~milpscore.estimators.base.IntegerLinearClassifier`
    whose pipeline method is the relaxation on the ``"prox"`` backend and whose formulation has
    a penalty strength ``lam`` and a composite ``loss + penalty`` form.
    """
    from milpscore.estimators.base import IntegerLinearClassifier

    if not isinstance(estimator, IntegerLinearClassifier):
        return None
    method, backend, options = estimator._method()
    if method != "relaxed" or backend != "prox":
        return None
    spec = estimator._formulation(y, names)
    if not is_dataclass(spec) or "lam" not in {f.name for f in fields(spec)}:
        return None
    Z = estimator._design(X, names, fitting=True)
    instance = spec.instance(Z, y)
    if not hasattr(instance, "composite"):
        return None
    loss, _ = instance.composite()

    def family(lam: float):
        return replace(spec, lam=float(lam)).instance(Z, y).composite()[1]

    return family, loss, dict(options or {})


def _refit(estimator: Any, lam: float, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, str]:
    model = clone(estimator).set_params(lam=lam).fit(X, y)
    return np.asarray(model.coef_, dtype=float), float(model.intercept_), model.status_


def _path(estimator: Any, lambdas: np.ndarray, X: np.ndarray, y: np.ndarray, names: list[str],
          n_jobs: int | None = 1) -> list[tuple[np.ndarray, float, str]]:
    """``(coef, intercept, status)`` for each ``lam`` of ``lambdas`` (in that order).

    A proximal estimator is solved along the grid by the warm-started
    :func:`solvers.proximal.path.regularisation_path`; any other estimator is refitted at each point
    (``n_jobs`` joblib workers).
    """
    parts = _proximal_parts(estimator, X, y, names)
    if parts is None:
        return Parallel(n_jobs=n_jobs)(delayed(_refit)(estimator, lam, X, y) for lam in lambdas)
    from solvers.proximal.path import regularisation_path as warm_started_path

    family, loss, options = parts
    points = warm_started_path(loss, family, lambdas, **options)
    by_lam = {p.lam: (np.asarray(p.coef, dtype=float), float(p.intercept), p.result.status.value) for p in points}
    return [by_lam[float(lam)] for lam in lambdas]


def _fold_path(estimator: Any, unit: float, lambdas: np.ndarray, X: np.ndarray, y: np.ndarray,
               names: list[str], train: np.ndarray, test: np.ndarray, tol: float) -> list[dict[str, Any]]:
    """One fold, one grid unit: the path over ``lambdas`` on ``train``, scored on ``test``."""
    base = clone(estimator).set_params(grid_unit=unit)
    rows = []
    for coef, b, status in _path(base, lambdas, X[train], y[train], names):
        size = model_size(coef, tol * unit)
        rows.append({"accuracy": accuracy(X[test], y[test], coef, b), "integrity": integrity(coef, unit, tol),
                     "magnitude": magnitude(coef, unit), "size": size, "null": size == 0, "status": status})
    return rows


def path_grid(X: Any, y: Any, lambdas: Sequence[float], grid_units: Sequence[float], *, estimator: Any = None,
              cv: int = 5, seed: int = 0, n_jobs: int | None = 1, integrity_tol: float = 1e-4,
              accuracy_tol: float = 1e-9, verbose: int = 0) -> pd.DataFrame:
    """Cross-validated Facets grid over ``(lambda, grid_unit)``: accuracy, integrity, Table 2 flags.

    Parameters
    ----------
    X : (n, d) features; y : (n,) two-valued labels.
    lambdas, grid_units : grid values (``lam >= 0`` penalty weight; ``grid_unit > 0``, the Facets grid unit of eq. 9).
    estimator : a classifier with parameters ``lam`` and ``grid_unit`` and fitted ``coef_`` (default
        :class:`~milpscore.estimators.facets.FacetsClassifier` with ``solver="ecos"``,
        ``loss="logistic"``, ``bound=10``); cloned for every fit. For each grid unit and fold the
        lambdas form one path: warm-started (:func:`solvers.proximal.path.regularisation_path`) when the
        estimator fits by the proximal path, refitted point by point otherwise.
    cv : number of stratified folds (shuffled with ``seed``).
    n_jobs : joblib workers (``-1``: all); the active joblib backend is used (e.g. dask).
    integrity_tol : a weight counts as integral within this many grid units (interior-point
        solvers return integers only to about 1e-6 .. 1e-5).
    accuracy_tol : a grid point is *optimal* when fully integral and its accuracy is within this
        of the best accuracy over the grid.

    Returns
    -------
    DataFrame, one row per grid point: ``lam, grid_unit, alpha = lam / grid_unit, beta = lam / grid_unit^2``
    (the paper's size and shape parameters), ``accuracy`` and ``accuracy_std`` (over folds),
    ``integrity``, ``magnitude``, ``size`` (means over folds), ``null`` (null on every fold),
    ``fully_integral`` (not null, integrity 1 on every fold), ``optimal``, ``status`` (the solver
    statuses seen, joined by ``/``).
    """
    Xa, y_pm1, names, _ = validate_xy(X, y)
    lam_grid, unit_grid = _positive_grid(lambdas, "lambdas"), _positive_grid(grid_units, "grid_units")
    if np.any(unit_grid <= 0):
        raise ValueError(f"grid_units must be > 0 (the Facets grid unit), got {grid_units!r}")
    if not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2 (number of folds), got {cv!r}")
    estimator = _default_facets() if estimator is None else estimator
    missing = [name for name in ("lam", "grid_unit") if name not in estimator.get_params()]
    if missing:
        raise ValueError(f"estimator {type(estimator).__name__} has no parameter {', '.join(map(repr, missing))}; "
                         "path_grid needs a Facets-style estimator with 'lam' and 'grid_unit'")
    folds = list(StratifiedKFold(cv, shuffle=True, random_state=seed).split(Xa, y_pm1))
    jobs = (delayed(_fold_path)(estimator, unit, lam_grid, Xa, y_pm1, names, tr, te, integrity_tol)
            for unit in unit_grid for tr, te in folds)
    paths = Parallel(n_jobs=n_jobs, verbose=verbose)(jobs)
    rows = []
    for g, unit in enumerate(unit_grid):
        for k, lam in enumerate(lam_grid):
            per_fold = pd.DataFrame([paths[g * cv + f][k] for f in range(cv)])
            null = bool(per_fold["null"].all())
            rows.append({"lam": lam, "grid_unit": unit, "alpha": lam / unit, "beta": lam / unit ** 2,
                         "accuracy": per_fold["accuracy"].mean(), "accuracy_std": per_fold["accuracy"].std(ddof=0),
                         "integrity": per_fold["integrity"].mean(), "magnitude": per_fold["magnitude"].mean(),
                         "size": per_fold["size"].mean(), "null": null,
                         "fully_integral": (not null) and bool((per_fold["integrity"] >= 1.0).all()),
                         "status": "/".join(sorted(set(per_fold["status"])))})
    grid = pd.DataFrame(rows)
    best = grid["accuracy"].max()
    grid["optimal"] = grid["fully_integral"] & (grid["accuracy"] >= best - accuracy_tol)
    return grid


def table2(grid: pd.DataFrame) -> pd.DataFrame:
    """Counts of the Facets paper's Table 2 from a :func:`path_grid` table (one row).

    ``grid points = null + integral + fractional`` (a partition); ``optimal`` counts the
    integral points with the best accuracy, so ``optimal <= integral``.
    """
    needed = {"null", "fully_integral", "optimal"}
    if not needed <= set(grid.columns):
        raise ValueError(f"grid lacks columns {sorted(needed - set(grid.columns))}; pass the output of path_grid")
    null = int(grid["null"].sum())
    integral = int(grid["fully_integral"].sum())
    return pd.DataFrame([{"grid points": len(grid), "null": null, "integral": integral,
                          "fractional": len(grid) - null - integral, "optimal": int(grid["optimal"].sum())}])


def regularisation_path(X: Any, y: Any, lambdas: Sequence[float], *, estimator: Any = None, n_jobs: int | None = 1,
                        **fixed: Any) -> pd.DataFrame:
    """Coefficients fitted on all of ``X`` for each ``lambda`` (one row per lambda, one column per feature).

    ``fixed`` sets other parameters of the (cloned) estimator, e.g. ``grid_unit=0.5``. The
    default estimator is :class:`~milpscore.estimators.facets.FacetsClassifier` with the
    proximal solver (logistic loss, ``bound=10``): the grid is then solved by the warm-started
    :func:`solvers.proximal.path.regularisation_path` (decreasing lambda, each point started from the
    previous one). Estimators that do not fit by the proximal path are refitted at each lambda
    (``n_jobs`` joblib workers).
    The index is ``lam`` (in the order given); column names are the feature names of ``X``
    (``x0 ..`` for arrays).
    """
    Xa, y_pm1, names, _ = validate_xy(X, y)
    lam_grid = _positive_grid(lambdas, "lambdas")
    base = clone(_default_path_estimator() if estimator is None else estimator).set_params(**fixed)
    coefs = [coef for coef, _, _ in _path(base, lam_grid, Xa, y_pm1, names, n_jobs)]
    return pd.DataFrame(np.vstack(coefs), index=pd.Index(lam_grid, name="lam"), columns=names)


__all__ = ["path_grid", "table2", "regularisation_path"]
