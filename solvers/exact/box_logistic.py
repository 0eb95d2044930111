"""Box-constrained logistic fits with a certified lower bound, for many small supports (numba).

For a support ``S`` (a few columns of the merged data, plus the intercept column) the loss
``l(theta) = sum_i wp_i log(1 + e^{-p_i . theta}) + wn_i log(1 + e^{p_i . theta})`` (``p_i`` the
row restricted to ``S``, divided by the score multiplier) is minimised over a box
``lo <= theta <= hi`` by a projected Newton method (Bertsekas 1982: Newton steps on the free
coordinates, those not held at a bound by their gradient, with an Armijo search along the projected
path). Whatever the iterate ``theta``, convexity gives the certified lower bound

.. math::

    \\min_{lo \\le u \\le hi} l(u) \\;\\ge\\; l(\\theta) + \\sum_j \\min(g_j (lo_j - \\theta_j), g_j (hi_j - \\theta_j)),
    \\qquad g = \\nabla l(\\theta),

(the linearisation minimised over the box: Frank-Wolfe's duality gap), so an inexact solve only
loosens the bound, never invalidates it. :func:`support_bounds` evaluates it for every support of
a list, merging rows that agree on the support (integer data with few values per column merge into
a few patterns: 30 binary columns, 5 at a time, give at most 32 patterns per label). With a cutoff
(the incumbent's prune level), a support is first screened by the saturated bound
(:func:`saturated_loss`, no fit at all) and fitted only when that bound is below the cutoff.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from formulations.rows import is_binary
from formulations.slim import common_unit

#: Newton iterations per fit; the bound is valid at any iterate
MAX_NEWTON = 30
#: stop once the certified gap l(theta) - bound is below this (absolute, loss units)
BOUND_TOLERANCE = 1e-10
#: largest number of patterns of one support merged by a dense code table
MAX_PATTERNS = 1 << 16
#: counts up to which the bit-set kernel tabulates ``c log c`` for the saturated bound
XLOGX_TABLE = 1 << 12


@njit(cache=True, nogil=True)
def _softplus(s: float) -> float:
    """log(1 + e^-s), stable."""
    return math.log1p(math.exp(-abs(s))) + max(-s, 0.0)


@njit(cache=True, nogil=True)
def _loss(P, wp, wn, theta) -> float:
    f = 0.0
    for i in range(P.shape[0]):
        s = 0.0
        for j in range(P.shape[1]):
            s += P[i, j] * theta[j]
        sp = _softplus(s)
        f += wp[i] * sp + wn[i] * (sp + s)
    return f


@njit(cache=True, nogil=True)
def _loss_grad_hess(P, wp, wn, theta, g, H) -> float:
    m, q = P.shape
    g[:] = 0.0
    H[:, :] = 0.0
    f = 0.0
    for i in range(m):
        s = 0.0
        for j in range(q):
            s += P[i, j] * theta[j]
        e = math.exp(-abs(s))
        sp = math.log1p(e) + max(-s, 0.0)
        f += wp[i] * sp + wn[i] * (sp + s)
        p = 1.0 / (1.0 + e) if s >= 0 else e / (1.0 + e)  # sigmoid(s)
        r = wn[i] * p - wp[i] * (1.0 - p)
        h = (wp[i] + wn[i]) * p * (1.0 - p)
        for j in range(q):
            g[j] += r * P[i, j]
            hj = h * P[i, j]
            for l in range(j + 1):
                H[j, l] += hj * P[i, l]
    return f  # H holds the lower triangle only


@njit(cache=True, nogil=True)
def _newton_step(H, g, free, step, L) -> None:
    """``step`` = minus the inverse of ``H`` restricted to the free coordinates times ``g`` (Cholesky
    on the lower triangle of ``H``, lightly regularised; 0 on the held coordinates)."""
    q = g.size
    for j in range(q):
        step[j] = 0.0
        for l in range(j + 1):
            L[j, l] = 0.0
    for j in range(q):
        if not free[j]:
            continue
        for l in range(j + 1):
            if not free[l]:
                continue
            v = H[j, l]
            for t in range(l):
                if free[t]:
                    v -= L[j, t] * L[l, t]
            if l == j:
                L[j, j] = math.sqrt(max(v + 1e-12 + 1e-10 * H[j, j], 1e-300))
            else:
                L[j, l] = v / L[l, l]
    for j in range(q):  # forward: L z = -g
        if free[j]:
            v = -g[j]
            for t in range(j):
                if free[t]:
                    v -= L[j, t] * step[t]
            step[j] = v / L[j, j]
    for j in range(q - 1, -1, -1):  # backward: L^T step = z
        if free[j]:
            v = step[j]
            for t in range(j + 1, q):
                if free[t]:
                    v -= L[t, j] * step[t]
            step[j] = v / L[j, j]


@njit(cache=True, nogil=True)
def _frank_wolfe_drop(theta, g, lo, hi) -> float:
    drop = 0.0
    for j in range(theta.size):
        drop += min(g[j] * (lo[j] - theta[j]), g[j] * (hi[j] - theta[j]))
    return drop


@njit(cache=True, nogil=True)
def binary_cells(X, support, positive, weights, scale):
    """The rows of the 0/1 table ``X`` (one row per sample) merged on ``support``, as
    :class:`solvers.exact.support_search.SupportProblem` holds them: ``(P, wp, wn)``, one row per cell
    that holds a row (its values on ``support``, then 1 for the intercept, all over ``scale``) with
    the weights of its positive and of its negative rows. Cell ``c`` holds the rows whose values are
    the bits of ``c``, the first column most significant, so the cells come in the lexicographic
    order of their values. One pass over the rows, no sort."""
    k = support.size
    cells = 1 << k
    seen = np.zeros(cells, np.bool_)
    cell_pos, cell_neg = np.zeros(cells), np.zeros(cells)
    for i in range(X.shape[0]):
        c = 0
        for j in range(k):
            c = 2 * c + (X[i, support[j]] != 0.0)
        seen[c] = True
        if positive[i]:
            cell_pos[c] += weights[i]
        else:
            cell_neg[c] += weights[i]
    m = 0
    for c in range(cells):
        m += seen[c]
    P, wp, wn = np.empty((m, k + 1)), np.empty(m), np.empty(m)
    r = 0
    for c in range(cells):
        if seen[c]:
            for j in range(k):
                P[r, j] = float((c >> (k - 1 - j)) & 1) / scale
            P[r, k] = 1.0 / scale
            wp[r], wn[r] = cell_pos[c], cell_neg[c]
            r += 1
    return P, wp, wn


@njit(cache=True, nogil=True)
def bit_cells(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, support, scale):
    """:func:`binary_cells` from the rows as bit sets (:func:`label_bits`: ``bits_pos[j]`` marks the
    positive rows, each repeated by its weight over ``unit_pos``, with feature ``j`` set): the ``2^k``
    patterns of ``support`` split by one column after another, each label's weight a popcount times its
    unit. The same cells in the same order, without reading the rows."""
    k = support.size
    cells = 1 << k
    pattern_pos = np.empty((cells, valid_pos.size), np.uint64)
    pattern_neg = np.empty((cells, valid_neg.size), np.uint64)
    count_pos, count_neg = np.zeros(cells, np.int64), np.zeros(cells, np.int64)
    _prefix_patterns(bits_pos, valid_pos, support, pattern_pos, count_pos)
    _prefix_patterns(bits_neg, valid_neg, support, pattern_neg, count_neg)
    m = 0
    for p in range(cells):
        m += (count_pos[p] + count_neg[p]) > 0
    P, wp, wn = np.empty((m, k + 1)), np.empty(m), np.empty(m)
    r = 0
    for c in range(cells):  # cell c: feature j is bit k - 1 - j; pattern p: feature j is bit j
        p = 0
        for j in range(k):
            p |= ((c >> (k - 1 - j)) & 1) << j
        if count_pos[p] + count_neg[p] > 0:
            for j in range(k):
                P[r, j] = float((c >> (k - 1 - j)) & 1) / scale
            P[r, k] = 1.0 / scale
            wp[r], wn[r] = count_pos[p] * unit_pos, count_neg[p] * unit_neg
            r += 1
    return P, wp, wn


@njit(cache=True, nogil=True)
def support_cells(X, support, positive, weights, scale, bits, use_bits):
    """The cells of ``support`` on the 0/1 table ``X``: :func:`bit_cells` from ``bits`` (:func:`label_bits`'
    six-tuple) when ``use_bits``, else :func:`binary_cells` from the rows. One kernel for both, so that
    compiling it compiles both."""
    if use_bits:
        return bit_cells(bits[0], bits[1], bits[2], bits[3], bits[4], bits[5], support, scale)
    return binary_cells(X, support, positive, weights, scale)


#: ``bits`` for :func:`support_cells` when there are none (``use_bits`` False)
NO_BITS = (np.zeros((0, 1), np.uint64), np.zeros(1, np.uint64), 1.0, np.zeros((0, 1), np.uint64),
           np.zeros(1, np.uint64), 1.0)


@njit(cache=True, nogil=True)
def best_integer_intercept(P, wp, wn, theta, lo, hi):
    """The integer intercept in ``[lo, hi]`` that minimises the loss of ``theta``'s points (its last
    coordinate, the intercept, is the start: rounded, clipped, then moved downhill one unit at a time,
    the loss being convex in it); ``theta[-1]`` is set to it. Returns the loss there."""
    q = theta.size - 1
    theta[q] = min(max(float(round(theta[q])), lo), hi)
    best = _loss(P, wp, wn, theta)
    for direction in (1.0, -1.0):
        while lo <= theta[q] + direction <= hi:
            theta[q] += direction
            value = _loss(P, wp, wn, theta)
            if value < best:
                best = value
            else:
                theta[q] -= direction
                break
    return best


@njit(cache=True, nogil=True)
def support_node(P, wp, wn, lo, hi, theta, box_lo, box_hi, cost, forced, loss_cost, offset, integral):
    """One node of the search inside a support (:func:`solvers.exact.support_search.branch_and_bound`),
    on its box ``[lo, hi]`` (the points, then the intercept), from ``theta`` (set to the fit's point):
    ``(bound, objective, rounded, j, kind)``. ``bound``: ``loss_cost`` times the fit's certified bound
    (:func:`fit_box`), plus the L0 costs ``cost`` of the features forced (``forced``) or whose range
    excludes 0, plus ``offset``. ``rounded``: the fit's points rounded and clipped to the support's box
    ``[box_lo, box_hi]``, then the best integer intercept in it (:func:`best_integer_intercept`), and
    ``objective`` that model's. Where to branch: ``kind`` 1 when a coordinate of open range is
    fractional by more than ``integral`` (``j`` the most fractional, the first of ties), else 2 when a
    point of the fit is non-zero, may be zero and costs (``j`` the first: split on its zero), else 0
    (no branch: the node is closed at its bound)."""
    k = theta.size - 1
    lower, _ = fit_box(P, wp, wn, lo, hi, theta)
    paid = 0.0
    for j in range(k):
        if forced[j] or lo[j] > 0.0 or hi[j] < 0.0:
            paid += cost[j]
    bound = loss_cost * lower + paid + offset
    rounded = np.empty(k + 1)
    for j in range(k):
        rounded[j] = min(max(np.rint(theta[j]), box_lo[j]), box_hi[j])
    rounded[k] = theta[k]
    loss = best_integer_intercept(P, wp, wn, rounded, box_lo[k], box_hi[k])
    used = 0.0
    for j in range(k):
        if forced[j] or rounded[j] != 0.0:
            used += cost[j]
    objective = loss_cost * loss + used + offset
    branch, most = -1, -1.0
    for j in range(k + 1):
        fraction = abs(theta[j] - np.rint(theta[j])) if hi[j] - lo[j] >= 0.5 else -1.0
        if fraction > most:
            branch, most = j, fraction
    if most > integral:
        return bound, objective, rounded, branch, 1
    for j in range(k):
        if np.rint(theta[j]) != 0.0 and lo[j] <= 0.0 <= hi[j] and cost[j] > 0.0:
            return bound, objective, rounded, j, 2
    return bound, objective, rounded, -1, 0


@njit(cache=True, nogil=True)
def fit_box(P, wp, wn, lo, hi, theta, cutoff=np.inf):
    """Projected Newton from ``theta`` (updated in place, kept in the box); returns
    ``(lower_bound, loss)``: the certified bound on the box minimum (module docstring) and the loss
    at the final ``theta``. Stops early once the bound reaches ``cutoff`` (the box is then pruned:
    its bound needs no more accuracy)."""
    q = theta.size
    for j in range(q):
        theta[j] = min(max(theta[j], lo[j]), hi[j])
    g = np.zeros(q)
    H = np.zeros((q, q))
    trial = np.zeros(q)
    step = np.zeros(q)
    L = np.zeros((q, q))
    free = np.zeros(q, np.bool_)
    f = _loss_grad_hess(P, wp, wn, theta, g, H)
    for _ in range(MAX_NEWTON):
        drop = _frank_wolfe_drop(theta, g, lo, hi)
        if -drop <= BOUND_TOLERANCE or f + drop >= cutoff:
            return f + drop, f
        for j in range(q):
            free[j] = not ((theta[j] <= lo[j] and g[j] > 0.0) or (theta[j] >= hi[j] and g[j] < 0.0))
        _newton_step(H, g, free, step, L)
        slope = 0.0
        for j in range(q):
            slope += g[j] * step[j]
        if not slope < 0.0:  # no descent on the free coordinates: fall back to the gradient
            for j in range(q):
                step[j] = -g[j] if free[j] else 0.0
            slope = 0.0
            for j in range(q):
                slope += g[j] * step[j]
            if not slope < 0.0:
                break
        t = 1.0
        accepted = False
        for _ in range(30):
            for j in range(q):
                trial[j] = min(max(theta[j] + t * step[j], lo[j]), hi[j])
            ft = _loss(P, wp, wn, trial)
            moved = 0.0
            for j in range(q):
                moved += g[j] * (trial[j] - theta[j])
            if ft <= f + 1e-4 * moved or (ft <= f and -moved < 1e-13):  # (rounding-level progress)
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        theta[:] = trial
        previous = f
        f = _loss_grad_hess(P, wp, wn, theta, g, H)
        if previous - f <= 1e-15 * abs(previous):  # stalled at rounding level
            break
    return f + _frank_wolfe_drop(theta, g, lo, hi), f


@njit(cache=True, nogil=True, inline="always")
def _cell_entropy(a: float, b: float) -> float:
    """``a log((a + b)/a) + b log((a + b)/b)``: the least loss of one score on a cell of positive
    weight ``a`` and negative weight ``b`` (0 for a pure cell)."""
    return a * math.log1p(b / a) + b * math.log1p(a / b) if a > 0.0 and b > 0.0 else 0.0


@njit(cache=True, nogil=True)
def saturated_loss(wp, wn, m) -> float:
    """The least loss of *any* score per merged row (the saturated model: row ``i`` scored
    ``log(wp_i / wn_i)``): ``sum_i wp_i log((wp_i + wn_i) / wp_i) + wn_i log((wp_i + wn_i) / wn_i)``
    over the first ``m`` rows, the weighted conditional entropy of the label given the support's
    values. Every linear model on the support, whatever its box or multiplier, scores each merged
    row by one number, so its loss is at least this."""
    f = 0.0
    for i in range(m):
        f += _cell_entropy(wp[i], wn[i])
    return f


@njit(cache=True, nogil=True, inline="always")
def _fit_support(P, wp, wn, m, support, lo, hi, intercept_lo, intercept_hi, b0, box_lo, box_hi, theta, cutoff,
                 screen):
    """:func:`fit_box` on the first ``m`` merged rows of ``P`` over the box of ``support``'s points
    and the intercept, from zero points and intercept ``b0``; with ``screen``, the saturated bound
    (:func:`saturated_loss`) with a NaN loss, without a fit, when that bound reaches ``cutoff``."""
    if screen and cutoff < np.inf:
        floor = saturated_loss(wp, wn, m)
        if floor >= cutoff:
            return floor, np.nan
    k = support.size
    for t in range(k):
        box_lo[t] = lo[support[t]]
        box_hi[t] = hi[support[t]]
        theta[t] = 0.0
    box_lo[k] = intercept_lo
    box_hi[k] = intercept_hi
    theta[k] = b0
    return fit_box(P[:m], wp[:m], wn[:m], box_lo, box_hi, theta, cutoff)


@njit(cache=True, nogil=True)
def support_bounds(codes, radix, levels, X, positive, weights, supports, lo, hi, intercept_lo, intercept_hi, scale,
                   cutoff=np.inf):
    """Certified lower bound and loss of the box-constrained fit on each support (rows of
    ``supports``, column indices), intercept included; a fit stops once its bound reaches
    ``cutoff``. ``codes[i, j]`` numbers the distinct values ``levels[j, :radix[j]]`` of column ``j``:
    rows agreeing on a support are merged by their mixed-radix code when the support has at most
    :data:`MAX_PATTERNS` value combinations, else every row is used. Supports listed in
    lexicographic order share the code of their first ``k - 1`` columns (computed once per prefix)."""
    n = X.shape[0]
    ns, k = supports.shape
    q = k + 1
    bounds = np.empty(ns)
    losses = np.empty(ns)
    P = np.empty((max(n, 1), q))
    wp = np.empty(max(n, 1))
    wn = np.empty(max(n, 1))
    acc_p = np.zeros(MAX_PATTERNS)
    acc_n = np.zeros(MAX_PATTERNS)
    w_of_pos = np.where(positive, weights, 0.0)
    w_of_neg = np.where(positive, 0.0, weights)
    prefix = np.zeros(n, np.int64)
    prefix_combos = 1
    previous = np.full(max(k - 1, 0), -1, np.int64)
    digits = np.empty(max(k, 1), np.int64)
    box_lo = np.empty(q)
    box_hi = np.empty(q)
    theta = np.zeros(q)
    w_pos = w_of_pos.sum()
    w_neg = w_of_neg.sum()
    b0 = scale * math.log(w_pos / w_neg) if w_pos > 0 and w_neg > 0 else 0.0
    for s in range(ns):
        same = True
        for t in range(k - 1):
            same = same and supports[s, t] == previous[t]
        if not same:
            prefix_combos = 1
            for t in range(k - 1):
                previous[t] = supports[s, t]
                prefix_combos = min(prefix_combos * radix[supports[s, t]], MAX_PATTERNS + 1)
            if prefix_combos <= MAX_PATTERNS:
                prefix[:] = 0
                for t in range(k - 1):
                    j = supports[s, t]
                    for i in range(n):
                        prefix[i] = prefix[i] * radix[j] + codes[i, j]
        last = supports[s, k - 1] if k > 0 else -1
        r_last = radix[last] if k > 0 else 1
        combos = prefix_combos * r_last
        m = 0
        if combos <= MAX_PATTERNS:
            for i in range(n):
                c = prefix[i] * r_last + (codes[i, last] if k > 0 else 0)
                acc_p[c] += w_of_pos[i]
                acc_n[c] += w_of_neg[i]
            for c in range(combos):
                if acc_p[c] + acc_n[c] > 0.0:
                    rest = c
                    for t in range(k - 1, -1, -1):
                        j = supports[s, t]
                        digits[t] = rest % radix[j]
                        rest //= radix[j]
                    for t in range(k):
                        P[m, t] = levels[supports[s, t], digits[t]] / scale
                    P[m, k] = 1.0 / scale
                    wp[m] = acc_p[c]
                    wn[m] = acc_n[c]
                    m += 1
                acc_p[c] = 0.0
                acc_n[c] = 0.0
        else:
            for i in range(n):
                for t in range(k):
                    P[i, t] = X[i, supports[s, t]] / scale
                P[i, k] = 1.0 / scale
                wp[i] = w_of_pos[i]
                wn[i] = w_of_neg[i]
            m = n
        bounds[s], losses[s] = _fit_support(P, wp, wn, m, supports[s], lo, hi, intercept_lo, intercept_hi, b0, box_lo,
                                            box_hi, theta, cutoff, True)
    return bounds, losses


def column_codes(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``codes[i, j]``: index of ``X[i, j]`` among the sorted distinct values ``levels[j, :radix[j]]``
    of column ``j``; ``radix[j]``: how many there are. 0/1 columns are coded without sorting."""
    if X.size and is_binary(X):
        has_zero, has_one = (X == 0.0).any(axis=0), (X == 1.0).any(axis=0)
        codes = X.astype(np.int64) - (~has_zero).astype(np.int64)  # an all-ones column has the one level 1
        radix = has_zero.astype(np.int64) + has_one.astype(np.int64)
        levels = np.zeros((X.shape[1], 2))
        levels[:, 0] = np.where(has_zero, 0.0, 1.0)
        levels[:, 1] = 1.0
        return codes, radix, levels
    codes = np.empty(X.shape, dtype=np.int64)
    radix = np.empty(X.shape[1], dtype=np.int64)
    columns = []
    for j in range(X.shape[1]):
        values, codes[:, j] = np.unique(X[:, j], return_inverse=True)
        radix[j] = values.size
        columns.append(values)
    levels = np.zeros((X.shape[1], max(int(radix.max(initial=1)), 1)))
    for j, values in enumerate(columns):
        levels[j, :values.size] = values
    return codes, radix, levels


@intrinsic
def _ctpop(typingctx, x):
    """LLVM's ``ctpop`` on a uint64 (one POPCNT instruction where the CPU has it)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@njit(cache=True, nogil=True)
def _popcount(x) -> int:
    """Set bits of a uint64."""
    return int(_ctpop(x))


@njit(cache=True, nogil=True)
def _prefix_patterns(bits, valid, features, out, counts) -> None:
    """``out[p]``: rows whose values on ``features`` spell ``p`` (feature ``t`` is bit ``t``)."""
    words = valid.size
    out[0, :] = valid
    size = 1
    for t in range(features.size):
        column = bits[features[t]]
        for p in range(size):
            for w in range(words):
                out[p + size, w] = out[p, w] & column[w]
                out[p, w] = out[p, w] & ~column[w]
        size *= 2
    for p in range(size):
        c = 0
        for w in range(words):
            c += _popcount(out[p, w])
        counts[p] = c


@njit(cache=True, nogil=True)
def _split_pattern(p, k, pref_pos, pref_neg, count_pos, count_neg, last_pos, last_neg, cell_pos, cell_neg) -> None:
    """Cells ``2p`` (last feature 0) and ``2p + 1`` (1) of prefix pattern ``p``: label counts by
    popcounts of the pattern's rows with the last feature's bits (none for an empty label; with
    ``k = 0`` the one cell ``p`` is the pattern itself)."""
    if k == 0:
        cell_pos[p], cell_neg[p] = count_pos[p], count_neg[p]
        return
    c1p = 0
    if count_pos[p]:
        for w in range(last_pos.size):
            c1p += _popcount(pref_pos[p, w] & last_pos[w])
    c1n = 0
    if count_neg[p]:
        for w in range(last_neg.size):
            c1n += _popcount(pref_neg[p, w] & last_neg[w])
    cell_pos[2 * p], cell_neg[2 * p] = count_pos[p] - c1p, count_neg[p] - c1n
    cell_pos[2 * p + 1], cell_neg[2 * p + 1] = c1p, c1n


@njit(cache=True, nogil=True)
def binary_support_bounds(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, supports, lo, hi,
                          intercept_lo, intercept_hi, scale, cutoff=np.inf):
    """:func:`support_bounds` for 0/1 features, rows as bit sets: ``bits_pos[j]`` marks the positive
    rows (each repeated by its integer weight over ``unit_pos``) with feature ``j`` set, ``valid_pos``
    every positive row; the same for the negative rows. A support's ``2^k`` pattern weights are
    popcounts of the ``2^(k-1)`` patterns of its first ``k - 1`` features (computed once per prefix)
    intersected with its last feature: a few hundred word operations instead of a pass over the rows.
    The saturated loss is summed over the mixed prefix patterns in decreasing order of their own
    entropy and stops once it reaches ``cutoff`` (each cell adds a non-negative entropy): a pruned
    support's bound is then that partial sum, at least ``cutoff`` and at most its saturated loss."""
    ns, k = supports.shape
    q = k + 1
    half = 1 << max(k - 1, 0)
    bounds = np.empty(ns)
    losses = np.empty(ns)
    pref_pos = np.empty((half, valid_pos.size), np.uint64)
    pref_neg = np.empty((half, valid_neg.size), np.uint64)
    count_pos = np.zeros(half, np.int64)
    count_neg = np.zeros(half, np.int64)
    order = np.zeros(half, np.int64)
    heat = np.zeros(half)
    mixed = 0
    previous = np.full(max(k - 1, 0), -1, np.int64)
    P = np.empty((2 * half, q))
    wp = np.empty(2 * half)
    wn = np.empty(2 * half)
    box_lo = np.empty(q)
    box_hi = np.empty(q)
    theta = np.zeros(q)
    w_pos = 0.0
    for v in valid_pos:
        w_pos += unit_pos * _popcount(v)
    w_neg = 0.0
    for v in valid_neg:
        w_neg += unit_neg * _popcount(v)
    b0 = scale * math.log(w_pos / w_neg) if w_pos > 0 and w_neg > 0 else 0.0
    cell_pos = np.zeros(2 * half, np.int64)
    cell_neg = np.zeros(2 * half, np.int64)
    same_unit = unit_pos == unit_neg
    xlogx = np.zeros(min(int((w_pos + w_neg) / min(unit_pos, unit_neg)) + 1, XLOGX_TABLE) if same_unit else 1)
    for c in range(1, xlogx.size):
        xlogx[c] = c * math.log(c)
    for s in range(ns):
        same = True
        for t in range(k - 1):
            same = same and supports[s, t] == previous[t]
        if not same or s == 0:
            for t in range(k - 1):
                previous[t] = supports[s, t]
            _prefix_patterns(bits_pos, valid_pos, supports[s, :max(k - 1, 0)], pref_pos, count_pos)
            _prefix_patterns(bits_neg, valid_neg, supports[s, :max(k - 1, 0)], pref_neg, count_neg)
            mixed = 0  # the mixed patterns, the largest entropy first (the screen below stops early)
            for p in range(half):
                if count_pos[p] > 0 and count_neg[p] > 0:
                    order[mixed] = p
                    heat[mixed] = -_cell_entropy(count_pos[p] * unit_pos, count_neg[p] * unit_neg)
                    mixed += 1
            order[:mixed] = order[:mixed][np.argsort(heat[:mixed], kind="mergesort")]
        # the 2^k pattern counts, and the saturated bound from them (no fit when it reaches the cutoff)
        # mixed prefix patterns first (a pattern of one label splits into cells of one label, which
        # add nothing to the saturated bound): their cells are all the screen needs
        floor = 0.0
        last_pos = bits_pos[supports[s, k - 1]] if k > 0 else valid_pos
        last_neg = bits_neg[supports[s, k - 1]] if k > 0 else valid_neg
        for i in range(mixed):
            p = order[i]
            _split_pattern(p, k, pref_pos, pref_neg, count_pos, count_neg, last_pos, last_neg, cell_pos, cell_neg)
            for c in range(2 * p, 2 * p + (2 if k > 0 else 1)):
                cp, cn = cell_pos[c], cell_neg[c]
                if cp > 0 and cn > 0:
                    if same_unit and cp + cn < xlogx.size:  # c log c tabulated: unit (T(cp+cn) - T(cp) - T(cn))
                        floor += unit_pos * (xlogx[cp + cn] - xlogx[cp] - xlogx[cn])
                    else:
                        floor += _cell_entropy(cp * unit_pos, cn * unit_neg)
            if floor >= cutoff:  # every cell adds a non-negative entropy: the rest cannot bring it back
                break
        if floor >= cutoff:
            bounds[s], losses[s] = floor, np.nan
            continue
        for p in range(half):  # the fit needs the cells of the one-label patterns too
            if not (count_pos[p] > 0 and count_neg[p] > 0):
                _split_pattern(p, k, pref_pos, pref_neg, count_pos, count_neg, last_pos, last_neg, cell_pos, cell_neg)
        m = 0
        for c in range(2 * half if k > 0 else 1):
            cp, cn = cell_pos[c], cell_neg[c]
            if cp + cn == 0:
                continue
            for t in range(k - 1):
                P[m, t] = ((c >> (t + 1)) & 1) / scale
            if k > 0:
                P[m, k - 1] = (c & 1) / scale
            P[m, k] = 1.0 / scale
            wp[m] = cp * unit_pos
            wn[m] = cn * unit_neg
            m += 1
        bounds[s], losses[s] = _fit_support(P, wp, wn, m, supports[s], lo, hi, intercept_lo, intercept_hi, b0, box_lo,
                                            box_hi, theta, cutoff, False)
    return bounds, losses


#: largest number of rows (copies included) held as bit sets
MAX_BIT_ROWS = 10**7
#: weights with more distinct values than this are not searched for a common unit
MAX_DISTINCT_WEIGHTS = 10**4


def copy_counts(weights: np.ndarray) -> tuple[np.ndarray, float] | None:
    """``(counts, unit)``: how many times each row is repeated in a bit set so that a popcount
    times ``unit`` is a weight (``counts = weight / unit``, ``unit`` the largest common unit of the
    weights: :func:`formulations.slim.common_unit`, tried first as the least weight), or None when
    the weights have no common unit or the copies would exceed :data:`MAX_BIT_ROWS`."""
    if weights.size == 0:
        return np.zeros(0, np.int64), 1.0
    unit = float(weights.min())
    if unit <= 0:
        return None
    copies = weights / unit
    counts = np.rint(copies)
    if not np.allclose(copies, counts, rtol=0, atol=1e-9 * max(1.0, float(copies.max()))):
        if np.unique(weights).size > MAX_DISTINCT_WEIGHTS:
            return None
        unit = common_unit(weights)
        if unit <= 0:
            return None
        counts = np.rint(weights / unit)
    if counts.sum() > MAX_BIT_ROWS:
        return None
    return counts.astype(np.int64), unit


def pack_rows(rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(bits, valid, unit)``: the columns of the boolean ``rows`` as bit sets over the rows, each
    repeated ``weight / unit`` times (:func:`copy_counts`), so a popcount is a weight; None
    when the weights are not integer multiples of one unit or there are too many copies."""
    if rows.shape[0] == 0:
        return np.zeros((rows.shape[1], 1), np.uint64), np.zeros(1, np.uint64), 1.0
    counted = copy_counts(weights)
    if counted is None:
        return None
    counts, unit = counted
    repeated = np.repeat(rows, counts, axis=0)
    n = repeated.shape[0]
    words = (n + 63) // 64
    padded = np.zeros((rows.shape[1], words * 64), dtype=bool)
    padded[:, :n] = repeated.T
    bits = np.packbits(padded, axis=1, bitorder="little").view(np.uint64)
    valid = np.packbits(np.arange(words * 64) < n, bitorder="little").view(np.uint64)
    return np.ascontiguousarray(bits), valid, unit


def label_bits(X: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> tuple | None:
    """``(*pos, *neg)``: the bit sets of the positive and of the negative 0/1 rows, each repeated by
    its weight over its class's unit (``(bits, valid, unit)`` per class: :func:`pack_rows`), packed
    from a 1-byte copy of the table; None when a class has no rows, the features are not all 0/1 or
    a class's weights are not integer multiples of one unit."""
    if not positive.any() or positive.all() or not is_binary(X):
        return None
    ones = X == 1.0
    pos, neg = pack_rows(ones[positive], weights[positive]), pack_rows(ones[~positive], weights[~positive])
    return None if pos is None or neg is None else (*pos, *neg)
