"""The kernels' loops (solvers.exact.loops) against numpy: a stable argsort keeps ties in index order."""
from __future__ import annotations

import numpy as np
import pytest

from solvers.exact.loops import copy_into, stable_argsort


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 64, 1000, 1025])
def test_stable_argsort_is_numpys_stable_argsort(n):
    rng = np.random.default_rng(n)
    keys = np.concatenate([rng.integers(0, 5, n).astype(float), [np.inf, -1.0]])  # many ties; a tail left alone
    order, scratch = np.full(n + 2, -7, np.int64), np.empty(n + 2, np.int64)
    stable_argsort(keys, n, order, scratch)
    assert np.array_equal(order[:n], np.argsort(keys[:n], kind="stable"))
    assert np.all(order[n:] == -7)


def test_copy_into_copies_a_row_of_a_matrix():
    target = np.zeros((3, 4), np.uint64)
    copy_into(target[1], np.arange(4, dtype=np.uint64))
    assert target[1].tolist() == [0, 1, 2, 3] and not target[[0, 2]].any()
