"""Separable penalties: L1, squared L2, elastic net, weighted L1 and weighted squared L2.

All of them are sums of 1-D functions, so their prox acts coordinate by coordinate (one fused
compiled pass, see :mod:`formulations.penalties.kernels`). Conventions follow the EYE paper's
Table 1 (Wang et al., KDD 2018) and scikit-learn for the elastic net.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import kernels
from .base import Penalty, check_length, check_scalar, check_weights


@dataclass(frozen=True)
class L1(Penalty):
    """Lasso penalty :math:`\\Omega(w) = \\lambda \\|w\\|_1`.

    Prox: soft-thresholding :math:`\\operatorname{sign}(v)\\max(|v| - t\\lambda, 0)`.
    Parameters: ``lam >= 0`` (units of the loss per unit of ``|w|``).
    """

    lam: float
    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))

    def _value(self, w: np.ndarray) -> float:
        return self.lam * float(np.abs(w).sum())

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        return kernels.soft_threshold(v, step * self.lam, np.empty_like(v) if out is None else out)

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """:math:`\\partial\\Omega_j(0) = [-\\lambda, \\lambda]`."""
        return np.full(p, self.lam)

    def restrict(self, cols: np.ndarray) -> "L1":
        return self

    def zero_gauge(self, z: np.ndarray) -> float:
        """Dual norm of ``w -> ||w||_1 / 1`` scaled: :math:`\\|z\\|_\\infty / \\lambda` (inf if lam = 0)."""
        m = float(np.abs(z).max()) if z.size else 0.0
        return m / self.lam if self.lam > 0 else (np.inf if m > 0 else 0.0)


@dataclass(frozen=True)
class L2Squared(Penalty):
    """Ridge penalty :math:`\\Omega(w) = \\tfrac{\\lambda}{2} \\|w\\|_2^2`; prox :math:`v / (1 + t\\lambda)`."""

    lam: float
    separable = True
    _writes_out = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))

    def _value(self, w: np.ndarray) -> float:
        return 0.5 * self.lam * float(w @ w)

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        return np.multiply(v, 1.0 / (1.0 + step * self.lam), out=out)

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """Differentiable at 0: every threshold is 0."""
        return np.zeros(p)

    def restrict(self, cols: np.ndarray) -> "L2Squared":
        return self


@dataclass(frozen=True)
class ElasticNet(Penalty):
    """Elastic net (scikit-learn convention) :math:`\\lambda(\\rho\\|w\\|_1 + \\tfrac{1-\\rho}{2}\\|w\\|_2^2)`.

    ``lam >= 0`` is scikit-learn's ``alpha``, ``l1_ratio`` = :math:`\\rho \\in [0, 1]`.
    Prox: :math:`\\operatorname{sign}(v)\\max(|v| - t\\lambda\\rho, 0) / (1 + t\\lambda(1-\\rho))`.
    """

    lam: float
    l1_ratio: float

    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))
        object.__setattr__(self, "l1_ratio", check_scalar(self.l1_ratio, "l1_ratio", high=1.0))

    def _value(self, w: np.ndarray) -> float:
        rho = self.l1_ratio
        return self.lam * (rho * float(np.abs(w).sum()) + 0.5 * (1.0 - rho) * float(w @ w))

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        t = step * self.lam
        return kernels.shrink_threshold(v, t * self.l1_ratio, 1.0 / (1.0 + t * (1.0 - self.l1_ratio)),
                                        np.empty_like(v) if out is None else out)

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """:math:`\\partial\\Omega_j(0) = [-\\lambda\\rho, \\lambda\\rho]`."""
        return np.full(p, self.lam * self.l1_ratio)

    def restrict(self, cols: np.ndarray) -> "ElasticNet":
        return self

    def zero_gauge(self, z: np.ndarray) -> float:
        """:math:`\\|z\\|_\\infty / (\\lambda\\rho)` (the subdifferential at 0 is :math:`\\lambda\\rho[-1, 1]^p`)."""
        m = float(np.abs(z).max()) if np.size(z) else 0.0
        c = self.lam * self.l1_ratio
        return m / c if c > 0 else (np.inf if m > 0 else 0.0)

    def conjugate(self, z: np.ndarray) -> float:
        """Fenchel conjugate :math:`\\Omega^*(z) = \\sum_j (|z_j| - \\lambda\\rho)_+^2 / (2\\lambda(1-\\rho))`.

        Infinite-free only when ``l1_ratio < 1`` (for ``l1_ratio = 1`` use :class:`L1`).
        """
        excess = np.maximum(np.abs(z) - self.lam * self.l1_ratio, 0.0)
        denom = self.lam * (1.0 - self.l1_ratio)
        if denom <= 0:
            return 0.0 if not np.any(excess > 0) else np.inf
        return float(excess @ excess) / (2.0 * denom)


@dataclass(frozen=True, eq=False)
class WeightedL1(Penalty):
    """Weighted lasso :math:`\\Omega(w) = \\sum_j c_j |w_j|` with ``weights`` :math:`c \\ge 0`, shape (p,).

    Prox: :math:`\\operatorname{sign}(v_j)\\max(|v_j| - t c_j, 0)`.
    """

    weights: np.ndarray = field(repr=False)
    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", check_weights(self.weights, "weights"))

    def _value(self, w: np.ndarray) -> float:
        check_length(w, self.weights.size, "w", "weights")
        return float(self.weights @ np.abs(w))

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        check_length(v, self.weights.size, "v", "weights")
        return kernels.weighted_soft_threshold(v, self.weights, step, np.empty_like(v) if out is None else out)

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """:math:`\\partial\\Omega_j(0) = [-c_j, c_j]`."""
        return np.array(self.weights)

    def restrict(self, cols: np.ndarray) -> "WeightedL1":
        return WeightedL1(self.weights[cols])

    def zero_gauge(self, z: np.ndarray) -> float:
        """:math:`\\max_j |z_j| / c_j` (0/0 = 0, x/0 = inf)."""
        az = np.abs(z)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(az > 0, az / self.weights, 0.0)
        return float(ratio.max()) if ratio.size else 0.0


@dataclass(frozen=True, eq=False)
class WeightedL2Squared(Penalty):
    """Weighted ridge :math:`\\Omega(w) = \\tfrac12 \\sum_j c_j w_j^2`, ``weights`` :math:`c \\ge 0` of shape (p,).

    Prox: :math:`v_j / (1 + t c_j)`.
    """

    weights: np.ndarray = field(repr=False)
    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", check_weights(self.weights, "weights"))

    def _value(self, w: np.ndarray) -> float:
        check_length(w, self.weights.size, "w", "weights")
        return 0.5 * float(self.weights @ (w * w))

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        check_length(v, self.weights.size, "v", "weights")
        return kernels.weighted_scale(v, self.weights, step, np.empty_like(v) if out is None else out)

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """Differentiable at 0: every threshold is 0."""
        return np.zeros(p)

    def restrict(self, cols: np.ndarray) -> "WeightedL2Squared":
        return WeightedL2Squared(self.weights[cols])
