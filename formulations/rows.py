"""Exact merging of identical training rows (one weighted row per distinct ``(x, y)``).

Rows are compared as byte strings (one 1-D sort), or, for a few narrow integer columns (a
support's), counted by their mixed-radix codes (linear in the rows, no sort). Integer-valued
tables (0/1 and few-valued columns, the usual case here) are keyed by their narrowest integer type
(``int8``: an eighth of the float bytes), cast block by block, and 0/1 tables with +-1 labels by
one bit a cell, so merging a million-row table allocates a few bytes per row rather than several
float64 copies of it.
"""
from __future__ import annotations

import numpy as np

#: rows cast to the integer key per block (bounds the temporaries of the check)
BLOCK = 1 << 16
#: merging copies the table; when it would remove fewer than this share of the rows, the rows are
#: kept as given (their duplicates stay separate rows of their own weight: every sum is the same)
MERGE_MIN_SHARE = 0.1
#: integer tables whose columns' value ranges multiply to at most this many codes (and to at most
#: 4 per row) are merged by counting codes, in linear time, rather than by a sort
CODES = 1 << 22


def _integer_key(a: np.ndarray) -> np.ndarray | None:
    """``a`` (2-D float) as the narrowest of int8 / int16 / int32 that holds every value exactly
    (-0.0 as 0), or None (non-integer, non-finite or too large values)."""
    if a.size == 0:
        return None
    lo, hi = float(a.min()), float(a.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    dtype = next((t for t in (np.int8, np.int16, np.int32) if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max), None)
    if dtype is None:
        return None
    key = np.empty(a.shape, dtype)
    for start in range(0, a.shape[0], BLOCK):
        block = a[start:start + BLOCK]
        cast = block.astype(dtype)
        if not np.array_equal(cast, block):
            return None
        key[start:start + BLOCK] = cast
    return key


def _unique_codes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(first, inverse)`` of the distinct rows of a 2-D integer array whose value ranges multiply
    to at most :data:`CODES` (a few narrow columns: a support's): each row's mixed-radix code is
    counted in one pass, no sort, so the cost is linear in the rows. ``first`` holds one row of each
    distinct value (any of them), in increasing code; None when the ranges are too wide."""
    n, d = key.shape
    if n == 0 or d == 0:
        return None
    lo = key.min(axis=0).astype(np.int64)
    ranges = key.max(axis=0).astype(np.int64) - lo + 1
    if float(np.prod(ranges.astype(float))) > min(CODES, 4 * n):
        return None
    code = np.zeros(n, np.int64)
    stride = 1
    for j in range(d - 1, -1, -1):
        code += (key[:, j].astype(np.int64) - lo[j]) * stride
        stride *= int(ranges[j])
    present = np.bincount(code, minlength=stride) > 0
    index = np.cumsum(present) - 1
    representative = np.empty(stride, np.int64)
    representative[code] = np.arange(n)
    return representative[present], index[code]


def _unique_bytes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of the distinct rows of a 2-D array compared as bytes (in C order; a row
    of at most 8 bytes as one zero-padded uint64)."""
    key = np.ascontiguousarray(key)
    width = key.dtype.itemsize * key.shape[1]
    if 0 < width <= 8:  # one uint64 a row (zero-padded): numpy sorts integers faster than byte strings
        padded = np.zeros((key.shape[0], 8), np.uint8)
        padded[:, :width] = key.view(np.uint8).reshape(key.shape[0], width)
        rows = padded.view(np.uint64).ravel()
    else:
        rows = key.view(np.dtype((np.void, width))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _packed_bits(key: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Rows of a 0/1 integer table and their label as bits, 8 cells a byte (packed in blocks)."""
    n, d = key.shape
    packed = np.empty((n, (d + 8) // 8), np.uint8)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        packed[start:stop] = np.packbits(np.column_stack([key[start:stop] != 0, positive[start:stop]]), axis=1)
    return packed


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a 2-D float array and the inverse index, exact (byte comparison of the
    integer key, or of the float values with -0.0 as 0.0).

    A few narrow integer columns (a support's) are merged by counting their mixed-radix codes
    (linear in the rows); other tables by one 1-D sort of the rows as bytes, which replaces the
    much slower lexicographic ``np.unique(axis=0)`` (its numpy implementation sorts a structured
    array). Rows come back in the order of their codes or keys (not lexicographic order);
    ``a[inverse]`` restores the input.
    """
    a = np.asarray(a, dtype=float)
    key = _integer_key(a)
    coded = None if key is None else _unique_codes(key)
    if coded is None:  # (+ 0.0: -0.0 as 0.0)
        coded = _unique_bytes(key if key is not None else a + 0.0)
    first, inverse = coded
    distinct = a[first]
    distinct += 0.0  # in place: -0.0 as 0.0 without a second copy
    return distinct, inverse


def merge_rows(X: np.ndarray, y: np.ndarray, weights: np.ndarray,
               min_share: float = MERGE_MIN_SHARE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(x_i, y_i)`` with the weights of their copies added; rows of weight 0 dropped.

    Every loss used here is a sum over rows of ``w_i * loss(x_i, y_i)``, so merging is exact. When
    every row is weighted and merging would remove fewer than ``min_share`` of the rows (every row
    distinct, or a million-row table of continuous-looking columns with a few repeats), the table
    comes back as it is, in its order and not copied (but for -0.0 written as 0.0): the copy of
    the table would cost more memory than the few rows it saves (``min_share=0``: always merge).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).reshape(-1)
    key, label = _integer_key(X), _integer_key(y[:, None])
    if key is not None and label is not None and key.min(initial=0) >= 0 and key.max(initial=0) <= 1 and \
            np.isin(label, (-1, 1)).all():  # 0/1 features, +-1 labels: one bit a cell
        first, inverse = _unique_bytes(_packed_bits(key, label[:, 0] > 0))
    elif key is not None and label is not None:
        common = np.promote_types(key.dtype, label.dtype)
        both = np.column_stack([key.astype(common, copy=False), label.astype(common, copy=False)])
        coded = _unique_codes(both)
        first, inverse = coded if coded is not None else _unique_bytes(both)
        del both
    else:
        first, inverse = _unique_bytes(np.column_stack([X, y]) + 0.0)
    del key, label  # the integer keys are done with: freed before the merged copy
    weights = np.asarray(weights, dtype=float)
    if first.size >= (1.0 - min_share) * X.shape[0] and (weights > 0).all():
        # (almost) all rows distinct: the table itself, no copy
        return _without_negative_zero(np.ascontiguousarray(X)), _without_negative_zero(y), weights
    merged = np.bincount(inverse, weights=weights, minlength=first.size)
    keep = merged > 0
    Xu, yu = X[first[keep]], y[first[keep]]
    Xu += 0.0  # in place: -0.0 as 0.0 without a second copy of the table
    yu += 0.0
    return Xu, yu, merged[keep]


def is_binary(a: np.ndarray) -> bool:
    """Whether every entry of a 2-D array is 0 or 1 (checked in blocks of :data:`BLOCK` rows)."""
    return all(((block == 0) | (block == 1)).all() for block in (a[s:s + BLOCK] for s in range(0, a.shape[0], BLOCK)))


def is_integral(a: np.ndarray) -> bool:
    """Whether every entry of a 2-D float array is an integer (checked in blocks of :data:`BLOCK`
    rows: no full-size temporary)."""
    return all(np.array_equal(block, np.rint(block)) for block in (a[s:s + BLOCK] for s in range(0, a.shape[0], BLOCK)))


def _without_negative_zero(a: np.ndarray) -> np.ndarray:
    """``a`` itself, or ``a + 0.0`` (a copy with -0.0 as 0.0) when it holds a -0.0."""
    flat, step = a.reshape(-1), BLOCK * 64
    for start in range(0, flat.size, step):  # blocks: the mask of zeros stays small
        block = flat[start:start + step]
        if np.signbit(block[block == 0.0]).any():
            return a + 0.0
    return a
