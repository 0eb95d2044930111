"""Binarsity's dual gauge (closed form) and data-driven weights from sparse designs.

The gauge :math:`\\min\\{s: z \\in s\\,\\partial\\operatorname{bina}(0)\\}` is checked against an LP
solved by cvxpy (``z = D^T v + t`` per block, ``|v| <= s c``) and against the prox
(``prox_{s bina}(z) = 0`` iff ``z`` lies in ``s`` times the subdifferential); the
weights of ``from_data`` are the same for a dense array, CSR, CSC and a DataFrame of pandas
sparse columns.
"""
import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from formulations.penalties import Binarsity


def _gauge_lp(pen: Binarsity, z: np.ndarray) -> float:
    s = cp.Variable()
    cons = []
    k = 0
    for a, b in zip(pen.starts[:-1], pen.starts[1:]):
        d = b - a
        t = cp.Variable()
        if d == 1:
            cons.append(z[a] == t)
            continue
        v = cp.Variable(d - 1)
        # (D^T v)_i = v_{i-1} - v_i with v_0 = v_d = 0
        dtv = cp.hstack([-v[0]] + [v[i - 1] - v[i] for i in range(1, d - 1)] + [v[d - 2]])
        cons += [z[a:b] == dtv + t, cp.abs(v) <= s * pen.weights[k:k + d - 1]]
        k += d - 1
    prob = cp.Problem(cp.Minimize(s), cons)
    prob.solve(solver=cp.CLARABEL)
    return float(s.value)


@pytest.mark.parametrize("seed", range(4))
def test_zero_gauge_matches_the_lp_and_the_prox(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=4)
    sizes[0] = 1  # a one-column block: its only admissible value is 0, so it costs nothing
    pen = Binarsity(sizes, rng.uniform(0.1, 1.0, size=sizes.sum() - sizes.size))
    z = rng.normal(size=sizes.sum())
    gauge = pen.zero_gauge(z)
    assert gauge == pytest.approx(_gauge_lp(pen, z), rel=1e-6)
    # the defining property: prox of strength just above the gauge is 0, just below it is not
    assert not np.any(np.abs(pen.prox(z, gauge * (1 + 1e-9))) > 1e-9)
    assert np.any(np.abs(pen.prox(z, gauge * (1 - 1e-3))) > 1e-9)


def test_zero_gauge_is_infinite_where_a_zero_weight_meets_a_partial_sum():
    pen = Binarsity(np.array([3]), np.array([1.0, 0.0]))
    assert pen.zero_gauge(np.array([1.0, 0.0, -1.0])) == np.inf  # partial sums 1, 1
    assert pen.zero_gauge(np.array([1.0, -1.0, 0.0])) == pytest.approx(1.0)  # partial sums 1, 0


def test_scaled_multiplies_value_and_gauge():
    pen = Binarsity(np.array([3, 2]), np.array([0.5, 1.0, 2.0]))
    w = np.array([1.0, -2.0, 1.0, 0.5, -0.5])
    z = np.array([0.3, -1.0, 0.2, 2.0, 0.1])
    assert pen.scaled(3.0).value(w) == pytest.approx(3.0 * pen.value(w))
    assert pen.scaled(3.0).zero_gauge(z) == pytest.approx(pen.zero_gauge(z) / 3.0)
    with pytest.raises(ValueError, match="factor"):
        pen.scaled(-1.0)


def test_from_data_reads_sparse_designs_without_densifying():
    rng = np.random.default_rng(3)
    n, sizes = 500, np.array([4, 2, 5])
    codes = np.column_stack([rng.integers(0, d, size=n) for d in sizes])
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    csr = sp.csr_matrix((np.ones(codes.size), (np.repeat(np.arange(n), sizes.size), (codes + offsets).ravel())),
                        shape=(n, sizes.sum()))
    dense = Binarsity.from_data(csr.toarray(), sizes, strength=1.5)
    frame = pd.DataFrame.sparse.from_spmatrix(csr)
    for X in (csr, csr.tocsc(), sp.csr_array(csr), frame, pd.DataFrame(csr.toarray())):
        np.testing.assert_allclose(Binarsity.from_data(X, sizes, strength=1.5).weights, dense.weights, rtol=1e-15)
    with pytest.raises(ValueError, match="sum\\(block_sizes\\)"):
        Binarsity.from_data(csr[:, :-1], sizes)
