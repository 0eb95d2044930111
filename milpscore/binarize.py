"""Threshold binarisation: numeric columns to readable ``x >= t`` indicators.

Score cards need binary features: a SLIM point is awarded when ``"worst radius >= 16.8"``.
:func:`formulations.bins.cut_points` chooses the thresholds (all interior unique values when few,
else quantiles of the values, with zero-inflated columns cut among their non-minimal values), the
same rule as the ordered one-hot bins of :mod:`milpscore.binning`. Names print each threshold exactly
(:func:`format_number`), so a condition read off a card is the rule the model applies.

Policy for values not seen in fit (decided here, documented on the class): NaN, a new category
and a value other than 0/1 in a column kept as binary raise a ``ValueError`` naming the column;
``handle_unknown="ignore"`` maps them to all-zero indicators instead.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from formulations.bins import cut_points, supervised_cut_points

__all__ = ["ThresholdBinarizer", "cut_points", "format_number", "supervised_cut_points"]


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers / strings (JSON values)."""
    return value.item() if isinstance(value, np.generic) else value


def format_number(value: float) -> str:
    """Shortest text that reads back as exactly ``value`` (``16.8``, ``0.01413059611``, ``45728.3``)."""
    value = float(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


class ThresholdBinarizer(TransformerMixin, BaseEstimator):
    """Turn each numeric column into indicators ``column >= t`` at :func:`cut_points` thresholds.

    Binary (0/1) columns are kept as they are; non-numeric columns become one indicator per
    category (``column == value``). Output is a DataFrame whose column names state each rule
    exactly. ``groups_`` maps each input column to the output columns made from it (for
    one-threshold-per-variable constraints) and ``n_candidates_`` counts them.

    Parameters
    ----------
    max_cuts : int
        Maximum number of thresholds per numeric column.
    thresholds : {"quantile", "supervised"}
        How they are chosen: quantiles of the values (:func:`cut_points`, unsupervised; default),
        or among the label's boundary points by greedy Gini splitting
        (:func:`~formulations.bins.supervised_cut_points`; ``fit(X, y)`` then needs the two-class
        label, so fit it on training rows only). ``boundary_points_`` counts, per numeric column,
        the candidate thresholds the supervised choice saw.
    handle_unknown : {"error", "ignore"}
        At transform, NaN, an unseen category, or a value other than 0/1 in a column kept as
        binary raise a ``ValueError`` naming the column ("error", default), or give all-zero
        indicators ("ignore"; a binary column's value then counts as 0).
    """

    def __init__(self, max_cuts: int = 3, handle_unknown: str = "error", thresholds: str = "quantile"):
        self.max_cuts = max_cuts
        self.handle_unknown = handle_unknown
        self.thresholds = thresholds

    @staticmethod
    def _frame(X: Any) -> pd.DataFrame:
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        return frame.set_axis([str(c) for c in frame.columns], axis=1)  # a copy: the caller's frame is untouched

    def fit(self, X: Any, y: Any = None) -> "ThresholdBinarizer":
        if self.handle_unknown not in ("error", "ignore"):
            raise ValueError(f"handle_unknown must be 'error' or 'ignore', got {self.handle_unknown!r}")
        if isinstance(self.max_cuts, bool) or not isinstance(self.max_cuts, (int, np.integer)) or self.max_cuts < 1:
            raise ValueError(f"max_cuts must be an integer >= 1, got {self.max_cuts!r}")
        if self.thresholds not in ("quantile", "supervised"):
            raise ValueError(f"thresholds must be 'quantile' or 'supervised', got {self.thresholds!r}")
        frame = self._frame(X)
        positive = self._positive(y, len(frame)) if self.thresholds == "supervised" else None
        self.boundary_points_: dict[str, int] = {}
        if frame.columns.duplicated().any():
            raise ValueError(f"column names repeat: {sorted(set(frame.columns[frame.columns.duplicated()]))}; rename them")
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
                if positive is None:
                    cuts = cut_points(v, self.max_cuts)
                else:
                    cuts, self.boundary_points_[col] = supervised_cut_points(v, positive, self.max_cuts)
                self.rules_.extend((col, ">=", float(t)) for t in cuts)
            else:
                if s.isna().any():
                    raise ValueError(f"column {col!r} has missing values; fill them before binarising")
                counts = s.astype(str).value_counts()
                self.rules_.extend((col, "==", cat) for cat in counts.index)
        self.feature_names_in_ = np.array(frame.columns, dtype=object)
        names = self.get_feature_names_out()
        self.groups_ = {col: [n for n, (c, _, _) in zip(names, self.rules_) if c == col] for col in frame.columns}
        self.n_candidates_ = len(self.rules_)
        return self

    @staticmethod
    def _positive(y: Any, n: int) -> np.ndarray:
        """The two-class label as booleans (the larger class value is ``True``)."""
        if y is None:
            raise ValueError("thresholds='supervised' chooses thresholds from the label: call fit(X, y)")
        labels = np.asarray(y)
        if labels.ndim != 1 or labels.size != n:
            raise ValueError(f"y must have one label per row of X ({n}), got shape {labels.shape}")
        classes = np.unique(labels)
        if classes.size != 2:
            raise ValueError(f"thresholds='supervised' needs a two-class label, got {classes.size} classes")
        return labels == classes[1]

    def to_dict(self) -> dict[str, Any]:
        """The fitted rules as plain JSON values (:func:`milpscore.persist.save_model`)."""
        return {"kind": "thresholds", "handle_unknown": self.handle_unknown, "max_cuts": int(self.max_cuts),
                "thresholds": self.thresholds,
                "columns": [str(c) for c in self.feature_names_in_],
                "rules": [[c, op, _plain(v)] for c, op, v in self.rules_]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ThresholdBinarizer":
        """A fitted binariser from :meth:`to_dict` (no refit: the same rules)."""
        out = cls(max_cuts=data["max_cuts"], handle_unknown=data["handle_unknown"],
                  thresholds=data.get("thresholds", "quantile"))
        out.rules_ = [(c, op, v) for c, op, v in data["rules"]]
        out.feature_names_in_ = np.array(data["columns"], dtype=object)
        names = out.get_feature_names_out()
        out.groups_ = {col: [n for n, (c, _, _) in zip(names, out.rules_) if c == col] for col in data["columns"]}
        out.n_candidates_ = len(out.rules_)
        return out

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        names = [col if op == "id" else f"{col} {op} {format_number(v) if op == '>=' else v}"
                 for col, op, v in self.rules_]
        return np.array(names, dtype=object)

    def _unknown(self, col: str, bad: np.ndarray, what: str) -> None:
        if bad.any() and self.handle_unknown == "error":
            raise ValueError(f"column {col!r} has {what} in {int(bad.sum())} row(s) not seen in fit; clean them, or "
                             "use ThresholdBinarizer(handle_unknown='ignore') to score them as all-zero indicators")

    def transform(self, X: Any) -> pd.DataFrame:
        frame = self._frame(X)
        missing = [c for c in self.feature_names_in_ if c not in frame.columns]
        if missing:
            raise ValueError(f"columns {missing[:5]} seen in fit are missing from X")
        cols = []
        for col, op, v in self.rules_:
            s = frame[col]
            if op == "==":
                text = s.astype(str).to_numpy()
                known = {value for c, o, value in self.rules_ if c == col}
                self._unknown(col, s.isna().to_numpy() | ~np.isin(text, list(known)), "missing or unseen categories")
                cols.append((text == v).astype(float))
                continue
            values = s.to_numpy(dtype=float)
            self._unknown(col, np.isnan(values), "NaN")
            if op == "id":
                self._unknown(col, ~np.isin(values, (0.0, 1.0)) & ~np.isnan(values), "values other than 0/1")
                cols.append((values == 1.0).astype(float))
            else:
                cols.append((values >= v).astype(float))
        data = np.column_stack(cols) if cols else np.zeros((len(frame), 0))
        return pd.DataFrame(data, columns=self.get_feature_names_out(), index=frame.index)
