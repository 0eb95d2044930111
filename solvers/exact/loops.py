"""Array copies, a stable argsort and a word's lowest set bit for numba kernels, written as plain loops.

numba compiles numpy's forms of these per process, and they are dear: an array-to-array slice
assignment (``a[:] = b``) compiles the shape check's error message (unicode formatting), and
``np.sort`` / ``np.argsort`` their sorting routines, seconds each. A fit in a fresh environment
waits for those compilations (:mod:`solvers.warmup`), so the kernels it runs first use these
loops instead; they compile in a fraction of a second and run as fast.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def copy_into(target, source) -> None:
    """``target[:] = source`` for 1-d arrays of one size."""
    for i in range(source.size):
        target[i] = source[i]


@njit(cache=True, nogil=True)
def stable_argsort(keys, n, order, scratch) -> None:
    """``order[:n] = np.argsort(keys[:n], kind="stable")``: a bottom-up merge sort of the indices
    (equal keys keep their index order); ``scratch`` holds at least ``n`` integers."""
    for i in range(n):
        order[i] = i
    width = 1
    source, target = order, scratch
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            a, b, t = lo, mid, lo
            while a < mid and b < hi:
                if keys[source[b]] < keys[source[a]]:
                    target[t] = source[b]
                    b += 1
                else:
                    target[t] = source[a]
                    a += 1
                t += 1
            while a < mid:
                target[t] = source[a]
                a += 1
                t += 1
            while b < hi:
                target[t] = source[b]
                b += 1
                t += 1
        source, target = target, source
        width *= 2
    if source is not order:
        for i in range(n):
            order[i] = source[i]


DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
#: bit index of ``(b * DE_BRUIJN) >> 58`` for ``b`` a single bit (a de Bruijn sequence)
BIT_INDEX = np.array([0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22,
                      45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
                      46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6], np.int64)


@njit(cache=True, nogil=True, inline="always")
def lowest_bit(word: np.uint64) -> int:
    """The index of the lowest set bit of a non-zero ``word``."""
    bit = word & (~word + np.uint64(1))
    return BIT_INDEX[(bit * DE_BRUIJN) >> np.uint64(58)]
