"""Tables held by dask: column summaries, one-hot blocks and labels, computed partition by partition.

A dask DataFrame (``dask.dataframe``) is never gathered on the client. Binning it needs, per
column, the distinct values and their counts (one distributed ``value_counts`` per column, all
in one pass: client memory is the number of distinct values, not the number of rows), from which
:class:`milpscore.data.binning.OrderedBinner` chooses the same bins as on the same table in
memory. Its one-hot design is a dask array chunked by rows, one scipy.sparse CSR chunk per
partition, built on the workers; the labels become a dask array of ``-1/+1`` with the same row
chunks. That is the input of :class:`solvers.proximal.distributed.DaskLogistic`.

dask is an optional dependency (``pip install "milpscore[dask]"``); this module imports it only
when a dask collection is passed.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from milpscore.data.column_summary import ColumnSummary, summarize_counts
from milpscore.data.validation import LabelMap, encode_labels


def is_dask_collection(X: Any) -> bool:
    """True for a dask DataFrame, Series or array (checked without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "__dask_graph__")


def _dataframe(X: Any, name: str = "X") -> Any:
    """``X`` as a dask DataFrame with string column names (a dask array becomes ``x0, x1, ...``)."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, dd.Series):
        X = X.to_frame()
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
        X = dd.from_dask_array(X.rechunk({1: -1}), columns=[f"x{j}" for j in range(X.shape[1])])
    if not isinstance(X, dd.DataFrame):
        raise TypeError(f"{name} must be a dask DataFrame or array here, got {type(X).__name__}")
    names = [str(c) for c in X.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"{name} has duplicate column names {sorted({c for c in names if names.count(c) > 1})}")
    return X.rename(columns=dict(zip(X.columns, names))) if list(X.columns) != names else X


def column_summaries(X: Any) -> list[ColumnSummary]:
    """:class:`ColumnSummary` of every column of a dask table, from one distributed pass."""
    import dask

    frame = _dataframe(X)
    counts = dask.compute(*[frame[c].value_counts(dropna=False, split_out=1) for c in frame.columns])
    return [summarize_counts(c, frame.dtypes[c], vc) for c, vc in zip(frame.columns, counts)]


def partition_lengths(X: Any) -> tuple[int, ...]:
    """Rows of each partition of a dask table (one distributed pass)."""
    return tuple(int(k) for k in _dataframe(X).map_partitions(len).compute())


def onehot_blocks(X: Any, encode: Callable[[pd.DataFrame], sp.csr_matrix], n_columns: int,
                  lengths: tuple[int, ...] | None = None) -> Any:
    """The one-hot design of a dask table: a dask array ``(n, n_columns)`` chunked by rows, chunk
    ``k`` the CSR matrix ``encode(partition k)`` computed on a worker."""
    import dask
    import dask.array as da

    frame = _dataframe(X)
    lengths = partition_lengths(frame) if lengths is None else lengths
    meta = sp.csr_matrix((0, n_columns))
    blocks = [da.from_delayed(dask.delayed(encode)(part), shape=(k, n_columns), dtype=np.float64, meta=meta)
              for part, k in zip(frame.to_delayed(), lengths)]
    return da.concatenate(blocks, axis=0) if blocks else da.zeros((0, n_columns), chunks=((0,), (n_columns,)))


def _pm1(part: Any, positive: Any) -> np.ndarray:
    return np.where(np.asarray(part) == positive, 1.0, -1.0)


def encode_dask_labels(y: Any, lengths: tuple[int, ...], pos_label: Any = None) -> tuple[Any, LabelMap]:
    """Labels of a dask Series / array as a dask array of ``-1/+1`` chunked like ``lengths``, and
    the label map of :func:`milpscore.data.validation.encode_labels` (same rules, same errors,
    checked on the distinct labels and the missing count, computed on the workers)."""
    import dask
    import dask.array as da
    import dask.dataframe as dd

    if not is_dask_collection(y):  # labels in memory beside a dask table: chunked like it
        arr = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1 or arr.shape[0] != sum(lengths):
            raise ValueError(f"y has shape {arr.shape} but X has {sum(lengths)} rows; pass one label per row")
        y = da.from_array(arr, chunks=(tuple(lengths),))
    if isinstance(y, dd.DataFrame):
        if len(y.columns) != 1:
            raise ValueError(f"y must be one column of labels, got {len(y.columns)} columns")
        y = y[y.columns[0]]
    if isinstance(y, da.Array):
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D with one label per sample, got shape {y.shape}")
        y = dd.from_dask_array(y)
    if not isinstance(y, dd.Series):
        raise TypeError(f"with a dask table X, y must be labels (a dask Series or array, or an array in memory), "
                        f"got {type(y).__name__}")
    distinct, missing, lengths_y = dask.compute(y.drop_duplicates(split_out=1), y.isna().sum(),
                                                y.map_partitions(len))
    if int(missing):
        raise ValueError(f"y contains missing labels in {int(missing)} row(s); drop them")
    if tuple(int(k) for k in lengths_y) != tuple(lengths):
        raise ValueError(f"X and y must be partitioned alike: X's partitions have {list(lengths)[:5]} rows, "
                         f"y's {[int(k) for k in lengths_y][:5]}; build both from one dask DataFrame")
    values = np.asarray(distinct)
    if values.size < 2:  # encode_labels's one-class message needs at least two samples
        values = np.repeat(values, 2)
    _, labels = encode_labels(values, pos_label=pos_label)
    signs = [da.from_delayed(dask.delayed(_pm1)(part, labels.positive), shape=(k,), dtype=np.float64)
             for part, k in zip(y.to_delayed(), lengths)]
    return da.concatenate(signs), labels
