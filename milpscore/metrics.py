"""Model metrics shared by :mod:`milpscore.compare`, :mod:`milpscore.studies.selection` and the notebooks.

All functions take a linear model ``score(x) = x . coef + intercept`` (coefficients in model
units) and labels in ``{-1, +1}`` or any two values (the larger one is positive, as in
:func:`milpscore.data.validation.encode_labels`).

Definitions (Belahcene et al., ACML 2020, section 2, "Models"):

* *integrity*: the share of coefficients that are integers on the grid ``unit * Z``, i.e.
  ``mean_j [ |coef_j / unit - round(coef_j / unit)| <= tol ]`` (1.0 for an empty model);
* *magnitude*: an upper bound of a norm of the model; here ``max_j |coef_j / unit|`` (the
  largest number of points on the card, the l-infinity norm in grid units);
* *size*: number of non-zero coefficients (the L0 norm; SLIM's model size).
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from milpscore import credibility

INTEGRITY_TOL = 1e-6


def _labels_pm1(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    classes = np.unique(y)
    if classes.size > 2:
        raise ValueError(f"y must have at most two classes, got {classes.size}")
    if classes.size == 2:
        return np.where(y == classes[1], 1.0, -1.0)
    return np.where(np.isin(y, (1, 1.0, True)), 1.0, -1.0)


def decision_scores(X: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """Scores ``X @ coef + intercept``, shape (n,)."""
    X = np.asarray(X, dtype=float)
    coef = np.asarray(coef, dtype=float)
    if X.ndim != 2 or X.shape[1] != coef.shape[0]:
        raise ValueError(f"X has shape {X.shape} but coef has {coef.shape[0]} entries; they must match")
    return X @ coef + float(intercept)


def accuracy(X: np.ndarray, y: np.ndarray, coef: np.ndarray, intercept: float) -> float:
    """Share of rows with ``sign(score) == y``; a score of exactly 0 predicts the negative class."""
    y = _labels_pm1(y)
    predicted = np.where(decision_scores(X, coef, intercept) > 0, 1.0, -1.0)
    return float(np.mean(predicted == y))


def auc(X: np.ndarray, y: np.ndarray, coef: np.ndarray, intercept: float) -> float:
    """Area under the ROC curve of the scores (nan when ``y`` has one class only)."""
    y = _labels_pm1(y)
    if np.unique(y).size < 2:
        return float("nan")
    return float(roc_auc_score(y, decision_scores(X, coef, intercept)))


def model_size(coef: np.ndarray, tol: float = 1e-9) -> int:
    """Number of coefficients with ``|coef_j| > tol`` (L0 norm)."""
    return int(np.sum(np.abs(np.asarray(coef, dtype=float)) > tol))


def integrity(coef: np.ndarray, unit: float = 1.0, tol: float = INTEGRITY_TOL) -> float:
    """Share of ``coef / unit`` within ``tol`` of an integer (Facets paper, section 2); 1.0 if empty.

    The definition of :func:`milpscore.credibility.integrity`, re-exported here.
    """
    return credibility.integrity(coef, unit, tol)


def magnitude(coef: np.ndarray, unit: float = 1.0) -> float:
    """``max_j |coef_j / unit|``: the largest number of points (0.0 for an empty model).

    :func:`milpscore.credibility.magnitude` (l-infinity norm) in grid units.
    """
    if not (np.isfinite(unit) and unit > 0):
        raise ValueError(f"unit must be a finite number > 0 (the grid step, e.g. Facets' gamma), got {unit}")
    return credibility.magnitude(np.asarray(coef, dtype=float) / unit)


def model_metrics(coef: np.ndarray, intercept: float, unit: float = 1.0, *, X_train=None, y_train=None,
                  X_test=None, y_test=None) -> dict[str, float]:
    """All of the above in one flat dict (train/test entries only for the sets given)."""
    out: dict[str, float] = {}
    for split, X, y in (("train", X_train, y_train), ("test", X_test, y_test)):
        if X is None:
            continue
        out[f"{split}_accuracy"] = accuracy(X, y, coef, intercept)
        out[f"{split}_auc"] = auc(X, y, coef, intercept)
    out.update(size=model_size(coef), integrity=integrity(coef, unit), magnitude=magnitude(coef, unit))
    return out
