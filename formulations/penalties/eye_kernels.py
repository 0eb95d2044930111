"""The prox of the EYE penalty (EYE paper, Wang et al. KDD 2018, eq. 2), compiled, with coordinates grouped by ``r``.

:class:`formulations.penalties.eye.EYE` derives the prox: two nested monotone bisections, the outer on
``u = eye(x*)``, the inner on the multiplier ``rho`` of the projection of ``v`` on the level set ``uC``,
whose coordinates are

.. math::

    x_j = \\operatorname{sign}(v_j)\\,(|v_j| - 2\\rho u a_j)_+ / (1 + 2\\rho b_j^2),
    \\qquad a_j = 1 - r_j,\\; b_j = r_j.

Each bisection step needs only the two sums ``A = sum_j a_j |x_j|`` and ``B = sum_j (b_j x_j)^2``.
Coordinates with one value of ``r`` (a *group*: known factors, unknown factors, or the few fractions a
user gives) share ``a`` and ``b``, so over a group the sums are those of ``(|v_j| - t)_+`` and its
square at one threshold ``t = 2 rho u a``: with the group's ``|v_j|`` sorted in decreasing order and the
running mean ``m_k`` and centred sum of squares ``M_k`` of its first ``k`` values (Welford, no
cancellation), the ``k`` values above ``t`` give

.. math::

    \\sum_j (|v_j| - t)_+ = k (m_k - t), \\qquad \\sum_j (|v_j| - t)_+^2 = M_k + k (m_k - t)^2,

``k`` found by binary search. One step then costs ``O(G log p)`` for ``G`` groups instead of ``O(p)``,
after one ``O(p log p)`` sort per prox; the final ``x`` is written coordinate by coordinate.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


def groups_of(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(perm, starts, values)``: the coordinates ordered by ``r`` (stable), group ``g`` in
    ``perm[starts[g]:starts[g + 1]]`` with ``r == values[g]``."""
    perm = np.argsort(r, kind="stable").astype(np.int64)
    ordered = r[perm]
    cuts = np.flatnonzero(np.diff(ordered) != 0) + 1
    starts = np.concatenate(([0], cuts, [r.size]) if r.size else ([0],)).astype(np.int64)
    return perm, starts, ordered[starts[:-1]].astype(np.float64)


@njit(cache=True)
def _sorted_groups(v, perm, starts, vals, mean, m2):  # pragma: no cover - compiled
    """``vals``: ``|v|`` in ``perm`` order, decreasing within each group; ``mean[i]``, ``m2[i]``: the mean
    and centred sum of squares of the group's values up to position ``i`` (Welford)."""
    for g in range(starts.size - 1):
        lo, hi = starts[g], starts[g + 1]
        seg = np.empty(hi - lo)
        for i in range(lo, hi):
            seg[i - lo] = abs(v[perm[i]])
        seg.sort()
        mu = 0.0
        sq = 0.0
        for i in range(lo, hi):
            x = seg[hi - 1 - i]
            vals[i] = x
            d = x - mu
            mu += d / (i - lo + 1)
            sq += d * (x - mu)
            mean[i] = mu
            m2[i] = sq


@njit(cache=True, inline="always")
def _above(vals, lo, hi, t):  # pragma: no cover - compiled
    """How many of the decreasing ``vals[lo:hi]`` exceed ``t``."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if vals[mid] > t:
            a = mid + 1
        else:
            b = mid
    return a - lo


@njit(cache=True)
def _level_sums(vals, mean, m2, starts, ga, gb, u, rho):  # pragma: no cover - compiled
    """``(A, B)`` of the projection at ``(u, rho)`` (module docstring)."""
    aa = 0.0
    bb = 0.0
    for g in range(starts.size - 1):
        lo, hi = starts[g], starts[g + 1]
        t = 2.0 * rho * u * ga[g]
        k = _above(vals, lo, hi, t)
        if k == 0:
            continue
        i = lo + k - 1
        d = mean[i] - t
        c = 1.0 / (1.0 + 2.0 * rho * gb[g] * gb[g])
        aa += ga[g] * c * k * d
        bb += gb[g] * gb[g] * c * c * (m2[i] + k * d * d)
    return aa, bb


@njit(cache=True)
def _level_multiplier(vals, mean, m2, starts, ga, gb, u):  # pragma: no cover - compiled
    """``(rho, N)`` of the projection of ``v`` on ``{x : B(x) + 2u A(x) <= u^2}``: ``rho >= 0`` the root of
    the decreasing ``B + 2uA - u^2`` (0 when ``v`` is inside), ``N = sqrt(A^2 + B)`` at it."""
    aa, bb = _level_sums(vals, mean, m2, starts, ga, gb, u, 0.0)
    if bb + 2.0 * u * aa <= u * u:
        return 0.0, math.sqrt(aa * aa + bb)
    lo = 0.0
    hi = 1.0 / u
    for _ in range(200):
        aa, bb = _level_sums(vals, mean, m2, starts, ga, gb, u, hi)
        if bb + 2.0 * u * aa - u * u <= 0.0:
            break
        lo = hi
        hi *= 4.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        aa, bb = _level_sums(vals, mean, m2, starts, ga, gb, u, mid)
        if bb + 2.0 * u * aa - u * u > 0.0:
            lo = mid
        else:
            hi = mid
    aa, bb = _level_sums(vals, mean, m2, starts, ga, gb, u, hi)
    return hi, math.sqrt(aa * aa + bb)


@njit(cache=True)
def eye_prox(v, r, perm, starts, values, s, out):  # pragma: no cover - compiled
    """Prox of ``s * eye`` at ``v`` into ``out`` (:class:`formulations.penalties.eye.EYE`): bisection on
    ``u`` in ``[0, eye(v)]`` (``phi'(eye(v)) = s > 0``) to the width ``1e-14 eye(v)``, ``phi'(u) = s - 2
    rho(u) N(x_u)``; the prox is 0 when ``phi' >= 0`` at every tested ``u``. ``perm``, ``starts``,
    ``values``: :func:`groups_of` of ``r``."""
    p = v.shape[0]
    vals = np.empty(p)
    mean = np.empty(p)
    m2 = np.empty(p)
    _sorted_groups(v, perm, starts, vals, mean, m2)
    ga = 1.0 - values
    gb = values
    aa, bb = _level_sums(vals, mean, m2, starts, ga, gb, 1.0, 0.0)
    top = aa + math.sqrt(aa * aa + bb)
    lo = 0.0
    hi = top
    for _ in range(200):
        if hi - lo <= 1e-14 * top:
            break
        mid = 0.5 * (lo + hi)
        rho, norm = _level_multiplier(vals, mean, m2, starts, ga, gb, mid)
        if s - 2.0 * rho * norm < 0.0:
            lo = mid
        else:
            hi = mid
    if lo == 0.0:
        out[:] = 0.0
        return out
    u = 0.5 * (lo + hi)
    rho, _ = _level_multiplier(vals, mean, m2, starts, ga, gb, u)
    for j in range(p):
        x = abs(v[j]) - 2.0 * rho * u * (1.0 - r[j])
        if x > 0.0:
            x /= 1.0 + 2.0 * rho * r[j] * r[j]
            out[j] = x if v[j] > 0.0 else -x
        else:
            out[j] = 0.0
    return out
