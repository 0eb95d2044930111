"""Exact merging of identical training rows (one weighted row per distinct ``(x, y)``)."""
from __future__ import annotations

import numpy as np


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a 2-D float array and the inverse index, exact (byte comparison).

    Rows are viewed as one opaque byte string each, so one 1-D sort replaces the much slower
    lexicographic ``np.unique(axis=0)`` (its numpy implementation sorts a structured array). Rows come back
    in byte order (not lexicographic order); ``a[inverse]`` restores the input.
    """
    a = np.ascontiguousarray(a, dtype=float) + 0.0  # + 0.0 turns -0.0 into 0.0 for the byte view
    rows = a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    return a[first], inverse.reshape(-1)


def merge_rows(X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(x_i, y_i)`` with the weights of their copies added; rows of weight 0 dropped.

    Every loss used here is a sum over rows of ``w_i * loss(x_i, y_i)``, so merging is exact.
    """
    X = np.asarray(X, dtype=float)
    uniq, inverse = unique_rows(np.column_stack([X, y]))
    merged = np.bincount(inverse, weights=weights, minlength=uniq.shape[0])
    keep = merged > 0
    return uniq[keep, :-1], uniq[keep, -1], merged[keep]
