"""RiskSLIM: certified logistic risk scores (Ustun & Rudin 2019, JMLR 20, "Learning Optimized Risk Scores").

With training rows merged into unique ``(x_i, y_i)`` with weights ``v_i`` (sample weight times class
weight, divided by the total sample weight ``S``), the risk-score problem (Ustun & Rudin 2019, eq. 1) is

.. math::

    \\min_{\\lambda \\in \\mathcal{L},\\, \\lambda_0 \\in \\mathbb{Z}}\\;
        l(\\lambda, \\lambda_0) + C_0 \\sum_j c_{0,j} [\\lambda_j \\ne 0], \\qquad
    l(\\lambda, \\lambda_0) = \\sum_i v_i \\log(1 + e^{-y_i (x_i \\cdot \\lambda + \\lambda_0)})

with integer points ``lambda_j`` in a :class:`~formulations.coefficients.CoefficientSet` (default
``{-5..5}``) and at most ``max_size`` of them non-zero. The convex loss has no finite linear form, so
the exact program replaces it by one epigraph variable ``L`` cut by tangents (the RiskSLIM MIP,
eq. 3, solved by the lattice cutting-plane algorithm, Algorithm 2):

.. math::

    \\min\\; L + C_0 \\sum_j c_{0,j} a_j \\quad \\text{s.t.}\\quad
    L \\ge l(\\theta^k) + \\nabla l(\\theta^k) \\cdot (\\theta - \\theta^k)\\ (k \\in \\text{cut pool}),
    \\quad l_j a_j \\le \\lambda_j \\le u_j a_j,\\ \\sum_j a_j \\le K.

The cut pool starts with tangents at a few models (zero model, box-constrained logistic fit and
points on the segment between them); further tangents come from the program's ``lazy`` oracle
(:class:`LogisticCuts`), which a cutting-plane backend (SCIP constraint handler, HiGHS restart
loop) calls at its solutions. Tangents under-estimate a convex function, so every bound proved on
the program is a bound on the true objective; ``LogisticCuts.value`` is the true objective of a
solution. The column bound ``L >= loss_floor`` is the minimum over the coefficient box of the
tangent at the continuous fit (a certified lower bound on the loss, RiskSLIM's loss bound).

Without operational constraints the program has only box, L0 and cardinality rows, and the
default backend (:mod:`solvers.exact.supports`) solves it without the cuts: every support of
``max_size`` features is bounded by its box-constrained continuous fit (certified by the
Frank-Wolfe gap), and branch and bound on the integer points runs only in the supports whose bound
is below the incumbent. The cutting-plane MILP stays the program (and SCIP's tree its solver under
operational constraints).

``relaxed()`` is ``exact().relax()`` with the same oracle: solved by cutting planes on the LP it
gives the continuous relaxation value (a valid lower bound), on the same ``coef`` / ``intercept``
slices.

Integer data give integer margins ``y_i (x_i . lambda + lambda_0)``; the loss is then read from a
lookup table of ``log(1 + e^{-s})`` over the attainable range (exact, no transcendental per row).

With ``multiplier`` ``m`` (FasterRisk's, Liu et al. 2022) every margin is divided by ``m`` in the
loss: the risk is the logistic of the total score over ``m``, the points stay integers, and the
lookup table holds ``log(1 + e^{-s / m})``. ``m = 1`` is RiskSLIM's problem.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from formulations.base import CachedPrograms, Model
from formulations.coefficients import CoefficientSet
from formulations.constraint_rows import add_constraint_rows, lift_constraint_blocks
from formulations.constraints import (PERFORMANCE, SUPPORTED_BY, CompiledConstraints, check_constraints,
                                      compile_constraints)
from formulations.errors import NotRepresentableError
from formulations.logistic_cuts import MAX_TABLE, LogisticCuts, LogisticData, softplus_neg, with_lazy
from formulations.program import Program, ProgramBuilder
from formulations.rows import is_integral, merge_rows
from formulations.support_rules import folded_coefficients
from formulations.validation import check_training_set

def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class RiskSLIM:
    """Modelling choices of a RiskSLIM problem (module docstring).

    Parameters
    ----------
    coefficients : per-feature set (None: ``CoefficientSet.uniform(d, coef_bound)``), in the column
        order of ``X``. Its explicit intercept bounds, if any, replace the derived ones.
    coef_bound : U of the default set ``{-U..U}`` (points).
    c0 : L0 cost ``C0`` per feature, in units of mean logistic loss (tiny default: only breaks ties).
    max_size : at most this many non-zero points (None: no limit).
    class_weight : ``(w_negative, w_positive)`` multipliers of the negative / positive rows.
    constraints : operational constraints by feature name (:mod:`formulations.constraints`; the
        performance rows need per-row errors, which this formulation does not have).
    multiplier : ``m > 0``; the risk is ``1 / (1 + exp(-(x . lambda + lambda_0) / m))`` (FasterRisk's
        multiplier, Liu et al. 2022, sec. 3; RiskSLIM's problem is ``m = 1``). A larger ``m`` gives the
        same integer points a finer risk scale; the certificate is for the ``m`` given.
    """

    coefficients: CoefficientSet | None = None
    coef_bound: int = 5
    c0: float = 1e-6
    max_size: int | None = None
    class_weight: tuple[float, float] = (1.0, 1.0)
    constraints: tuple = ()
    multiplier: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "constraints", check_constraints(self.constraints))
        if not (_is_number(self.multiplier) and self.multiplier > 0):
            raise ValueError(f"multiplier must be a finite number > 0, got {self.multiplier!r}")
        if any(isinstance(c, PERFORMANCE) for c in self.constraints):
            raise NotRepresentableError(f"RiskSLIM has no per-row error indicators, so it cannot take "
                                        f"{[c.describe() for c in self.constraints if isinstance(c, PERFORMANCE)]}; "
                                        f"use {SUPPORTED_BY['performance']}")
        if not (_is_number(self.c0) and self.c0 >= 0):
            raise ValueError(f"c0 must be a finite number >= 0, got {self.c0!r}")
        if not (_is_number(self.coef_bound) and self.coef_bound >= 0):
            raise ValueError(f"coef_bound must be a finite number >= 0, got {self.coef_bound!r}")
        if self.max_size is not None and (not _is_number(self.max_size) or int(self.max_size) != self.max_size
                                          or self.max_size < 0):
            raise ValueError(f"max_size must be an integer >= 0 or None, got {self.max_size!r}")
        cw = tuple(self.class_weight)
        if len(cw) != 2 or not all(_is_number(w) and w >= 0 for w in cw) or max(cw) <= 0:
            raise ValueError(f"class_weight must be two finite non-negative numbers (w_negative, w_positive), not "
                             f"both 0; got {self.class_weight!r}")

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> "RiskSLIMInstance":
        """Merge duplicate rows, derive the intercept box and the loss lookup table for this data."""
        X, y, sw = check_training_set(X, y, sample_weight)
        X = X.toarray() if sp.issparse(X) else X
        n, d = X.shape
        cs = self.coefficients or CoefficientSet.uniform(d, self.coef_bound)
        if cs.d != d:
            raise ValueError(f"coefficient set has {cs.d} features but X has {d} columns")
        constraints = compile_constraints(self.constraints, cs.names)
        cs = folded_coefficients(cs, constraints)  # (the sign rows as bounds, for every step)
        empty = cs.integer & (np.ceil(cs.lb - 1e-9) > np.floor(cs.ub + 1e-9))
        if empty.any():
            raise ValueError(f"feature {cs.names[int(np.flatnonzero(empty)[0])]!r} has no integer value in its bounds")
        forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
        if self.max_size is not None and forced.sum() > self.max_size:
            raise ValueError(f"max_size={self.max_size} but {int(forced.sum())} features must be used; raise max_size")
        cw = np.where(y > 0, self.class_weight[1], self.class_weight[0])
        Xu, yu, wu = merge_rows(X, y, sw * cw / sw.sum())
        w_pos, w_neg = float(wu[yu > 0].sum()), float(wu[yu < 0].sum())
        if (w_pos <= 0 or w_neg <= 0) and (cs.intercept_lb is None or cs.intercept_ub is None):
            raise ValueError("RiskSLIM needs rows of both classes with positive weight (with one class the "
                             "optimal intercept is infinite); or give explicit intercept bounds")
        smin, smax = _score_range(Xu, cs, self.max_size)
        lo, hi = intercept_box(smin, smax, w_pos, w_neg, float(self.multiplier))
        lo = math.ceil(cs.intercept_lb - 1e-9) if cs.intercept_lb is not None else lo
        hi = math.floor(cs.intercept_ub + 1e-9) if cs.intercept_ub is not None else hi
        if lo > hi:
            raise ValueError(f"the integer intercept must lie in [{cs.intercept_lb}, {cs.intercept_ub}], which holds "
                             "no integer; widen the intercept bounds")
        table, radius = None, 0
        if cs.integer.all() and is_integral(Xu):
            radius = int(max(np.abs(smin + lo).max(), np.abs(smax + hi).max(), np.abs(smin + hi).max(),
                             np.abs(smax + lo).max()))
            if 2 * radius + 1 <= MAX_TABLE:
                table = softplus_neg(np.arange(-radius, radius + 1, dtype=float) / self.multiplier)
        data = LogisticData(Xu, yu, wu, table, radius, float(self.multiplier))
        return RiskSLIMInstance(self, cs, data, (int(lo), int(hi)), n, constraints)


#: rows per block of :func:`_score_range` (bounds its temporaries to a few blocks of floats)
SCORE_BLOCK = 1 << 15


def _score_range(X: np.ndarray, cs: CoefficientSet, max_size: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per-row min / max of ``x_i . lambda`` over the box, with at most ``max_size`` non-zero terms
    (computed in blocks of :data:`SCORE_BLOCK` rows)."""
    n, d = X.shape
    smin, smax = np.empty(n), np.empty(n)
    k = d if max_size is None else min(int(max_size), d)
    for start in range(0, n, SCORE_BLOCK):
        block = X[start:start + SCORE_BLOCK]
        at_lb, at_ub = block * cs.lb, block * cs.ub
        low, high = np.minimum(at_lb, at_ub), np.maximum(at_lb, at_ub)
        part = slice(start, start + block.shape[0])
        if k >= d:
            smin[part], smax[part] = low.sum(axis=1), high.sum(axis=1)
        elif k == 0:
            smin[part], smax[part] = 0.0, 0.0
        else:
            # the k most negative (positive) terms; terms of features forced non-zero are not singled
            # out, so the range stays a superset of the attainable scores
            smin[part] = np.minimum(np.partition(low, k - 1, axis=1)[:, :k].sum(axis=1), 0.0)
            smax[part] = np.maximum(-np.partition(-high, k - 1, axis=1)[:, :k].sum(axis=1), 0.0)
    return smin, smax


def intercept_box(smin: np.ndarray, smax: np.ndarray, w_pos: float, w_neg: float,
                  multiplier: float = 1.0) -> tuple[int, int]:
    """Integer intercept range containing an optimal intercept of every model in the box.

    For fixed scores ``s_i`` in ``[smin_i, smax_i]`` the derivative of the loss in the intercept is
    ``f'(b) = sum_neg v_i sigma(s_i + b) - sum_pos v_i sigma(-(s_i + b))``. With ``m = min_i smin_i``,
    ``f'(b) >= W_neg sigma(m + b) - W_pos sigma(-(m + b)) > 0`` as soon as ``e^{m + b} > W_pos / W_neg``,
    i.e. ``b > log(W_pos / W_neg) - m``: beyond it the loss increases, so the real minimiser is below
    and its ceiling (the integer optimum is the floor or the ceiling of the real one, by
    convexity) is at most ``ceil(log(W_pos / W_neg) - m)``. Symmetrically with ``M = max_i smax_i``
    the integer optimum is at least ``floor(log(W_pos / W_neg) - M)``. The intercept carries no L0
    cost, so the box loses no optimal model. With a multiplier ``t`` (margins ``(s_i + b) / t``) the
    same argument, with ``t log(W_pos / W_neg)`` for ``log(W_pos / W_neg)``, gives the box.
    """
    if w_pos <= 0 or w_neg <= 0:
        return -10**6, 10**6  # replaced by explicit bounds (checked by the caller)
    log_odds = multiplier * math.log(w_pos / w_neg)
    return int(math.floor(log_odds - smax.max())), int(math.ceil(log_odds - smin.min()))


def maps_into(lb: np.ndarray, ub: np.ndarray, derived: bool, multiplier: float, larger: float) -> bool:
    """Whether every model of multiplier ``larger`` is, in objective, a real model of the coefficient box
    ``[lb, ub]`` under ``multiplier`` (the intercept box the derived one, :func:`intercept_box`, when
    ``derived``), so that a bound on those bounds it: the one rule behind a later RiskSLIM multiplier's
    inherited bounds (:mod:`solvers.multipliers`) and its reused exclusion bounds
    (:func:`solvers.exact.exclusion_listing.carries_over`).

    With ``t = multiplier / larger <= 1``, a model ``(lambda, b)`` of ``larger`` has the risks, hence the
    loss, of the real model ``(t lambda, t b)`` of ``multiplier``. When every range holds 0, ``t lambda``
    lies in the same box, has the same non-zero terms (so the same L0 cost) and is 0 wherever ``lambda``
    is; when the intercept box is the derived one it holds the real optimal intercept of every such
    model. Not so for a smaller ``larger``, a range without 0 or explicit intercept bounds."""
    return derived and larger >= multiplier and bool(np.all(lb <= 0) and np.all(ub >= 0))


@dataclass(frozen=True)
class RiskSLIMInstance(CachedPrograms):
    """A RiskSLIM problem on merged data: the cutting-plane MILP, decode / lift / round."""

    spec: RiskSLIM
    coefficients: CoefficientSet
    data: LogisticData
    intercept_bounds: tuple[int, int]
    n_rows_in: int
    constraints: CompiledConstraints | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def X(self) -> np.ndarray:
        return self.data.X

    @property
    def y(self) -> np.ndarray:
        return self.data.y

    @property
    def weights(self) -> np.ndarray:
        return self.data.weights

    @property
    def forced(self) -> np.ndarray:
        """Features whose L0 indicator is 1 in every model (must-include, or a range excluding 0)."""
        cs = self.coefficients
        return cs.must_include | (cs.lb > 0) | (cs.ub < 0)

    @property
    def info(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows_in, "n_rows_kept": self.X.shape[0], "intercept_bounds": self.intercept_bounds,
                "loss_table": 0 if self.data.table is None else int(self.data.table.size)}

    # -------------------------------------------------------------- values
    def used(self, model: Model) -> np.ndarray:
        return (model.coef != 0) | self.forced

    def loss(self, model: Model) -> float:
        """Mean weighted logistic loss of a model."""
        return self.data.loss(model.coef, model.intercept)

    def penalty(self, coef: np.ndarray) -> float:
        return float(self.spec.c0 * (self.coefficients.c0 @ ((coef != 0) | self.forced)))

    def objective(self, model: Model) -> float:
        """Loss + ``C0 sum_j c0_j [coef_j != 0]`` (the program's objective at ``lift(model)``)."""
        return self.loss(model) + self.penalty(model.coef)

    def continuous_fit(self) -> tuple[np.ndarray, float]:
        """Minimiser of the loss over the coefficient and intercept box (no L0, no max_size), L-BFGS-B."""
        if "continuous" not in self._cache:
            cs, d = self.coefficients, self.X.shape[1]
            lo, hi = self.intercept_bounds

            def f(theta):
                value, g, g0 = self.data.gradient(theta[:d], theta[d])
                return value, np.append(g, g0)

            b0 = float(np.clip(self._zero_intercept(), lo, hi))
            bounds = list(zip(cs.lb, cs.ub)) + [(lo, hi)]
            res = minimize(f, np.append(np.zeros(d), b0), jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": 1000, "ftol": 1e-13, "gtol": 1e-9})
            self._cache["continuous"] = (np.clip(res.x[:d], cs.lb, cs.ub), float(np.clip(res.x[d], lo, hi)))
        return self._cache["continuous"]

    def _zero_intercept(self) -> float:
        w_pos, w_neg = self.weights[self.y > 0].sum(), self.weights[self.y < 0].sum()
        return self.data.scale * math.log(w_pos / w_neg) if w_pos > 0 and w_neg > 0 else 0.0

    def loss_floor(self) -> float:
        """Certified lower bound on the loss of every model in the box: the tangent at the continuous
        fit minimised over the box (tangents under-estimate the convex loss)."""
        coef, b = self.continuous_fit()
        value, g, g0 = self.data.gradient(coef, b)
        cs, (lo, hi) = self.coefficients, self.intercept_bounds
        drop = np.minimum(g * (cs.lb - coef), g * (cs.ub - coef)).sum() + min(g0 * (lo - b), g0 * (hi - b))
        return max(0.0, float(value + drop) - 1e-12)

    def relaxed_fit(self) -> tuple[np.ndarray, float]:
        """Minimiser over the box of the continuous relaxation without its cardinality row: the loss plus
        ``sum_j C0 c0_j z_j`` with ``z_j = max(w_j / u_j, w_j / l_j)``, the least indicator the rows
        ``l0_upper`` / ``l0_lower`` allow (1 for a forced feature). Writing ``w = w+ - w-`` (``w+`` in
        ``[0, max(u, 0)]``, ``w-`` in ``[0, max(-l, 0)]``) makes that cost linear, so the problem is smooth
        and box-constrained: L-BFGS-B, from the continuous fit."""
        if "relaxed_fit" not in self._cache:
            cs, d = self.coefficients, self.X.shape[1]
            lo, hi = self.intercept_bounds
            cost = np.where(self.forced, 0.0, self.spec.c0 * cs.c0)
            up, down = np.maximum(cs.ub, 0.0), np.maximum(-cs.lb, 0.0)
            rate_up = np.divide(cost, up, out=np.zeros(d), where=up > 0)
            rate_down = np.divide(cost, down, out=np.zeros(d), where=down > 0)

            def f(theta):
                value, g, g0 = self.data.gradient(theta[:d] - theta[d:2 * d], theta[2 * d])
                return value + rate_up @ theta[:d] + rate_down @ theta[d:2 * d], np.concatenate(
                    [g + rate_up, -g + rate_down, [g0]])

            coef, b = self.continuous_fit()
            start = np.concatenate([np.clip(coef, 0.0, up), np.clip(-coef, 0.0, down), [b]])
            bounds = [(0.0, u) for u in up] + [(0.0, v) for v in down] + [(lo, hi)]
            res = minimize(f, start, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": 1000, "ftol": 1e-13, "gtol": 1e-9})
            w = np.clip(res.x[:d] - res.x[d:2 * d], cs.lb, cs.ub)
            self._cache["relaxed_fit"] = (w, float(np.clip(res.x[2 * d], lo, hi)))
        return self._cache["relaxed_fit"]

    def relaxed_start(self) -> np.ndarray | None:
        """A point of :meth:`relaxed` at :meth:`relaxed_fit` (indicators at their least values, the loss
        variable at the true loss), its coefficients scaled down into ``max_size`` when the indicators
        sum past it; None when even that cannot fit (the forced features alone exceed it)."""
        coef, b = self.relaxed_fit()
        cs, spec = self.coefficients, self.spec
        up, down = np.maximum(cs.ub, 0.0), np.maximum(-cs.lb, 0.0)
        z = np.maximum(np.divide(coef, up, out=np.zeros_like(coef), where=up > 0),
                       np.divide(-coef, down, out=np.zeros_like(coef), where=down > 0))
        forced = self.forced
        if spec.max_size is not None:
            room, free = spec.max_size - forced.sum(), z[~forced].sum()
            if room < 0:
                return None
            if free > room:
                scale = room / free
                coef = np.where(forced, coef, coef * scale)
                z = z * scale
        p = self.relaxed()
        x = np.zeros(p.n_variables)
        x[p.blocks["coef"]] = coef
        x[p.blocks["intercept"]] = b
        x[p.blocks["loss"]] = self.data.loss(coef, b)
        x[p.blocks["size"]] = np.where(forced, 1.0, z)
        return x

    # ------------------------------------------------------------- program
    def relaxed(self) -> Program:
        """The continuous relaxation: :meth:`exact` with integrality dropped and one more tangent row, at
        :meth:`relaxed_fit` (where the relaxation's optimum lies when the cardinality row does not bind),
        so the cutting planes start from a bound near the relaxation's value."""
        if "relaxed" not in self._cache:
            self._cache["relaxed"] = self.with_tangents(self.exact().relax(), [self.relaxed_fit()])
        return self._cache["relaxed"]

    @staticmethod
    def with_tangents(program: Program, points: Sequence[tuple[np.ndarray, float]]) -> Program:
        """``program`` (:meth:`exact` or its relaxation) with the tangent rows of its loss at ``points``
        (``(points, intercept)`` each) added to its cut pool (the last rows, block ``"cuts"``)."""
        if not points:
            return program
        rows, values = zip(*(program.lazy.tangent(coef, intercept)[:2] for coef, intercept in points))
        cuts = program.row_blocks["cuts"]
        return replace(program, A=sp.vstack([program.A, *rows], format="csr"),
                       row_lb=np.concatenate([program.row_lb, values]),
                       row_ub=np.concatenate([program.row_ub, np.full(len(values), np.inf)]),
                       row_blocks={**program.row_blocks, "cuts": slice(cuts.start, cuts.stop + len(values))})

    def _build(self) -> Program:
        """The exact program: the RiskSLIM MILP with its initial cut pool and the lazy tangent oracle."""
        cs, spec = self.coefficients, self.spec
        d = self.X.shape[1]
        lo, hi = self.intercept_bounds
        b = ProgramBuilder()
        b.add_variables("coef", d, lb=cs.lb, ub=cs.ub, integer=cs.integer)
        b.add_variables("intercept", 1, lb=lo, ub=hi, integer=True)
        b.add_variables("loss", 1, lb=self.loss_floor(), ub=np.inf, cost=1.0)
        b.add_variables("size", d, lb=self.forced.astype(float), ub=1.0, integer=True, cost=spec.c0 * cs.c0)
        eye = sp.identity(d, format="csr")
        b.add_rows("l0_upper", {"size": sp.diags(np.maximum(cs.ub, 0.0), format="csr"), "coef": -eye}, lb=0.0)
        b.add_rows("l0_lower", {"coef": eye, "size": -sp.diags(np.minimum(cs.lb, 0.0), format="csr")}, lb=0.0)
        if spec.max_size is not None:
            b.add_rows("max_size", {"size": np.ones((1, d))}, ub=float(spec.max_size))
        if self.constraints is not None:
            add_constraint_rows(b, self.constraints, coef_lb=cs.lb, coef_ub=cs.ub, integer=cs.integer,
                                used_block="size", formulation="RiskSLIM")
        base = b.build()
        oracle = LogisticCuts(self.data, base.blocks["coef"], base.blocks["intercept"].start,
                              base.blocks["loss"].start, base.n_variables, base.c.copy(), base.offset)
        rows, rhs = [], []
        for coef, intercept in self._pool_points():
            row, value, _ = oracle.tangent(coef, intercept)
            rows.append(row)
            rhs.append(value)
        pool = sp.vstack(rows, format="csr")
        program = replace(base, A=sp.vstack([base.A, pool], format="csr"),
                          row_lb=np.concatenate([base.row_lb, rhs]),
                          row_ub=np.concatenate([base.row_ub, np.full(len(rhs), np.inf)]),
                          row_blocks={**base.row_blocks, "cuts": slice(base.n_rows, base.n_rows + len(rhs))})
        return with_lazy(program, oracle)

    def _pool_points(self) -> list[tuple[np.ndarray, float]]:
        """Tangent points of the initial cut pool: zero model, the continuous fit, the segment between
        them, and the continuous fit rounded into the set."""
        d = self.X.shape[1]
        coef, b = self.continuous_fit()
        b_zero = float(np.clip(self._zero_intercept(), *self.intercept_bounds))
        points = [(np.zeros(d), b_zero)]
        points += [(t * coef, (1 - t) * b_zero + t * b) for t in (0.25, 0.5, 0.75, 1.0)]
        rounded = self.round(Model(coef, b))
        points.append((rounded.coef, rounded.intercept))
        return points

    # ------------------------------------------------------------ mappings
    def decode(self, x: np.ndarray) -> Model:
        """Coefficients and intercept of a solution vector, as solved (no rounding)."""
        p = self.exact()
        return Model(p.block(x, "coef").copy(), float(p.block(x, "intercept")[0]))

    def lift(self, model: Model) -> np.ndarray:
        """Full vector of :meth:`exact`: ``L`` at the true loss, indicators at ``coef != 0``."""
        p = self.exact()
        x = np.zeros(p.n_variables)
        x[p.blocks["coef"]] = model.coef
        x[p.blocks["intercept"]] = model.intercept
        x[p.blocks["loss"]] = self.loss(model)
        x[p.blocks["size"]] = self.used(model).astype(float)
        if self.constraints is not None:
            lift_constraint_blocks(x, p.blocks, model.coef, self.constraints, self.coefficients.lb,
                                   self.coefficients.ub)
        return x

    def constraint_violation(self, model: Model) -> float:
        """Largest violation of the operational constraints (0 when the model obeys them)."""
        return 0.0 if self.constraints is None else self.constraints.violation(model.coef, model.intercept)

    def ranking(self, model: Model) -> tuple[bool, float]:
        """Sort key of candidate models: those obeying the constraints first, then by objective."""
        return self.constraint_violation(model) > 1e-9, self.objective(model)

    def round(self, model: Model) -> Model:
        """Clip into the box, round integer points, keep the ``max_size`` largest (forced features
        first), then the best integer intercept for the rounded points (or the model's own, rounded,
        when only that one obeys the operational constraints)."""
        cs = self.coefficients
        coef = np.clip(np.asarray(model.coef, dtype=float), cs.lb, cs.ub)
        ints = cs.integer
        coef[ints] = np.clip(np.rint(coef[ints]), np.ceil(cs.lb[ints] - 1e-9), np.floor(cs.ub[ints] + 1e-9))
        k = self.spec.max_size
        if k is not None and np.count_nonzero(coef) > k:
            priority = np.abs(coef) * np.abs(self.X).mean(axis=0) + np.where(self.forced, np.inf, 0.0)
            keep = np.argsort(-priority, kind="stable")[:k]
            mask = np.zeros(coef.size, bool)
            mask[keep] = True
            coef = np.where(mask, coef, 0.0)
        b, _ = self.data.best_intercept(self.X @ coef, self.intercept_bounds, start=model.intercept)
        own = Model(coef, float(np.clip(np.rint(model.intercept), *self.intercept_bounds)))
        return min((Model(coef, float(b)), own), key=self.ranking)
