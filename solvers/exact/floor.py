"""Floors: a finite lower bound on the true objective of every model, cheap enough to always compute.

Every exact route has a floor step first that runs even with no time left (:mod:`solvers.exact.route`,
``Step.always``: SLIM's Bayes floor, RiskSLIM's box floor), so a fit reports a finite bound from the
start (the progress line too) whatever other step ran, was skipped or stopped at its clock; RiskSLIM's
hull floor, which costs gradient steps, comes after the support enumeration (which proves most narrow
tables before it is needed), and its point's tangent starts SCIP's cut pool.

**SLIM** (Ustun & Rudin 2016, the 0-1 loss). Rows that agree on every feature whose points may be
non-zero get the same score, whatever the points and the intercept, so where both labels occur in
such a group one label is wrong (a positive row is right iff ``s + b >= margin``, a negative one iff
``s + b <= -margin``). Every model therefore has weighted 0-1 error at least the Bayes error of the
groups, ``E = sum_g min(W_+(g), W_-(g))``, and objective at least ``E`` plus the L0 cost and the L1
tie-breaker of the features it must use (:func:`bayes_floor`).

**RiskSLIM** (Ustun & Rudin 2019, eq. 1). The loss ``l`` is convex, so each tangent under-estimates it
everywhere: for any point ``(w, b)`` with gradient ``(g, g_0)`` and any model ``(lambda, lambda_0)``,
``l(lambda, lambda_0) >= l(w, b) + g . (lambda - w) + g_0 (lambda_0 - b)``. The least right-hand side
plus L0 cost over the models (points in the box, at most ``max_size`` used, forced features used)
separates per feature: a forced feature adds ``min(g_j lb_j, g_j ub_j) + C_0 c_j``, a free one adds
``min(0, min(g_j lb_j, g_j ub_j) + C_0 c_j)``, of which only the ``max_size - #forced`` most negative
are taken, and the intercept adds ``min(g_0 lo, g_0 hi)`` (:func:`sparse_tangent_bound`). It is valid
at *any* point; it is largest near the minimiser of ``l`` over the convex hull of the sparse box
(the box cut by ``sum_j |lambda_j| / r_j <= max_size - #forced``, ``r_j`` the bound on the side of
``lambda_j``'s sign), where it equals that minimum up to the L0 costs (the Frank-Wolfe duality gap
closes). :func:`hull_floor` runs projected accelerated gradient (FISTA with backtracking, Beck &
Teboulle 2009) on that hull and keeps the largest bound met, stopping at its deadline (after a few
iterations at least), at convergence or at an iteration cap. Without ``max_size`` the hull is the
box and the floor is the loss floor of the box relaxation.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from formulations.rows import unique_rows
from solvers.limits import Limits

#: iterations the RiskSLIM floor always runs, past its deadline if need be (each is two products with X)
MIN_ITERATIONS = 3
#: iteration cap of the RiskSLIM floor
MAX_ITERATIONS = 3000
#: relative distance between the iterate's loss and the best bound at which the floor stops
FLOOR_TOL = 1e-7
#: relative round-off allowance taken off every floor (sums of ~10^4 products in double precision)
ROUNDOFF = 1e-12


# ------------------------------------------------------------------------------------- SLIM
def forced_mask(cs) -> np.ndarray:
    """Features every model uses: must-include, or a range excluding 0."""
    return cs.must_include | (cs.lb > 0) | (cs.ub < 0)


def bayes_floor(instance) -> float:
    """Lower bound on the SLIM objective of every model of ``instance`` (module docstring)."""
    cs = instance.coefficients
    forced = forced_mask(cs)
    live = (cs.lb < 0) | (cs.ub > 0)
    if live.all():
        _, group = unique_rows(instance.X)
    elif live.any():
        _, group = unique_rows(instance.X[:, live])
    else:
        group = np.zeros(instance.X.shape[0], dtype=np.int64)
    positive = instance.y > 0
    n_groups = int(group.max(initial=-1)) + 1
    w_pos = np.bincount(group[positive], instance.weights[positive], minlength=n_groups)
    w_neg = np.bincount(group[~positive], instance.weights[~positive], minlength=n_groups)
    error = float(np.minimum(w_pos, w_neg).sum())
    least_abs = np.where(cs.lb > 0, cs.lb, np.where(cs.ub < 0, -cs.ub, 0.0))
    if cs.integer.any():  # a used integer feature has |coef| >= 1
        least_abs = np.where(cs.integer & forced, np.maximum(least_abs, 1.0), least_abs)
    fixed = float(instance.spec.c0 * cs.c0[forced].sum() + instance.epsilon * least_abs[forced].sum())
    return max(0.0, (error + fixed) * (1.0 - ROUNDOFF))


# ----------------------------------------------------------------------------------- RiskSLIM
class SparseBox:
    """The models of a RiskSLIM instance as the floor sees them: points in ``[lb, ub]``, the
    ``forced`` features always used, at most ``budget`` of the others, the intercept in
    ``[lo, hi]``, L0 costs ``cost`` (objective units)."""

    def __init__(self, lb: np.ndarray, ub: np.ndarray, forced: np.ndarray, budget: int, lo: float, hi: float,
                 cost: np.ndarray) -> None:
        self.lb, self.ub = np.asarray(lb, float), np.asarray(ub, float)
        self.forced, self.budget = np.asarray(forced, bool), int(budget)
        self.lo, self.hi, self.cost = float(lo), float(hi), np.asarray(cost, float)
        self.free = ~self.forced

    @classmethod
    def from_instance(cls, instance) -> "SparseBox":
        cs, spec = instance.coefficients, instance.spec
        forced = forced_mask(cs)
        d = cs.lb.size
        size = d if spec.max_size is None else min(int(spec.max_size), d)
        lo, hi = instance.intercept_bounds
        return cls(cs.lb, cs.ub, forced, size - int(forced.sum()), lo, hi, spec.c0 * cs.c0.astype(float))

    def within(self, lb: np.ndarray, ub: np.ndarray) -> "SparseBox":
        """The same box with the points' bounds ``[lb, ub]`` instead (forced features, budget,
        intercept box and costs kept)."""
        return SparseBox(lb, ub, self.forced, self.budget, self.lo, self.hi, self.cost)

    def on(self, keep: np.ndarray) -> "SparseBox":
        """The same box on the features of the mask ``keep`` only (the others left out of every model)."""
        return SparseBox(self.lb[keep], self.ub[keep], self.forced[keep], self.budget, self.lo, self.hi,
                         self.cost[keep])

    def project(self, u: np.ndarray, b: float) -> tuple[np.ndarray, float]:
        """Euclidean projection of ``(u, b)`` on the convex hull (module docstring)."""
        w = np.clip(u, self.lb, self.ub)
        b = min(max(b, self.lo), self.hi)
        free = self.free
        if self.budget >= int(free.sum()):
            return w, b
        uf, lb, ub = u[free], self.lb[free], self.ub[free]
        # side radius r_j: ub_j for a positive coordinate, -lb_j for a negative one (0: that side is closed)
        r = np.where(uf > 0, ub, -lb)
        if self._used(np.clip(uf, lb, ub), r) <= self.budget:
            return w, b
        inv = np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), 0.0)
        sign = np.sign(uf)
        mag = np.abs(uf)
        cap = np.where(uf > 0, ub, -lb)

        def shrink(lam: float) -> np.ndarray:
            return np.clip(mag - lam * inv, 0.0, np.maximum(cap, 0.0))

        low, high = 0.0, float((mag * np.maximum(r, 0.0)).max()) + 1.0
        for _ in range(100):
            mid = 0.5 * (low + high)
            if float((shrink(mid) * inv).sum()) > self.budget:
                low = mid
            else:
                high = mid
            if high - low <= 1e-15 * max(1.0, high):
                break
        w[free] = sign * shrink(high)
        return w, b

    @staticmethod
    def _used(v: np.ndarray, r: np.ndarray) -> float:
        return float(np.where(r > 0, np.abs(v) / np.where(r > 0, r, 1.0), 0.0).sum())

    def bound(self, value: float, g: np.ndarray, g0: float, w: np.ndarray, b: float) -> float:
        """:func:`sparse_tangent_bound` at the point ``(w, b)`` of loss ``value`` and gradient ``(g, g0)``."""
        return sparse_tangent_bound(value, g, g0, w, b, self)


def sparse_tangent_bound(value: float, g: np.ndarray, g0: float, w: np.ndarray, b: float, box: SparseBox) -> float:
    """Least tangent plane at ``(w, b)`` plus L0 cost over the models of ``box`` (module docstring):
    a lower bound on the objective of every model, whatever the point."""
    best = np.minimum(g * box.lb, g * box.ub) + box.cost  # per feature, used at its best end
    total = value - float(g @ w) - g0 * b + min(g0 * box.lo, g0 * box.hi)
    total += float(best[box.forced].sum())
    gains = best[box.free]
    gains = gains[gains < 0]
    if box.budget > 0 and gains.size:
        k = min(box.budget, gains.size)
        total += float(np.partition(gains, k - 1)[:k].sum()) if k < gains.size else float(gains.sum())
    scale = abs(value) + abs(float(g @ w)) + abs(g0 * b) + float(np.abs(best).sum()) + 1.0
    return total - ROUNDOFF * scale


class Floor(NamedTuple):
    """A floor (a lower bound on the objective of every model), the gradient steps it took, and the
    point ``(points, intercept)`` whose tangent gave it (None for a floor not from one tangent)."""

    bound: float
    iterations: int
    point: tuple[np.ndarray, float] | None


def hull_floor(data, box: SparseBox, start: tuple[np.ndarray, float], limits: Limits,
               max_iterations: int = MAX_ITERATIONS) -> Floor:
    """The largest :func:`sparse_tangent_bound` met by FISTA on the hull of ``box`` for the loss of
    ``data`` (:class:`formulations.logistic_cuts.LogisticData`), from ``start``, with the iterations and
    the point where it was met.
    Stops when the budget ``limits`` ends (started here if not yet; after :data:`MIN_ITERATIONS` at least),
    when the iterate's loss is within :data:`FLOOR_TOL` of the bound, or at ``max_iterations``."""
    limits = limits.started()
    w, b = box.project(np.asarray(start[0], float).copy(), float(start[1]))
    value, g, g0 = data.gradient(w, b)
    best, at = box.bound(value, g, g0, w, b), (w, b)

    def better(bound: float, w: np.ndarray, b: float) -> None:
        nonlocal best, at
        if bound > best:
            best, at = bound, (w.copy(), float(b))
    # Lipschitz constant of the gradient: start below the trace bound, doubled when the step fails
    trace = float(data.weights @ (np.einsum("ij,ij->i", data.X, data.X) + 1.0)) / (4.0 * data.scale ** 2)
    lipschitz = max(trace / max(data.X.shape[1], 1), 1e-12)
    y_w, y_b, t = w.copy(), b, 1.0
    iterations = 1
    y_value, y_g, y_g0 = value, g, g0
    while iterations < max_iterations:
        if iterations >= MIN_ITERATIONS and limits.expired():
            break
        while True:  # backtracking from the extrapolated point
            nw, nb = box.project(y_w - y_g / lipschitz, y_b - y_g0 / lipschitz)
            dw, db = nw - y_w, nb - y_b
            n_value, n_g, n_g0 = data.gradient(nw, nb)
            iterations += 1
            quad = y_value + float(y_g @ dw) + y_g0 * db + 0.5 * lipschitz * (float(dw @ dw) + db * db)
            if n_value <= quad + 1e-12 * max(1.0, abs(quad)) or lipschitz > 1e12 * trace:
                break
            lipschitz *= 2.0
        better(box.bound(n_value, n_g, n_g0, nw, nb), nw, nb)
        if n_value - best <= FLOOR_TOL * max(1.0, abs(n_value)):
            break
        if n_value > value:  # restart the momentum (O'Donoghue & Candes 2015)
            t = 1.0
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y_w = nw + ((t - 1.0) / t_next) * (nw - w)
        y_b = nb + ((t - 1.0) / t_next) * (nb - b)
        w, b, value, t = nw, nb, n_value, t_next
        y_value, y_g, y_g0 = data.gradient(y_w, y_b)
        iterations += 1
        better(box.bound(y_value, y_g, y_g0, y_w, y_b), y_w, y_b)
    return Floor(max(best, 0.0), iterations, at)


def box_floor(instance) -> float:
    """Lower bound on the RiskSLIM objective of every model of ``instance``: the box floor
    (``instance.loss_floor()``, the tangent at the minimiser of the loss over the whole box, which the
    exact program's build computes too) plus the forced features' L0 costs. One gradient past that
    minimiser (which the heuristic's start has already computed)."""
    cs = instance.coefficients
    return instance.loss_floor() + float((instance.spec.c0 * cs.c0)[forced_mask(cs)].sum())


def riskslim_floor(instance, limits: Limits) -> Floor:
    """Lower bound on the RiskSLIM objective of every model of ``instance``: the larger of
    :func:`box_floor` and :func:`hull_floor` started from the minimiser of the loss over the box, within
    ``limits``."""
    floor = box_floor(instance)
    hull = hull_floor(instance.data, SparseBox.from_instance(instance), instance.continuous_fit(), limits)
    return hull if hull.bound >= floor else Floor(floor, hull.iterations, None)
