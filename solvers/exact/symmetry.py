"""Symmetric features of a support enumeration: copies and 0/1 complements of an earlier column.

Two free features ``j < k`` are *interchangeable* when their columns are equal (``x_k = x_j``) with
the same bounds and L0 cost, or, for 0/1 columns, complementary (``x_k = 1 - x_j``) with the same
symmetric bounds (``lo = -hi``) and cost, and the intercept box is the derived one (it holds an
optimal integer intercept of every model in the coefficient box,
:func:`formulations.riskslim.intercept_box`). Swapping ``j`` and ``k`` maps every model on a
support ``S`` that holds ``k`` and not ``j`` to a model on ``S - k + j`` with the same scores up to
an integer shift absorbed by the intercept (``lambda x_k = -lambda x_j + lambda`` for a complement)
and the same L0 cost, so the two supports have the same optimum: enumerating only the supports in
which the chosen members of each class of interchangeable columns are its first ones (in column
order) loses no optimal model, and every bound of a skipped support is the bound of one that is
enumerated. Typical sources: one-hot tables that encode a two-level variable as two columns, and
columns that coincide on the training rows.
"""
from __future__ import annotations

import numpy as np

#: rows per block of the exact column comparisons
BLOCK = 1 << 16


def _columns_equal(X: np.ndarray, j: int, k: int, complement: bool) -> bool:
    """Whether column ``k`` equals column ``j`` (or ``1 - `` it), compared exactly in row blocks."""
    for start in range(0, X.shape[0], BLOCK):
        a, b = X[start:start + BLOCK, j], X[start:start + BLOCK, k]
        if not np.array_equal(b, 1.0 - a if complement else a):
            return False
    return True


def predecessors(X: np.ndarray, features: np.ndarray, lo: np.ndarray, hi: np.ndarray, cost: np.ndarray,
                 complements: bool) -> np.ndarray:
    """``prev[p]``: the position in ``features`` of the previous member of the class of interchangeable
    columns (module docstring) that ``features[p]`` belongs to, or -1 for the first member (and for
    columns interchangeable with no other). ``complements=False`` (an intercept box given by the user)
    keeps only equal columns.

    Candidates come from one random projection of the columns (equal columns project equally,
    complements to ``sum(r)`` together, up to round-off) and each is checked exactly.
    """
    d = features.size
    prev = np.full(d, -1, dtype=np.int64)
    if d < 2 or X.shape[0] == 0:
        return prev
    r = np.random.default_rng(0).uniform(1.0, 2.0, X.shape[0])
    h, total = (r @ X)[features], float(r.sum())
    tol = 1e-9 * total * max(1.0, abs(float(X.min())), abs(float(X.max())))
    lo, hi, cost = lo[features], hi[features], cost[features]
    binary = np.array([bool(((X[:, f] == 0) | (X[:, f] == 1)).all()) for f in features])
    mirror = complements & binary & (lo == -hi)  # may stand for a complement of itself
    first = np.full(d, -1, dtype=np.int64)  # the first member of each column's class
    for k in range(1, d):
        heads = (first[:k] < 0) | (first[:k] == np.arange(k))  # compare with first members only
        alike = heads & (cost[:k] == cost[k]) & (lo[:k] == lo[k]) & (hi[:k] == hi[k])
        same = np.flatnonzero(alike & (np.abs(h[:k] - h[k]) <= tol))
        flipped = np.flatnonzero(alike & mirror[:k] & mirror[k] & (np.abs(h[:k] + h[k] - total) <= tol))
        match = next((j for j in same if _columns_equal(X, features[j], features[k], False)), None)
        if match is None:
            match = next((j for j in flipped if _columns_equal(X, features[j], features[k], True)), None)
        if match is not None:
            first[match] = match
            first[k] = match
    for head in np.unique(first[first >= 0]):
        chain = np.flatnonzero(first == head)
        prev[chain[1:]] = chain[:-1]
    return prev

