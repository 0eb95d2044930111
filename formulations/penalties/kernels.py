"""Compiled (numba, ``cache=True``) loops behind the proximal operators.

Each kernel writes into a preallocated ``out`` array and works on float64 vectors validated by
the penalty classes (the elementwise kernels count non-finite entries themselves, for free
inside the same pass, and raise ValueError); all maths is documented on the classes that call them. Elementwise kernels
are single fused passes (one read, one write per coordinate); the structured ones (weighted TV by
Condat's direct algorithm, binarsity, pool-adjacent-violators) are the O(p) or
O(p log(1/eps)) loops that numpy cannot express without Python-level iteration.

Why one module of about 400 lines (the EYE prox, a root search on sorted groups, is
:mod:`formulations.penalties.eye_kernels`): every kernel here is a numba function compiled with
``cache=True``; keeping them together keeps one compilation cache and one place where the
no-Python-objects rules of numba apply, while the maths stays with the penalty classes.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

NON_FINITE = "v contains NaN or infinite values; clean the input first"


@njit(cache=True)
def soft_threshold(v, threshold, out):  # pragma: no cover - compiled
    """``out = sign(v) * max(|v| - threshold, 0)`` with a scalar threshold >= 0."""
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        x = v[i]
        a = abs(x) - threshold
        if a > 0.0:
            out[i] = a if x > 0.0 else -a
        else:
            out[i] = 0.0
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True)
def weighted_soft_threshold(v, weights, step, out):  # pragma: no cover - compiled
    """``out_j = sign(v_j) * max(|v_j| - step * weights_j, 0)``."""
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        x = v[i]
        a = abs(x) - step * weights[i]
        if a > 0.0:
            out[i] = a if x > 0.0 else -a
        else:
            out[i] = 0.0
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True)
def shrink_threshold(v, threshold, scale, out):  # pragma: no cover - compiled
    """Elastic-net prox: ``out = sign(v) * max(|v| - threshold, 0) * scale``."""
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        x = v[i]
        a = abs(x) - threshold
        if a > 0.0:
            a *= scale
            out[i] = a if x > 0.0 else -a
        else:
            out[i] = 0.0
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True)
def weighted_shrink_threshold(v, thresholds, scales, out):  # pragma: no cover - compiled
    """``out_j = sign(v_j) * max(|v_j| - thresholds_j, 0) * scales_j`` (naive q, weighted EN)."""
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        x = v[i]
        a = abs(x) - thresholds[i]
        if a > 0.0:
            a *= scales[i]
            out[i] = a if x > 0.0 else -a
        else:
            out[i] = 0.0
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True)
def weighted_scale(v, weights, step, out):  # pragma: no cover - compiled
    """``out_j = v_j / (1 + step * weights_j)`` (weighted ridge prox)."""
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        out[i] = v[i] / (1.0 + step * weights[i])
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True)
def facets_prox(v, grid, mu, out):  # pragma: no cover - compiled
    """Facets prox (eq. 12) on the grid ``grid * Z`` with paper parameter ``mu``.

    ``out = sign(v) * max(|v| - grid*mu*(q + 1), grid*q)``, ``q = floor(|v| / (grid*(mu + 1)))``:
    eq. 12 rewritten with one floor, after the scaling of eq. 16.
    """
    shift = grid * mu
    inv_period = 1.0 / (grid * (mu + 1.0))
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        x = v[i]
        a = abs(x)
        q = math.floor(a * inv_period)
        r = a - shift * (q + 1.0)
        g = grid * q
        if g > r:
            r = g
        out[i] = r if x >= 0.0 else -r
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True)
def scf_prox(v, grid, mu, eps, out):  # pragma: no cover - compiled
    """Strongly convex Facets prox (eq. 15) on the grid ``grid * Z`` with paper parameter ``mu``.

    ``|out| = grid * (floor(a) + min(c (a - floor(a)), 1))``, ``a = max((|v|/grid - mu)/(1 + mu), 0)``,
    ``c = (1 + mu)/(1 + mu eps)``.
    """
    inv = 1.0 / (grid * (1.0 + mu))
    off = mu / (1.0 + mu)
    slope = (1.0 + mu) / (1.0 + mu * eps)
    bad = 0  # number of NaN / infinite entries (an integer count vectorises: free)
    for i in range(v.shape[0]):
        bad += not (abs(v[i]) < math.inf)
        x = v[i]
        a = max(abs(x) * inv - off, 0.0)
        f = math.floor(a)
        r = grid * (f + min(slope * (a - f), 1.0))
        out[i] = math.copysign(r, x)
    if bad:
        raise ValueError(NON_FINITE)
    return out


@njit(cache=True, error_model="numpy")
def tv_prox(y, lam, scale, out):  # pragma: no cover - compiled
    """Weighted 1-D total-variation prox by Condat's direct algorithm (Condat 2013, weighted).

    Solves ``min_x 1/2 ||x - y||^2 + scale * sum_k lam[k] |x[k+1] - x[k]|`` with ``lam`` of length
    ``n - 1`` (non-negative). Follows Condat's reference C code step by step, with the scalar
    lambda replaced by the weight of the current edge; the incoming dual value of a new segment
    is the weight of the edge where the previous jump happened (binarsity slides, Algorithm 1).
    The point ``n - 1`` has no edge of its own and takes the last weight (Condat's boundary value).
    """
    n = y.shape[0]
    if n == 0:
        return out
    constant = True  # stops at the first entry that differs from y[0]
    for j in range(1, n):
        if y[j] != y[0]:
            constant = False
            break
    if constant:  # a constant signal (e.g. all zeros) is its own TV prox, exactly
        out[:] = y
        return out
    # Unsigned indices: numba then emits no negative-index wrap-around, so every read is one load
    # and the segment fills below are contiguous stores (with signed indices LLVM cannot prove the
    # filled addresses contiguous and, on AVX-512, emits scatters).
    one = np.uint64(1)
    last = np.uint64(n - 2)  # the last edge; n >= 2 here
    w_last = scale * lam[last]
    k = np.uint64(0)  # current point
    k0 = k  # first point of the open segment
    kplus = k  # last point where the upper bound vmax was touched
    kminus = k  # same for the lower bound vmin
    w = scale * lam[k]
    umin = w
    umax = -w
    vmin = y[k] - w
    vmax = y[k] + w
    while True:
        if k < last:
            w = scale * lam[k + one]  # weight of the edge (k + 1, k + 2)
        elif k == last:
            w = w_last
        else:  # k == n - 1: the dual must vanish at the end
            if umin < 0.0:  # vmin too high: negative jump
                out[k0] = vmin  # k0 <= kminus: the segment has at least one point
                k0 += one
                while k0 <= kminus:
                    out[k0] = vmin
                    k0 += one
                k = k0
                kminus = k0
                u_in = scale * lam[k0 - one]
                w = scale * lam[k0] if k0 <= last else w_last
                vmin = y[k0] + u_in - w
                umin = w
                umax = y[k0] + u_in - vmax
            elif umax > 0.0:  # vmax too low: positive jump
                out[k0] = vmax  # k0 <= kplus: the segment has at least one point
                k0 += one
                while k0 <= kplus:
                    out[k0] = vmax
                    k0 += one
                k = k0
                kplus = k0
                u_in = -(scale * lam[k0 - one])
                w = scale * lam[k0] if k0 <= last else w_last
                vmax = y[k0] + u_in + w
                umax = -w
                umin = y[k0] + u_in - vmin
            else:  # the last segment is feasible
                vmin += umin / np.float64(k - k0 + one)
                while k0 <= k:
                    out[k0] = vmin
                    k0 += one
                return out
            continue
        y_next = y[k + one]
        umin += y_next - vmin
        if umin < -w:  # negative jump
            out[k0] = vmin  # k0 <= kminus: the segment has at least one point
            k0 += one
            while k0 <= kminus:
                out[k0] = vmin
                k0 += one
            k = k0
            kplus = k0
            kminus = k0
            u_in = scale * lam[k0 - one]
            w = scale * lam[k0] if k0 <= last else w_last
            vmin = y[k0] + u_in - w
            vmax = y[k0] + u_in + w
            umin = w
            umax = -w
            continue
        umax += y_next - vmax
        if umax > w:  # positive jump
            out[k0] = vmax  # k0 <= kplus: the segment has at least one point
            k0 += one
            while k0 <= kplus:
                out[k0] = vmax
                k0 += one
            k = k0
            kplus = k0
            kminus = k0
            u_in = -(scale * lam[k0 - one])
            w = scale * lam[k0] if k0 <= last else w_last
            vmin = y[k0] + u_in - w
            vmax = y[k0] + u_in + w
            umin = w
            umax = -w
            continue
        k += one  # no jump: the segment grows
        if umin >= w:
            kminus = k
            vmin += (umin - w) / np.float64(k - k0 + one)
            umin = w
        if umax <= -w:
            kplus = k
            vmax += (umax + w) / np.float64(k - k0 + one)
            umax = -w


@njit(cache=True)
def binarsity_prox(y, lam, scale, starts, out):  # pragma: no cover - compiled
    """Binarsity prox (binarsity slides, Algorithm 2): per block weighted TV prox, then centring.

    Block ``j`` is ``y[starts[j]:starts[j+1]]``; its edge weights are
    ``lam[starts[j] - j : starts[j+1] - j - 1]`` (``d_j - 1`` weights per block). All blocks are
    handled in this one compiled call.
    """
    n_blocks = starts.shape[0] - 1
    for j in range(n_blocks):
        a = starts[j]
        b = starts[j + 1]
        if b <= a:
            continue
        tv_prox(y[a:b], lam[a - j:b - j - 1], scale, out[a:b])
        mean = 0.0
        for i in range(a, b):
            mean += out[i]
        mean /= b - a
        for i in range(a, b):
            out[i] -= mean
    return out


@njit(cache=True)
def owl_sort_keys(v, index_bits, keys):  # pragma: no cover - compiled
    """``keys[j]`` = the high ``64 - index_bits`` bits of ``~bits(|v_j|)`` above the index ``j``.

    The bits of a non-negative float64 read as an unsigned integer are ordered as the floats, so
    sorting these keys increasingly orders ``|v|`` decreasingly up to the dropped low bits (a
    relative 2^-(52 - index_bits)), ties broken by index; :func:`owl_prox` repairs the order
    exactly. Sorting integer keys in place is cheaper than ``np.argsort`` of the floats (which
    moves indices alongside values): docs/benchmarks.md, OWL row.
    Raises ValueError on a non-finite ``v``.
    """
    low = (np.uint64(1) << np.uint64(index_bits)) - np.uint64(1)
    bad = 0
    for j in range(v.shape[0]):
        a = abs(v[j])
        bad += not (a < math.inf)
        keys[j] = ((~np.float64(a).view(np.uint64)) & ~low) | np.uint64(j)
    if bad:
        raise ValueError(NON_FINITE)
    return keys


@njit(cache=True)
def owl_prox(v, keys, index_bits, c, step, out, sorted_v, sums, starts):  # pragma: no cover - compiled
    """OWL prox from sorted :func:`owl_sort_keys` (or, with ``index_bits = 63``, from indices
    ordering ``|v|`` decreasingly); returns False, having written nothing to ``out``, when the
    keys' order needs too many repairs (then pass exact indices).

    ``keys`` becomes the permutation; ``sorted_v``, ``sums`` (float64) and ``starts`` (int64) of
    length p are workspace from the caller (numpy reuses its large blocks; arrays allocated
    inside a numba function are fresh pages, page-faulted on every call).
    1. Gather ``v`` in key order (independent loads: the random reads overlap), then insertion
       sort by ``|v|`` decreasing (exact; the keys were right to 2^-(52 - index_bits), so
       almost nothing moves; more than 4p moves gives up).
    2. One stack pass of pool-adjacent-violators over ``z_i = |v|_(i) - step c_i``: blocks (sum,
       first position) with strictly decreasing means, merging the top two while they are not.
       That projects ``z`` on ``{x_1 >= ... >= x_p}``; clipping the block means at 0 projects
       on the non-negative monotone cone (clipping commutes with the monotone fit).
    3. Write ``sign(v_j) max(mean, 0)`` to ``out[j]`` (the un-sort; ``out`` may be ``v``).
    """
    p = v.shape[0]
    low = (np.uint64(1) << np.uint64(index_bits)) - np.uint64(1)
    for i in range(p):
        j = keys[i] & low
        keys[i] = j
        sorted_v[i] = v[j]
    moves = 0
    for i in range(1, p):  # insertion sort repairs the truncated keys' order
        x = sorted_v[i]
        if abs(sorted_v[i - 1]) >= abs(x):
            continue
        j = keys[i]
        k = i
        while k > 0 and abs(sorted_v[k - 1]) < abs(x):
            sorted_v[k] = sorted_v[k - 1]
            keys[k] = keys[k - 1]
            k -= 1
        sorted_v[k] = x
        keys[k] = j
        moves += i - k
        if moves > 4 * p:
            return False
    top = -1
    for i in range(p):
        s = abs(sorted_v[i]) - step * c[i]
        first = i
        while top >= 0:  # merge while the block below has a mean <= this one's
            if sums[top] * (i + 1 - first) > s * (first - starts[top]):
                break
            s += sums[top]
            first = starts[top]
            top -= 1
        top += 1
        sums[top] = s
        starts[top] = first
    for b in range(top + 1):
        end = starts[b + 1] if b < top else p
        m = sums[b] / (end - starts[b])
        if m < 0.0:
            m = 0.0
        for i in range(starts[b], end):
            out[keys[i]] = math.copysign(m, sorted_v[i])
    return True
