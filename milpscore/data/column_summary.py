"""What ordered binning learns from one column: its distinct values, their counts, its dtype.

:class:`milpscore.data.binning.OrderedBinner` chooses a column's bins from its
:class:`ColumnSummary` alone — cut points from the distinct numbers and their counts
(:func:`formulations.bins.cut_points_of_counts`), a category order from the categories, their
counts and the dtype — so a table held in memory (:func:`summarize_series`) and one held by dask
(:func:`summarize_counts` of a distributed ``value_counts``) get the same bins, bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class ColumnSummary:
    """One column as the binner sees it.

    Attributes
    ----------
    name : column name.
    dtype : the column's dtype (decides numeric or categorical, ordered categories, booleans).
    values : distinct non-missing values (numeric: increasing floats, infinities included).
    counts : (len(values),) int64, rows holding each value.
    n_missing : rows holding a missing value (NaN, None, NA).
    """

    name: str
    dtype: Any
    values: np.ndarray
    counts: np.ndarray
    n_missing: int

    @property
    def categorical(self) -> bool:
        """True for non-numeric and boolean dtypes (the binner may also be told so per column)."""
        return not pd.api.types.is_numeric_dtype(self.dtype) or pd.api.types.is_bool_dtype(self.dtype)

    def numbers(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values, counts)`` of a numeric column as increasing floats, missing values and
        infinities refused with a ``ValueError`` naming the column and the rows."""
        values = np.asarray(self.values, dtype=float)
        infinite = ~np.isfinite(values)
        if self.n_missing or infinite.any():
            kind = "NaN" if self.n_missing else "inf"
            rows = self.n_missing + int(self.counts[infinite].sum())
            raise ValueError(f"column {self.name!r} contains {kind} in {rows} row(s); "
                             "drop or impute those rows before binning")
        counts = np.asarray(self.counts, dtype=np.int64)
        if values.size > 1 and not np.all(values[1:] > values[:-1]):
            order = np.argsort(values, kind="stable")
            values, counts = values[order], counts[order]
        return values, counts


def summarize_counts(name: str, dtype: Any, value_counts: pd.Series) -> ColumnSummary:
    """The summary of a column from its ``value_counts(dropna=False)`` (index: values, one of
    them possibly missing; values: counts), e.g. computed by dask over the partitions."""
    missing = pd.isna(value_counts.index)
    kept = value_counts[~missing]
    values = kept.index.to_numpy()
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        values = values.astype(float)
    return ColumnSummary(name, dtype, values, kept.to_numpy(dtype=np.int64), int(value_counts[missing].sum()))


def summarize_series(series: pd.Series, name: str) -> ColumnSummary:
    """The summary of an in-memory column (dense or pandas sparse); numbers by one sort
    (``np.unique``), other values by ``value_counts``."""
    if isinstance(series.dtype, pd.SparseDtype):
        series = series.sparse.to_dense()
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        missing = np.isnan(values)
        uniq, counts = np.unique(values[~missing] if missing.any() else values, return_counts=True)
        return ColumnSummary(name, series.dtype, uniq, counts.astype(np.int64), int(missing.sum()))
    return summarize_counts(name, series.dtype, series.value_counts(dropna=False, sort=False))
