"""Exact one-dimensional intercept searches for fixed scores ``s_i = x_i . coef``.

Both objectives are piecewise in the intercept ``b`` with breakpoints ``margin - s_i`` (positive
rows) and ``-margin - s_i`` (negative rows), so evaluating every breakpoint with sorted prefix
sums solves them exactly in O(n log n).
"""
from __future__ import annotations

import numpy as np


def _sorted_cumsum(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(values, kind="stable")
    return values[order], np.concatenate([[0.0], np.cumsum(weights[order])])


def margin_error_intercept(scores: np.ndarray, y: np.ndarray, weights: np.ndarray, margin: float,
                           bounds: tuple[float, float], integer: bool) -> tuple[float, float]:
    """Intercept minimising the weighted margin error ``sum_i v_i [y_i (s_i + b) < margin]``.

    Positive rows are correct iff ``b >= margin - s_i``, negative rows iff ``b <= -margin - s_i``:
    the error is piecewise constant between breakpoints. Every breakpoint, every midpoint between
    consecutive breakpoints and both bounds are evaluated at once; among the best values a point
    strictly inside an interval (a midpoint) is preferred, so the returned ``b`` does not sit on a
    breakpoint where floating-point round-off in ``s_i + b`` could flip a row (SLIM's 0-1 loss).
    With ``integer=True`` the candidates are the integers next to the breakpoints and the bounds.
    Returns ``(b, weighted error)``.
    """
    lo, hi = bounds
    pos, neg = y > 0, ~(y > 0)
    c = margin - scores[pos]   # positive i correct iff b >= c_i
    dn = -margin - scores[neg]  # negative i correct iff b <= d_i
    if integer:
        lo, hi = float(np.ceil(lo - 1e-9)), float(np.floor(hi + 1e-9))
        cands = np.unique(np.clip(np.concatenate([np.ceil(c), np.floor(dn), [lo, hi]]), lo, hi))
        interior = np.zeros(cands.size, bool)
    else:
        points = np.unique(np.clip(np.concatenate([c, dn, [lo, hi]]), lo, hi))
        mids = 0.5 * (points[1:] + points[:-1])
        cands = np.concatenate([points, mids])
        interior = np.r_[np.zeros(points.size, bool), np.ones(mids.size, bool)]
    cs, vc = _sorted_cumsum(c, weights[pos])
    ds, vd = _sorted_cumsum(dn, weights[neg])
    pos_wrong = vc[-1] - vc[np.searchsorted(cs, cands, side="right")]
    neg_wrong = vd[np.searchsorted(ds, cands, side="left")]
    loss = pos_wrong + neg_wrong
    best = loss.min()
    tied = np.flatnonzero(loss <= best)
    inside = tied[interior[tied]]
    k = int(inside[0] if inside.size else tied[0])
    return float(cands[k]), float(loss[k])


def hinge_intercept(scores: np.ndarray, y: np.ndarray, weights: np.ndarray, margin: float = 1.0) -> float:
    """Intercept minimising ``sum_i w_i max(0, margin - y_i (s_i + b))`` exactly.

    The objective is convex piecewise linear in ``b`` with breakpoints ``margin - s_i``
    (positives) and ``-margin - s_i`` (negatives); it is evaluated at every breakpoint at once
    with sorted prefix sums.
    """
    pos = y > 0
    order_a = np.argsort(margin - scores[pos], kind="stable")
    a = (margin - scores[pos])[order_a]
    wa = weights[pos][order_a]
    order_c = np.argsort(-margin - scores[~pos], kind="stable")
    c = (-margin - scores[~pos])[order_c]
    wc = weights[~pos][order_c]
    cand = np.concatenate([a, c])
    # positives with a_i > b: sum w a - b sum w  (suffix sums)
    wa_suf = np.concatenate([np.cumsum(wa[::-1])[::-1], [0.0]])
    wa_a_suf = np.concatenate([np.cumsum((wa * a)[::-1])[::-1], [0.0]])
    ia = np.searchsorted(a, cand, side="right")
    loss_pos = wa_a_suf[ia] - cand * wa_suf[ia]
    # negatives with c_i < b: b sum w - sum w c  (prefix sums)
    wc_pre = np.concatenate([[0.0], np.cumsum(wc)])
    wc_c_pre = np.concatenate([[0.0], np.cumsum(wc * c)])
    ic = np.searchsorted(c, cand, side="left")
    loss_neg = cand * wc_pre[ic] - wc_c_pre[ic]
    return float(cand[np.argmin(loss_pos + loss_neg)])
