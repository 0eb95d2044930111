"""The search inside one support of the RiskSLIM support enumeration: best-first branch and bound on its integer box.

Node bound = the Frank-Wolfe bound of the box-constrained logistic fit on the node's box
(:func:`solvers.exact.box_logistic.fit_box`) + the L0 cost of the coordinates whose range excludes
0; each node's continuous point is rounded for incumbents, with the best integer intercept.
:class:`Search` is the state one enumeration shares across its supports (incumbent, the least
bound of every closed region, nodes).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from formulations.rows import unique_rows
from solvers.exact.box_logistic import fit_box
from solvers.limits import Limits
from solvers.result import prune_level

#: a continuous coordinate this close to an integer counts as integral
INTEGRAL = 1e-7


class SupportProblem:
    """Rows merged on one support, with label weights; ``theta`` = points on the support, intercept."""

    def __init__(self, problem, support: np.ndarray):
        data = problem.data
        if support.size:
            keys, inverse = unique_rows(data.X[:, support])
        else:
            keys, inverse = np.zeros((1, 0)), np.zeros(data.X.shape[0], dtype=np.int64)
        m = keys.shape[0]
        positive = data.y > 0
        self.wp = np.bincount(inverse[positive], weights=data.weights[positive], minlength=m)
        self.wn = np.bincount(inverse[~positive], weights=data.weights[~positive], minlength=m)
        self.P = np.ascontiguousarray(np.column_stack([keys, np.ones(m)]) / data.scale)
        self.problem, self.support = problem, support
        self.lo = np.append(problem.lo[support], problem.intercept_lo).astype(float)
        self.hi = np.append(problem.hi[support], problem.intercept_hi).astype(float)

    def loss(self, theta: np.ndarray) -> float:
        s = self.P @ theta
        return float(self.wp @ np.logaddexp(0.0, -s) + self.wn @ np.logaddexp(0.0, s))

    def best_intercept(self, coef: np.ndarray, start: float) -> tuple[float, float]:
        """Integer intercept in the box minimising the loss for fixed points (convex: walk downhill)."""
        lo, hi = self.lo[-1], self.hi[-1]
        theta = np.append(coef, min(max(round(start), lo), hi))
        best = self.loss(theta)
        for direction in (1.0, -1.0):
            while lo <= theta[-1] + direction <= hi:
                theta[-1] += direction
                value = self.loss(theta)
                if value < best:
                    best = value
                else:
                    theta[-1] -= direction
                    break
        return float(theta[-1]), best


@dataclass
class Search:
    """State of one search: incumbent, the least bound of every closed region, counters."""

    d: int
    incumbent: float
    model: tuple[np.ndarray, float] | None
    tolerance: float
    closed_floor: float = math.inf
    nodes: int = 0

    def prune_level(self) -> float:
        return prune_level(self.incumbent, self.tolerance)

    def offer(self, value: float, support: np.ndarray, coef: np.ndarray, intercept: float) -> None:
        if value < self.incumbent:
            full = np.zeros(self.d)
            full[support] = coef
            self.incumbent, self.model = value, (full, intercept)


def branch_and_bound(search: Search, sub: SupportProblem, root_bound: float, limits: Limits) -> float:
    """Best-first branch and bound on one support's integer box (whose continuous bound is
    ``root_bound``) within the budget ``limits`` (time and ``node_limit``, counted on
    ``search.nodes``); returns the least bound of its open nodes (inf when it is finished)."""
    problem, support, node_limit = sub.problem, sub.support, limits.node_limit
    counter = 0
    theta0 = np.append(np.zeros(support.size), np.clip(problem.zero_intercept, sub.lo[-1], sub.hi[-1]))
    heap = [(root_bound, counter, sub.lo, sub.hi, theta0)]
    while heap:
        if limits.expired() or (node_limit is not None and search.nodes >= node_limit):
            return heap[0][0]
        parent_bound, _, lo, hi, start = heapq.heappop(heap)
        if parent_bound >= search.prune_level():
            search.closed_floor = min(search.closed_floor, parent_bound)
            continue
        search.nodes += 1
        theta = start.copy()
        lower, loss = fit_box(sub.P, sub.wp, sub.wn, lo, hi, theta)
        bound = problem.loss_cost * lower + problem.costs_in(support, lo[:-1], hi[:-1]) + problem.offset
        # incumbent from the continuous point: points rounded, best integer intercept
        coef = np.clip(np.rint(theta[:-1]), sub.lo[:-1], sub.hi[:-1])
        intercept, rounded_loss = sub.best_intercept(coef, theta[-1])
        search.offer(problem.objective(rounded_loss, support, coef), support, coef, intercept)
        if bound >= search.prune_level():
            search.closed_floor = min(search.closed_floor, bound)
            continue
        width = hi - lo
        frac = np.abs(theta - np.rint(theta))
        frac[width < 0.5] = -1.0
        j = int(np.argmax(frac))
        if frac[j] > INTEGRAL:
            cuts = [(lo[j], math.floor(theta[j])), (math.ceil(theta[j]), hi[j])]
        else:
            # integral point, yet the bound is short of the incumbent: split a paid-for zero
            point = np.rint(theta)
            open_zero = (point[:-1] != 0) & (lo[:-1] <= 0) & (hi[:-1] >= 0) & (problem.cost[support] > 0)
            if not open_zero.any():
                search.closed_floor = min(search.closed_floor, bound)
                continue
            j = int(np.flatnonzero(open_zero)[0])
            cuts = [(lo[j], -1.0), (0.0, 0.0), (1.0, hi[j])]
        for a, b in cuts:
            if a > b:
                continue
            child_lo, child_hi = lo.copy(), hi.copy()
            child_lo[j], child_hi[j] = a, b
            counter += 1
            heapq.heappush(heap, (bound, counter, child_lo, child_hi, theta))
    return math.inf
