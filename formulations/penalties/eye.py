"""EYE (expert yielded estimates) and the naive q penalty (EYE paper, Wang et al. KDD 2018, eq. 2).

``r`` in :math:`[0, 1]^p` marks the known risk factors (1 = known, 0 = unknown; fractional values
interpolate, section 3.4). Write :math:`A(\\theta) = \\|(1-r)\\odot\\theta\\|_1` and
:math:`B(\\theta) = \\|r\\odot\\theta\\|_2`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import kernels
from .eye_kernels import eye_prox, groups_of
from .base import Penalty, check_length, check_scalar


def _check_r(r) -> np.ndarray:
    arr = np.array(r, dtype=np.float64, copy=True).reshape(-1) if np.ndim(r) <= 1 else None
    if arr is None or not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError("r must be a 1-D array with entries in [0, 1] (1 = known risk factor); "
                         "pass a boolean mask or fractions")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class EYE(Penalty):
    """EYE penalty :math:`\\lambda\\,(A(\\theta) + \\sqrt{A(\\theta)^2 + B(\\theta)^2})` (eq. 2), ``r`` shape (p,).

    A norm: :math:`r = 0` gives :math:`2\\lambda\\|\\theta\\|_1`, :math:`r = 1` gives
    :math:`\\lambda\\|\\theta\\|_2`. It is the gauge of :math:`C = \\{x: B(x)^2 + 2A(x) \\le 1\\}`
    (eq. 1 with the scaling of the appendix).

    Prox (derived here). With :math:`s = t\\lambda`, writing :math:`u = \\mathrm{eye}(x)`, the prox
    problem is :math:`\\min_{u \\ge 0} s u + \\tfrac12 \\mathrm{dist}(v, uC)^2`, a convex 1-D problem
    in :math:`u` (the cone :math:`\\{(x, u): x \\in uC\\}` is convex). Its derivative
    :math:`s - 2\\rho(u)(u - A(x_u))` is non-decreasing, where :math:`x_u` is the projection of
    :math:`v` on :math:`uC`: :math:`x_{u,j} = \\operatorname{sign}(v_j)(|v_j| - 2\\rho u(1-r_j))_+ /
    (1 + 2\\rho r_j^2)`, with multiplier :math:`\\rho \\ge 0` the root of a decreasing 1-D
    function. So the prox is two nested monotone bisections (compiled), no generic solver;
    :math:`x^* = 0` exactly when the derivative is non-negative as :math:`u \\to 0^+`.
    """

    r: np.ndarray = field(repr=False)
    lam: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "r", _check_r(self.r))
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))
        object.__setattr__(self, "_groups", groups_of(self.r))

    def _value(self, w: np.ndarray) -> float:
        check_length(w, self.r.size, "w", "r")
        a = float((1.0 - self.r) @ np.abs(w))
        b2 = float(np.square(self.r * w).sum())
        return self.lam * (a + np.sqrt(a * a + b2))

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:
        check_length(v, self.r.size, "v", "r")
        s = step * self.lam
        if v.size == 0 or s == 0.0:
            return v.copy()
        return eye_prox(v, self.r, *self._groups, s, np.empty_like(v))


@dataclass(frozen=True, eq=False)
class NaiveQ(Penalty):
    """Naive credible penalty :math:`\\lambda\\,q(\\theta) = \\lambda((1-\\beta)B(\\theta)^2 + 2\\beta A(\\theta))`.

    Section 3.1 of the EYE paper, ``beta`` in (0, 1) (default 0.5). Separable prox:
    :math:`\\operatorname{sign}(v_j)(|v_j| - 2t\\lambda\\beta(1-r_j))_+ / (1 + 2t\\lambda(1-\\beta) r_j^2)`.
    """

    r: np.ndarray = field(repr=False)
    lam: float = 1.0
    beta: float = 0.5
    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "r", _check_r(self.r))
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))
        object.__setattr__(self, "beta", check_scalar(self.beta, "beta", high=1.0))

    def _value(self, w: np.ndarray) -> float:
        check_length(w, self.r.size, "w", "r")
        b = self.beta
        return self.lam * ((1.0 - b) * float(np.square(self.r * w).sum())
                           + 2.0 * b * float((1.0 - self.r) @ np.abs(w)))

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        check_length(v, self.r.size, "v", "r")
        s = step * self.lam
        thresholds = 2.0 * s * self.beta * (1.0 - self.r)
        scales = 1.0 / (1.0 + 2.0 * s * (1.0 - self.beta) * self.r ** 2)
        return kernels.weighted_shrink_threshold(v, thresholds, scales, np.empty_like(v) if out is None else out)

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """:math:`\\partial\\Omega_j(0) = [-2\\lambda\\beta(1-r_j), 2\\lambda\\beta(1-r_j)]`."""
        return 2.0 * self.lam * self.beta * (1.0 - self.r)

    def restrict(self, cols: np.ndarray) -> "NaiveQ":
        return NaiveQ(self.r[cols], self.lam, self.beta)

    def zero_gauge(self, z: np.ndarray) -> float:
        """:math:`\\max_j |z_j| / (2\\lambda\\beta(1 - r_j))` (0/0 = 0, x/0 = inf)."""
        az = np.abs(np.asarray(z, dtype=np.float64))
        tau = self.coordinate_thresholds(az.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(az > 0, az / tau, 0.0)
        return float(ratio.max()) if ratio.size else 0.0
