"""Ordered one-hot binning of a mixed table: the binarisation step of a points table.

Each column ``j`` becomes an ordered block of ``d_j`` indicator columns, as in the binarsity
slides (Alaya et al. 2019, "Binarsity", section "Features binarization: setup"):

* numeric columns are cut into contiguous intervals ``I_{j,1} < ... < I_{j,d_j}`` at cut points
  ``t_1 < ... < t_{d_j - 1}`` chosen by :func:`formulations.bins.cut_points` (every distinct
  value when there are at most ``n_bins`` of them, else quantiles of the column, always values
  that occur in the data): ``I_{j,1} = (-inf, t_1)``, ``I_{j,k} = [t_{k-1}, t_k)``,
  ``I_{j,d_j} = [t_{d_j-1}, +inf)``. So a value outside the training range falls in an end bin;
* categorical columns (object, string, category, bool, or any column listed in
  ``categories``) get one indicator per category, ordered as the user gives them, as a pandas
  ordered categorical declares them, ``(False, True)`` for booleans, or else by decreasing
  frequency (ties by text). A category not seen in ``fit`` raises a ``ValueError`` unless
  ``unknown_category="first"``, which puts it in the first bin of the order (documented rule).

Bins read like a clinical score: ``"< 40"``, ``"40-49"``, ``">= 60"`` for integer-valued
columns (the interval ``[40, 50)`` is printed ``40-49``), ``"0.05 to < 0.12"`` otherwise.
Everything is vectorised (``np.searchsorted`` for numbers, ``pandas.Index.get_indexer`` for
categories).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from formulations.bins import cut_points_of_counts
from milpscore.data.binarize import format_number
from milpscore.cards.card_text import readable_cuts
from milpscore.data.column_summary import ColumnSummary, summarize_series
from milpscore.data.dask_tables import column_summaries, is_dask_collection, onehot_blocks

NUMERIC = "numeric"
CATEGORICAL = "categorical"
_UNKNOWN_RULES = ("error", "first")


@dataclass(frozen=True)
class VariableBins:
    """The ordered bins of one column.

    Attributes
    ----------
    name : column name.
    kind : ``"numeric"`` or ``"categorical"``.
    cuts : numeric: increasing cut points ``t_1 .. t_{k-1}`` (bin ``m`` is ``[t_m, t_{m+1})``
        with ``t_0 = -inf``, ``t_k = +inf``); empty for categorical columns.
    categories : categorical: the categories in bin order; empty for numeric columns.
    """

    name: str
    kind: str
    cuts: np.ndarray
    categories: tuple = ()

    @property
    def n_bins(self) -> int:
        return len(self.categories) if self.kind == CATEGORICAL else self.cuts.size + 1

    @property
    def labels(self) -> tuple[str, ...]:
        """Readable label of each bin."""
        return tuple(self.range_label(k, k) for k in range(self.n_bins))

    def range_label(self, first: int, last: int) -> str:
        """Label of the union of bins ``first..last`` (contiguous, inclusive).

        Numeric labels are the half-open interval itself, ``"< t"``, ``"a to < b"``, ``">= t"``,
        with every threshold printed exactly (:func:`milpscore.data.binarize.format_number`), so the
        labels of a variable's ranges cover the real line and a value read off the card falls in
        the bin ``codes`` gives it (an integer column's ``40 to < 50`` also holds 49.5).
        """
        if not 0 <= first <= last < self.n_bins:
            raise ValueError(f"bins {first}..{last} out of range for {self.name!r} ({self.n_bins} bins)")
        if self.kind == CATEGORICAL:
            return ", ".join(str(c) for c in self.categories[first:last + 1])
        lo = None if first == 0 else float(self.cuts[first - 1])
        hi = None if last == self.n_bins - 1 else float(self.cuts[last])
        if lo is None and hi is None:
            return "any value"
        if lo is None:
            return f"< {format_number(hi)}"
        if hi is None:
            return f">= {format_number(lo)}"
        return f"{format_number(lo)} to < {format_number(hi)}"

    def codes(self, values: Any, *, unknown_category: str = "error") -> np.ndarray:
        """Bin index (0-based, int64) of each value of this column.

        Raises ``ValueError`` for NaN / inf numbers, missing categories, and (by default)
        categories not seen in ``fit``.
        """
        if self.kind == NUMERIC:
            try:
                v = np.asarray(values, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"column {self.name!r} was numeric in fit but now holds non-numbers; "
                                "pass the same columns as in fit") from None
            bad = ~np.isfinite(v)
            if bad.any():
                kind = "NaN" if np.isnan(v).any() else "inf"
                raise ValueError(f"column {self.name!r} contains {kind} in {int(bad.sum())} row(s); "
                                 "drop or impute those rows before binning")
            return np.searchsorted(self.cuts, v, side="right").astype(np.int64)
        series = pd.Series(values)
        if series.isna().any():
            raise ValueError(f"column {self.name!r} has {int(series.isna().sum())} missing value(s); "
                             "fill them (e.g. with a 'missing' category) before binning")
        index = pd.Index(list(self.categories), dtype=object)
        codes = index.get_indexer(series.to_numpy(dtype=object)).astype(np.int64)
        unknown = codes < 0
        if unknown.any():
            if unknown_category == "error":
                seen = sorted({str(v) for v in series[unknown]})[:5]
                raise ValueError(f"column {self.name!r} has categories {seen} not seen in fit (known: "
                                 f"{list(self.categories)[:10]}); add them to `categories` or use "
                                 "unknown_category='first'")
            codes[unknown] = 0
        return codes


def _category_order(summary: ColumnSummary, given: Sequence | None) -> tuple:
    """Bin order of a categorical column: as given, as its ordered dtype declares, ``(False, True)``
    for booleans, else by decreasing frequency (ties by text)."""
    name = summary.name
    if summary.n_missing:
        raise ValueError(f"column {name!r} has {summary.n_missing} missing value(s); fill them "
                         "(e.g. with a 'missing' category) before binning")
    present = [v for v, k in zip(summary.values, summary.counts) if k > 0]
    if given is not None:
        order = tuple(given)
        if len(set(order)) != len(order):
            raise ValueError(f"categories for {name!r} contain duplicates: {list(order)}")
        missing = [v for v in present if v not in set(order)]
        if missing:
            raise ValueError(f"column {name!r} has values {missing[:5]} missing from the categories "
                             f"given for it ({list(order)[:10]}); list every category")
        return order
    if isinstance(summary.dtype, pd.CategoricalDtype) and summary.dtype.ordered:
        return tuple(summary.dtype.categories)
    if pd.api.types.is_bool_dtype(summary.dtype):
        return tuple(v for v in (False, True) if v in set(present))
    counts = dict(zip(summary.values, summary.counts))
    return tuple(sorted(counts, key=lambda v: (-counts[v], str(v))))


def _as_frame(X: Any, name: str = "X") -> pd.DataFrame:
    if sp.issparse(X):  # columns stay sparse: each is densified alone when it is binned (n values)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
        if X.dtype.kind == "c":
            raise ValueError(f"{name} holds complex numbers: Complex data not supported; pass real values")
        return pd.DataFrame.sparse.from_spmatrix(sp.csc_matrix(X), columns=[f"x{j}" for j in range(X.shape[1])])
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        return X.set_axis([str(c) for c in X.columns], axis=1)
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} holds complex numbers: Complex data not supported; pass real values")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}; "
                         "Reshape your data: X.reshape(-1, 1) for a single feature")
    return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])


def onehot_matrix(codes: np.ndarray, offsets: Any, n_columns: int) -> sp.csr_matrix:
    """CSR one-hot matrix ``(n, n_columns)`` of bin codes ``(n, p)``: row ``i`` has a 1 in column
    ``offsets[j] + codes[i, j]`` of each block ``j``. Built in place from its three arrays (no COO
    intermediate), with int32 indices whenever ``n * p`` and ``n_columns`` fit (half the memory of
    int64: 10^7 rows x 24 blocks is 2.4e8 non-zeros)."""
    codes = np.asarray(codes)
    n, p = codes.shape
    index = np.int32 if max(n * p, n_columns) < np.iinfo(np.int32).max else np.int64
    cols = np.asarray(offsets, dtype=index)[None, :] + codes.astype(index, copy=False)
    indptr = np.arange(0, n * p + 1, p, dtype=index) if p else np.zeros(n + 1, dtype=index)
    return sp.csr_matrix((np.ones(n * p), cols.reshape(-1), indptr), shape=(n, n_columns))


class OrderedBinner(TransformerMixin, BaseEstimator):
    """Ordered one-hot binning of a mixed DataFrame (see the module docstring).

    Parameters
    ----------
    n_bins : int or dict column -> int
        Maximum number of bins per numeric column (>= 2); a column with at most that many
        distinct values gets one bin per value. Missing dict entries use 5.
    categories : dict column -> sequence, optional
        Bin order of categorical columns (listing a numeric column here makes it categorical).
    unknown_category : ``"error"`` or ``"first"``
        What ``transform`` does with a category unseen in ``fit``.

    Attributes
    ----------
    variables_ : tuple of :class:`VariableBins`, one per column.
    blocks_ : tuple of slices, the columns of each variable in the one-hot matrix.
    feature_names_in_ : column names; n_features_in_ : number of columns.
    """

    def __init__(self, n_bins: int | Mapping[str, int] = 5, categories: Mapping[str, Sequence] | None = None,
                 unknown_category: str = "error"):
        self.n_bins = n_bins
        self.categories = categories
        self.unknown_category = unknown_category

    def _bins_for(self, name: str) -> int:
        k = self.n_bins.get(name, 5) if isinstance(self.n_bins, Mapping) else self.n_bins
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"n_bins for {name!r} must be an integer >= 2, got {k!r}")
        return int(k)

    def fit(self, X: Any, y: Any = None) -> "OrderedBinner":
        """Choose cut points / category orders from the training table ``X`` (in memory, or a
        dask DataFrame / array: then from one distributed pass over its partitions,
        :mod:`milpscore.data.dask_tables`, giving the bins of the same table in memory)."""
        if self.unknown_category not in _UNKNOWN_RULES:
            raise ValueError(f"unknown_category must be one of {_UNKNOWN_RULES}, got {self.unknown_category!r}")
        if is_dask_collection(X):
            summaries = column_summaries(X)
            n_rows = int(summaries[0].counts.sum()) + summaries[0].n_missing if summaries else 0
        else:
            frame = _as_frame(X)
            if frame.columns.duplicated().any():
                raise ValueError(f"X has duplicate column names {list(frame.columns[frame.columns.duplicated()])}")
            summaries = [summarize_series(frame[name], name) for name in frame.columns]
            n_rows = frame.shape[0]
        if n_rows == 0 or not summaries:
            raise ValueError(f"X is empty: {len(summaries)} feature(s) (shape=({n_rows}, {len(summaries)})) while a "
                             "minimum of 1 is required; need at least one sample and one column")
        names = [s.name for s in summaries]
        given = dict(self.categories or {})
        unknown = set(given) - set(names)
        if unknown:
            raise ValueError(f"categories names unknown columns {sorted(unknown)}; columns are {names}")
        variables = tuple(self._variable(s, given) for s in summaries)
        starts = np.concatenate([[0], np.cumsum([v.n_bins for v in variables])])
        self.variables_ = variables
        self.blocks_ = tuple(slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:]))
        self.feature_names_in_ = np.array(names, dtype=object)
        self.n_features_in_ = len(names)
        return self

    def _variable(self, summary: ColumnSummary, given: dict) -> VariableBins:
        """The bins of one column from its summary."""
        if summary.name in given or summary.categorical:
            return VariableBins(summary.name, CATEGORICAL, np.zeros(0), _category_order(summary, given.get(summary.name)))
        values, counts = summary.numbers()
        cuts = cut_points_of_counts(values, counts, self._bins_for(summary.name) - 1)
        return VariableBins(summary.name, NUMERIC, readable_cuts(values, cuts))  # same bins, short numbers

    def _check_frame(self, X: Any) -> pd.DataFrame:
        if not hasattr(self, "variables_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this OrderedBinner is not fitted yet; call fit(X) first")
        frame = _as_frame(X)
        if not isinstance(X, (pd.DataFrame, pd.Series)) and frame.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {frame.shape[1]} features, but OrderedBinner is expecting "
                             f"{self.n_features_in_} features as input")
        missing = [c for c in self.feature_names_in_ if c not in frame.columns]
        if missing:
            raise ValueError(f"columns {missing[:5]} seen in fit are missing from X")
        return frame

    def codes(self, X: Any) -> np.ndarray:
        """``(n, p)`` matrix: the bin of each value, column by column (int32 when every block has
        fewer than 2^31 bins, which is always: 10^7 rows x 24 columns take 0.96 GB, not 1.9)."""
        frame = self._check_frame(X)
        codes = np.empty((len(frame), len(self.variables_)), dtype=np.int32)
        for j, var in enumerate(self.variables_):
            codes[:, j] = var.codes(frame[var.name].to_numpy(), unknown_category=self.unknown_category)
        return codes

    def transform(self, X: Any) -> Any:
        """Ordered one-hot matrix ``(n, sum_j d_j)``, exactly one 1 per variable per row: CSR for a
        table in memory; for a dask table, a dask array chunked by rows whose chunks are the CSR
        matrices of its partitions (:func:`milpscore.data.dask_tables.onehot_blocks`)."""
        if is_dask_collection(X):
            return onehot_blocks(X, self._transform_in_memory, self.n_bins_out)
        return self._transform_in_memory(X)

    def _transform_in_memory(self, X: Any) -> sp.csr_matrix:
        return onehot_matrix(self.codes(X), [b.start for b in self.blocks_], self.n_bins_out)

    @property
    def n_bins_out(self) -> int:
        """Total number of one-hot columns."""
        return self.blocks_[-1].stop if self.blocks_ else 0

    def to_dict(self) -> dict[str, Any]:
        """The fitted bins as plain JSON values (:func:`milpscore.model_files.persist.save_model`)."""
        return {"kind": "bins", "unknown_category": self.unknown_category,
                "variables": [{"name": v.name, "kind": v.kind, "cuts": [float(c) for c in v.cuts],
                               "categories": [c.item() if isinstance(c, np.generic) else c for c in v.categories]}
                              for v in self.variables_]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "OrderedBinner":
        """A fitted binner from :meth:`to_dict` (no refit: the same bins), every field checked: a
        ``ValueError`` names the first field that is not what :meth:`to_dict` writes (e.g. cuts
        that do not increase, which would put values in the wrong bins)."""
        def need(ok: bool, field: str, what: str) -> None:
            if not ok:
                raise ValueError(f"preprocessor.{field} must be {what}")

        need(isinstance(data, dict), "", "an object")
        need(data.get("unknown_category") in _UNKNOWN_RULES, "unknown_category", f"one of {list(_UNKNOWN_RULES)}")
        variables = data.get("variables")
        need(isinstance(variables, list) and len(variables) > 0, "variables", "a non-empty list")
        names = []
        for k, v in enumerate(variables):
            field = f"variables[{k}]"
            need(isinstance(v, dict) and {"name", "kind", "cuts", "categories"} <= set(v), field,
                 "an object with name, kind, cuts and categories")
            need(isinstance(v["name"], str) and v["name"] not in names, f"{field}.name", "a column name of its own")
            names.append(v["name"])
            need(v["kind"] in (NUMERIC, CATEGORICAL), f"{field}.kind", f"{NUMERIC!r} or {CATEGORICAL!r}")
            cuts, categories = v["cuts"], v["categories"]
            need(isinstance(cuts, list) and all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                and np.isfinite(c) for c in cuts), f"{field}.cuts", "finite numbers")
            need(all(a < b for a, b in zip(cuts, cuts[1:])), f"{field}.cuts", "increasing")
            need(isinstance(categories, list) and all(isinstance(c, (str, int, float, bool)) for c in categories)
                 and len(set(map(repr, categories))) == len(categories), f"{field}.categories", "distinct values")
            need((v["kind"] == NUMERIC) == (not categories) and (v["kind"] == NUMERIC or not cuts), field,
                 "cuts for a numeric column or categories for a categorical one, not both")
        out = cls(unknown_category=data["unknown_category"])
        out.variables_ = tuple(VariableBins(v["name"], v["kind"], np.asarray(v["cuts"], dtype=float),
                                            tuple(v["categories"])) for v in variables)
        starts = np.concatenate([[0], np.cumsum([v.n_bins for v in out.variables_])])
        out.blocks_ = tuple(slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:]))
        out.feature_names_in_ = np.array([v.name for v in out.variables_], dtype=object)
        out.n_features_in_ = len(out.variables_)
        return out

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``"column: bin label"`` for every one-hot column."""
        return np.array([f"{v.name}: {label}" for v in self.variables_ for label in v.labels], dtype=object)
