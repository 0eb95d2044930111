"""Facets, strongly convex Facets and scaled penalties (Facets paper: eqs. 3, 12, 14, 15, 16).

Notation. :math:`F(x) = \\tfrac{k(k+1)}{2} + (k+1)(x - k)`, :math:`k = \\lfloor x \\rfloor`, for
:math:`x \\ge 0` is the 1-D Facets function (eq. 3, applied to :math:`|w_j|`, the penalty being
even); equivalently :math:`F(x) = \\sum_{i \\ge 0} \\max(0, x - i) = \\int_0^{x} \\lceil s \\rceil ds`
(Definition 1, Prop. 4). It is the lower convex envelope of :math:`x^2 + 1_{\\mathbb{Z}}(x)` and
equals :math:`(x + x^2)/2` at every integer.

Parameters of the classes below: ``lam`` is the penalty strength :math:`\\lambda` and ``mu`` the
**grid unit** (the :math:`\\gamma` of eq. 9: coefficients are pushed onto :math:`\\mu\\mathbb{Z}`);
``mu = 1`` is the plain Facets penalty. The paper's own :math:`\\mu` of eqs. 12/15 is the prox
parameter (step times strength) and never a constructor argument here: with step :math:`t`,
``prox`` uses the paper's formula with :math:`\\mu_{paper} = t\\lambda/\\mu^2` after the change of
variable of eq. 16.
"""
from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from . import kernels
from .base import Penalty, check_scalar


def facets_1d(x: np.ndarray) -> np.ndarray:
    """Eq. 3 elementwise on :math:`|x|`: :math:`k(k+1)/2 + (k+1)(|x| - k)`, :math:`k = \\lfloor |x| \\rfloor`."""
    a = np.abs(x)
    k = np.floor(a)
    return 0.5 * k * (k + 1.0) + (k + 1.0) * (a - k)


#: weight of the square in SCF: ``(1 - eps) Facets + eps (||x||_1 + SCF_SQUARE ||x||_2^2)`` (eqs. 13-15)
SCF_SQUARE = 0.5


def facets_value(x: np.ndarray) -> float:
    """Facets penalty ``sum_j F(|x_j|)`` in closed form (eq. 3) for ``x`` of any shape (grid units)."""
    return float(facets_1d(np.asarray(x, dtype=float)).sum())


def facet_pieces(bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Slopes ``k+1`` and offsets ``k(k+1)/2`` (``k = 0..U-1``) of the facets of ``F`` on ``|x| <= U``.

    ``F(|x|) = max_k slopes[k] |x| - offsets[k]`` for ``|x| <= bound`` (Definition 1: one facet per
    integer segment), which is the LP epigraph of the penalty.
    """
    k = np.arange(int(bound), dtype=float)
    return k + 1.0, k * (k + 1.0) / 2.0


def integer_square_chords(bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Slopes ``2k+1`` and offsets ``k(k+1)`` of the chords of ``a^2`` between ``k`` and ``k+1``.

    ``max_k slopes[k] a - offsets[k]`` equals ``a^2`` at every integer ``0 <= a <= bound`` and lies
    above it in between: the exact square of SCF (eq. 14) on integer points, as linear rows.
    """
    k = np.arange(int(bound), dtype=float)
    return 2.0 * k + 1.0, k * (k + 1.0)


def max_affine(a: np.ndarray, slopes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``max(0, max_k slopes[k] a - offsets[k])`` elementwise: the value of a max-affine epigraph."""
    a = np.asarray(a, dtype=float)
    if len(slopes) == 0:
        return np.zeros_like(a)
    return np.maximum(np.max(slopes[:, None] * a.reshape(1, -1) - offsets[:, None], axis=0), 0.0).reshape(a.shape)


@dataclass(frozen=True)
class Facets(Penalty):
    """Facets penalty on the grid :math:`\\mu\\mathbb{Z}`: :math:`\\lambda \\sum_j F(|w_j| / \\mu)` (eq. 3, eq. 9).

    ``value(w)`` computes exactly :math:`\\lambda\\sum_j F(|w_j|/\\mu)` with :math:`F` of eq. 3, i.e.
    the piecewise-linear convex function with breakpoints at :math:`w_j \\in \\mu\\mathbb{Z}` whose
    slope on :math:`|w_j| \\in (\\mu k, \\mu(k+1))` is :math:`\\lambda (k+1)/\\mu`. An LP epigraph
    encoding matching it: :math:`s_j \\ge \\lambda\\,[k(k+1)/2 + (k+1)(|w_j|/\\mu - k)]` for
    :math:`k = 0, \\dots, K-1` on the box :math:`|w_j| \\le K\\mu` (each facet is the tangent line of
    piece :math:`k`, applied to :math:`\\pm w_j`), objective :math:`\\sum_j s_j`.

    Prox (eq. 12 with eq. 16): with :math:`m = t\\lambda/\\mu^2`,
    :math:`\\operatorname{prox}(v) = \\operatorname{sign}(v)\\max(|v| - \\mu m (q+1), \\mu q)`,
    :math:`q = \\lfloor |v| / (\\mu(m+1)) \\rfloor`: plateaus of width :math:`t\\lambda/\\mu` at the grid
    values and 45-degree slopes of height :math:`\\mu`, period :math:`\\mu + t\\lambda/\\mu`.
    """

    lam: float
    mu: float = 1.0
    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))
        object.__setattr__(self, "mu", check_scalar(self.mu, "mu", low_open=True))

    def _value(self, w: np.ndarray) -> float:
        return self.lam * float(facets_1d(w / self.mu).sum())

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """:math:`\\partial\\Omega_j(0) = [-\\lambda/\\mu, \\lambda/\\mu]` (first facet, eq. 2)."""
        return np.full(p, self.lam / self.mu)

    def restrict(self, cols: np.ndarray) -> "Facets":
        return self

    def zero_gauge(self, z: np.ndarray) -> float:
        """:math:`\\mu\\|z\\|_\\infty/\\lambda`: the slope of the first facet is :math:`\\lambda/\\mu` (eq. 2)."""
        m = float(np.abs(z).max()) if np.size(z) else 0.0
        return self.mu * m / self.lam if self.lam > 0 else (np.inf if m > 0 else 0.0)

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        m = step * self.lam / self.mu ** 2
        return kernels.facets_prox(v, self.mu, m, np.empty_like(v) if out is None else out)


@dataclass(frozen=True)
class StronglyConvexFacets(Penalty):
    """Strongly convex Facets :math:`SCF_\\epsilon` on the grid :math:`\\mu\\mathbb{Z}` (eq. 14).

    ``value(w)`` computes exactly
    :math:`\\lambda \\sum_j \\big[(1-\\epsilon) F(|x_j|) + \\epsilon(|x_j| + x_j^2/2)\\big]`,
    :math:`x = w/\\mu`, with :math:`F` of eq. 3. The :math:`\\Omega^{L_2}` of eq. 14 is
    :math:`\\tfrac12\\|x\\|^2`: it is the one for which :math:`\\partial\\Omega^{corr}` is eq. 13 and
    the prox is eq. 15. Epigraph encoding: the Facets rows of :class:`Facets` scaled by
    :math:`(1-\\epsilon)`, plus :math:`\\epsilon\\lambda(|w_j|/\\mu + w_j^2/(2\\mu^2))` (abs rows and a
    rotated second-order cone for the square). The penalty is :math:`\\lambda\\epsilon/\\mu^2`-strongly
    convex in ``w``.

    Prox (eq. 15 with eq. 16): with :math:`m = t\\lambda/\\mu^2`,
    :math:`a = ((|v|/\\mu - m)/(1+m))_+`,
    :math:`|\\operatorname{prox}(v)| = \\mu(\\lfloor a \\rfloor + \\min(\\tfrac{1+m}{1+m\\epsilon}(a - \\lfloor a\\rfloor), 1))`,
    a :math:`1/(1 + t\\lambda\\epsilon/\\mu^2)`-Lipschitz map.
    """

    lam: float
    mu: float = 1.0
    eps: float = 0.01
    separable = True
    _writes_out = True
    _checks_finite = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", check_scalar(self.lam, "lam"))
        object.__setattr__(self, "mu", check_scalar(self.mu, "mu", low_open=True))
        object.__setattr__(self, "eps", check_scalar(self.eps, "eps", high=1.0))

    def _value(self, w: np.ndarray) -> float:
        x = w / self.mu
        e = self.eps
        return self.lam * float(((1.0 - e) * facets_1d(x) + e * (np.abs(x) + SCF_SQUARE * x * x)).sum())

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """:math:`\\partial\\Omega_j(0) = [-\\lambda/\\mu, \\lambda/\\mu]`."""
        return np.full(p, self.lam / self.mu)

    def restrict(self, cols: np.ndarray) -> "StronglyConvexFacets":
        return self

    def zero_gauge(self, z: np.ndarray) -> float:
        """:math:`\\mu\\|z\\|_\\infty/\\lambda` (slope at 0: :math:`\\lambda((1-\\epsilon) + \\epsilon)/\\mu`)."""
        m = float(np.abs(z).max()) if np.size(z) else 0.0
        return self.mu * m / self.lam if self.lam > 0 else (np.inf if m > 0 else 0.0)

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        m = step * self.lam / self.mu ** 2
        return kernels.scf_prox(v, self.mu, m, self.eps, np.empty_like(v) if out is None else out)

    @property
    def strong_convexity(self) -> float:
        """Modulus :math:`\\lambda\\epsilon/\\mu^2` of strong convexity in ``w``."""
        return self.lam * self.eps / self.mu ** 2


@dataclass(frozen=True)
class Scaled(Penalty):
    """Any penalty evaluated at :math:`w/\\gamma`: :math:`\\Omega_\\gamma(w) = \\Omega(w/\\gamma)` (eq. 9).

    Prox by eq. 16: :math:`\\operatorname{prox}_{t\\Omega(\\cdot/\\gamma)}(v) =
    \\gamma\\operatorname{prox}_{(t/\\gamma^2)\\Omega}(v/\\gamma)`. For Facets, solutions concentrate
    on :math:`\\gamma\\mathbb{Z}` (section 4.3).
    """

    penalty: Penalty
    gamma: float

    def __post_init__(self) -> None:
        if not isinstance(self.penalty, Penalty):
            raise TypeError(f"penalty must be a Penalty instance, got {type(self.penalty).__name__}")
        object.__setattr__(self, "gamma", check_scalar(self.gamma, "gamma", low_open=True))

    @property
    def separable(self) -> bool:  # type: ignore[override]
        return self.penalty.separable

    def _value(self, w: np.ndarray) -> float:
        return self.penalty._value(w / self.gamma)

    def zero_gauge(self, z: np.ndarray) -> float:
        """:math:`\\partial[\\Omega(\\cdot/\\gamma)](0) = \\partial\\Omega(0)/\\gamma`, so the gauge is that of ``penalty`` at :math:`\\gamma z`."""
        return self.penalty.zero_gauge(self.gamma * np.asarray(z, dtype=np.float64))

    def coordinate_thresholds(self, p: int) -> np.ndarray:
        """Thresholds of ``penalty`` divided by gamma (only for separable inner penalties)."""
        return self.penalty.coordinate_thresholds(p) / self.gamma

    def restrict(self, cols: np.ndarray) -> "Scaled":
        return Scaled(self.penalty.restrict(cols), self.gamma)

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:
        g = self.gamma
        out = self.penalty._prox(v / g, step / g ** 2)
        out *= g
        return out
