"""The RiskSLIM kind of the support enumeration (:func:`solvers.exact.supports.enumerate_supports`).

:class:`SparseLogistic` is the RiskSLIM program (Ustun & Rudin 2019, eq. 1;
:mod:`formulations.riskslim`) with only box, L0 and cardinality constraints: its supports are
those of ``max_size`` features (with many of them, only those holding the features every model
below the incumbent uses, :func:`solvers.exact.exclusion.must_use`), each bounded by the
box-constrained logistic fit (numba kernels of :mod:`solvers.exact.box_logistic`, with a
saturated-loss screen) and searched by :func:`solvers.exact.support_search.branch_and_bound`.
When to run the exclusion pre-pass is the route's decision (:data:`solvers.exact.route.ENUMERATION`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from formulations.logistic_cuts import LogisticData
from formulations.rows import is_binary
from solvers.exact import route
from solvers.exact.box_logistic import binary_support_bounds, column_codes, label_bits, support_bounds
from solvers.exact.exclusion import must_use
from solvers.exact.support_listing import Lister
from solvers.exact.support_search import Search, SupportProblem, branch_and_bound
from solvers.exact.symmetry import predecessors
from solvers.limits import Limits


@dataclass(frozen=True)
class SparseLogistic:
    """The sparse logistic problem of a RiskSLIM instance, its operational constraints left out (module
    docstring; the steps that run it under rules on supports read them apart: :mod:`formulations.support_rules`)."""

    data: LogisticData
    lo: np.ndarray
    hi: np.ndarray
    intercept_lo: int
    intercept_hi: int
    cost: np.ndarray
    forced: np.ndarray
    max_size: int
    loss_cost: float
    offset: float
    loss_floor: float
    #: the intercept box is the derived one (:func:`formulations.riskslim.intercept_box`), so 0/1
    #: complements are interchangeable too (:mod:`solvers.exact.symmetry`)
    complements: bool = False

    @classmethod
    def from_instance(cls, instance) -> "SparseLogistic":
        """The problem of a :class:`formulations.riskslim.RiskSLIMInstance` (operational constraints left
        out: the route runs this only on instances without them, or with rules on supports it passes apart)."""
        cs, spec = instance.coefficients, instance.spec
        d = instance.X.shape[1]
        lo, hi = instance.intercept_bounds
        return cls(instance.data, cs.lb.astype(float), cs.ub.astype(float), int(math.ceil(lo - 1e-9)),
                   int(math.floor(hi + 1e-9)), spec.c0 * cs.c0.astype(float), np.asarray(instance.forced, bool),
                   d if spec.max_size is None else min(int(spec.max_size), d), 1.0, 0.0, float(instance.loss_floor()),
                   cs.intercept_lb is None and cs.intercept_ub is None)

    # ---------------------------------------------------------------- supports
    @functools.cached_property
    def binary(self) -> bool:
        """Whether every feature is 0/1 (the searches then merge a support's rows by its cells)."""
        return bool(is_binary(self.data.X))

    @functools.cached_property
    def row_bits(self) -> tuple | None:
        """The rows as bit sets per label (:func:`solvers.exact.box_logistic.label_bits`) on a 0/1 table,
        else None (also when the weights have no common unit)."""
        return label_bits(self.data.X, self.positive, self.data.weights) if self.binary else None

    @functools.cached_property
    def positive(self) -> np.ndarray:
        """The rows of label +1."""
        return self.data.y > 0

    @property
    def free(self) -> np.ndarray:
        """Features that may be non-zero and are not forced."""
        return np.flatnonzero(~self.forced & ((self.lo < 0) | (self.hi > 0)))

    # ------------------------------------------------- the kind's protocol (enumerate_supports)
    #: the in-support branch and bound is cheap (a few continuous fits per node): never rationed
    hands_over_search = False

    @property
    def d(self) -> int:
        return self.lo.size

    def listers(self, incumbent: float = math.inf, limits: Limits | None = None,
                every_support: bool = False) -> list["Lister"]:
        """The supports of ``max_size`` features; with many of them, those containing the features
        every model below ``incumbent`` uses (:func:`solvers.exact.exclusion.must_use`, given
        ``ENUMERATION.exclusion_share`` of the time ``limits`` leaves (None: no time limit), when the size has at least
        ``ENUMERATION.rule_in_supports`` supports: :data:`solvers.exact.route.ENUMERATION`), the
        others' least bound in the lister's ``outside``. With ``every_support``, the supports of every
        size up to ``max_size`` (those features included), none left out as symmetric (for supports
        filtered by rules, which a smaller support may obey when none of ``max_size`` holding it does,
        and on which interchangeable columns may count differently: :mod:`formulations.support_rules`)."""
        forced, free = np.flatnonzero(self.forced), self.free
        r = max(0, min(free.size, self.max_size - forced.size))
        outside = math.inf
        if math.comb(free.size, r) >= route.ENUMERATION.rule_in_supports and math.isfinite(incumbent):
            level = (incumbent - float(self.cost @ self.forced) - self.offset) / self.loss_cost
            budget = Limits.untimed() if limits is None else limits
            ruled_in, floor = must_use(self.data, self.lo, self.hi, self.intercept_lo, self.intercept_hi, free, level,
                                       r, budget.share(route.ENUMERATION.exclusion_share))
            if ruled_in.size:
                forced, free = np.sort(np.append(forced, ruled_in)), np.setdiff1d(free, ruled_in)
                r, outside = r - ruled_in.size, self.loss_cost * floor + float(self.cost @ self.forced) + self.offset
        if every_support:  # (a feature every better model uses is used at every size)
            return [Lister(forced, free, size, None, outside) for size in range(r + 1)]
        prev = predecessors(self.data.X, free, self.lo, self.hi, self.cost, self.complements)
        return [Lister(forced, free, r, prev, outside)]

    def least_bound(self, lister: "Lister") -> float:
        return self.floor()

    def bounder(self):
        """``bound(supports, level) -> objective bounds``: the box fits' certified bounds plus the
        forced costs; a fit stops once its bound reaches ``level``. A picklable partial of
        module-level functions (it is shipped to the bounding workers)."""
        data = self.data
        box = (self.lo, self.hi, float(self.intercept_lo), float(self.intercept_hi), data.scale)
        bits = self.row_bits
        if bits is not None:
            fits = functools.partial(_binary_fits, *bits)
        else:
            fits = functools.partial(_pattern_fits, *column_codes(data.X), data.X, self.positive, data.weights)
        return functools.partial(_logistic_bounds, fits, box, self.loss_cost, float(self.cost @ self.forced),
                                 self.offset, self.floor())

    def search(self, support: np.ndarray, bound: float, search: Search, limits: Limits) -> float:
        return branch_and_bound(search, SupportProblem(self, support), bound, limits)

    @functools.cached_property
    def zero_intercept(self) -> float:
        """Optimal real intercept of the empty model (the log-odds, times the multiplier)."""
        w = self.data.weights
        w_pos, w_neg = w[self.data.y > 0].sum(), w[self.data.y < 0].sum()
        return self.data.scale * math.log(w_pos / w_neg) if w_pos > 0 and w_neg > 0 else 0.0

    def floor(self) -> float:
        """A bound valid for every model: the program's loss floor and the forced costs."""
        return self.loss_cost * self.loss_floor + float(self.cost @ self.forced) + self.offset


def _binary_fits(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, chunk, box, cutoff):
    return binary_support_bounds(bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg, chunk, *box, cutoff)


def _pattern_fits(codes, radix, levels, X, positive, weights, chunk, box, cutoff):
    return support_bounds(codes, radix, levels, X, positive, weights, chunk, *box, cutoff)


def _logistic_bounds(fits, box, loss_cost, forced_cost, offset, floor, chunk, level):
    """Objective bounds of the supports ``chunk``: ``loss_cost`` times the box fits' certified
    bounds (stopped once they reach ``level``) plus the forced costs, at least ``floor``; and which
    supports passed the saturated-loss screen (the kernels give those they screened out a NaN loss)."""
    lower, losses = fits(chunk, box, (level - offset - forced_cost) / loss_cost)
    return np.maximum(loss_cost * lower + forced_cost + offset, floor), ~np.isnan(losses)
