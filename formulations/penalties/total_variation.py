"""Weighted 1-D total variation, fused lasso and binarsity (binarsity slides, Algorithms 1-2).

Weighted TV: :math:`\\|w\\|_{TV,c} = \\sum_{k=1}^{p-1} c_k |w_{k+1} - w_k|` (weights :math:`c` of
shape (p-1,)). Its prox is computed exactly in O(p) by Condat's direct algorithm (Condat 2013,
weighted form of the binarsity slides' Algorithm 1), compiled with numba.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import kernels
from .base import Penalty, as_vector, check_length, check_scalar, check_weights


def _tv_weights(weights: Any, p: int) -> np.ndarray:
    """Edge weights as an array of length ``p - 1`` (a scalar is broadcast)."""
    if np.ndim(weights) == 0:
        return np.full(max(p - 1, 0), float(weights))
    return weights


@dataclass(frozen=True, eq=False)
class TotalVariation(Penalty):
    """Weighted 1-D total variation :math:`\\sum_{k} c_k |w_{k+1} - w_k|`.

    ``weights``: non-negative edge weights of shape (p-1,), or a scalar applied to every edge
    (then any length ``p`` is accepted). Prox: Condat's direct algorithm (exact, O(p)).
    """

    weights: Any

    def __post_init__(self) -> None:
        if np.ndim(self.weights) == 0:
            object.__setattr__(self, "weights", check_scalar(self.weights, "weights"))
        else:
            object.__setattr__(self, "weights", check_weights(self.weights, "weights"))

    def _edges(self, w: np.ndarray, name: str) -> np.ndarray:
        c = _tv_weights(self.weights, w.size)
        if w.size > 0 or c.size > 0:
            check_length(w, c.size + 1, name, "weights + 1")
        return c

    def _value(self, w: np.ndarray) -> float:
        c = self._edges(w, "w")
        return float(c @ np.abs(np.diff(w))) if w.size > 1 else 0.0

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:
        c = self._edges(v, "v")
        return kernels.tv_prox(v, np.ascontiguousarray(c), step, np.empty_like(v))


@dataclass(frozen=True)
class FusedLasso(Penalty):
    """Fused lasso :math:`\\lambda_{TV}\\sum_k |w_{k+1} - w_k| + \\lambda_1 \\|w\\|_1` (Tibshirani et al. 2005).

    Prox: soft-thresholding of the TV prox, :math:`S_{t\\lambda_1}(\\operatorname{prox}_{t\\lambda_{TV} TV}(v))`
    (Friedman et al. 2007, exact for the 1-D chain).
    """

    lam_tv: float
    lam_l1: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam_tv", check_scalar(self.lam_tv, "lam_tv"))
        object.__setattr__(self, "lam_l1", check_scalar(self.lam_l1, "lam_l1"))

    def _value(self, w: np.ndarray) -> float:
        tv = float(np.abs(np.diff(w)).sum()) if w.size > 1 else 0.0
        return self.lam_tv * tv + self.lam_l1 * float(np.abs(w).sum())

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:
        out = np.empty_like(v)
        if v.size > 1:
            kernels.tv_prox(v, np.full(v.size - 1, self.lam_tv), step, out)
        else:
            out[:] = v
        return kernels.soft_threshold(out, step * self.lam_l1, out)


@dataclass(frozen=True, eq=False)
class Binarsity(Penalty):
    """Binarsity: per-block weighted TV plus a sum-to-zero constraint per block (binarsity slides).

    :math:`\\operatorname{bina}(\\theta) = \\sum_j \\big(\\sum_{k=2}^{d_j} c_{j,k}|\\theta_{j,k} -
    \\theta_{j,k-1}| + \\delta(\\mathbf 1^\\top\\theta_{j,\\bullet} = 0)\\big)`.

    ``block_sizes``: the :math:`d_j \\ge 1` (sum = p); ``weights``: the :math:`c_{j,k}` concatenated
    block after block, :math:`d_j - 1` per block (shape (p - n_blocks,)), or a scalar for all.
    ``value`` returns ``inf`` when a block sum exceeds ``1e-9 * max(1, ||theta_j||_1)``.
    Prox (Algorithm 2): weighted TV prox per block, then within-block centring, all blocks in one
    compiled call. :meth:`from_data` builds the data-driven weights of the slides.
    """

    block_sizes: np.ndarray
    weights: Any = 1.0

    def __post_init__(self) -> None:
        sizes = np.asarray(self.block_sizes)
        if sizes.ndim != 1 or sizes.size == 0 or not np.issubdtype(sizes.dtype, np.integer) or np.any(sizes < 1):
            raise ValueError("block_sizes must be a non-empty 1-D array of integers >= 1 (one per raw feature)")
        sizes = sizes.astype(np.int64)
        sizes.setflags(write=False)
        object.__setattr__(self, "block_sizes", sizes)
        n_edges = int(sizes.sum() - sizes.size)
        if np.ndim(self.weights) == 0:
            c = np.full(n_edges, check_scalar(self.weights, "weights"))
            c.setflags(write=False)
        else:
            c = check_weights(self.weights, "weights")
            if c.size != n_edges:
                raise ValueError(f"weights must have sum(block_sizes) - n_blocks = {n_edges} entries "
                                 f"(d_j - 1 per block), got {c.size}")
        object.__setattr__(self, "weights", c)

    @property
    def starts(self) -> np.ndarray:
        """Block boundaries, shape (n_blocks + 1,): block j is ``theta[starts[j]:starts[j+1]]``."""
        return np.concatenate([[0], np.cumsum(self.block_sizes)])

    @classmethod
    def from_data(cls, X_binary: Any, block_sizes: Any, strength: float = 1.0) -> "Binarsity":
        """Data-driven weights :math:`c_{j,k} = s\\sqrt{\\log(d)\\,\\hat\\pi_{j,k} / n}` (binarsity slides).

        :math:`\\hat\\pi_{j,k}` is the share of ones in block ``j`` after deleting its first ``k``
        columns (``X_binary`` (n, d) one-hot blocks, ordered bins: a numpy array, a scipy.sparse
        matrix or a DataFrame of dense or sparse columns, read by column sums only, never
        densified); ``strength`` is the constant hidden in the slides' :math:`\\mathcal O(\\cdot)`.
        """
        if hasattr(X_binary, "sparse") and hasattr(X_binary, "columns"):  # DataFrame of sparse columns
            X_binary = X_binary.sparse.to_coo()
        elif hasattr(X_binary, "to_numpy") and not sp.issparse(X_binary):
            X_binary = X_binary.to_numpy()
        if not sp.issparse(X_binary):
            X_binary = np.asarray(X_binary)
        sizes = np.asarray(block_sizes, dtype=np.int64)
        shape = X_binary.shape
        if len(shape) != 2 or shape[1] != sizes.sum() or shape[0] == 0:
            raise ValueError(f"X_binary must be (n, sum(block_sizes)) = (n >= 1, {sizes.sum()}), got {shape}")
        return cls.from_column_sums(X_binary.sum(axis=0), shape[0], sizes, strength)

    @classmethod
    def from_column_sums(cls, column_sums: Any, n: int, block_sizes: Any, strength: float = 1.0) -> "Binarsity":
        """The weights of :meth:`from_data` from the column sums of the one-hot design and its
        number of rows ``n`` (all the data they depend on: a distributed design sends only these)."""
        sizes = np.asarray(block_sizes, dtype=np.int64)
        col_share = np.asarray(column_sums, dtype=np.float64).ravel() / n
        if col_share.size != sizes.sum() or n < 1:
            raise ValueError(f"column_sums must have sum(block_sizes) = {sizes.sum()} entries and n >= 1, got "
                             f"{col_share.size} entries and n = {n}")
        d = col_share.size
        strength = check_scalar(strength, "strength")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        # pi_{j,k} for k = 1..d_j - 1: share of ones in columns k..d_j - 1 of block j (reverse cumsum)
        tails = [np.cumsum(col_share[a:b][::-1])[::-1][1:] for a, b in zip(starts[:-1], starts[1:])]
        pi = np.concatenate(tails) if tails else np.empty(0)
        weights = strength * np.sqrt(np.log(max(d, 2)) * pi / n)
        return cls(sizes, weights)

    def scaled(self, factor: float) -> "Binarsity":
        """The same penalty with every weight multiplied by ``factor >= 0`` (``factor * bina``)."""
        return Binarsity(self.block_sizes, check_scalar(factor, "factor") * self.weights)

    def zero_gauge(self, z: Any) -> float:
        """Closed form of :math:`\\min\\{s \\ge 0 : z \\in s\\,\\partial\\operatorname{bina}(0)\\}`.

        :math:`\\partial\\operatorname{bina}(0)` is the set of :math:`D^\\top v + t` (per block,
        :math:`|v_k| \\le c_{j,k}`, :math:`t` any multiple of :math:`\\mathbf 1`), with :math:`D` the
        within-block differences. Solving :math:`z_j - t_j\\mathbf 1 = D^\\top v_j` forces
        :math:`t_j = \\bar z_j` and :math:`v_{j,k} = -\\sum_{m \\le k}(z_{j,m} - \\bar z_j)`, so the gauge
        is :math:`\\max_{j,k} |\\sum_{m\\le k}(z_{j,m} - \\bar z_j)| / c_{j,k}` (``inf`` where a zero
        weight meets a non-zero partial sum). Blocks of one column cost nothing (their only
        admissible value is 0).
        """
        z = as_vector(z, "z")
        starts = self.starts
        check_length(z, int(starts[-1]), "z", "sum(block_sizes)")
        if z.size == 0:
            return 0.0
        sizes = self.block_sizes
        centred = z - np.repeat(np.add.reduceat(z, starts[:-1]) / sizes, sizes)
        partial = np.cumsum(centred)
        partial -= np.repeat(np.r_[0.0, partial[starts[1:-1] - 1]], sizes)  # restart the sum in each block
        last = np.zeros(z.size, dtype=bool)
        last[starts[1:] - 1] = True
        partial = np.abs(partial[~last])  # the d_j - 1 partial sums of each block, aligned with the weights
        tiny = 1e-12 * max(1.0, float(np.abs(z).max()))
        nonzero = partial > tiny
        if np.any(nonzero & (self.weights == 0)):
            return math.inf
        ratio = np.divide(partial, self.weights, out=np.zeros_like(partial), where=self.weights > 0)
        return float(ratio.max(initial=0.0))

    def _value(self, w: np.ndarray) -> float:
        starts = self.starts
        check_length(w, int(starts[-1]), "w", "sum(block_sizes)")
        sums = np.add.reduceat(w, starts[:-1]) if w.size else np.zeros(0)
        l1 = np.add.reduceat(np.abs(w), starts[:-1]) if w.size else np.zeros(0)
        if np.any(np.abs(sums) > 1e-9 * np.maximum(1.0, l1)):
            return float("inf")
        d = np.diff(w)
        inside = np.ones(d.size, dtype=bool)
        inside[starts[1:-1] - 1] = False  # differences across block boundaries are not penalised
        return float(self.weights @ np.abs(d[inside]))

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:
        starts = self.starts
        check_length(v, int(starts[-1]), "v", "sum(block_sizes)")
        return kernels.binarsity_prox(v, self.weights, step, starts, np.empty_like(v))
