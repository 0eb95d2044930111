"""Merging identical rows (formulations.rows): the merged table equals a dictionary of
``(row, label) -> summed weight`` built row by row, for 0/1, few-valued (negative too), large
integer, real and signed-zero tables; zero-weight rows are dropped; ``unique_rows`` inverts."""
from collections import defaultdict

import numpy as np
import pytest

from formulations.rows import merge_rows, unique_rows


def _tables(rng):
    yield rng.integers(0, 2, (400, 6)).astype(float)
    yield rng.integers(-3, 4, (300, 3)).astype(float)
    yield rng.integers(-40000, 40000, (300, 2)).astype(float)  # int32 key
    yield rng.integers(0, 2, (200, 2)).astype(float) * 3e9  # beyond int32: the float key
    yield np.round(rng.normal(size=(300, 2)), 1)
    yield np.array([[0.0, 1.0], [-0.0, 1.0], [0.5, -0.0], [0.5, 0.0]])


@pytest.mark.parametrize("case", range(6))
def test_merge_rows_equals_a_dictionary_of_rows(case):
    rng = np.random.default_rng(case)
    X = list(_tables(rng))[case]
    y = np.where(rng.random(X.shape[0]) < 0.4, 1.0, -1.0)
    w = rng.random(X.shape[0]) * (rng.random(X.shape[0]) < 0.9)  # some weights 0
    expected = defaultdict(float)
    for row, label, weight in zip(X + 0.0, y, w):
        expected[tuple(row) + (label,)] += weight
    expected = {k: v for k, v in expected.items() if v > 0}
    Xu, yu, wu = merge_rows(X, y, w)
    got = {tuple(row) + (label,): weight for row, label, weight in zip(Xu, yu, wu)}
    assert len(got) == len(Xu) == len(expected)
    assert got.keys() == expected.keys()
    np.testing.assert_allclose([got[k] for k in expected], list(expected.values()), rtol=1e-12)
    assert not np.signbit(Xu[Xu == 0]).any()  # -0.0 merged with 0.0
    uniq, inverse = unique_rows(X)
    np.testing.assert_array_equal(uniq[inverse], X + 0.0)
    assert len({tuple(r) for r in uniq}) == len(uniq)


def test_a_table_of_distinct_rows_comes_back_uncopied_without_negative_zeros():
    X = np.eye(5)
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    w = np.full(5, 0.2)
    Xu, yu, wu = merge_rows(X, y, w)
    assert Xu is X and wu is not None and np.array_equal(wu, w)
    signed = X.copy()
    signed[0, 1] = -0.0
    Xs, _, _ = merge_rows(signed, y, w)
    assert Xs is not signed and not np.signbit(Xs).any() and np.array_equal(Xs, X)


def test_fortran_ordered_tables_merge_like_c_ordered_ones():
    rng = np.random.default_rng(9)
    for X in (rng.integers(0, 2, (50, 4)).astype(float), np.round(rng.normal(size=(50, 3)), 2)):
        y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
        for table in (X, np.vstack([X, X[:5]])):
            labels = np.concatenate([y, y[:5]])[:table.shape[0]]
            c = merge_rows(table, labels, np.ones(table.shape[0]))
            f = merge_rows(np.asfortranarray(table), labels, np.ones(table.shape[0]))
            assert f[0].flags.c_contiguous
            for a, b in zip(c, f):
                np.testing.assert_array_equal(a, b)
        uniq, inverse = unique_rows(np.asfortranarray(X))
        np.testing.assert_array_equal(uniq[inverse], X)
