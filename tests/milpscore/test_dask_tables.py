"""Tables held by dask: the binner and the binarsity estimator on a dask DataFrame.

References: the same table in memory (the binner's bins bit for bit, its one-hot matrix entry for
entry; the estimator's path to rounding), and ``np.quantile(method="higher")`` for the cut points
computed from distinct values and counts.
"""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from formulations.bins import cut_points, cut_points_of_counts
from milpscore.data.binning import OrderedBinner
from milpscore.estimators.binarsity import BinarsityLogisticClassifier


def _reference_cut_points(values, max_cuts):
    """The rule of :func:`cut_points` written with ``np.quantile`` on the repeated values."""
    v = np.asarray(values, dtype=float)
    uniq = np.unique(v)
    if uniq.size <= 1:
        return np.zeros(0)
    if uniq.size <= max_cuts + 1:
        return uniq[1:]
    q = np.quantile(v, np.arange(1, max_cuts + 1) / (max_cuts + 1), method="higher")
    cuts = np.unique(q[q > uniq[0]])
    if cuts.size < max_cuts:
        extra = np.quantile(v[v > uniq[0]], np.arange(max_cuts) / max_cuts, method="higher")
        cuts = np.unique(np.r_[cuts, np.setdiff1d(extra, cuts)[: max_cuts - cuts.size]])
    return cuts


@pytest.mark.parametrize("kind", ["normal", "few", "zero_inflated", "rounded"])
def test_cut_points_from_counts_equal_the_quantile_rule(kind):
    rng = np.random.default_rng(7)
    for _ in range(400):
        n, k = int(rng.integers(1, 80)), int(rng.integers(1, 12))
        v = {"normal": lambda: rng.normal(size=n),
             "few": lambda: rng.integers(0, 6, size=n).astype(float),
             "zero_inflated": lambda: np.where(rng.random(n) < 0.8, 0.0, rng.exponential(size=n)),
             "rounded": lambda: np.round(rng.normal(size=n), 1)}[kind]()
        expected = _reference_cut_points(v, k)
        np.testing.assert_array_equal(cut_points(v, k), expected)
        uniq, counts = np.unique(v, return_counts=True)
        np.testing.assert_array_equal(cut_points_of_counts(uniq, counts, k), expected)


def _table(n, seed):
    rng = np.random.default_rng(seed)
    age = np.round(rng.normal(55, 12, n))
    dose = np.where(rng.random(n) < 0.7, 0.0, np.round(rng.exponential(2.0, n), 2))
    grade = pd.Categorical(rng.choice(["low", "mid", "high"], n), categories=["low", "mid", "high"], ordered=True)
    site = rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1])
    smoker = rng.random(n) < 0.3
    z = 0.05 * (age - 55) + 0.4 * (dose > 1) + 0.8 * (np.asarray(grade) == "high") + 0.6 * smoker - 0.5
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), "event", "none")
    return pd.DataFrame({"age": age, "dose": dose, "grade": grade, "site": site, "smoker": smoker}), pd.Series(y)


dd = pytest.importorskip("dask.dataframe", reason="dask tables need `pip install 'milpscore[dask]'`")


def test_binner_on_a_dask_table_learns_the_bins_of_the_table_in_memory():
    X, _ = _table(3000, 0)
    ddf = dd.from_pandas(X, npartitions=4)
    ref = OrderedBinner(n_bins=6).fit(X)
    got = OrderedBinner(n_bins=6).fit(ddf)
    assert [v.name for v in got.variables_] == [v.name for v in ref.variables_]
    for a, b in zip(ref.variables_, got.variables_):
        assert a.kind == b.kind
        np.testing.assert_array_equal(a.cuts, b.cuts)
        assert tuple(map(str, a.categories)) == tuple(map(str, b.categories))
    assert got.blocks_ == ref.blocks_
    onehot = got.transform(ddf)
    assert onehot.chunks == (tuple(ddf.map_partitions(len).compute()), (ref.n_bins_out,))
    block = onehot.blocks[1].compute()
    assert sp.isspmatrix_csr(block)
    computed = onehot.compute()
    assert sp.issparse(computed)
    np.testing.assert_array_equal(computed.toarray(), ref.transform(X).toarray())


def test_a_dask_column_with_nan_is_named():
    X, _ = _table(200, 1)
    X.loc[[3, 50, 51], "dose"] = np.nan
    with pytest.raises(ValueError, match=r"column 'dose' contains NaN in 3 row\(s\)"):
        OrderedBinner().fit(dd.from_pandas(X, npartitions=3))


def test_estimator_on_a_dask_table_equals_the_fit_in_memory(dask_client):
    X, y = _table(2000, 2)
    ddf, dy = dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=3)
    kwargs = dict(n_bins=4, strength=0.5, n_strengths=2, tol=1e-6)
    ref = BinarsityLogisticClassifier(**kwargs).fit(X, y)
    got = BinarsityLogisticClassifier(**kwargs).fit(ddf, dy)
    assert got.status_ == "optimal" and got.gap_ <= 1e-6 and got.n_iter_ == ref.n_iter_
    assert list(got.classes_) == list(ref.classes_) == ["event", "none"]
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-7)
    assert got.intercept_ == pytest.approx(ref.intercept_, abs=1e-7)
    assert got.objective_ == pytest.approx(ref.objective_, rel=1e-10)
    assert got.used_features_ == ref.used_features_
    np.testing.assert_array_equal(got.integer_points_.theta, ref.integer_points_.theta)
    assert str(got.scorecard_) == str(ref.scorecard_)
    np.testing.assert_allclose(got.decision_function(ddf).compute(), ref.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(got.predict(ddf).compute(), ref.predict(X))
    np.testing.assert_allclose(got.predict_proba(ddf).compute(), ref.predict_proba(X), atol=1e-7)
    np.testing.assert_array_equal(got.predict_points(ddf).compute(), ref.predict_points(X))


def test_labels_partitioned_unlike_the_table_are_refused(dask_client):
    X, y = _table(600, 3)
    with pytest.raises(ValueError, match="partitioned alike"):
        BinarsityLogisticClassifier(n_strengths=2).fit(dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=2))


def test_labels_in_memory_beside_a_dask_table(dask_client):
    X, y = _table(600, 4)
    ddf = dd.from_pandas(X, npartitions=3)
    kwargs = dict(n_bins=3, strength=1.0, n_strengths=2, tol=1e-6)
    got = BinarsityLogisticClassifier(**kwargs).fit(ddf, y.to_numpy())
    ref = BinarsityLogisticClassifier(**kwargs).fit(X, y)
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-9)
    with pytest.raises(ValueError, match=r"y has shape \(599,\) but X has 600 rows"):
        BinarsityLogisticClassifier(**kwargs).fit(ddf, y.to_numpy()[:-1])
