"""SLIM: Supersparse Linear Integer Model as a MILP (Ustun & Rudin 2016, Machine Learning 102).

With training rows merged into unique ``(x_i, y_i)`` with weights ``v_i`` (sample weight x class
weight, divided by the total sample weight, so the loss term is the weighted 0-1 error rate):

.. math::

    \\min_{\\lambda, \\lambda_0, z, a, t}\\;
        \\sum_i v_i z_i + C_0 \\sum_j c_{0,j} a_j + \\epsilon \\sum_j t_j

    \\text{s.t.}\\quad M_i z_i \\ge \\gamma - y_i (x_i \\cdot \\lambda + \\lambda_0)
        \\quad (0\\text{-}1 \\text{ loss by big-M, SLIM eq. 3})

    L_j a_j \\le \\lambda_j \\le U_j a_j \\quad (L_0 \\text{ indicator}), \\qquad
    t_j \\ge |\\lambda_j| \\quad (L_1 \\text{ tie-breaker}), \\qquad \\sum_j a_j \\le K

with ``lambda_j`` integer in ``[L_j, U_j]`` (a :class:`~formulations.coefficients.CoefficientSet`),
``z_i, a_j`` binary, ``gamma`` the ``margin``, and

* ``M_i = max(0, gamma + max over the box of -y_i (x_i . lambda + lambda_0))``: the tightest
  big-M implied by the coefficient and intercept bounds for row ``i``;
* ``epsilon``: the tie-breaker (SLIM section 3.1) must never trade accuracy or sparsity. Every
  value of ``loss + L0 = sum_i v_i z_i + C0 sum_j c0_j a_j`` is a sum of a subset of the numbers
  ``{v_i} u {C0 c0_j}``. When all of them are integer multiples of a unit ``u`` (always the case
  for unweighted data: ``u`` divides ``1/n`` and ``C0``), two different values of ``loss + L0``
  differ by at least ``u``, while the L1 terms of two models differ by at most
  ``Lmax = sum_j max(|L_j|, |U_j|)``. With ``epsilon = u / (2 Lmax)`` the L1 term changes the
  objective by less than ``u / 2``: a model with smaller ``loss + L0`` always has the smaller
  objective, so the L1 term only breaks ties. ``u`` is found exactly with rational arithmetic
  (:func:`common_unit`); when the weights have no common unit (arbitrary real weights) the
  tie-breaker is switched off (``epsilon = 0``) rather than risk a trade.

Merging identical rows is exact: they share the indicator ``z_i``. Units: the objective is in
"fraction of weighted training error"; ``C0`` is the error one feature must save to be used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sp

from formulations.base import CachedPrograms, Model
from formulations.coefficients import CoefficientSet
from formulations.constraint_rows import add_constraint_rows, lift_constraint_blocks
from formulations.constraints import CompiledConstraints, MaxFalsePositiveRate, check_constraints, compile_constraints
from formulations.intercept import margin_error_intercept
from formulations.program import Program, ProgramBuilder
from formulations.rows import is_integral, merge_rows, unique_rows
from formulations.support_rules import folded_coefficients
from formulations.validation import check_training_set

#: relative round-off allowed when a row is tested against its margin (see SLIMInstance.errors)
MARGIN_ROUNDOFF = 1e-9
#: most conflict pairs (rows z_p + z_q >= 1) added to the program (SLIMInstance.conflicting_rows)
MAX_CONFLICT_PAIRS = 20000
#: largest denominator accepted for the common unit of the weights (1e-9 resolution at most)
_MAX_DENOMINATOR = 10**9


def common_unit(values: np.ndarray, *, max_denominator: int = _MAX_DENOMINATOR) -> float:
    """Largest ``u > 0`` with every value an integer multiple of ``u``, or 0.0 if there is none.

    Each value is read as the fraction with denominator at most ``max_denominator`` closest to
    it; the fractions are accepted only if they reproduce the values to 1e-12 relative. Then
    ``u = gcd(numerators) / lcm(denominators)`` exactly.
    """
    values = np.asarray(values, dtype=float)
    values = values[values > 0]
    if values.size == 0:
        return 0.0
    numerator, denominator = 0, 1
    for v in np.unique(values):
        f = Fraction(float(v)).limit_denominator(max_denominator)
        if abs(float(f) - v) > 1e-12 * v:
            return 0.0
        denominator_new = denominator * f.denominator // math.gcd(denominator, f.denominator)
        numerator = math.gcd(numerator * (denominator_new // denominator), f.numerator * (denominator_new // f.denominator))
        denominator = denominator_new
        if denominator > max_denominator * 1000:
            return 0.0
    return numerator / denominator


@dataclass(frozen=True)
class SLIM:
    """Modelling choices of a SLIM MILP (see module docstring).

    Parameters
    ----------
    coefficients : per-feature integer set; None means ``CoefficientSet.uniform(d, coef_bound)``.
        Its features must be in the column order of ``X`` (estimators align them by name).
    coef_bound : U of the default coefficient set ``{-U..U}``.
    c0 : L0 cost ``C0`` per feature, in units of training error rate.
    margin : the score margin a row needs to count as correct. With integer data, integer points
        and an integer intercept, ``margin=1`` makes the loss exactly the 0-1 loss of
        ``sign(score)`` with ties counted as errors.
    max_size : optional maximum number of non-zero coefficients K.
    class_weight : ``(w_negative, w_positive)`` multipliers of the negative / positive rows.
    integer_intercept : None = integer exactly when ``X`` is integer-valued.
    merge_duplicates : merge identical ``(x, y)`` rows into one weighted row (exact; default), when
        that removes at least :data:`formulations.rows.MERGE_MIN_SHARE` of the rows (else the
        table is kept uncopied, repeats as rows of their own: the same program up to copies).
    constraints : operational constraints by feature name (:mod:`formulations.constraints`):
        groups, monotone points, implications, linear rows, and the performance rows
        ``MaxFalsePositiveRate`` / ``MinTruePositiveRate`` over the 0-1 error indicators (a tie
        ``score = 0`` counts as an error, so a false-positive bound holds for ``predict``).
    """

    coefficients: CoefficientSet | None = None
    coef_bound: int = 10
    c0: float = 1e-3
    margin: float = 1.0
    max_size: int | None = None
    class_weight: tuple[float, float] = (1.0, 1.0)
    integer_intercept: bool | None = None
    merge_duplicates: bool = True
    constraints: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "constraints", check_constraints(self.constraints))
        if not (isinstance(self.c0, (int, float)) and math.isfinite(self.c0) and self.c0 >= 0):
            raise ValueError(f"c0 must be a finite number >= 0, got {self.c0!r}")
        if not (isinstance(self.margin, (int, float)) and math.isfinite(self.margin) and self.margin > 0):
            raise ValueError(f"margin must be a finite number > 0, got {self.margin!r}")
        if not (isinstance(self.coef_bound, (int, float)) and math.isfinite(self.coef_bound) and self.coef_bound >= 0):
            raise ValueError(f"coef_bound must be a finite number >= 0, got {self.coef_bound!r}")
        if self.max_size is not None and (int(self.max_size) != self.max_size or self.max_size < 0):
            raise ValueError(f"max_size must be an integer >= 0 or None, got {self.max_size!r}")
        cw = tuple(self.class_weight)
        if (len(cw) != 2 or not all(isinstance(w, (int, float)) and math.isfinite(w) and w >= 0 for w in cw)
                or max(cw) <= 0):
            raise ValueError(f"class_weight must be two finite non-negative numbers (w_negative, w_positive), not both "
                             f"0; got {self.class_weight!r}")
        if self.coefficients is not None:
            self._check_coefficients(self.coefficients)

    def _check_coefficients(self, cs: CoefficientSet) -> None:
        """Refuse specifications that are infeasible on their face (no data needed)."""
        empty = cs.integer & (np.ceil(cs.lb - 1e-9) > np.floor(cs.ub + 1e-9))
        if empty.any():
            j = int(np.flatnonzero(empty)[0])
            raise ValueError(f"feature {cs.names[j]!r} must take an integer value in [{cs.lb[j]}, {cs.ub[j]}], which "
                             "holds none; widen its bounds or make it continuous")
        forced = (cs.lb > 0) | (cs.ub < 0) | cs.must_include
        if self.max_size is not None and int(forced.sum()) > self.max_size:
            names = [cs.names[j] for j in np.flatnonzero(forced)]
            raise ValueError(f"max_size={self.max_size} but {int(forced.sum())} features must be used (must-include or a "
                             f"range excluding 0: {names}); raise max_size or relax those features")
        lo, hi = cs.intercept_lb, cs.intercept_ub
        if self.integer_intercept and lo is not None and hi is not None and math.ceil(lo - 1e-9) > math.floor(hi + 1e-9):
            raise ValueError(f"the integer intercept must lie in [{lo}, {hi}], which holds no integer; widen the "
                             "intercept bounds or set integer_intercept=False")

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> "SLIMInstance":
        """Merge duplicate rows, compute weights, big-M values and bounds for this data."""
        X, y, sw = check_training_set(X, y, sample_weight)
        X = X.toarray() if sp.issparse(X) else X
        n, d = X.shape
        coefs = self.coefficients or CoefficientSet.uniform(d, self.coef_bound)
        if coefs.d != d:
            raise ValueError(f"coefficient set has {coefs.d} features but X has {d} columns")
        constraints = compile_constraints(self.constraints, coefs.names)
        coefs = folded_coefficients(coefs, constraints)  # (the sign rows as bounds, for every step)
        cw = np.where(y > 0, self.class_weight[1], self.class_weight[0])
        weights = sw * cw / sw.sum()
        if self.merge_duplicates:
            Xu, yu, wu = merge_rows(X, y, weights)
        else:
            keep = weights > 0
            Xu, yu, wu = X[keep], y[keep], weights[keep]
        if wu.size == 0:
            raise ValueError("every row has weight 0 after class and sample weights; give some rows positive weight")
        integral_x = bool(is_integral(Xu))
        int_icpt = integral_x and bool(coefs.integer.all()) if self.integer_intercept is None else self.integer_intercept
        if int_icpt and coefs.intercept_lb is not None and coefs.intercept_ub is not None:
            if math.ceil(coefs.intercept_lb - 1e-9) > math.floor(coefs.intercept_ub + 1e-9):
                raise ValueError(f"the integer intercept must lie in [{coefs.intercept_lb}, {coefs.intercept_ub}], "
                                 "which holds no integer; widen the intercept bounds")
        self._check_coefficients(coefs)
        smin, smax = coefs.score_range(Xu)
        lo, hi = coefs.intercept_bounds(Xu, self.margin, score_range=(smin, smax))
        if int_icpt:
            lo, hi = float(math.ceil(lo - 1e-9)), float(math.floor(hi + 1e-9))
        # worst case of margin - y (s + b) over the box
        worst = np.where(yu > 0, self.margin - (smin + lo), self.margin + (smax + hi))
        big_m = np.maximum(worst, 0.0)
        costs = self.c0 * coefs.c0
        unit = common_unit(np.concatenate([wu, costs]))
        eps = 0.5 * unit / max(float(coefs.magnitude.sum()), 1.0)
        return SLIMInstance(self, coefs, Xu, yu, wu, big_m, (lo, hi), int_icpt, eps, n_rows_in=n,
                            constraints=constraints)


@dataclass(frozen=True)
class SLIMInstance(CachedPrograms):
    """A SLIM problem on merged data: the exact MILP and its relaxation, decode / lift / round."""

    spec: SLIM
    coefficients: CoefficientSet
    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    big_m: np.ndarray
    intercept_bounds: tuple[float, float]
    integer_intercept: bool
    epsilon: float
    n_rows_in: int
    constraints: CompiledConstraints | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_rows_kept(self) -> int:
        """Number of distinct (x, y) rows after merging duplicates."""
        return self.X.shape[0]

    @property
    def info(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows_in, "n_rows_kept": self.n_rows_kept, "epsilon": self.epsilon,
                "intercept_bounds": self.intercept_bounds, "integer_intercept": self.integer_intercept}

    # ------------------------------------------------------------- program
    def _build(self) -> Program:
        """The exact program: the SLIM MILP of the module docstring."""
        cs, spec = self.coefficients, self.spec
        n, d = self.X.shape
        b = ProgramBuilder()
        b.add_variables("coef", d, lb=cs.lb, ub=cs.ub, integer=cs.integer)
        lo, hi = self.intercept_bounds
        b.add_variables("intercept", 1, lb=lo, ub=hi, integer=self.integer_intercept)
        b.add_variables("loss", n, lb=0.0, ub=1.0, integer=True, cost=self.weights)
        forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
        b.add_variables("size", d, lb=forced.astype(float), ub=1.0, integer=True, cost=spec.c0 * cs.c0)
        b.add_variables("abs", d, lb=0.0, ub=cs.magnitude, cost=self.epsilon)
        # M_i z_i + y_i x_i . lambda + y_i lambda_0 >= margin
        yX = sp.csr_matrix(self.X * self.y[:, None])
        b.add_rows("zero_one", {"loss": sp.diags(self.big_m, format="csr"), "coef": yX,
                                "intercept": sp.csr_matrix(self.y[:, None])}, lb=spec.margin)
        eye = sp.identity(d, format="csr")
        b.add_rows("l0_upper", {"size": sp.diags(np.maximum(cs.ub, 0.0), format="csr"), "coef": -eye}, lb=0.0)
        b.add_rows("l0_lower", {"coef": eye, "size": -sp.diags(np.minimum(cs.lb, 0.0), format="csr")}, lb=0.0)
        b.add_rows("l1_pos", {"abs": eye, "coef": -eye}, lb=0.0)
        b.add_rows("l1_neg", {"abs": eye, "coef": eye}, lb=0.0)
        if spec.max_size is not None:
            b.add_rows("max_size", {"size": np.ones((1, d))}, ub=float(spec.max_size))
        pos, neg = self.conflicting_rows()
        if pos.size:
            k = np.arange(pos.size)
            pairs = sp.csr_matrix((np.ones(2 * pos.size), (np.r_[k, k], np.r_[pos, neg])), shape=(pos.size, n))
            b.add_rows("conflicts", {"loss": pairs}, lb=1.0)
        if self.constraints is not None:
            add_constraint_rows(b, replace(self.constraints, performance=()), coef_lb=cs.lb, coef_ub=cs.ub,
                                integer=cs.integer, used_block="size", formulation="SLIM")
            for con, (rows, cap) in zip(self.constraints.performance, self._performance_rows()):
                b.add_rows(f"performance_{type(con).__name__}", {"loss": rows}, ub=cap)
        return b.build()

    def _performance_rows(self) -> list[tuple[sp.csr_matrix, float]]:
        """For each performance constraint: ``(row over the error indicators, cap)``.

        The rows carry the sample weights without class weights (the rates are of the data):
        false positives are errors of negative rows, ``sum_neg w z <= rate * sum_neg w``; a
        sensitivity bound caps the errors of positive rows at ``(1 - rate) * sum_pos w``.
        """
        cw = np.where(self.y > 0, self.spec.class_weight[1], self.spec.class_weight[0])
        raw = np.divide(self.weights, cw, out=np.zeros_like(self.weights), where=cw > 0)
        out = []
        for con in self.constraints.performance:
            side = self.y < 0 if isinstance(con, MaxFalsePositiveRate) else self.y > 0
            share = con.rate if isinstance(con, MaxFalsePositiveRate) else 1.0 - con.rate
            row = sp.csr_matrix(np.where(side, raw, 0.0)[None, :])
            out.append((row, float(share * raw[side].sum())))
        return out

    def constraint_violation(self, model: Model) -> float:
        """Largest violation of the operational constraints (rows at ``used = points != 0`` and the
        performance rows at the model's 0-1 errors); 0 when the model obeys them all."""
        if self.constraints is None:
            return 0.0
        v = self.constraints.violation(model.coef, model.intercept)
        if self.constraints.performance:
            z = self.errors(model)
            v = max([v] + [float((row @ z)[0]) - cap for row, cap in self._performance_rows()])
        return max(v, 0.0)

    def conflicting_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (positive row ``p``, negative row ``q``) of merged rows of which at most one is
        correct, for every model in the coefficient set: ``z_p + z_q >= 1`` is valid.

        ``p`` is correct iff ``s_p + b >= margin`` and ``q`` iff ``s_q + b <= -margin``, so both
        cannot hold when ``s_p <= s_q`` for every allowed ``lambda``: when the rows agree on every
        feature whose points may take both signs, and on the others ``x_pj <= x_qj`` where the
        points are ``>= 0`` (``>=`` where they are ``<= 0``): the row is *dominated* (with no sign
        constraint, the rows are equal). The cuts are exact for the 0-1 loss (they remove only
        fractional LP points) and tighten the big-M relaxation where it lets both rows be half
        right. At most :data:`MAX_CONFLICT_PAIRS` pairs are kept (the heaviest; any subset is
        valid); the pairwise test runs over the rows that share the two-signed features' values,
        in blocks.
        """
        cs = self.coefficients
        unused = (cs.lb == 0) & (cs.ub == 0)
        signed = ((cs.lb >= 0) | (cs.ub <= 0)) & ~unused
        two_signed = ~signed & ~unused
        _, group = unique_rows(self.X[:, two_signed]) if two_signed.any() else (None, np.zeros(self.X.shape[0], int))
        oriented = self.X[:, signed] * np.where(cs.lb[signed] >= 0, 1.0, -1.0)
        positive = self.y > 0
        pairs_p, pairs_q = [], []
        order = np.argsort(group, kind="stable")
        bounds = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:]):
            rows = order[a:b]
            P, Q = rows[positive[rows]], rows[~positive[rows]]
            if P.size == 0 or Q.size == 0:
                continue
            step = max(1, int(2e7 // max(Q.size * max(oriented.shape[1], 1), 1)))
            for i in range(0, P.size, step):
                block = P[i:i + step]
                below = np.all(oriented[block][:, None, :] <= oriented[Q][None, :, :], axis=2)
                bp, bq = np.nonzero(below)
                pairs_p.append(block[bp])
                pairs_q.append(Q[bq])
        if not pairs_p:
            return np.zeros(0, int), np.zeros(0, int)
        p, q = np.concatenate(pairs_p), np.concatenate(pairs_q)
        if p.size > MAX_CONFLICT_PAIRS:
            keep = np.sort(np.argsort(-(self.weights[p] + self.weights[q]), kind="stable")[:MAX_CONFLICT_PAIRS])
            p, q = p[keep], q[keep]
        return p, q

    # ------------------------------------------------------------ mappings
    def decode(self, x: np.ndarray) -> Model:
        """Coefficients and intercept of a solution vector, as solved (no rounding)."""
        p = self.exact()
        return Model(p.block(x, "coef").copy(), float(p.block(x, "intercept")[0]))

    def errors(self, model: Model) -> np.ndarray:
        """Per merged row: 1 where the row misses the margin, ``y_i (x_i . coef + b) < margin``.

        The comparison allows a relative round-off of :data:`MARGIN_ROUNDOFF` (``1e-9 (1 + |s_i| +
        |b|)``): a row exactly on its margin (e.g. a positive and a negative row that both hold
        only at ``b = margin - s_i = -margin - s_k``) counts as correct however the sum rounds.
        """
        scores = self.X @ model.coef
        slack = MARGIN_ROUNDOFF * (1.0 + np.abs(scores) + abs(model.intercept))
        return (self.y * (scores + model.intercept) < self.spec.margin - slack).astype(float)

    def used(self, model: Model) -> np.ndarray:
        """L0 indicators: feature used (non-zero points) or forced into the model."""
        cs = self.coefficients
        return ((model.coef != 0) | cs.must_include | (cs.lb > 0) | (cs.ub < 0)).astype(float)

    def lift(self, model: Model) -> np.ndarray:
        """Full solution vector of :meth:`exact` for a model: fills loss, size and abs blocks."""
        p = self.exact()
        x = np.zeros(p.n_variables)
        x[p.blocks["coef"]] = model.coef
        x[p.blocks["intercept"]] = model.intercept
        x[p.blocks["loss"]] = self.errors(model)
        x[p.blocks["size"]] = self.used(model)
        x[p.blocks["abs"]] = np.abs(model.coef)
        if self.constraints is not None:
            lift_constraint_blocks(x, p.blocks, model.coef, self.constraints, self.coefficients.lb,
                                   self.coefficients.ub)
        return x

    def objective(self, model: Model) -> float:
        """SLIM objective ``sum_i v_i z_i + C0 sum_j c0_j a_j + epsilon ||coef||_1`` from the data."""
        return float(self.weights @ self.errors(model) + self.spec.c0 * (self.coefficients.c0 @ self.used(model))
                     + self.epsilon * np.abs(model.coef).sum())

    def round(self, model: Model) -> Model:
        """Nearest model in the coefficient set: clip, round, keep ``max_size``, best intercept.

        Coefficients are clipped to their bounds and rounded where integer; if more than
        ``max_size`` features are used, the smallest free ones are set to 0 (or to the bound
        nearest 0 for features whose range excludes 0, which are always counted as used). The
        intercept is then re-optimised exactly (:func:`formulations.intercept.margin_error_intercept`)
        and compared with the model's own intercept (clipped, rounded when integer): the better
        one is kept, so for a solver's near-integral solution the rounded model is never worse
        than the solver's own (among the candidates that obey the operational constraints, when one does).
        """
        cs = self.coefficients
        coef = np.clip(model.coef, cs.lb, cs.ub)
        coef = np.where(cs.integer, np.clip(np.round(coef), np.ceil(cs.lb - 1e-9), np.floor(cs.ub + 1e-9)), coef)
        k = self.spec.max_size
        if k is not None:
            forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
            free_used = np.flatnonzero((coef != 0) & ~forced)
            excess = int(((coef != 0) | forced).sum()) - k
            if excess > 0:
                drop = free_used[np.argsort(np.abs(coef[free_used]), kind="stable")[:excess]]
                coef = coef.copy()
                coef[drop] = 0.0
        lo, hi = self.intercept_bounds
        own = float(np.clip(np.round(model.intercept) if self.integer_intercept else model.intercept, lo, hi))
        return min((self.with_best_intercept(coef), Model(coef, own)),
                   key=lambda m: (self.constraint_violation(m) > 1e-9, self.objective(m)))

    def with_best_intercept(self, coef: np.ndarray) -> Model:
        """The model ``coef`` with the intercept that minimises its weighted margin error."""
        b, _ = margin_error_intercept(self.X @ coef, self.y, self.weights, self.spec.margin, self.intercept_bounds,
                                      self.integer_intercept)
        return Model(coef, b)
