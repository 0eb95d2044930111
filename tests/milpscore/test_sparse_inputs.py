"""Sparse tables into every estimator and ``compare``: the same model as the dense array.

scipy CSR / CSC matrices, ``csr_array`` and DataFrames of pandas sparse columns are checked on
their stored values and densified with a ``DensifiedWarning`` (the exact programs read dense
rows); a dense copy over the memory budget is refused before it is allocated. The reference is
the fit on the dense array itself.
"""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from formulations.errors import OverMemoryBudgetError
from milpscore.compare import compare
from milpscore.data.validation import DensifiedWarning, as_sparse, validate_features
from milpscore.estimators import (ConvexRoundingClassifier, EYEClassifier, FacetsClassifier, FusedScoreClassifier,
                                  LocalSearchClassifier, RiskScoreClassifier, SLIMClassifier)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 120
    X = (rng.random((n, 4)) < 0.4) * rng.integers(1, 4, size=(n, 4)).astype(float)  # sparse counts
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(scale=0.8, size=n) > 1.0).astype(int)
    return X, y


def _sparse_forms(X):
    csr = sp.csr_matrix(X)
    return {"csr": csr, "csc": csr.tocsc(), "csr_array": sp.csr_array(csr), "coo": csr.tocoo(),
            "pandas": pd.DataFrame.sparse.from_spmatrix(csr, columns=[f"x{j}" for j in range(X.shape[1])])}


ESTIMATORS = [
    lambda: SLIMClassifier(time_limit=None, node_limit=200, max_size=2),
    lambda: ConvexRoundingClassifier(random_state=0),
    lambda: LocalSearchClassifier(random_state=0),
    lambda: EYEClassifier(),
    lambda: FacetsClassifier(solver="prox"),
    lambda: RiskScoreClassifier(max_size=2, time_limit=None),
    lambda: FusedScoreClassifier(n_bins=3, points_range=(0, 2), time_limit=None),
]


@pytest.mark.parametrize("make", ESTIMATORS, ids=lambda m: type(m()).__name__)
def test_every_estimator_fits_sparse_tables_to_the_dense_model(data, make):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = make().fit(X, y)
    for form, Xs in _sparse_forms(X).items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = make().fit(Xs, y)
        if not isinstance(model, FusedScoreClassifier):  # the fused table bins columns one at a time
            assert any(issubclass(w.category, DensifiedWarning) for w in caught), form
        np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-7, err_msg=form)
        assert model.intercept_ == pytest.approx(ref.intercept_, abs=1e-7), form
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DensifiedWarning)
            np.testing.assert_array_equal(model.predict(Xs), ref.predict(X), err_msg=form)


def test_compare_takes_a_sparse_table(data):
    X, y = data
    kwargs = dict(formulations=("facets",), methods=("relaxed",), time_limit=20, test_size=0.25, seed=0)
    ref = compare(X, y, **kwargs)
    with pytest.warns(DensifiedWarning):
        table = compare(sp.csr_matrix(X), y, **kwargs)
    np.testing.assert_allclose(table["objective"], ref["objective"], rtol=1e-9)
    np.testing.assert_allclose(table["test_accuracy"], ref["test_accuracy"])


def test_a_dense_copy_over_the_budget_is_refused_before_allocation():
    huge = sp.csr_matrix((10**6, 10**5))  # 800 GB dense, 8 MB sparse
    with pytest.raises(OverMemoryBudgetError, match="memory_limit.*BinarsityLogisticClassifier"):
        validate_features(huge)
    with pytest.raises(OverMemoryBudgetError, match="SLIMClassifier needs dense rows"):
        SLIMClassifier(memory_limit=100).fit(huge, np.r_[np.zeros(5 * 10**5), np.ones(5 * 10**5)])


def test_stored_values_are_checked_and_mixed_frames_convert_without_densifying():
    X = sp.csr_matrix(np.array([[0.0, 1.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="column x0 contains NaN"):
        validate_features(X)
    frame = pd.DataFrame({"a": pd.arrays.SparseArray([0.0, 2.0, 0.0]), "b": [1.0, 2.0, 3.0]})
    matrix = as_sparse(frame)
    assert matrix.format == "csr" and matrix.nnz == 4
    np.testing.assert_array_equal(matrix.toarray(), frame.to_numpy(dtype=float))


def test_binarizers_read_sparse_tables_and_emit_sparse_blocks(data):
    from formulations.bins import OrderedBins
    from milpscore.data.binarize import ThresholdBinarizer
    from milpscore.data.binning import OrderedBinner

    X, _ = data
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(
        kind=np.where(X[:, 0] > 1, "high", "low"))
    dense = ThresholdBinarizer(max_cuts=2).fit(frame).transform(frame)
    sparse = ThresholdBinarizer(max_cuts=2, sparse_output=True).fit(frame).transform(frame)
    assert all(isinstance(dt, pd.SparseDtype) for dt in sparse.dtypes)
    assert list(sparse.columns) == list(dense.columns)
    np.testing.assert_array_equal(sparse.sparse.to_dense().to_numpy(), dense.to_numpy())
    for form, Xs in _sparse_forms(X).items():
        if form == "pandas":
            continue
        from_sparse = ThresholdBinarizer(max_cuts=2, sparse_output=True).fit(Xs).transform(Xs)
        np.testing.assert_array_equal(from_sparse.sparse.to_dense().to_numpy(),
                                      ThresholdBinarizer(max_cuts=2).fit(X).transform(X).to_numpy(), err_msg=form)
        binner = OrderedBinner(n_bins=3).fit(Xs)
        assert sp.issparse(binner.transform(Xs)) and binner.transform(Xs).indices.dtype == np.int32
        np.testing.assert_array_equal(binner.transform(Xs).toarray(),
                                      OrderedBinner(n_bins=3).fit(X).transform(X).toarray(), err_msg=form)
        np.testing.assert_array_equal(OrderedBins(3).fit(Xs).transform(Xs).toarray(),
                                      OrderedBins(3).fit(X).transform(X).toarray(), err_msg=form)
