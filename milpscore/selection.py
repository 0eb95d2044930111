"""Model selection: cross-validated (lambda, gamma) grids for Facets, Table 2 counts, paths.

Our estimators are scikit-learn classifiers, so ``sklearn.model_selection.GridSearchCV`` and
``cross_val_score`` work on them directly (tested for every estimator). This module adds what
scikit-learn does not record:

* :func:`path_grid` — the grid search of the Facets paper (Belahcene et al., ACML 2020,
  section 6): for every ``(lambda, gamma)`` it fits on each CV fold and records the mean test
  accuracy, the mean *integrity* of ``coef_ / gamma``, whether the model is *null* (all weights
  zero), *fully integral*, and *optimal* (fully integral and as accurate as the best grid point:
  "23 [integral models] achieve maximal accuracy");
* :func:`table2` — the counts of the paper's Table 2 (grid points, null, integral, optimal),
  with a ``fractional`` column so that ``null + integral + fractional = grid points``;
* :func:`regularisation_path` — coefficients on the full data along ``lambda`` (Figure 3, right).

Parallelism goes through joblib: ``n_jobs`` processes locally, or any joblib backend in force,
e.g. a dask cluster when one machine is not enough (``pip install 'milpscore[dask]'``)::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")        # or Client(LocalCluster(...))
    with joblib.parallel_backend("dask"):
        grid = path_grid(X, y, lambdas, gammas, n_jobs=-1)

Every fit is seeded through ``seed`` (the folds) and returns the same table on any backend.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from milpscore.data import validate_xy
from milpscore.metrics import accuracy, integrity, magnitude, model_size


def _default_facets() -> Any:
    from milpscore.estimators.facets import FacetsClassifier

    return FacetsClassifier(solver="ecos", loss="logistic", bound=10)


def _positive_grid(values: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be a non-empty sequence of finite numbers >= 0, got {values!r}")
    return arr


def _fit_point(estimator: Any, lam: float, gamma: float, X: np.ndarray, y: np.ndarray, train: np.ndarray,
               test: np.ndarray, tol: float) -> dict[str, Any]:
    model = clone(estimator).set_params(lam=lam, gamma=gamma).fit(X[train], y[train])
    coef, b = model.coef_, model.intercept_
    size = model_size(coef, tol * gamma)
    return {"accuracy": accuracy(X[test], y[test], coef, b), "integrity": integrity(coef, gamma, tol),
            "magnitude": magnitude(coef, gamma), "size": size, "null": size == 0,
            "status": model.status_}


def path_grid(X: Any, y: Any, lambdas: Sequence[float], gammas: Sequence[float], *, estimator: Any = None,
              cv: int = 5, seed: int = 0, n_jobs: int | None = 1, integrity_tol: float = 1e-4,
              accuracy_tol: float = 1e-9, verbose: int = 0) -> pd.DataFrame:
    """Cross-validated Facets grid over ``(lambda, gamma)``: accuracy, integrity, Table 2 flags.

    Parameters
    ----------
    X : (n, d) features; y : (n,) two-valued labels.
    lambdas, gammas : grid values (``lam >= 0`` penalty weight; ``gamma > 0`` grid unit).
    estimator : a classifier with parameters ``lam`` and ``gamma`` and fitted ``coef_`` (default
        :class:`~milpscore.estimators.facets.FacetsClassifier` with ``solver="ecos"``,
        ``loss="logistic"``, ``bound=10``); cloned for every fit.
    cv : number of stratified folds (shuffled with ``seed``).
    n_jobs : joblib workers (``-1``: all); the active joblib backend is used (e.g. dask).
    integrity_tol : a weight counts as integral within this many grid units (interior-point
        solvers return integers only to about 1e-6 .. 1e-5).
    accuracy_tol : a grid point is *optimal* when fully integral and its accuracy is within this
        of the best accuracy over the grid.

    Returns
    -------
    DataFrame, one row per grid point: ``lam, gamma, alpha = lam / gamma, beta = lam / gamma^2``
    (the paper's size and shape parameters), ``accuracy`` and ``accuracy_std`` (over folds),
    ``integrity``, ``magnitude``, ``size`` (means over folds), ``null`` (null on every fold),
    ``fully_integral`` (not null, integrity 1 on every fold), ``optimal``, ``status`` (the solver
    statuses seen, joined by ``/``).
    """
    Xa, y_pm1, _, _ = validate_xy(X, y)
    lam_grid, gamma_grid = _positive_grid(lambdas, "lambdas"), _positive_grid(gammas, "gammas")
    if np.any(gamma_grid <= 0):
        raise ValueError(f"gammas must be > 0 (the grid unit), got {gammas!r}")
    if not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2 (number of folds), got {cv!r}")
    estimator = _default_facets() if estimator is None else estimator
    missing = [p for p in ("lam", "gamma") if p not in estimator.get_params()]
    if missing:
        raise ValueError(f"estimator {type(estimator).__name__} has no parameter(s) {missing}; path_grid needs "
                         "a Facets-style estimator with 'lam' and 'gamma'")
    folds = list(StratifiedKFold(cv, shuffle=True, random_state=seed).split(Xa, y_pm1))
    points = [(lam, gamma) for gamma in gamma_grid for lam in lam_grid]
    jobs = (delayed(_fit_point)(estimator, lam, gamma, Xa, y_pm1, tr, te, integrity_tol)
            for lam, gamma in points for tr, te in folds)
    fits = Parallel(n_jobs=n_jobs, verbose=verbose)(jobs)
    rows = []
    for k, (lam, gamma) in enumerate(points):
        per_fold = pd.DataFrame(fits[k * cv:(k + 1) * cv])
        null = bool(per_fold["null"].all())
        rows.append({"lam": lam, "gamma": gamma, "alpha": lam / gamma, "beta": lam / gamma ** 2,
                     "accuracy": per_fold["accuracy"].mean(), "accuracy_std": per_fold["accuracy"].std(ddof=0),
                     "integrity": per_fold["integrity"].mean(), "magnitude": per_fold["magnitude"].mean(),
                     "size": per_fold["size"].mean(), "null": null,
                     "fully_integral": (not null) and bool((per_fold["integrity"] >= 1.0).all()),
                     "status": "/".join(sorted(set(per_fold["status"])))})
    grid = pd.DataFrame(rows)
    best = grid["accuracy"].max()
    grid["optimal"] = grid["fully_integral"] & (grid["accuracy"] >= best - accuracy_tol)
    return grid


def _fit_coef(estimator: Any, lam: float, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return clone(estimator).set_params(lam=lam).fit(X, y).coef_


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

    ``fixed`` sets other parameters of the (cloned) estimator, e.g. ``gamma=0.5``. The default
    estimator is the one of :func:`path_grid`. The index is ``lam``; column names are the
    feature names of ``X`` (``x0 ..`` for arrays).
    """
    Xa, y_pm1, names, _ = validate_xy(X, y)
    lam_grid = _positive_grid(lambdas, "lambdas")
    base = clone(_default_facets() if estimator is None else estimator).set_params(**fixed)
    coefs = Parallel(n_jobs=n_jobs)(delayed(_fit_coef)(base, lam, Xa, y_pm1) for lam in lam_grid)
    return pd.DataFrame(np.vstack(coefs), index=pd.Index(lam_grid, name="lam"), columns=names)


__all__ = ["path_grid", "table2", "regularisation_path"]
