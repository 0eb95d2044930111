"""The accuracy-size path of SLIM: the best card of each size (Ustun & Rudin 2016, section 5).

:func:`slim_path` solves the sequence of SLIM problems with ``max_size = 1, 2, ...`` on the same
data within one time budget, the sizes sharing models and bounds (:mod:`solvers.size_path`: the
best model of size k-1 warm-starts size k; a bound of size K holds for every smaller size), and
returns a :class:`SLIMPath`: one row per size (training and test error, test AUC, size actually
used, objective, bound, gap, status, time, how certified) and the score card of each size. This answers "what is the
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
from milpscore.data.validation import LabelMap, validate_features, validate_sample_weight, validate_xy
from milpscore.metrics import auc
from milpscore.cards.scorecard import ScoreCard
from solvers.limits import Limits
from solvers.size_path import check_sizes, solve_sizes
from solvers.pipeline import Fit


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
              sample_weight: Any = None, time_limit: float | None = 60.0, mip_rel_gap: float = 1e-6,
              threads: int = 1) -> SLIMPath:
    """Certified best SLIM card of each size, the sizes sharing models and bounds.

    Each ``max_size = k`` is SLIM's program (Ustun & Rudin 2016, eq. 3 with ``||lambda||_0 <= k``),
    solved by :func:`solvers.pipeline.solve_exact`; :func:`solvers.size_path.solve_sizes` shares
    what one size proves with the others (models upwards, bounds downwards, the L0 rule) and
    re-certifies each.

    Parameters
    ----------
    X, y : training data (binary or integer features; two-valued labels).
    sizes : increasing values of ``max_size``.
    c0, coef_bound, coefficients : as :class:`~milpscore.estimators.SLIMClassifier`.
    X_test, y_test : optional held-out data for the test columns.
    time_limit : wall-clock seconds of the whole path (one budget; each size gets an equal share of
        what is left when it starts); None: every size is solved to ``mip_rel_gap``.

    Returns
    -------
    :class:`SLIMPath` with columns ``max_size, size, train_error, test_error, test_auc, objective,
    bound, gap, status, seconds, how`` (``how``: solved, or which size's model / bound certified it).
    """
    sizes = check_sizes(sizes)
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

    def instance_for(k: int):
        return SLIM(coefficients=coefficients, coef_bound=coef_bound, c0=c0, max_size=k).instance(Xa, y_pm1, w)

    first = instance_for(sizes[0])
    path = solve_sizes(instance_for, sizes, limits, feature_cost=c0 * float(np.min(first.coefficients.c0)))
    rows, cards, fits = [], {}, {}
    for step in path:
        fit, k = step.fit, step.size
        if fit.model is None:
            raise RuntimeError(f"max_size={k}: no model ({fit.status.value}: {fit.message})")
        fits[k] = fit
        cards[k] = _card(fit, names, labels, k)
        train_error = float(np.average(np.sign(Xa @ fit.model.coef + fit.model.intercept) != y_pm1, weights=w))
        test_error = test_auc = np.nan
        if test is not None:
            score = test[0] @ fit.model.coef + fit.model.intercept
            test_error = float(np.mean(np.where(score > 0, 1.0, -1.0) != test[1]))
            test_auc = auc(test[0], test[1], fit.model.coef, fit.model.intercept)
        rows.append({"max_size": k, "size": int(np.count_nonzero(fit.model.coef)), "train_error": train_error,
                     "test_error": test_error, "test_auc": test_auc, "objective": fit.objective, "bound": fit.bound,
                     "gap": fit.gap, "status": fit.status.value, "seconds": fit.times.get("total", np.nan),
                     "how": step.how})
    return SLIMPath(pd.DataFrame(rows), cards, fits)


def _card(fit: Fit, names: list[str], labels: LabelMap, k: int) -> ScoreCard:
    note = f"max_size={k}: status={fit.status.value} objective={fit.objective:.6g} bound={fit.bound:.6g} gap={fit.gap:.3g}"
    return ScoreCard.from_coefficients(fit.model.coef, fit.model.intercept, names, positive_label=labels.positive,
                                       negative_label=labels.negative, title=f"SLIM card, at most {k} features",
                                       notes=(note,))
