"""SLIM (0-1 loss by big-M, Ustun & Rudin 2016) exactly by support enumeration with Bayes-error bounds.

The SLIM kind of :func:`solvers.exact.supports.enumerate_supports`: a SLIM instance
(:mod:`formulations.slim`) without operational constraints (the route's ``bayes_supports`` step
runs only then). A model whose support is exactly ``T`` has
weighted 0-1 error at least the *Bayes error* of ``T``,

.. math::

    E(T) = \\sum_{p} \\min(W_+(p), W_-(p)),

over the patterns ``p`` of values the rows take on ``T`` (``W_±`` the weights of the positive /
negative rows of the pattern): rows that agree on ``T`` get the same score, so where both labels
occur one of them is wrong, whatever the points and the intercept. Hence every model of support
``T`` has objective at least ``B(T) = E(T) + sum_{j in T} C_0 c_{0,j}`` (the L1 tie-breaker is
non-negative). Supports are enumerated by size up to the largest whose L0 cost alone stays below
the incumbent; those with ``B(T)`` below the incumbent (on real data, few) are solved exactly in
increasing ``B(T)``, each as the SLIM MILP restricted to ``T``
with its rows merged into patterns (HiGHS). Every model lies in the family
of its own support, so the least value found is the optimum once every support is solved or
bounded above it; at a time limit the least ``B(T)`` not yet searched is the bound. Sizes are
visited smallest first, so the incumbent improves before the numerous large supports are listed.
The Bayes errors are counted on bit sets of the rows (:mod:`solvers.exact.bayes_error`). With 0/1
features a support's MILP has at most ``2^|T|`` rows; with features of more values it can be
nearly the whole program, so there each search gets a share of the time, and when the supports
below the incumbent would not all fit, the enumeration stops with its incumbent and the route's
next step gets the time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property, partial

import numpy as np
import scipy.sparse as sp

from formulations.program import Program, ProgramBuilder
from formulations.rows import is_binary, merge_rows
from formulations.slim import MARGIN_ROUNDOFF
from solvers.exact.bayes_error import bayes_errors, value_bits
from solvers.exact.box_logistic import copy_counts
from solvers.progress import silenced
from solvers.limits import Limits
from solvers.registry import solve, solver_options
from solvers.result import Status
from solvers.exact.support_listing import Lister
from solvers.exact.symmetry import predecessors



@dataclass(frozen=True)
class ZeroOneProgram:
    """Data and modelling choices read back from a SLIM program (module docstring)."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    margin: float
    lo: np.ndarray
    hi: np.ndarray
    integer: np.ndarray
    intercept_lo: float
    intercept_hi: float
    intercept_integer: bool
    cost: np.ndarray
    epsilon: np.ndarray
    forced: np.ndarray
    max_size: int
    offset: float


    @cached_property
    def binary(self) -> bool:
        """Every feature takes only the values 0 and 1."""
        return bool(is_binary(self.X))

    @cached_property
    def levels(self) -> np.ndarray:
        """The number of distinct values each column takes."""
        return np.array([np.unique(self.X[:, j]).size for j in range(self.d)], dtype=np.int64)

    def columns_in(self, order: np.ndarray) -> "ZeroOneProgram":
        """The same problem with its columns, and every per-feature field, in ``order``."""
        return replace(self, X=np.ascontiguousarray(self.X[:, order]), lo=self.lo[order], hi=self.hi[order],
                       integer=self.integer[order], cost=self.cost[order], epsilon=self.epsilon[order],
                       forced=self.forced[order])

    @cached_property
    def countable(self) -> bool:
        """The row weights of each label have a common unit (the Bayes errors' bit sets count
        rows in it: :func:`solvers.exact.box_logistic.copy_counts`)."""
        positive = self.y > 0
        return copy_counts(self.weights[positive]) is not None and copy_counts(self.weights[~positive]) is not None

    def bayes_reason(self) -> str | None:
        """Why the Bayes errors of its supports cannot be counted on bit sets of its rows (None: they can)."""
        if not self.binary:
            return "some features take values other than 0 and 1"
        if not self.countable:
            return "the row weights are not integer multiples of one unit (Bayes errors are counted in bits)"
        return None

    @property
    def hands_over_search(self) -> bool:
        """With 0/1 features a support's MILP has at most ``2^|T|`` merged rows and is searched to
        the end; with features of more values it can be nearly the whole program, so each search
        gets a share of the time and the enumeration stops when they would not all fit."""
        return not self.binary

    @classmethod
    def from_instance(cls, instance) -> "ZeroOneProgram":
        """The problem of a :class:`formulations.slim.SLIMInstance` (its merged rows, coefficient
        set, costs and margin), operational constraints left out: a relaxation when it has them."""
        cs, spec = instance.coefficients, instance.spec
        d = instance.X.shape[1]
        forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
        return cls(instance.X, instance.y, instance.weights, float(spec.margin), cs.lb.astype(float),
                   cs.ub.astype(float), cs.integer.copy(), float(instance.intercept_bounds[0]),
                   float(instance.intercept_bounds[1]), bool(instance.integer_intercept),
                   spec.c0 * cs.c0.astype(float), np.full(d, float(instance.epsilon)), forced,
                   d if spec.max_size is None else min(int(spec.max_size), d), 0.0)

    @property
    def d(self) -> int:
        return self.lo.size

    @property
    def free(self) -> np.ndarray:
        return np.flatnonzero(~self.forced & ((self.lo < 0) | (self.hi > 0)))

    def floor(self) -> float:
        return float(self.cost @ self.forced) + self.offset

    # --------------------------------------------------------------- supports
    def listers(self, incumbent: float = math.inf, limits: Limits | None = None, every_support: bool = False) -> list:
        """Supports of every size, smallest first (forced features in each), up to the largest whose
        L0 cost alone stays below the incumbent: the small ones, cheap to bound, improve the
        incumbent before the numerous large ones are listed (and may make them unnecessary). With
        ``every_support``, none is left out as symmetric (for supports filtered by rules, on which
        interchangeable columns may count differently: :mod:`formulations.support_rules`)."""
        forced, free = np.flatnonzero(self.forced), self.free
        base = float(self.cost @ self.forced) + self.offset
        cheapest = np.cumsum(np.sort(self.cost[free]))
        top = min(free.size, self.max_size - forced.size)
        while top > 0 and math.isfinite(incumbent) and base + cheapest[top - 1] >= incumbent:
            top -= 1
        # copies of an earlier column are interchangeable (the same scores; no intercept shift, so
        # not complements: :mod:`solvers.exact.symmetry`) when the columns differ in nothing else
        alike = bool(self.integer.all()) and bool(np.all(self.epsilon == self.epsilon[0])) if self.d else False
        prev = predecessors(self.X, free, self.lo, self.hi, self.cost, complements=False) \
            if alike and not every_support else None
        return [Lister(forced, free, r, prev) for r in range(0, max(top, 0) + 1)]

    def least_bound(self, lister) -> float:
        """Least objective of a support of ``lister``: its L0 cost at the cheapest."""
        return self.floor() + float(np.sort(self.cost[lister.free])[:lister.r].sum())

    def bounder(self):
        """``bound(supports, level) -> B(T)`` (module docstring) from bit sets of the rows (a
        picklable partial: it is shipped to the bounding workers)."""
        bits = value_bits(self.X, self.y > 0, self.weights)
        uniform = self.d > 0 and bool(np.all(self.cost == self.cost[0]))
        return partial(_bayes_bounds, bits, self.cost, uniform, self.offset)

    def search(self, support: np.ndarray, bound: float, search, limits: Limits) -> float:
        """Solve the SLIM MILP restricted to ``support`` (rows merged into its patterns) with HiGHS
        within ``limits`` (its ``node_limit`` counted on ``search.nodes``, half the search's gap);
        returns inf when solved, else the larger of its bound and ``bound``."""
        program = self.restricted(support)
        nodes = None if limits.node_limit is None else max(limits.node_limit - search.nodes, 1)
        within = replace(limits, node_limit=nodes, mip_rel_gap=0.5 * search.tolerance)
        with silenced():  # the restricted solve's incumbent and bound are not the search's
            result = solve(program, "highs", **solver_options(within))
        search.nodes += result.nodes
        if result.has_solution:
            coef = result.x[program.blocks["coef"]]
            intercept = float(result.x[program.blocks["intercept"]][0])
            search.offer(self.objective(support, coef, intercept), support, coef, intercept)
        if result.status == Status.OPTIMAL:
            return math.inf
        return max(bound, float(result.bound)) if np.isfinite(result.bound) else bound

    def restricted(self, support: np.ndarray) -> Program:
        """The SLIM MILP (:mod:`formulations.slim`) with points only on ``support``, rows merged."""
        X, y, w = merge_rows(self.X[:, support], self.y, self.weights)
        lo, hi = self.lo[support], self.hi[support]
        smin = np.minimum(X * lo, X * hi).sum(axis=1)
        smax = np.maximum(X * lo, X * hi).sum(axis=1)
        big_m = np.maximum(np.where(y > 0, self.margin - (smin + self.intercept_lo),
                                    self.margin + (smax + self.intercept_hi)), 0.0)
        k, n = support.size, y.size
        b = ProgramBuilder()
        b.add_variables("coef", k, lb=lo, ub=hi, integer=self.integer[support])
        b.add_variables("intercept", 1, lb=self.intercept_lo, ub=self.intercept_hi, integer=self.intercept_integer)
        b.add_variables("loss", n, lb=0.0, ub=1.0, integer=True, cost=w)
        b.add_variables("size", k, lb=self.forced[support].astype(float), ub=1.0, integer=True,
                        cost=self.cost[support])
        b.add_variables("abs", k, lb=0.0, ub=np.maximum(np.abs(lo), np.abs(hi)), cost=self.epsilon[support])
        b.add_rows("zero_one", {"loss": sp.diags(big_m, format="csr"), "coef": sp.csr_matrix(X * y[:, None]),
                                "intercept": sp.csr_matrix(y[:, None])}, lb=self.margin)
        eye = sp.identity(k, format="csr")
        b.add_rows("l0_upper", {"size": sp.diags(np.maximum(hi, 0.0), format="csr"), "coef": -eye}, lb=0.0)
        b.add_rows("l0_lower", {"coef": eye, "size": -sp.diags(np.minimum(lo, 0.0), format="csr")}, lb=0.0)
        b.add_rows("l1_pos", {"abs": eye, "coef": -eye}, lb=0.0)
        b.add_rows("l1_neg", {"abs": eye, "coef": eye}, lb=0.0)
        return replace(b.build(), offset=self.offset)

    # ---------------------------------------------------------------- models
    def errors(self, coef: np.ndarray, intercept: float) -> np.ndarray:
        """0-1 indicators of the rows (score on the margin counts as correct, up to round-off)."""
        s = self.X @ coef
        slack = MARGIN_ROUNDOFF * (1.0 + np.abs(s) + abs(intercept))
        return (self.y * (s + intercept) < self.margin - slack).astype(float)

    def objective(self, support: np.ndarray, coef: np.ndarray, intercept: float) -> float:
        full = np.zeros(self.d)
        full[support] = coef
        return float(self.weights @ self.errors(full, intercept) + self.cost @ (self.forced | (full != 0))
                     + self.epsilon @ np.abs(full) + self.offset)


def zero_one(instance) -> ZeroOneProgram:
    """The problem of a :class:`formulations.slim.SLIMInstance` as the exact steps and the Bayes-error
    beam read it (:meth:`ZeroOneProgram.from_instance`, built once per instance)."""
    cache = instance._cache
    if "zero_one" not in cache:
        cache["zero_one"] = ZeroOneProgram.from_instance(instance)
    return cache["zero_one"]


def _bayes_bounds(bits: tuple, cost: np.ndarray, uniform: bool, offset: float, chunk: np.ndarray,
                  level: float) -> np.ndarray:
    """``B(T)`` of the supports ``chunk`` (:meth:`ZeroOneProgram.bounder`)."""
    costs = (np.full(chunk.shape[0], float(cost[0]) * chunk.shape[1]) if uniform
             else cost[chunk].sum(axis=1)) + offset
    # error budget of the chunk: a sum stopped there already prunes (valid for every support)
    return bayes_errors(*bits, chunk, level - float(costs.min(initial=0.0))) + costs
