"""Risk tables and calibration of integer risk scores (Ustun & Rudin 2019, section 2 and Figure 1).

A risk score predicts ``P(y = +1 | x) = 1 / (1 + exp(-(x . coef + intercept)))``: every total score
maps to one risk. :func:`risk_table` lists every attainable total score (the sums of points over the
values each feature takes in the training data) with its predicted risk and, on the training
data, the observed event rate and the number of rows with that score. :func:`calibration` is the
reliability curve per distinct score and the expected calibration error
``ECE = sum_s (n_s / n) |observed_s - predicted_s|``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: largest number of attainable totals enumerated (beyond it only the observed scores are listed)
MAX_TOTALS = 10_000


def predicted_risk(scores: np.ndarray) -> np.ndarray:
    """Logistic of the total score, without overflow."""
    return np.exp(-np.logaddexp(0.0, -np.asarray(scores, dtype=float)))


def attainable_totals(coef: np.ndarray, intercept: float, X: np.ndarray) -> np.ndarray:
    """Every total ``x . coef + intercept`` reachable with each feature at one of its training values."""
    totals = np.array([0.0])
    for j in np.flatnonzero(coef):
        values = np.unique(X[:, j]) * coef[j]
        totals = np.unique(np.round((totals[:, None] + values[None, :]).ravel(), 9))
        if totals.size > MAX_TOTALS:
            return np.unique(np.round(X @ coef + intercept, 9))
    return totals + intercept


def risk_table(coef: np.ndarray, intercept: float, X: np.ndarray, y: np.ndarray,
               sample_weight: np.ndarray | None = None, multiplier: float = 1.0) -> pd.DataFrame:
    """One row per attainable total score: ``points`` (total points), ``score`` (points + intercept),
    ``predicted_risk`` (the logistic of ``score / multiplier``), ``observed_risk`` (weighted
    event rate on ``(X, y)``; NaN where no row has that score) and ``count`` (weighted rows).

    ``y`` holds 1 for the event (positive class), 0 or -1 otherwise.
    """
    X = np.asarray(X, dtype=float)
    coef = np.asarray(coef, dtype=float)
    events = (np.asarray(y) > 0).astype(float)
    w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    scores = np.round(X @ coef + intercept, 9)
    totals = np.union1d(attainable_totals(coef, intercept, X), scores)
    index = np.searchsorted(totals, scores)
    count = np.bincount(index, weights=w, minlength=totals.size)
    hits = np.bincount(index, weights=w * events, minlength=totals.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.where(count > 0, hits / np.where(count > 0, count, 1.0), np.nan)
    return pd.DataFrame({"points": totals - intercept, "score": totals, "predicted_risk": predicted_risk(totals / multiplier), "observed_risk": observed,
                         "count": count})


@dataclass(frozen=True)
class Calibration:
    """Reliability curve per distinct score and the expected calibration error (ECE)."""

    curve: pd.DataFrame  # score, predicted_risk, observed_risk, count (scores met in the data only)
    ece: float
    max_error: float

    def __repr__(self) -> str:
        return f"Calibration(ece={self.ece:.4f}, max_error={self.max_error:.4f}, scores={len(self.curve)})"


def calibration(coef: np.ndarray, intercept: float, X: np.ndarray, y: np.ndarray,
                sample_weight: np.ndarray | None = None, multiplier: float = 1.0) -> Calibration:
    """Reliability of the predicted risks on ``(X, y)``: one point per distinct total score."""
    table = risk_table(coef, intercept, X, y, sample_weight, multiplier)
    curve = table[table["count"] > 0].reset_index(drop=True)
    error = np.abs(curve["observed_risk"] - curve["predicted_risk"]).to_numpy()
    share = (curve["count"] / curve["count"].sum()).to_numpy()
    return Calibration(curve, float(share @ error), float(error.max(initial=0.0)))


def format_risk(risk: float) -> str:
    """A risk in percent with one decimal; a risk strictly inside (0, 1) never prints as 0.0% or 100.0%."""
    if 0 < risk < 0.0005:
        return "<0.1%"
    if 0.9995 <= risk < 1:
        return ">99.9%"
    return f"{100 * risk:.1f}%"


def format_risk_table(table: pd.DataFrame) -> list[str]:
    """Text lines of a risk table (score, risk in %, observed rate in %, count)."""
    lines = ["total points | predicted risk | observed risk | rows"]
    for row in table.itertuples(index=False):
        observed = "-" if np.isnan(row.observed_risk) else f"{100 * row.observed_risk:5.1f}%"
        lines.append(f"{row.points:12g} | {format_risk(row.predicted_risk):>14} | {observed:>13} | {row.count:g}")
    return lines


def plot_risk_table(table: pd.DataFrame, ax: Any = None) -> Any:
    """Predicted risk per card SCORE (the total points, as on the card) with the observed rate
    (markers sized by count)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    ax.plot(table["points"], table["predicted_risk"], "-o", markersize=3, label="predicted risk")
    seen = table[table["count"] > 0]
    sizes = 20 + 180 * seen["count"] / max(float(seen["count"].max()), 1.0)
    ax.scatter(seen["points"], seen["observed_risk"], s=sizes, alpha=0.6, color="C1",
               label="observed rate (marker area: rows)")
    ax.set_xlabel("SCORE (total points on the card)")
    ax.set_ylabel("risk")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right")  # risk rises with the score: the lower right corner is empty
    return ax
