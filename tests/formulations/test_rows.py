"""Merging identical rows (formulations.rows): the merged table equals a dictionary of
``(row, label) -> summed weight`` built row by row, for 0/1, few-valued (negative too), large
integer, real and signed-zero tables; zero-weight rows are dropped; ``unique_rows`` inverts."""
from collections import defaultdict

import numpy as np
import pytest

import formulations.rows as rows
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
    Xu, yu, wu = merge_rows(X, y, w, min_share=0.0)
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


def test_a_table_with_few_repeats_comes_back_uncopied_with_the_same_weighted_sums():
    """Below MERGE_MIN_SHARE of repeated rows the table is not copied; every weighted sum over the
    rows (a loss) equals the merged table's."""
    rng = np.random.default_rng(3)
    base = (rng.random((400, 30)) < 0.4).astype(float)
    X = np.vstack([base, base[:20]])  # 20 of 420 rows repeat (4.8 %)
    y = np.where(rng.random(420) < 0.5, 1.0, -1.0)
    y[400:] = y[:20]
    w = rng.random(420) + 0.1
    Xk, yk, wk = merge_rows(X, y, w)
    assert Xk is X and yk.shape == (420,) and np.array_equal(wk, w)
    Xm, ym, wm = merge_rows(X, y, w, min_share=0.0)
    assert Xm.shape[0] == 400
    coef = rng.normal(size=30)
    for table, labels, weights in ((Xk, yk, wk), (Xm, ym, wm)):
        loss = float(weights @ np.logaddexp(0.0, -labels * (table @ coef)))
        np.testing.assert_allclose(loss, float(w @ np.logaddexp(0.0, -y * (X @ coef))), rtol=1e-12)
    many = np.vstack([base, base[:100]])  # 100 of 500 rows repeat (20 %): merged
    labels = np.concatenate([y[:400], y[:100]])
    assert merge_rows(many, labels, np.ones(500))[0].shape[0] == 400


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


@pytest.mark.parametrize("case", range(3))
def test_counting_codes_and_sorting_bytes_merge_alike(case, monkeypatch):
    """The code count (few narrow integer columns) and the byte sort (CODES = 0 forces it) find the
    same distinct rows and the same grouping of the input rows, with and without labels."""
    rng = np.random.default_rng(10 + case)
    X = [rng.integers(0, 2, (5000, 5)), rng.integers(-2, 3, (3000, 4)), rng.integers(0, 7, (800, 3))][case].astype(float)
    y = np.where(rng.random(X.shape[0]) < 0.3, 1.0, -1.0)
    w = rng.random(X.shape[0])
    assert rows._unique_codes(rows._integer_key(X)) is not None  # the counting path applies
    coded, coded_inverse = unique_rows(X)
    merged = merge_rows(X, y, w, min_share=0.0)
    monkeypatch.setattr(rows, "CODES", 0)
    assert rows._unique_codes(rows._integer_key(X)) is None
    sorted_, sorted_inverse = unique_rows(X)
    assert {tuple(r) for r in coded} == {tuple(r) for r in sorted_} and len(coded) == len(sorted_)
    np.testing.assert_array_equal(coded[coded_inverse], sorted_[sorted_inverse])
    by_sort = merge_rows(X, y, w, min_share=0.0)
    as_dict = [{tuple(r) + (label,): weight for r, label, weight in zip(*m)} for m in (merged, by_sort)]
    assert as_dict[0].keys() == as_dict[1].keys()
    np.testing.assert_allclose([as_dict[0][k] for k in as_dict[1]], list(as_dict[1].values()), rtol=1e-12)
