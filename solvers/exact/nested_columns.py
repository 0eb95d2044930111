"""Chains of nested 0/1 columns: the thresholds of one binarised variable.

A continuous column cut at thresholds ``t_1 < t_2 < ...`` into indicators ``x >= t_k`` (as
:class:`milpscore.data.binarize.ThresholdBinarizer` does) gives columns whose ones are nested: every
row with a one in ``x >= t_2`` has one in ``x >= t_1``. Such a *chain* is the one variable a model
reads through any of its thresholds, so a bound on every model that uses none of the chain's columns
(:func:`solvers.exact.exclusion.must_use_group`) speaks about the variable, where a bound without one
threshold does not (a neighbouring threshold stands in for it).

:func:`nested_chains` finds the chains from the data alone (no column names): columns in decreasing
count of ones, each appended to the first chain whose last column contains it (a greedy cover of the
inclusion order by chains; a column contained in none starts its own).
"""
from __future__ import annotations

import numpy as np


def nested_chains(X: np.ndarray, columns: np.ndarray) -> list[np.ndarray]:
    """The chains (module docstring) among the 0/1 ``columns`` of ``X`` that have at least two columns,
    each as column indices from the most ones to the fewest (each contained in the one before);
    every column in at most one chain, equal columns in one chain."""
    columns = np.asarray(columns, np.int64)
    if columns.size < 2:
        return []
    packed = np.packbits(X[:, columns] == 1.0, axis=0).T  # (columns, bytes): one row per column
    order = np.argsort(-(X[:, columns] == 1.0).sum(axis=0), kind="stable")
    chains: list[list[int]] = []
    tails = np.zeros((0, packed.shape[1]), np.uint8)  # the last column of each chain
    for k in order:
        inside = ~np.any(packed[k] & ~tails, axis=1)  # chains whose last column contains column k
        if inside.any():
            c = int(np.argmax(inside))
            chains[c].append(int(k))
            tails[c] = packed[k]
        else:
            chains.append([int(k)])
            tails = np.vstack([tails, packed[k][None]])
    return [columns[np.asarray(c)] for c in chains if len(c) >= 2]
