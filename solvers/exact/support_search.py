"""The search inside one support of the RiskSLIM support enumeration: best-first branch and bound on its integer box.

Node bound = the Frank-Wolfe bound of the box-constrained logistic fit on the node's box
(:func:`solvers.exact.box_logistic.fit_box`) + the L0 cost of the coordinates whose range excludes
0; each node's continuous point is rounded for incumbents, with the best integer intercept (one numba
call a node: :func:`solvers.exact.box_logistic.support_node`).
:class:`Search` is the state one enumeration shares across its supports (incumbent, the least
bound of every closed region, nodes).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from formulations.rows import unique_rows
from solvers.exact.box_logistic import NO_BITS, support_cells, support_node
from solvers.limits import Limits
from solvers.result import prune_level

#: a continuous coordinate this close to an integer counts as integral
INTEGRAL = 1e-7
#: supports of at most this many 0/1 features are merged by their cells (:func:`support_cells`)
BINARY_CELLS = 12
#: ... and of at most this many, from the rows' bit sets when the problem has them (``3 * 2^k`` word
#: operations per 64 rows, against ``k`` reads per row)
BIT_CELLS = 7


class SupportProblem:
    """Rows merged on one support, with label weights; ``theta`` = points on the support, intercept.
    On a 0/1 table (``problem.binary``) a support of at most :data:`BINARY_CELLS` features is merged
    by counting its cells (:func:`solvers.exact.box_logistic.support_cells`: in one pass over the rows,
    or, up to :data:`BIT_CELLS` features, by popcounts of the rows' bit sets ``problem.row_bits`` when
    they exist), else its rows are merged by :func:`formulations.rows.unique_rows`; the patterns come
    in lexicographic order either way."""

    def __init__(self, problem, support: np.ndarray):
        data = problem.data
        positive = problem.positive
        if 0 < support.size <= BINARY_CELLS and problem.binary:
            bits = problem.row_bits if support.size <= BIT_CELLS else None
            self.P, self.wp, self.wn = support_cells(data.X, support, positive, data.weights, float(data.scale),
                                                     NO_BITS if bits is None else bits, bits is not None)
        else:
            if support.size:
                keys, inverse = unique_rows(data.X[:, support])
            else:
                keys, inverse = np.zeros((1, 0)), np.zeros(data.X.shape[0], dtype=np.int64)
            m = keys.shape[0]
            self.wp = np.bincount(inverse[positive], weights=data.weights[positive], minlength=m)
            self.wn = np.bincount(inverse[~positive], weights=data.weights[~positive], minlength=m)
            self.P = np.ascontiguousarray(np.column_stack([keys, np.ones(m)]) / data.scale)
        self.problem, self.support = problem, support
        self.lo = np.append(problem.lo[support], problem.intercept_lo).astype(float)
        self.hi = np.append(problem.hi[support], problem.intercept_hi).astype(float)


@dataclass
class Search:
    """State of one search: incumbent, the least bound of every closed region, counters, and the least
    bound of the regions a relaxation closed (screens, box fits, floors; not the branch-and-bound
    nodes): that one holds for the real models of the box too (:attr:`solvers.exact.supports.Enumeration.relaxed`)."""

    d: int
    incumbent: float
    model: tuple[np.ndarray, float] | None
    tolerance: float
    closed_floor: float = math.inf
    nodes: int = 0
    relaxed_floor: float = math.inf

    def relaxed(self, *others: float) -> float:
        """The least of :attr:`relaxed_floor` and ``others`` (bounds on the real models of the regions not
        closed); ``-inf`` when nothing bounds them (none closed)."""
        least = min((self.relaxed_floor, *others))
        return least if least < math.inf else -math.inf

    def close_relaxed(self, bound: float) -> None:
        """Count ``bound`` of a region closed by a relaxation (it holds for real models) in both floors."""
        self.closed_floor = min(self.closed_floor, bound)
        self.relaxed_floor = min(self.relaxed_floor, bound)

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
    ``search.nodes``); returns the least bound of its open nodes (inf when it is finished). Each node
    (:func:`solvers.exact.box_logistic.support_node`) is fitted from its parent's point, offers its
    rounded model to the search and, below the prune level, is split on its most fractional
    coordinate, or, at an integral point, on the zero of a paid-for point."""
    problem, support, node_limit = sub.problem, sub.support, limits.node_limit
    cost, forced = problem.cost[support], problem.forced[support]
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
        bound, value, rounded, j, kind = support_node(sub.P, sub.wp, sub.wn, lo, hi, theta, sub.lo, sub.hi, cost,
                                                      forced, problem.loss_cost, problem.offset, INTEGRAL)
        search.offer(value, support, rounded[:-1], float(rounded[-1]))
        if bound >= search.prune_level() or kind == 0:
            search.closed_floor = min(search.closed_floor, bound)
            continue
        if kind == 1:
            cuts = [(lo[j], math.floor(theta[j])), (math.ceil(theta[j]), hi[j])]
        else:
            cuts = [(lo[j], -1.0), (0.0, 0.0), (1.0, hi[j])]
        for a, b in cuts:
            if a > b:
                continue
            child_lo, child_hi = lo.copy(), hi.copy()
            child_lo[j], child_hi[j] = a, b
            counter += 1
            heapq.heappush(heap, (bound, counter, child_lo, child_hi, theta))
    return math.inf
