"""Threshold binarisation: numeric columns to readable ``x >= t`` indicators.

Score cards need binary features: a SLIM point is awarded when ``"worst radius >= 16.8"``.
:func:`cut_points` chooses the thresholds (all interior unique values when few, else quantiles of
the values), shared with the ordered one-hot bins of :mod:`milpscore.binning`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin


def cut_points(values: np.ndarray, max_cuts: int) -> np.ndarray:
    """Increasing thresholds ``t`` splitting ``values`` into at most ``max_cuts + 1`` groups.

    When the column has at most ``max_cuts + 1`` distinct values, every distinct value but the
    smallest is a threshold; otherwise the ``k / (max_cuts + 1)`` quantiles (k = 1..max_cuts) of
    the values, deduplicated, excluding the minimum (a threshold at the minimum selects every
    row). Thresholds are values that occur in the data, so ``x >= t`` reads naturally.
    """
    v = np.asarray(values, dtype=float)
    if max_cuts < 1:
        raise ValueError(f"max_cuts must be >= 1, got {max_cuts}")
    uniq = np.unique(v[np.isfinite(v)])
    if uniq.size <= 1:
        return np.zeros(0)
    if uniq.size <= max_cuts + 1:
        return uniq[1:]
    q = np.quantile(v, np.arange(1, max_cuts + 1) / (max_cuts + 1), method="higher")
    return np.unique(q[q > uniq[0]])


def _fmt(t: float) -> str:
    return f"{t:.4g}"


class ThresholdBinarizer(TransformerMixin, BaseEstimator):
    """Turn each numeric column into indicators ``column >= t`` at :func:`cut_points` thresholds.

    Binary (0/1) columns are kept as they are; non-numeric columns become one indicator per
    category (``column == value``). Output is a DataFrame with readable column names.

    Parameters
    ----------
    max_cuts : int
        Maximum number of thresholds per numeric column.
    """

    def __init__(self, max_cuts: int = 3):
        self.max_cuts = max_cuts

    def fit(self, X: Any, y: Any = None) -> "ThresholdBinarizer":
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        frame.columns = [str(c) for c in frame.columns]
        self.rules_: list[tuple[str, str, Any]] = []  # (column, op, value)
        for col in frame.columns:
            s = frame[col]
            if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
                v = s.to_numpy(dtype=float)
                if np.isnan(v).any():
                    raise ValueError(f"column {col!r} contains NaN in {int(np.isnan(v).sum())} row(s); "
                                     "impute or drop them before binarising")
                if np.isin(v, (0.0, 1.0)).all():
                    self.rules_.append((col, "id", None))
                    continue
                self.rules_.extend((col, ">=", float(t)) for t in cut_points(v, self.max_cuts))
            else:
                if s.isna().any():
                    raise ValueError(f"column {col!r} has missing values; fill them before binarising")
                counts = s.astype(str).value_counts()
                self.rules_.extend((col, "==", cat) for cat in counts.index)
        self.feature_names_in_ = np.array(frame.columns, dtype=object)
        return self

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        names = [col if op == "id" else f"{col} {op} {_fmt(v) if op == '>=' else v}"
                 for col, op, v in self.rules_]
        return np.array(names, dtype=object)

    def transform(self, X: Any) -> pd.DataFrame:
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
        missing = [c for c in self.feature_names_in_ if c not in frame.columns]
        if missing:
            raise ValueError(f"columns {missing[:5]} seen in fit are missing from X")
        cols = []
        for col, op, v in self.rules_:
            s = frame[col]
            if op == "id":
                cols.append(s.to_numpy(dtype=float))
            elif op == ">=":
                cols.append((s.to_numpy(dtype=float) >= v).astype(float))
            else:
                cols.append((s.astype(str).to_numpy() == v).astype(float))
        data = np.column_stack(cols) if cols else np.zeros((len(frame), 0))
        return pd.DataFrame(data, columns=self.get_feature_names_out(), index=frame.index)
