"""Input validation and label normalisation: numpy / pandas / scipy.sparse in, clear errors out.

Every estimator and the CLI pass their inputs through :func:`validate_features` and
:func:`encode_labels`, so the same mistakes get the same messages everywhere: the offending
column or argument is named, and the fix is suggested.

Sparse tables (scipy.sparse CSR / CSC / COO matrices and arrays, DataFrames of pandas sparse
columns) are checked on their stored values only (finite, within ``MAX_ABS_VALUE``). The exact
programs read dense rows, so :func:`validate_features` then densifies them -- never silently: a
:class:`DensifiedWarning` names the size, and a dense copy larger than the memory budget
(``memory_limit`` MiB, default half of the memory available) is refused before it is allocated,
with the fix. The relaxed estimator built for large sparse tables,
:class:`milpscore.estimators.BinarsityLogisticClassifier`, never densifies.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning

from formulations.errors import OverMemoryBudgetError
from formulations.validation import MAX_ABS_VALUE


@dataclass(frozen=True)
class LabelMap:
    """Mapping of the user's two labels to ``-1`` (negative) and ``+1`` (positive)."""

    negative: Any
    positive: Any

    @property
    def classes(self) -> np.ndarray:
        return np.array([self.negative, self.positive], dtype=object if isinstance(self.negative, str) else None)

    def describe(self) -> str:
        return f"{self.negative!r} -> -1, {self.positive!r} -> +1"

    def decode(self, y_pm1: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(y_pm1) > 0, self.positive, self.negative)


def feature_names(X: Any, n_features: int) -> list[str]:
    """Column names of a DataFrame, else ``x0 .. x{d-1}``."""
    if isinstance(X, pd.DataFrame):
        return [str(c) for c in X.columns]
    return [f"x{j}" for j in range(n_features)]


def validate_features(X: Any, *, name: str = "X", n_features: int | None = None,
                      columns: Sequence[str] | None = None, owner: str = "the model",
                      memory_limit: float | None = None) -> np.ndarray:
    """Return ``X`` as a 2-D float array after checking dtype, shape and finiteness.

    A sparse ``X`` (scipy.sparse, or a DataFrame with pandas sparse columns) is checked on its
    stored values, then densified with a :class:`DensifiedWarning` when the dense copy fits in
    ``memory_limit`` MiB (None: half of the memory available now); otherwise an
    :class:`~formulations.errors.OverMemoryBudgetError` names the size, the budget and the fix, before anything is allocated.

    Raises
    ------
    TypeError
        for a non-numeric column (named; suggests :class:`milpscore.data.binarize.ThresholdBinarizer`
        or one-hot encoding).
    OverMemoryBudgetError
        (a ValueError) for a sparse ``X`` whose dense copy exceeds the memory budget.
    ValueError
        for NaN / inf or ``|x| > formulations.validation.MAX_ABS_VALUE`` (column named, with the
        number of bad rows; the same limit at fit and at predict), repeated column names, a 1-D
        or empty input, or a column count different from the fitted one.
    """
    if X is None:
        raise ValueError(f"{name} is None; pass a 2-D array or DataFrame of features")
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        arr, cols = _frame_array(X, name, columns, owner, memory_limit)
    elif sp.issparse(X):
        arr, cols = _densified(X, name, owner, memory_limit), None
    else:
        arr, cols = _plain_array(X, name), None
    _check_shape(arr, name, n_features, owner)
    _check_values(arr, name, cols)
    return arr


def _frame_array(X: pd.DataFrame, name: str, columns: Sequence[str] | None, owner: str,
                 memory_limit: float | None) -> tuple[np.ndarray, list[str]]:
    """A DataFrame's values (aligned by name to ``columns`` when given) and its column names,
    after its names and dtypes are checked (:func:`validate_features`)."""
    cols = [str(c) for c in X.columns]
    repeated = sorted({c for c in cols if cols.count(c) > 1})
    if repeated:
        raise ValueError(f"{name} has repeated column names {repeated[:5]}; every column needs its own name "
                         "(a card row is read by it): rename or drop the copies")
    bad = [c for c, dt in zip(cols, X.dtypes) if not (pd.api.types.is_numeric_dtype(dt)
                                                      or pd.api.types.is_bool_dtype(dt))]
    if bad:
        raise TypeError(f"{name} column {bad[0]!r} is not numeric (dtype {X[X.columns[cols.index(bad[0])]].dtype}); "
                        "encode it first, e.g. milpscore.data.binarize.ThresholdBinarizer for ordered values "
                        "or pandas.get_dummies for categories")
    if columns is not None and list(columns) != cols:
        missing = [c for c in columns if c not in cols]
        if missing:
            extra = [c for c in cols if c not in columns]
            raise ValueError(f"{name} lacks the columns {missing[:5]} seen in fit"
                             + (f"; it has {extra[:5]} instead (renamed?)" if extra else ""))
        X = X.set_axis(cols, axis=1)[list(columns)]  # the same columns in another order: aligned by name
        cols = list(columns)
    return (_densified(X, name, owner, memory_limit) if is_sparse(X) else X.to_numpy(dtype=float)), cols


def _plain_array(X: Any, name: str) -> np.ndarray:
    """An array-like as floats (complex numbers and text refused, naming the first text column)."""
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}; pass real numbers")
    try:
        return arr.astype(float, copy=False)
    except (TypeError, ValueError) as exc:
        where = _first_text_column(arr)
        raise TypeError(f"{name} must be numeric; {where or 'it has'} values that cannot be converted to float "
                        f"({exc}). Encode text columns first (milpscore.data.binarize.ThresholdBinarizer makes "
                        "indicators of categories).") from None


def _check_shape(arr: np.ndarray, name: str, n_features: int | None, owner: str) -> None:
    """2-D, at least one row and one column, and the fitted number of columns."""
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}. Reshape your data "
                         "with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single sample")
    if arr.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required "
                         f"in {name}")
    if arr.shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required "
                         f"in {name}")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} has {arr.shape[1]} features, but {owner} is expecting {n_features} features "
                         "as input (the number seen in fit)")


def _check_values(arr: np.ndarray, name: str, cols: list[str] | None) -> None:
    """Finite values of at most :data:`MAX_ABS_VALUE` in magnitude (the first bad column named)."""
    lo, hi = float(arr.min()), float(arr.max())  # NaN and inf show here: the usual table needs no temporaries
    if math.isfinite(lo) and math.isfinite(hi) and max(-lo, hi) <= MAX_ABS_VALUE:
        return
    finite = np.isfinite(arr)
    if not finite.all():
        j = int(np.flatnonzero(~finite.all(axis=0))[0])
        col = cols[j] if cols else f"x{j}"
        kind = "NaN" if np.isnan(arr[:, j]).any() else "inf"
        n_bad = int((~finite[:, j]).sum())
        raise ValueError(f"{name} column {col!r} contains {kind} in {n_bad} row(s); drop or impute those rows")
    big = np.abs(arr) > MAX_ABS_VALUE
    if big.any():  # the same limit at fit (the solvers' tolerances) and at predict (no overflow to nan)
        j = int(np.flatnonzero(big.any(axis=0))[0])
        col = cols[j] if cols else f"x{j}"
        raise ValueError(f"{name} column {col!r} has values up to {np.abs(arr[:, j]).max():.3g} in "
                         f"{int(big[:, j].sum())} row(s); a linear score accepts |x| <= {MAX_ABS_VALUE:g} (beyond it "
                         "the solvers cannot resolve one point and scores overflow): rescale the column (e.g. to "
                         "thousands) or binarise it")


class DensifiedWarning(UserWarning):
    """A sparse table was turned into a dense array because the step that reads it needs dense rows."""


def is_sparse(X: Any) -> bool:
    """True for a scipy.sparse matrix / array or a DataFrame holding pandas sparse columns."""
    if sp.issparse(X):
        return True
    return isinstance(X, pd.DataFrame) and any(isinstance(dt, pd.SparseDtype) for dt in X.dtypes)


def as_sparse(X: Any, name: str = "X") -> sp.csr_matrix:
    """A sparse table (:func:`is_sparse`) as a CSR float64 matrix, without a dense intermediate
    (a DataFrame mixing sparse and dense columns converts its dense columns only)."""
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
        if X.dtype.kind == "c":
            raise ValueError(f"Complex data not supported in {name}; pass real numbers")
        return sp.csr_matrix(X, dtype=np.float64)
    columns = []
    for col in X.columns:
        series = X[col]
        array = series.array
        if isinstance(series.dtype, pd.SparseDtype) and array.fill_value == 0:
            stored = np.asarray(array.sp_values, dtype=np.float64)
            rows = np.asarray(array.sp_index.indices)
            columns.append(sp.csc_matrix((stored, rows, [0, stored.size]), shape=(len(series), 1)))
        else:  # a dense column (or a sparse one filled with a non-zero value): stored as it is
            columns.append(sp.csc_matrix(series.to_numpy(dtype=float).reshape(-1, 1)))
    return sp.hstack(columns, format="csr", dtype=np.float64) if columns else sp.csr_matrix((len(X), 0))


def memory_budget(memory_limit: float | None) -> int:
    """Bytes one step may allocate: ``memory_limit`` MiB, or half of the memory available now
    (the default budget of :class:`solvers.limits.Limits`)."""
    if memory_limit is not None:
        return int(float(memory_limit) * 2**20)
    from solvers.limits import MEMORY_SHARE, available_memory

    return int(MEMORY_SHARE * available_memory())


def _densified(X: Any, name: str, owner: str, memory_limit: float | None) -> np.ndarray:
    """Dense float64 copy of a sparse table, its stored values checked first; warns, and refuses a
    copy over the memory budget."""
    matrix = as_sparse(X, name)
    stored = matrix.data
    if stored.size and not np.all(np.isfinite(stored)):
        j = int(matrix.indices[np.flatnonzero(~np.isfinite(stored))[0]])
        raise ValueError(f"{name} column x{j} contains NaN or inf among its stored values; drop or impute them")
    n, p = matrix.shape
    need = 8 * n * p
    budget = memory_budget(memory_limit)
    if need > budget:
        raise OverMemoryBudgetError(f"{owner} needs dense rows, and {name} ({n} x {p} sparse, {matrix.nnz} stored values) "
                          f"would take {need / 2**20:.3g} MiB dense, over the memory budget of {budget / 2**20:.3g} "
                          "MiB (memory_limit): raise memory_limit, keep fewer columns, or fit "
                          "milpscore.estimators.BinarsityLogisticClassifier, which keeps the table sparse")
    warnings.warn(f"{owner}: the sparse {name} ({n} x {p}, {matrix.nnz} stored values) is densified "
                  f"({need / 2**20:.3g} MiB within the {budget / 2**20:.3g} MiB budget): the exact programs read "
                  "dense rows", DensifiedWarning, stacklevel=4)
    return matrix.toarray()


def _first_text_column(arr: np.ndarray) -> str:
    """``"column xj has"`` for the first column of a 2-D object array that is not all numbers ("" if none)."""
    if arr.ndim != 2:
        return ""
    for j in range(arr.shape[1]):  # only on the error path
        try:
            arr[:, j].astype(float)
        except (TypeError, ValueError):
            return f"column x{j} has"
    return ""


def encode_labels(y: Any, *, name: str = "y", pos_label: Any = None) -> tuple[np.ndarray, LabelMap]:
    """Map two-valued labels to ``-1/+1`` and record the mapping.

    ``pos_label`` names the class the points score for (``+1``: predicted when the score is high).
    Without it ``{0, 1}`` and ``{-1, 1}`` and booleans map the larger value to ``+1``; two strings
    map in sorted order (the second is positive), as ``classes_`` of scikit-learn.
    """
    if y is None:
        raise ValueError(f"this estimator requires y to be passed, but the target {name} is None")
    arr = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warnings.warn(f"A column-vector {name} was passed when a 1d array was expected; it was flattened",
                      DataConversionWarning, stacklevel=3)
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D with one label per sample, got shape {arr.shape}")
    if arr.size < 2:
        raise ValueError(f"{name} has {arr.size} sample(s); need at least 2")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf labels in {int((~np.isfinite(arr)).sum())} row(s); drop them")
    if arr.dtype.kind == "O" and pd.isna(arr).any():
        raise ValueError(f"{name} contains missing labels in {int(pd.isna(arr).sum())} row(s); drop them")
    classes = np.unique(arr)
    if classes.size == 1:
        raise ValueError(f"{name} has only one class ({classes[0]!r}); a classifier needs samples of two classes")
    if classes.size > 2:
        if arr.dtype.kind == "f" and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"Unknown label type: continuous ({name} has {classes.size} distinct real values); "
                             "milpscore learns binary classifiers: threshold the target into two classes")
        raise ValueError(f"Only binary classification is supported; {name} has {classes.size} classes "
                         f"{list(classes[:5])}. Map the labels to two classes first")
    if pos_label is not None:
        matches = [c for c in classes if c == pos_label or str(c) == str(pos_label)]
        if not matches:
            raise ValueError(f"pos_label {pos_label!r} is not a class of {name}; the classes are {list(classes)}")
        if matches[0] == classes[0]:
            classes = classes[::-1]
    labels = LabelMap(negative=classes[0].item() if hasattr(classes[0], "item") else classes[0],
                      positive=classes[1].item() if hasattr(classes[1], "item") else classes[1])
    return np.where(arr == classes[1], 1.0, -1.0), labels


def validate_xy(X: Any, y: Any, pos_label: Any = None, *, owner: str = "the model",
                memory_limit: float | None = None) -> tuple[np.ndarray, np.ndarray, list[str], LabelMap]:
    """Validate a training set: float ``X``, ``y`` in ``{-1, +1}`` (``pos_label`` is ``+1``), names,
    label map (a sparse ``X`` densified within ``memory_limit`` MiB: :func:`validate_features`)."""
    Xa = validate_features(X, owner=owner, memory_limit=memory_limit)
    y_pm1, labels = encode_labels(y, pos_label=pos_label)
    if Xa.shape[0] != y_pm1.shape[0]:
        raise ValueError(f"X has {Xa.shape[0]} rows but y has {y_pm1.shape[0]} labels; they must match")
    return Xa, y_pm1, feature_names(X, Xa.shape[1]), labels


def validate_sample_weight(sample_weight: Any, n: int) -> np.ndarray:
    """Non-negative finite weights of length ``n`` (ones when None)."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({n},)")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and non-negative")
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to zero; give at least one sample a positive weight")
    return w
