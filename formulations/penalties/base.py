"""Contract shared by every penalty: ``value(w)`` and ``prox(v, step)``.

A penalty :math:`\\Omega` is a proper, closed, convex function on :math:`\\mathbb{R}^p`. Its
proximal operator with step :math:`t > 0` is

.. math::

    \\operatorname{prox}_{t\\Omega}(v) = \\arg\\min_x \\tfrac12 \\|x - v\\|_2^2 + t\\,\\Omega(x).

Every penalty is a frozen dataclass (its parameters are validated once, in ``__post_init__``),
``value`` and ``prox`` accept 1-D float arrays of any length (including 0) and ``prox`` rejects a
non-positive step with a ``ValueError``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


class Penalty:
    """Base class of the penalties: ``value(w) -> float`` and ``prox(v, step) -> ndarray``.

    Subclasses implement ``_value(w)`` and ``_prox(v, step)`` on validated float64 vectors;
    the public methods validate inputs once here (the pyproximal idea of one check for all).
    ``separable`` says whether ``prox`` acts coordinate by coordinate.
    """

    separable: bool = False
    _writes_out: bool = False  # True when ``_prox(v, step, out)`` fills ``out`` itself
    _checks_finite: bool = False  # True when ``_prox`` raises ValueError on NaN / inf itself

    # Optional working-set contract (separable penalties): ``coordinate_thresholds(p)`` gives
    # tau with ``partial Omega_j(0) = [-tau_j, tau_j]`` and ``restrict(cols)`` the penalty on
    # the coordinates ``cols``. Solvers use them to screen coordinates that stay at 0.

    def value(self, w: Any) -> float:
        """Penalty value :math:`\\Omega(w)` for a 1-D array ``w`` of shape (p,)."""
        return float(self._value(as_vector(w, "w")))

    def prox(self, v: Any, step: float, out: np.ndarray | None = None) -> np.ndarray:
        """Proximal operator :math:`\\operatorname{prox}_{t\\Omega}(v)`, shape (p,), with ``t = step > 0``.

        ``out``: optional preallocated float64 array of shape (p,) receiving the result (may be
        ``v`` itself); elementwise penalties write into it in one compiled pass.
        """
        v = as_vector(v, "v", check_finite=not self._checks_finite)
        step = check_step(step)
        if out is None:
            return self._prox(v, step)
        if not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == v.shape
                and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out must be a writeable contiguous float64 array of shape {v.shape}")
        if self._writes_out:
            return self._prox(v, step, out)
        np.copyto(out, self._prox(v, step))
        return out

    def zero_gauge(self, z: Any) -> float:
        """Gauge of :math:`\\partial\\Omega(0)` at ``z``: :math:`\\min\\{s \\ge 0: z \\in s\\,\\partial\\Omega(0)\\}`.

        The dual norm for a norm penalty; 0 minimises :math:`f + \\lambda\\Omega` iff
        ``zero_gauge(-grad f(0)) <= lambda`` (so it gives :math:`\\lambda_{max}`). This default uses
        :math:`\\operatorname{prox}_{s\\Omega}(z) = 0 \\iff z \\in s\\,\\partial\\Omega(0)` (monotone in
        ``s``): doubling then bisection to 1e-12 relative; ``inf`` if no ``s <= 2^200`` works.
        Subclasses with a closed form override it.
        """
        z = as_vector(z, "z")
        if not np.any(z):
            return 0.0
        hi = 1.0
        for _ in range(200):
            if not np.any(self._prox(z, hi)):
                break
            hi *= 2.0
        else:
            return math.inf
        lo = 0.0
        while hi - lo > 1e-12 * hi:
            mid = 0.5 * (lo + hi)
            if np.any(self._prox(z, mid)):
                lo = mid
            else:
                hi = mid
        return hi

    def _value(self, w: np.ndarray) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def as_vector(x: Any, name: str, check_finite: bool = True) -> np.ndarray:
    """``x`` as a contiguous 1-D float64 array; ValueError naming ``name`` otherwise."""
    try:
        arr = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array of real numbers, got {type(x).__name__}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}; pass a flat vector (use .ravel())")
    # one cheap pass: a finite sum proves every entry finite; otherwise check entry by entry
    if check_finite and not np.isfinite(arr.sum()) and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; clean the input first")
    return arr


def check_step(step: Any) -> float:
    """``step`` as a positive finite float; ValueError otherwise."""
    try:
        t = float(step)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"step must be a positive real number, got {step!r}") from exc
    if not (t > 0.0 and math.isfinite(t)):
        raise ValueError(f"step must be positive and finite, got {step!r}")
    return t


def check_scalar(x: Any, name: str, *, low: float = 0.0, high: float = math.inf,
                 low_open: bool = False, high_open: bool = False) -> float:
    """``x`` as a float within ``[low, high]`` (open ends as asked); ValueError naming ``name``."""
    try:
        val = float(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real number, got {x!r}") from exc
    bad_low = val <= low if low_open else val < low
    bad_high = val >= high if high_open else val > high
    if math.isnan(val) or bad_low or bad_high:
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {lo}{low}, {high}{hi}, got {x!r}")
    return val


def check_weights(x: Any, name: str, *, allow_empty: bool = True) -> np.ndarray:
    """Non-negative finite 1-D float weights as a read-only array; ValueError naming ``name``."""
    arr = np.array(x, dtype=np.float64, copy=True).reshape(-1) if np.ndim(x) <= 1 else None
    if arr is None:
        raise ValueError(f"{name} must be a 1-D array of non-negative weights, got shape {np.shape(x)}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    arr.setflags(write=False)
    return arr


def check_length(w: np.ndarray, size: int, name: str, what: str) -> None:
    """ValueError when ``len(w) != size`` (the penalty was built for ``size`` coefficients)."""
    if w.shape[0] != size:
        raise ValueError(f"{name} has length {w.shape[0]} but {what} has length {size}; "
                         f"pass a vector with one entry per coefficient")
