"""The accuracy-size path of RiskSLIM: the certified best risk score of each size.

:func:`riskscore_path` solves RiskSLIM (Ustun & Rudin 2019, eq. 1: mean logistic loss of the
integer score over ``multiplier`` + ``C0 ||lambda||_0``, points in ``{-coef_bound..coef_bound}``)
with ``max_size = 1, 2, ...`` on the same data within one time budget, the sizes sharing models
and bounds (:mod:`solvers.size_path`), and returns a :class:`RiskScorePath`: one row per size
(objective, bound, gap, status, training loss, test AUC, the points) and the card of each size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from formulations.riskslim import RiskSLIM
from milpscore.data.validation import validate_features, validate_sample_weight, validate_xy
from milpscore.metrics import auc
from milpscore.cards.scorecard import ScoreCard
from solvers.size_path import check_sizes, solve_sizes
from solvers.limits import Limits
from solvers.pipeline import Fit


@dataclass(frozen=True)
class RiskScorePath:
    """Result of :func:`riskscore_path`: the table (one row per size), the card and the fit of each size."""

    table: pd.DataFrame
    cards: dict[int, ScoreCard]
    fits: dict[int, Fit]


def riskscore_path(X: Any, y: Any, sizes: Iterable[int] = range(1, 6), *, coef_bound: int = 5, c0: float = 1e-6,
                   multiplier: float = 1.0, X_test: Any = None, y_test: Any = None, sample_weight: Any = None,
                   time_limit: float | None = 60.0, mip_rel_gap: float = 1e-4, threads: int = 1) -> RiskScorePath:
    """Certified best RiskSLIM score of each size in ``sizes``.

    Parameters
    ----------
    X, y : training data (binary or integer features; two-valued labels).
    sizes : increasing values of ``max_size``.
    coef_bound, c0, multiplier : as :class:`~milpscore.estimators.RiskScoreClassifier` (one
        multiplier; the risk is ``1 / (1 + exp(-score / multiplier))``).
    X_test, y_test : optional held-out data for the ``test_auc`` column.
    time_limit : wall-clock seconds of the whole path (one budget, each size an equal share of what
        is left when it starts); None: every size solved to ``mip_rel_gap``.

    Returns
    -------
    :class:`RiskScorePath`; its table has columns ``max_size, size, objective, bound, gap, status,
    train_loss`` (mean weighted logistic loss), ``test_auc`` (nan without test data), ``points``
    (``{feature: points}`` of the non-zero points), ``intercept``, ``seconds``, ``how`` (solved, or
    which size's model / bound certified it).
    """
    sizes = check_sizes(sizes)
    Xa, y_pm1, names, labels = validate_xy(X, y)
    w = validate_sample_weight(sample_weight, Xa.shape[0])
    test = None
    if X_test is not None:
        Xt = validate_features(X_test, n_features=Xa.shape[1], columns=list(names) if hasattr(X_test, "columns") else None)
        test = (Xt, np.where(np.asarray(y_test) == labels.positive, 1.0, -1.0))
    limits = Limits(time_limit=time_limit, mip_rel_gap=mip_rel_gap, threads=threads)

    def instance_for(k: int):
        return RiskSLIM(coef_bound=coef_bound, c0=c0, max_size=k, multiplier=multiplier).instance(Xa, y_pm1, w)

    path = solve_sizes(instance_for, sizes, limits, feature_cost=c0, loss_floor=instance_for(sizes[0]).loss_floor())
    rows, cards, fits = [], {}, {}
    for step in path:
        fit, k = step.fit, step.size
        if fit.model is None:
            raise RuntimeError(f"max_size={k}: no model ({fit.status.value}: {fit.message})")
        coef, intercept = fit.model.coef, float(fit.model.intercept)
        fits[k] = fit
        points = {names[j]: int(round(coef[j])) for j in np.flatnonzero(coef)}
        note = (f"max_size={k}: status={fit.status.value} objective={fit.objective:.6g} bound={fit.bound:.6g} "
                f"gap={fit.gap:.3g}; risk = 1 / (1 + exp(-(total points + base score)"
                f"{'' if multiplier == 1 else f' / {multiplier:g}'}))")
        cards[k] = ScoreCard.from_coefficients(coef, intercept, names, positive_label=labels.positive,
                                               negative_label=labels.negative,
                                               title=f"Risk score, at most {k} features", notes=(note,))
        rows.append({"max_size": k, "size": len(points), "objective": fit.objective, "bound": fit.bound,
                     "gap": fit.gap, "status": fit.status.value, "train_loss": step.instance.loss(fit.model),
                     "test_auc": auc(test[0], test[1], coef, intercept) if test is not None else np.nan,
                     "points": points, "intercept": intercept, "seconds": fit.times.get("total", np.nan),
                     "how": step.how})
    return RiskScorePath(pd.DataFrame(rows), cards, fits)
