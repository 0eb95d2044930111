"""Features that every RiskSLIM model below the incumbent uses: exclusion bounds (support enumeration's pre-pass).

A model of the RiskSLIM problem (Ustun & Rudin 2019, eq. 1) whose points are 0 on feature ``j`` is
a point of the convex relaxation

.. math::

    L_j = \\min\\; l(\\lambda, \\lambda_0) \\quad \\text{s.t.}\\quad (\\lambda, \\lambda_0) \\in [lo, hi],\\ \\lambda_j = 0

(integrality, the L0 terms and the cardinality dropped), so its loss is at least ``L_j``. When a
certified lower bound of ``L_j`` reaches the incumbent's loss level, every support without ``j``
is ruled out, and the enumeration (:mod:`solvers.exact.supports`) lists only supports containing
``j``. The bound is the Frank-Wolfe bound of convexity at any feasible point ``theta``:

.. math::

    L_j \\ge l(\\theta) + \\sum_{k \\ne j} \\min_{t \\in [lo_k, hi_k]} g_k (t - \\theta_k), \\quad g = \\nabla l(\\theta),

tight where the gradient vanishes (or pushes against the box). It pays when the rows far outnumber
the features: the relaxation with every feature is then barely below the best sparse model, and
dropping a feature of the planted or clinical signal costs more than the incumbent's slack. With
few rows per feature the relaxation fits the labels and rules nothing out, cheaply.

The same bound with a *set* of features fixed at 0 (:func:`excluded_union`) rules in a set where no
single feature can be: on a binarised table a model without one threshold of a strong variable uses
its neighbour instead, but a model without any threshold of the two or three strongest variables
(the nested chains of :mod:`solvers.exact.nested_columns`) may be bounded above the incumbent. Every
better model then holds one of the set's features, and the blocked screen lists only those supports
(:mod:`solvers.exact.blocked_supports`).

Computation: one projected Newton fit with every feature (Hessian summed over blocks of
:data:`BLOCK_CELLS` entries, so no copy of the table), then, for the features whose removal the quadratic
model ``theta_j^2 / (2 (H^{-1})_{jj})`` says could cost enough, a warm start at the full fit with
``theta_j = 0`` and at most :data:`STEPS` projected Newton steps in the metric of the full Hessian
(row and column ``j`` removed), each with the exact gradient and the certified bound. A feature's
steps stop as soon as its bound reaches the level (ruled in) or its loss falls below it (it cannot
be).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg.blas import ssyrk

from formulations.logistic_cuts import LogisticData, sigmoid_neg, softplus_neg
from solvers.limits import Limits

#: entries of one block of rows (rows x (features + 1)) in the Hessian's sum: the block's copies
#: stay at a few tens of MB whatever the width
BLOCK_CELLS = 1 << 22
#: wider tables are not tried: the dense Hessian (d^2 entries) and its solves (d^3) would cost more
#: than the supports they could rule out
MOST_FEATURES = 2000
#: Newton steps of the fit with every feature, and per excluded feature
FULL_STEPS, STEPS = 40, 15
#: Newton steps (the Hessian at each point, :func:`_hessian`) of the relaxation without a union of
#: :func:`excluded_union` when it is bounded, and when the greedy only moves to its next point
UNION_STEPS, MOVE_STEPS = 30, 2
#: a feature is tried when the quadratic model puts the loss without it above this share of the
#: distance from the full fit to the level (the model is only a guide: the bound decides)
TRY_SHARE = 0.5
#: the full fit stops when its Frank-Wolfe gap is below this share of its loss
FULL_GAP = 1e-10


def _loss_gradient(data: LogisticData, theta: np.ndarray) -> tuple[float, np.ndarray]:
    """Loss and gradient at ``theta`` = (points, intercept)."""
    loss, g, g0 = data.gradient(theta[:-1], theta[-1])
    return loss, np.append(g, g0)


def _loss(data: LogisticData, theta: np.ndarray) -> float:
    """Loss at ``theta`` = (points, intercept): ``LogisticData.loss`` without its check for integer
    scores (a pass over the rows each line-search step would pay for nothing: these are continuous)."""
    z = data.y * (data.X @ theta[:-1] + theta[-1]) / data.scale
    return float(data.weights @ softplus_neg(z))


def _hessian(data: LogisticData, theta: np.ndarray) -> np.ndarray:
    """``[X 1]^T diag(v s (1 - s) / m^2) [X 1]`` summed over row blocks; the points' block by BLAS's
    symmetric rank-k update in single precision (rows scaled by the square roots of the weights). It
    is only the metric of the Newton steps and the removal model: every bound uses the exact loss and
    gradient in double precision."""
    X, d = data.X, data.X.shape[1]
    H = np.zeros((d + 1, d + 1))
    block = max(1, BLOCK_CELLS // (d + 1))
    for start in range(0, X.shape[0], block):
        Xb = X[start:start + block]
        z = data.y[start:start + block] * (Xb @ theta[:-1] + theta[-1]) / data.scale
        s = sigmoid_neg(z)
        D = data.weights[start:start + block] * s * (1.0 - s) / data.scale ** 2
        scaled = np.multiply(Xb, np.sqrt(D)[:, None], out=np.empty(Xb.shape, np.float32), casting="same_kind")
        H[:d, :d] += ssyrk(1.0, scaled.T)  # (its upper triangle)
        H[:d, d] += Xb.T @ D
        H[d, d] += D.sum()
    H[:d, :d] += np.triu(H[:d, :d], 1).T
    H[d, :d] = H[:d, d]
    return H


def frank_wolfe_bound(loss: float, g: np.ndarray, theta: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Lower bound of the convex loss over the box ``[lo, hi]`` from its value and gradient at ``theta``."""
    return loss + float(np.minimum(g * (lo - theta), g * (hi - theta)).sum())


def _newton(data, theta, lo, hi, H, steps, stop, limits: Limits) -> tuple[np.ndarray, float, float]:
    """At most ``steps`` projected Newton steps (metric ``H``, or the Hessian at each step when
    None) on the box ``[lo, hi]``, with a backtracking search on the projected path; ``stop(loss,
    bound)`` or the end of the budget ``limits`` ends them early. Returns the point, its loss and the best certified bound."""
    loss, g = _loss_gradient(data, theta)
    bound = frank_wolfe_bound(loss, g, theta, lo, hi)
    for _ in range(steps):
        if stop(loss, bound) or limits.expired():
            break
        M = _hessian(data, theta) if H is None else H
        stuck = ((theta <= lo) & (g > 0)) | ((theta >= hi) & (g < 0)) | (lo == hi)
        free = ~stuck
        if not free.any():
            break
        step = np.zeros_like(theta)
        Mf = M[np.ix_(free, free)]
        step[free] = np.linalg.solve(Mf + 1e-12 * np.trace(Mf) / max(Mf.shape[0], 1) * np.eye(Mf.shape[0]), g[free])
        t, moved = 1.0, False
        while t > 1e-6:
            trial = np.clip(theta - t * step, lo, hi)
            value = _loss(data, trial)
            if value < loss:
                theta, moved = trial, True
                break
            t *= 0.5
        if not moved:
            break
        loss, g = _loss_gradient(data, theta)
        bound = max(bound, frank_wolfe_bound(loss, g, theta, lo, hi))
    return theta, loss, bound


def _inverse(H: np.ndarray) -> np.ndarray:
    """``H``'s inverse, regularised by ``1e-12`` of its mean diagonal (raises ``LinAlgError``)."""
    return np.linalg.inv(H + 1e-12 * np.trace(H) / H.shape[0] * np.eye(H.shape[0]))


def _full_fit(data: LogisticData, box_lo: np.ndarray, box_hi: np.ndarray, level: float,
              limits: Limits) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
    """The relaxation's fit with every feature (points and intercept), its loss, its Hessian and the
    Hessian's inverse; None when the fit is not below ``level`` (nothing can be ruled in) or
    the Hessian is singular."""
    start = np.clip(np.zeros(box_lo.size), box_lo, box_hi)
    full, full_loss, _ = _newton(data, start, box_lo, box_hi, None, FULL_STEPS,
                                 lambda loss, bound: loss - bound <= FULL_GAP * max(loss, 1e-300), limits)
    if full_loss >= level:  # (the heuristic's incumbent is then below the relaxation: cannot happen
        # unless the fit stopped early; nothing is ruled in)
        return None
    H = _hessian(data, full)
    try:
        return full, full_loss, H, _inverse(H)
    except np.linalg.LinAlgError:
        return None


def _bound_without(data: LogisticData, full: np.ndarray, H: np.ndarray, box_lo: np.ndarray, box_hi: np.ndarray,
                   columns: np.ndarray, level: float, limits: Limits) -> float:
    """Certified lower bound of the relaxation with the points of ``columns`` fixed at 0: Newton steps
    from the full fit, stopped once the bound reaches ``level`` or the loss falls below it. One column
    moves the fit little: at most :data:`STEPS` steps keeping the full fit's Hessian (its row and
    column removed). Several (a variable's thresholds) may move it far: at most :data:`UNION_STEPS`,
    each with the Hessian at its point."""
    lo, hi = box_lo.copy(), box_hi.copy()
    lo[columns] = hi[columns] = 0.0
    theta = full.copy()
    theta[columns] = 0.0
    M, steps = None, UNION_STEPS
    if columns.size == 1:
        M, steps = H.copy(), STEPS
        M[columns, :], M[:, columns] = 0.0, 0.0
        M[columns, columns] = 1.0
    _, _, bound = _newton(data, theta, lo, hi, M, steps, lambda loss, bound: bound >= level or loss < level, limits)
    return bound


def must_use(data: LogisticData, lo: np.ndarray, hi: np.ndarray, intercept_lo: float, intercept_hi: float,
             candidates: np.ndarray, level: float, most: int, limits: Limits) -> tuple[np.ndarray, float]:
    """Features of ``candidates`` without which every model's loss is at least ``level`` (module
    docstring), at most ``most`` of them (the largest bounds first), and the least of their
    bounds (inf when there are none): every support lacking one of them holds no model of loss
    below that bound. When the budget ``limits`` ends (started here if not yet) it returns those
    proven so far."""
    limits = limits.started()
    if most <= 0 or candidates.size == 0 or not math.isfinite(level) or data.X.shape[1] > MOST_FEATURES:
        return np.zeros(0, np.int64), math.inf
    box_lo = np.append(lo, intercept_lo).astype(float)
    box_hi = np.append(hi, intercept_hi).astype(float)
    fitted = _full_fit(data, box_lo, box_hi, level, limits)
    if fitted is None:
        return np.zeros(0, np.int64), math.inf
    full, full_loss, H, inverse = fitted
    gain = full[candidates] ** 2 / (2.0 * np.maximum(np.diag(inverse)[candidates], 1e-300))
    order = np.argsort(-gain, kind="stable")
    ruled_in, bounds = [], []
    for c in order:
        if gain[c] < TRY_SHARE * (level - full_loss) or limits.expired():
            break
        j = int(candidates[c])
        bound = _bound_without(data, full, H, box_lo, box_hi, np.array([j]), level, limits)
        if bound >= level:
            ruled_in.append(j)
            bounds.append(bound)
    if not ruled_in:
        return np.zeros(0, np.int64), math.inf
    strongest = np.argsort(-np.asarray(bounds), kind="stable")[:most]
    return np.asarray(ruled_in, np.int64)[strongest], float(np.asarray(bounds)[strongest].min())


def bound_without(data: LogisticData, lo: np.ndarray, hi: np.ndarray, intercept_lo: float, intercept_hi: float,
                  columns: np.ndarray, level: float, limits: Limits) -> float:
    """Certified lower bound on the loss of every model whose points on ``columns`` are all 0 (the
    relaxation without them, from the full fit), stopped once it reaches ``level``; ``-inf`` when
    the table is wider than :data:`MOST_FEATURES` or the full fit is not below ``level``."""
    limits = limits.started()
    if data.X.shape[1] > MOST_FEATURES or not math.isfinite(level):
        return -math.inf
    box_lo = np.append(lo, intercept_lo).astype(float)
    box_hi = np.append(hi, intercept_hi).astype(float)
    fitted = _full_fit(data, box_lo, box_hi, level, limits)
    if fitted is None:
        return -math.inf
    full, _, H, _ = fitted
    return _bound_without(data, full, H, box_lo, box_hi, np.asarray(columns, np.int64), level, limits)


def _removal_cost(theta: np.ndarray, inverse: np.ndarray, columns: np.ndarray) -> float:
    """The quadratic model's increase of the loss when the points of ``columns`` go to 0 from
    ``theta`` (the others refitted): ``theta_S^T ((H^{-1})_{SS})^{-1} theta_S / 2``."""
    return 0.5 * float(theta[columns] @ np.linalg.solve(inverse[np.ix_(columns, columns)], theta[columns]))


def fit_without(data: LogisticData, lo: np.ndarray, hi: np.ndarray, intercept_lo: float, intercept_hi: float,
                columns: np.ndarray, start: np.ndarray, level: float, limits: Limits,
                steps: int = UNION_STEPS) -> tuple[np.ndarray, float]:
    """The relaxation with the points of ``columns`` fixed at 0, from the point ``start`` (points and
    intercept): at most ``steps`` Newton steps with the Hessian at each point (:func:`_hessian`),
    stopped once the certified bound reaches ``level`` or the fit converges. Returns the point and the
    bound."""
    box_lo = np.append(lo, intercept_lo).astype(float)
    box_hi = np.append(hi, intercept_hi).astype(float)
    box_lo[columns] = box_hi[columns] = 0.0
    theta, _, bound = _newton(data, np.clip(start, box_lo, box_hi), box_lo, box_hi, None, steps,
                              lambda loss, bound: bound >= level or loss - bound <= FULL_GAP * max(loss, 1e-300),
                              limits)
    return theta, bound


def excluded_union(data: LogisticData, lo: np.ndarray, hi: np.ndarray, intercept_lo: float, intercept_hi: float,
                   groups: list[np.ndarray], level: float, most_columns: int, limits: Limits, *,
                   fixed: np.ndarray | None = None, start: np.ndarray | None = None) -> tuple[list[int], float]:
    """A union ``U`` of ``groups`` (e.g. the nested thresholds of each variable,
    :func:`solvers.exact.nested_columns.nested_chains`, and the other columns one by one) such that
    every model using none of ``U``'s features (nor of ``fixed``) has loss at least ``level``: the
    relaxation with all their points fixed at 0, bounded as in the module docstring, reaches the level.
    Every better model avoiding ``fixed`` then holds a feature of ``U``.

    Greedy, from ``start`` (the relaxation's point without ``fixed``, :func:`fit_without`; None: the
    full fit, ``fixed`` empty): the next group is the one whose removal costs most per feature by the
    quadratic model at the current point, ``theta_G^T ((H^{-1})_{GG})^{-1} theta_G / (2 |G|)`` (``H``
    the Hessian there, the removed features' rows and columns out); the relaxation without the union
    so far is then solved (:func:`fit_without`) to its bound when the model puts it at the level or no
    group is left, else only :data:`MOVE_STEPS` steps towards it (the next ranking's point). Returns
    the indices of ``U``'s groups in the order added and the certified bound;
    ``([], -inf)`` when ``U`` would need more than ``most_columns`` features, the table is wider than
    :data:`MOST_FEATURES`, or the budget ``limits`` (started here if not yet) ends first."""
    limits = limits.started()
    none: tuple[list[int], float] = [], -math.inf
    if not groups or not math.isfinite(level) or data.X.shape[1] > MOST_FEATURES:
        return none
    removed = np.zeros(lo.size + 1, bool)
    if start is None:
        fitted = _full_fit(data, np.append(lo, intercept_lo).astype(float), np.append(hi, intercept_hi).astype(float),
                           level, limits)
        if fitted is None:
            return none
        theta = fitted[0]
    else:
        theta = start
        removed[np.asarray(fixed if fixed is not None else [], np.int64)] = True
    chosen: list[int] = []
    columns = 0
    while len(chosen) < len(groups) and not limits.expired():
        H = _hessian(data, theta)
        H[removed, :], H[:, removed] = 0.0, 0.0
        H[removed, removed] = 1.0
        try:
            inverse = _inverse(H)
        except np.linalg.LinAlgError:
            return none
        best, pick = -math.inf, -1
        for g, group in enumerate(groups):
            if g in chosen or columns + group.size > most_columns:
                continue
            try:
                rate = _removal_cost(theta, inverse, group) / group.size
            except np.linalg.LinAlgError:
                rate = math.inf
            if rate > best:
                best, pick = rate, g
        if pick < 0:
            return none
        chosen.append(pick)
        columns += groups[pick].size
        removed[groups[pick]] = True
        # bounded to the end when the quadratic model says it may reach the level, or no group is left
        final = _loss(data, theta) + best * groups[pick].size >= level or len(chosen) == len(groups)
        theta, bound = fit_without(data, lo, hi, intercept_lo, intercept_hi, np.flatnonzero(removed[:-1]), theta,
                                   level, limits, UNION_STEPS if final else MOVE_STEPS)
        if bound >= level:
            return chosen, bound
    return none
