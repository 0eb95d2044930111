"""The binarsity path over row blocks of a dask array on a ``dask.distributed`` LocalCluster.

Reference: the same path on the in-memory design (itself checked against cvxpy in
``test_binarsity_path.py``). The distributed loss sums the same terms block by block, so the
iterates agree to rounding and the certificates hold on their own.
"""
import numpy as np
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
pytest.importorskip("dask.distributed")

from solvers.proximal.binarsity import binarsity_logistic_path, binarsity_path  # noqa: E402
from solvers.proximal.distributed import DaskLogistic  # noqa: E402


def _onehot(n, sizes, seed):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, d, size=n) for d in sizes])
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    X = sp.csr_matrix((np.ones(codes.size), (np.repeat(np.arange(n), len(sizes)), (codes + offsets).ravel())),
                      shape=(n, sum(sizes)))
    z = 0.9 * (codes[:, 0] >= 2) - 0.6 * codes[:, 1] / sizes[1]
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0)
    return X, y


def _row_blocks(X, rows):
    """A dask array whose chunks are CSR row blocks of ``X`` (as a user would load file by file)."""
    parts = [da.from_delayed(dask.delayed(X[i:i + rows]), shape=X[i:i + rows].shape, dtype=np.float64,
                             meta=sp.csr_matrix((0, X.shape[1])))
             for i in range(0, X.shape[0], rows)]
    return da.concatenate(parts, axis=0)


def test_distributed_path_equals_the_single_machine_path(dask_client):
    sizes = [4, 3, 5]
    X, y = _onehot(2000, sizes, 0)
    ref, ref_base = binarsity_logistic_path(X, y, sizes, strength=0.3, n_strengths=2, tol=1e-9)
    loss = DaskLogistic(_row_blocks(X, 500), y)
    got, base = binarsity_path(loss, sizes, strength=0.3, n_strengths=2, tol=1e-9)
    np.testing.assert_allclose(base.weights, ref_base.weights, rtol=1e-14)
    for a, b in zip(ref, got):
        assert a.lam == pytest.approx(b.lam, rel=1e-12)
        np.testing.assert_allclose(b.coef, a.coef, atol=1e-8)
        assert b.intercept == pytest.approx(a.intercept, abs=1e-8)
        assert b.result.status.value == "optimal" and b.result.gap <= 1e-9
        assert b.result.iterations == a.result.iterations
        assert b.objective == pytest.approx(a.objective, rel=1e-10)


def test_dense_chunks_and_value_gradient_match(dask_client):
    X, y = _onehot(500, [3, 3], 1)
    from formulations.losses import Logistic

    ref = Logistic(X, y)
    loss = DaskLogistic(da.from_array(X.toarray(), chunks=(128, -1)), y)
    w = np.linspace(-1, 1, 6)
    assert loss.value(w, 0.2) == pytest.approx(ref.value(w, 0.2), rel=1e-13)
    g, gb = loss.gradient(w, 0.2)
    g_ref, gb_ref = ref.gradient(w, 0.2)
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
    assert gb == pytest.approx(gb_ref, rel=1e-12)
    assert loss.lipschitz == pytest.approx(ref.lipschitz, rel=1e-8)
    assert loss.intercept_at_zero() == pytest.approx(ref.intercept_at_zero())


def test_bad_inputs_are_named():
    X = da.zeros((10, 4), chunks=(5, 2))
    with pytest.raises(ValueError, match="rechunk"):
        DaskLogistic(X, np.r_[np.ones(5), -np.ones(5)])
    with pytest.raises(TypeError, match="dask array"):
        DaskLogistic(np.zeros((10, 4)), np.ones(10))


def test_without_a_cluster_dask_local_scheduler_gives_the_same_path():
    """No ``dask.distributed`` client: the same loss runs on dask's local threaded scheduler."""
    sizes = [3, 4]
    X, y = _onehot(600, sizes, 2)
    ref, _ = binarsity_logistic_path(X, y, sizes, strength=0.5, n_strengths=2, tol=1e-8)
    with dask.config.set(scheduler="threads"):
        got, _ = binarsity_path(DaskLogistic(_row_blocks(X, 200), y), sizes, strength=0.5, n_strengths=2, tol=1e-8)
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b.coef, a.coef, atol=1e-9)
        assert b.result.iterations == a.result.iterations
