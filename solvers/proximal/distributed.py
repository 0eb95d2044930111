"""The logistic loss over row blocks of a dask array: proximal paths beyond one machine's memory.

:class:`DaskLogistic` is :class:`formulations.losses.Logistic` with its data left where dask
keeps it: ``X`` a dask array chunked by rows only (each chunk a numpy array or a scipy.sparse
matrix, e.g. a block of the one-hot design), ``y`` a dask array with the same row chunks. Every
quantity the proximal solvers ask for is a sum over rows, computed block by block on the workers
of the current ``dask.distributed`` client (or dask's local scheduler without one):

* the state :math:`z = Xw + b` stays distributed (one persisted dask array of length n);
* :math:`f = \\frac1n\\sum_i\\log(1 + e^{-y_iz_i})` is one reduction to a scalar;
* :math:`\\nabla_w f = \\sum_{blocks} X_B^\\top r_B` (``r_i = -y_i\\sigma(-y_iz_i)/n``) is one
  p-vector per block, summed on the client: only O(p) numbers per block cross the network.

So FISTA (:func:`solvers.proximal.gradient.proximal_gradient`), its duality-gap certificate
(:func:`solvers.proximal.common.duality_gap`, through :meth:`DaskLogistic.dual_point`) and the
binarsity path (:func:`solvers.proximal.binarsity.binarsity_logistic_path` with ``loss=``) run
unchanged; the iterates, hence the fitted model, are those of the single-machine loss up to the
order of floating-point sums. dask is an optional dependency (``pip install "milpscore[dask]"``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit, xlogy

from formulations.losses import DualPoint, _largest_eigenvalue


def _block_rmatvec(block: Any, r: np.ndarray) -> np.ndarray:
    return np.asarray(block.T @ r, dtype=np.float64).ravel()


def _block_matvec(block: Any, w: np.ndarray, b: float) -> np.ndarray:
    return np.asarray(block @ w, dtype=np.float64).ravel() + b


def _block_column_sums(block: Any) -> np.ndarray:
    return np.asarray(block.sum(axis=0), dtype=np.float64).ravel()


class DaskLogistic:
    """Logistic loss :math:`\\frac1n\\sum_i\\log(1 + e^{-y_i(x_i^\\top w + b)})` over a row-chunked dask array.

    Parameters
    ----------
    X : dask array (n, p), chunked by rows only (one chunk along the columns); chunks may be
        numpy arrays or scipy.sparse matrices.
    y : dask array or numpy array (n,) of labels in {-1, +1} or {0, 1} (rechunked like ``X``).

    Same contract as :class:`formulations.losses.Logistic` (``state``, ``value_state``,
    ``gradient_state``, ``lipschitz``, ``intercept_at_zero``, ``dual_point``); the intercept is
    always fitted.
    """

    has_intercept_variable = True
    fit_intercept = True
    curvature = 0.25

    def __init__(self, X: Any, y: Any):
        import dask
        import dask.array as da

        if not isinstance(X, da.Array) or X.ndim != 2:
            raise TypeError(f"X must be a 2-D dask array chunked by rows, got {type(X).__name__}; "
                            "build one with dask.array.from_array / from_delayed, or use formulations.losses.Logistic")
        if len(X.chunks[1]) != 1:
            raise ValueError(f"X must be chunked by rows only (one chunk of all {X.shape[1]} columns), got column "
                             f"chunks {X.chunks[1]}; rechunk with X.rechunk({{1: -1}})")
        n, p = (int(s) for s in X.shape)
        if n == 0:
            raise ValueError("X has no samples; pass at least one row")
        y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y, dtype=np.float64), chunks=(X.chunks[0],))
        if y.shape != (n,):
            raise ValueError(f"y has shape {y.shape} but X has {n} rows")
        y = y.rechunk((X.chunks[0],)).astype(np.float64)
        labels = np.unique(da.unique(y).compute())
        if labels.size > 2 or not np.all(np.isin(labels, (-1.0, 0.0, 1.0))) or (
                labels.size == 2 and not np.isin(1.0, labels)):
            raise ValueError("y must hold two classes coded {-1, +1} or {0, 1}")
        self.X = X.persist()
        self.y = da.where(y > 0, 1.0, -1.0).persist()
        self.n, self.p = n, p
        self._blocks = list(self.X.to_delayed().ravel())
        self.column_sums = np.sum(dask.compute(*[dask.delayed(_block_column_sums)(b) for b in self._blocks]), axis=0)
        self._lipschitz: float | None = None

    # ----------------------------------------------------------------------- products
    def _matvec(self, w: np.ndarray, b: float) -> Any:
        import dask.array as da

        return da.map_blocks(_block_matvec, self.X, np.asarray(w, dtype=np.float64), float(b), drop_axis=1,
                             dtype=np.float64, meta=np.array((), dtype=np.float64))

    def _rmatvec(self, r: Any) -> np.ndarray:
        """:math:`X^\\top r` as the sum of one p-vector per row block."""
        import dask

        parts = [dask.delayed(_block_rmatvec)(xb, rb) for xb, rb in zip(self._blocks, r.to_delayed().ravel())]
        return np.sum(dask.compute(*parts), axis=0) if parts else np.zeros(self.p)

    # ---------------------------------------------------------------- loss contract
    def state(self, w: np.ndarray, b: float = 0.0) -> Any:
        """Scores :math:`z = Xw + b`, a persisted dask array (n,)."""
        return self._matvec(w, b).persist()

    def value_state(self, w: np.ndarray, b: float, state: Any) -> float:
        import dask.array as da

        return float(da.logaddexp(0.0, -self.y * state).mean().compute())

    def gradient_state(self, state: Any) -> tuple[np.ndarray, float]:
        import dask

        dz = (self.y * -_expit(-self.y * state) / self.n).persist()
        g, gb = self._rmatvec(dz), dask.compute(dz.sum())[0]
        return g, float(gb)

    def value(self, w: np.ndarray, b: float = 0.0) -> float:
        return self.value_state(w, b, self.state(w, b))

    def gradient(self, w: np.ndarray, b: float = 0.0) -> tuple[np.ndarray, float]:
        return self.gradient_state(self.state(w, b))

    @property
    def lipschitz(self) -> float:
        """:math:`\\lambda_{max}([X, 1]^\\top[X, 1])/(4n)`, by the same eigen-solve as the in-memory loss."""
        if self._lipschitz is None:
            p = self.p

            def matvec(v):
                z = self._matvec(v[:p], v[p]).persist()
                return np.concatenate([self._rmatvec(z), [float(z.sum().compute())]])

            self._lipschitz = self.curvature * _largest_eigenvalue(matvec, p + 1) / self.n
        return self._lipschitz

    def intercept_at_zero(self) -> float:
        """Log-odds of the positive class (clipped for one class)."""
        pos = float(np.clip(float((self.y > 0).mean().compute()), 1e-12, 1 - 1e-12))
        return math.log(pos / (1 - pos))

    def intercept(self, w: np.ndarray) -> float:
        raise ValueError("the intercept is a solver variable; read it from the solver result")

    def dual_point(self, w: np.ndarray, b: float, state: Any, value: float, gradient: np.ndarray) -> DualPoint:
        """Dual candidate of :meth:`formulations.losses.Logistic.dual_point`, reductions on the workers."""
        import dask.array as da

        theta = (self.y * _expit(-self.y * state) / self.n).persist()
        shift = float(theta.mean().compute())
        theta = theta - shift
        xt_theta = -gradient - shift * self.column_sums

        def loss_dual(alpha: float) -> float:
            s = self.n * alpha * self.y * theta
            outside, entropy = da.compute(((s < 0) | (s > 1)).any(),
                                          da.map_blocks(_entropy_terms, s, dtype=np.float64).sum())
            return -math.inf if outside else -float(entropy) / self.n

        return xt_theta, loss_dual


def _expit(z: Any) -> Any:
    import dask.array as da

    return da.map_blocks(expit, z, dtype=np.float64)


def _entropy_terms(s: np.ndarray) -> np.ndarray:
    return xlogy(s, s) + xlogy(1 - s, 1 - s)
