"""The logistic loss over row blocks of a dask array: proximal paths beyond one machine's memory.

:class:`DaskLogistic` is :class:`formulations.losses.Logistic` with its data left where dask
keeps it: ``X`` a dask array chunked by rows only (each chunk a numpy array or a scipy.sparse
matrix, e.g. a block of the one-hot design), ``y`` a dask array with the same row chunks. Every
quantity the proximal solvers ask for is a sum over rows, computed block by block on the workers
of the current ``dask.distributed`` client (or dask's local scheduler without one):

* the state :math:`z = Xw + b` stays distributed: one persisted vector per row block
  (:class:`BlockState`; FISTA's extrapolation :math:`z_y = z_x + \\beta(z_x - z_{x'})` is done
  block by block on the workers);
* :math:`f = \\frac1n\\sum_i\\log(1 + e^{-y_iz_i})` is one scalar per block;
* :math:`\\nabla_w f = \\sum_{blocks} X_B^\\top r_B` (``r_i = -y_i\\sigma(-y_iz_i)/n``) is one
  p-vector per block, summed on the client: only O(p) numbers per block cross the network.

Every call is one task per row block (a fused function of the block's rows), so a FISTA
iteration costs a few scheduler round trips, not a graph of element-wise array operations.

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


def _matvec(x: Any, w: np.ndarray, b: float) -> np.ndarray:
    return np.asarray(x @ w, dtype=np.float64).ravel() + b


def _combine(a: np.ndarray, c: np.ndarray, beta: float) -> np.ndarray:
    return a + beta * (a - c)


def _logloss_sum(y: np.ndarray, z: np.ndarray) -> float:
    return float(np.logaddexp(0.0, -y * z).sum())


def _gradient_part(x: Any, y: np.ndarray, z: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    r = -y * expit(-y * z) / n
    return np.asarray(x.T @ r, dtype=np.float64).ravel(), float(r.sum())


def _gram_part(x: Any, v: np.ndarray, vb: float) -> tuple[np.ndarray, float]:
    z = np.asarray(x @ v, dtype=np.float64).ravel() + vb
    return np.asarray(x.T @ z, dtype=np.float64).ravel(), float(z.sum())


def _theta_sum(y: np.ndarray, z: np.ndarray, n: int) -> float:
    return float((y * expit(-y * z)).sum() / n)


def _entropy_part(y: np.ndarray, z: np.ndarray, n: int, shift: float, alpha: float) -> tuple[bool, float]:
    s = n * alpha * y * (y * expit(-y * z) / n - shift)
    outside = bool(((s < 0) | (s > 1)).any())
    return outside, float((xlogy(s, s) + xlogy(1 - s, 1 - s)).sum())


def _column_sums(x: Any) -> np.ndarray:
    return np.asarray(x.sum(axis=0), dtype=np.float64).ravel()


def _positives(y: np.ndarray) -> float:
    return float((y > 0).sum())


class BlockState:
    """Scores :math:`z = Xw + b` as one persisted vector per row block (``blocks``: dask delayed
    objects on the workers). ``a + beta * (a - c)`` is computed block by block on the workers."""

    def __init__(self, blocks: list) -> None:
        self.blocks = blocks

    def extrapolated(self, previous: "BlockState", beta: float) -> "BlockState":
        import dask

        return BlockState(list(dask.persist(*[dask.delayed(_combine)(a, c, beta)
                                               for a, c in zip(self.blocks, previous.blocks)])))

    # FISTA writes ``sn + beta * (sn - sx)``: the two operators below build exactly that
    def __sub__(self, other: "BlockState") -> "_Difference":
        return _Difference(self, other)

    def __add__(self, scaled: "_Difference") -> "BlockState":
        if not isinstance(scaled, _Difference) or scaled.left is not self:
            return NotImplemented
        return self.extrapolated(scaled.right, scaled.beta)


class _Difference:
    """``beta * (left - right)`` of two block states, held until it is added to ``left``."""

    def __init__(self, left: BlockState, right: BlockState, beta: float = 1.0) -> None:
        self.left, self.right, self.beta = left, right, beta

    def __rmul__(self, beta: float) -> "_Difference":
        return _Difference(self.left, self.right, self.beta * float(beta))

    __mul__ = __rmul__


class DaskLogistic:
    """Logistic loss :math:`\\frac1n\\sum_i\\log(1 + e^{-y_i(x_i^\\top w + b)})` over a row-chunked dask array.

    Parameters
    ----------
    X : dask array (n, p), chunked by rows only (one chunk along the columns); chunks may be
        numpy arrays or scipy.sparse matrices.
    y : dask array or numpy array (n,) of labels in {-1, +1} or {0, 1} (rechunked like ``X``).

    Same contract as :class:`formulations.losses.Logistic` (``state``, ``value_state``,
    ``gradient_state``, ``lipschitz``, ``intercept_at_zero``, ``dual_point``); the intercept is
    always fitted; the state is a :class:`BlockState`.
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
        self.X, self.y = dask.persist(X, da.where(y > 0, 1.0, -1.0))  # held: their blocks stay on the workers
        self.n, self.p = n, p
        self._x = list(self.X.to_delayed().ravel())
        self._y = list(self.y.to_delayed().ravel())
        self.column_sums = np.sum(self._each(_column_sums, self._x), axis=0)
        self._lipschitz: float | None = None

    def _each(self, function: Any, *blocks: list, **constants: Any) -> tuple:
        """``function(block_1, block_2, ..., **constants)`` on every row block, gathered."""
        import dask

        return dask.compute(*[dask.delayed(function)(*args, **constants) for args in zip(*blocks)])

    # ---------------------------------------------------------------- loss contract
    def state(self, w: np.ndarray, b: float = 0.0) -> BlockState:
        """Scores :math:`z = Xw + b`, one persisted vector per row block."""
        import dask

        w = np.asarray(w, dtype=np.float64)
        return BlockState(list(dask.persist(*[dask.delayed(_matvec)(x, w, float(b)) for x in self._x])))

    def value_state(self, w: np.ndarray, b: float, state: BlockState) -> float:
        return float(sum(self._each(_logloss_sum, self._y, state.blocks))) / self.n

    def gradient_state(self, state: BlockState) -> tuple[np.ndarray, float]:
        parts = self._each(_gradient_part, self._x, self._y, state.blocks, n=self.n)
        return np.sum([g for g, _ in parts], axis=0), float(sum(gb for _, gb in parts))

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
                parts = self._each(_gram_part, self._x, v=np.asarray(v[:p], dtype=np.float64), vb=float(v[p]))
                return np.concatenate([np.sum([g for g, _ in parts], axis=0), [sum(s for _, s in parts)]])

            self._lipschitz = self.curvature * _largest_eigenvalue(matvec, p + 1) / self.n
        return self._lipschitz

    def intercept_at_zero(self) -> float:
        """Log-odds of the positive class (clipped for one class)."""
        pos = float(np.clip(sum(self._each(_positives, self._y)) / self.n, 1e-12, 1 - 1e-12))
        return math.log(pos / (1 - pos))

    def intercept(self, w: np.ndarray) -> float:
        raise ValueError("the intercept is a solver variable; read it from the solver result")

    def dual_point(self, w: np.ndarray, b: float, state: BlockState, value: float, gradient: np.ndarray) -> DualPoint:
        """Dual candidate of :meth:`formulations.losses.Logistic.dual_point`, reductions on the workers:
        :math:`\\theta_i = y_i\\sigma(-y_iz_i)/n` shifted to mean zero."""
        shift = float(sum(self._each(_theta_sum, self._y, state.blocks, n=self.n))) / self.n
        xt_theta = -gradient - shift * self.column_sums

        def loss_dual(alpha: float) -> float:
            parts = self._each(_entropy_part, self._y, state.blocks, n=self.n, shift=shift, alpha=float(alpha))
            return -math.inf if any(o for o, _ in parts) else -sum(e for _, e in parts) / self.n

        return xt_theta, loss_dual
