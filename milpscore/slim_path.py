"""The accuracy-size path of SLIM: the best card of each size (Ustun & Rudin 2016, section 5).

:func:`slim_path` solves the sequence of SLIM problems with ``max_size = 1, 2, ...`` on the same
data, each warm-started from the previous size's model (feasible for the next size), and
returns a :class:`SLIMPath`: one row per size (training and test error, size actually used,
objective, bound, gap, status, time) and the score card of each size. This answers "what is the
best 5-point card?" directly and is the paper's way to choose ``C0``. With a tiny ``c0`` (the
default 1e-6) each model is the most accurate one with at most ``max_size`` features.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from formulations.coefficients import CoefficientSet
from formulations.slim import SLIM
from milpscore.data import LabelMap, validate_features, validate_sample_weight, validate_xy
from milpscore.scorecard import ScoreCard
from solvers.limits import Limits
from solvers.pipeline import Fit, solve_exact


@dataclass(frozen=True)
class SLIMPath:
    """Result of :func:`slim_path`: the Pareto table and the card of each size."""

    table: pd.DataFrame
    cards: dict[int, ScoreCard]
    fits: dict[int, Fit]

    def plot(self, ax: Any = None) -> Any:
        """Training (and test) error against the number of features; proven optima filled."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        t = self.table
        proven = t["status"] == "optimal"
        ax.plot(t["max_size"], t["train_error"], color="tab:blue", label="training error")
        if proven.any():
            ax.scatter(t["max_size"][proven], t["train_error"][proven], color="tab:blue", zorder=3,
                       label="proven optimal")
        if (~proven).any():
            ax.scatter(t["max_size"][~proven], t["train_error"][~proven], facecolors="white", edgecolors="tab:blue",
                       zorder=3, label="stopped at the limit (not proven)")
        if t["test_error"].notna().any():
            ax.plot(t["max_size"], t["test_error"], color="tab:orange", marker="s", label="test error")
        ax.set_xlabel("maximum number of features (max_size)")
        ax.set_ylabel("error rate")
        ax.set_xticks(t["max_size"].to_numpy())
        ax.set_title("SLIM accuracy-size path")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        return ax


def slim_path(X: Any, y: Any, sizes: Iterable[int] = range(1, 11), *, c0: float = 1e-6, coef_bound: int = 10,
              coefficients: CoefficientSet | None = None, X_test: Any = None, y_test: Any = None,
              sample_weight: Any = None, time_limit: float | None = 30.0, mip_rel_gap: float = 1e-6,
              threads: int = 1) -> SLIMPath:
    """Best SLIM card of each size, each solve warm-started from the previous one.

    Parameters
    ----------
    X, y : training data (binary or integer features; two-valued labels).
    sizes : increasing values of ``max_size``.
    c0, coef_bound, coefficients : as :class:`~milpscore.estimators.SLIMClassifier`.
    X_test, y_test : optional held-out data for the test-error column.
    time_limit : wall-clock seconds per size (each solve is certified on its own).

    Returns
    -------
    :class:`SLIMPath` with columns ``max_size, size, train_error, test_error, objective, bound,
    gap, status, seconds``.
    """
    sizes = [int(k) for k in sizes]
    if not sizes or any(k < 0 for k in sizes) or sizes != sorted(set(sizes)):
        raise ValueError(f"sizes must be increasing non-negative integers, got {sizes}")
    Xa, y_pm1, names, labels = validate_xy(X, y)
    w = validate_sample_weight(sample_weight, Xa.shape[0])
    if coefficients is not None:
        coefficients = coefficients.aligned(names)
    test = None
    if X_test is not None:
        Xt = validate_features(X_test, n_features=Xa.shape[1], columns=list(names) if hasattr(X_test, "columns") else None)
        yt = np.where(np.asarray(y_test) == labels.positive, 1.0, -1.0)
        test = (Xt, yt)
    limits = Limits(time_limit=time_limit, mip_rel_gap=mip_rel_gap, threads=threads)
    rows, cards, fits = [], {}, {}
    previous = None
    for k in sizes:
        instance = SLIM(coefficients=coefficients, coef_bound=coef_bound, c0=c0, max_size=k).instance(Xa, y_pm1, w)
        fit = solve_exact(instance, start=previous, limits=limits)
        if fit.model is None:
            raise RuntimeError(f"max_size={k}: no model ({fit.status.value}: {fit.message})")
        previous = fit.model
        fits[k] = fit
        cards[k] = _card(fit, names, labels, k)
        train_error = float(np.average(np.sign(Xa @ fit.model.coef + fit.model.intercept) != y_pm1, weights=w))
        test_error = (float(np.mean(np.where(test[0] @ fit.model.coef + fit.model.intercept > 0, 1.0, -1.0) != test[1]))
                      if test is not None else np.nan)
        rows.append({"max_size": k, "size": fit.model.size, "train_error": train_error, "test_error": test_error,
                     "objective": fit.objective, "bound": fit.bound, "gap": fit.gap, "status": fit.status.value,
                     "seconds": fit.times.get("total", np.nan)})
    return SLIMPath(pd.DataFrame(rows), cards, fits)


def _card(fit: Fit, names: list[str], labels: LabelMap, k: int) -> ScoreCard:
    note = f"max_size={k}: status={fit.status.value} objective={fit.objective:.6g} bound={fit.bound:.6g} gap={fit.gap:.3g}"
    return ScoreCard.from_coefficients(fit.model.coef, fit.model.intercept, names, positive_label=labels.positive,
                                       negative_label=labels.negative, title=f"SLIM card, at most {k} features",
                                       notes=(note,))
