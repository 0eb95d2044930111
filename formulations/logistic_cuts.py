"""The logistic loss on merged rows and its tangent-cut oracle (the ``lazy`` oracle of a Program).

Used by :mod:`formulations.riskslim` (Ustun & Rudin 2019, eq. 3: the loss replaced by one epigraph
variable cut by tangents). Tangents under-estimate the convex loss, so a bound proved on a program
cut by them bounds the true objective; :meth:`LogisticCuts.value` is the true objective of a solution.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from formulations.program import Program

#: absolute loss shortfall ``l(theta) - L`` below which a solution counts as matching its loss
#: (above the solvers' 1e-9 feasibility tolerance, so a repeated tangent is never "violated")
CUT_TOLERANCE = 1e-8
#: largest lookup table of log(1 + e^-s) (integer margins in [-R, R], 2R + 1 entries)
MAX_TABLE = 2_000_001


def softplus_neg(z: np.ndarray) -> np.ndarray:
    """``log(1 + exp(-z))`` without overflow."""
    return np.logaddexp(0.0, -z)


def sigmoid_neg(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(z))`` = minus the derivative of ``log(1 + exp(-z))``."""
    return np.exp(-np.logaddexp(0.0, z))


@dataclass(frozen=True, repr=False)
class LogisticData:
    """Merged rows ``(X, y, v)`` and the vectorised logistic loss ``sum_i v_i log(1 + e^{-y_i s_i / m})``.

    ``scale`` is the multiplier ``m`` of the risk score (FasterRisk, Liu et al. 2022): the risk is
    the logistic of the total score divided by ``m`` (RiskSLIM's own problem has ``m = 1``).
    """

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    table: np.ndarray | None = None  # log(1 + e^(-k / scale)) for integer k in [-R, R]
    radius: int = 0
    scale: float = 1.0

    def __repr__(self) -> str:
        return f"LogisticData({self.X.shape[0]} rows, {self.X.shape[1]} features, table={self.table is not None})"

    def loss_of_scores(self, scores: np.ndarray, intercept: float) -> float:
        """Loss for scores ``x_i . lambda`` and an intercept (lookup table when both are integers)."""
        z = self.y * (scores + intercept)
        if self.table is not None:
            k = np.rint(z)
            if np.array_equal(k, z) and np.abs(k).max(initial=0) <= self.radius:
                return float(self.weights @ self.table[k.astype(np.int64) + self.radius])
        return float(self.weights @ softplus_neg(z / self.scale))

    def loss(self, coef: np.ndarray, intercept: float) -> float:
        return self.loss_of_scores(self.X @ coef, intercept)

    def gradient(self, coef: np.ndarray, intercept: float) -> tuple[float, np.ndarray, float]:
        """``(l, dl/dcoef, dl/dintercept)`` at one model."""
        z = self.y * (self.X @ coef + intercept) / self.scale
        r = -self.weights * self.y * sigmoid_neg(z) / self.scale
        return float(self.weights @ softplus_neg(z)), self.X.T @ r, float(r.sum())

    def best_intercept(self, scores: np.ndarray, bounds: tuple[float, float], start: float = 0.0) -> tuple[int, float]:
        """Integer intercept in ``bounds`` minimising the loss for fixed scores, and that loss.

        The loss is convex in the intercept. With the lookup table and integer scores, a galloping
        integer walk from ``start`` stops where both neighbours are no better (the integer optimum,
        by convexity); otherwise a bracketed Newton search finds the real minimiser (clipped to the
        bounds) and the better of its floor and ceiling is the integer optimum.
        """
        lo, hi = int(math.ceil(bounds[0])), int(math.floor(bounds[1]))
        if self.table is not None:
            ys = self.y * scores
            k = np.rint(ys)
            if np.array_equal(k, ys) and np.abs(k).max(initial=0) + max(abs(lo), abs(hi)) <= self.radius:
                return self._walk(k.astype(np.int64) + self.radius, lo, hi, start)
        return self._newton(scores, lo, hi, start)

    def _walk(self, base: np.ndarray, lo: int, hi: int, start: float) -> tuple[int, float]:
        signs, table, w = self.y.astype(np.int64), self.table, self.weights

        def f(b: int) -> float:
            return float(w @ table[base + signs * b])

        b = int(np.clip(round(start), lo, hi))
        fb = f(b)
        improved = True
        while improved:
            improved = False
            for direction in (1, -1):
                step = 1
                while True:
                    nb = min(max(b + direction * step, lo), hi)
                    if nb == b:
                        break
                    fn = f(nb)
                    if fn < fb:
                        b, fb, step, improved = nb, fn, 2 * step, True
                    elif step > 1:
                        step = 1
                    else:
                        break
        return b, fb

    def _newton(self, scores: np.ndarray, lo: int, hi: int, start: float) -> tuple[int, float]:
        y, w = self.y, self.weights

        def derivative(b: float) -> tuple[float, float]:
            p = sigmoid_neg(y * (scores + b) / self.scale)
            return float(-(w * y) @ p) / self.scale, float(w @ (p * (1.0 - p))) / self.scale ** 2

        b = float(np.clip(start, lo, hi))
        a, c = float(lo), float(hi)
        for _ in range(60):
            g, h = derivative(b)
            if g > 0:
                c = b
            else:
                a = b
            if c - a < 1e-7 or abs(g) < 1e-12:
                break
            step = b - g / h if h > 1e-300 else 0.5 * (a + c)
            b = step if a < step < c else 0.5 * (a + c)
        candidates = {min(max(math.floor(b), lo), hi), min(max(math.ceil(b), lo), hi)}
        values = {k: self.loss_of_scores(scores, float(k)) for k in candidates}
        best = min(values, key=lambda k: (values[k], abs(k)))
        return best, values[best]


def _one_row(row: np.ndarray) -> sp.csr_matrix:
    """``row`` (dense, 1-D) as a 1 x n CSR matrix of its non-zeros, built from its arrays directly (the
    generic constructor goes through COO: several times slower, once per cut)."""
    cols = np.flatnonzero(row)
    return sp.csr_matrix((row[cols], cols, np.array([0, cols.size])), shape=(1, row.size))


@dataclass(frozen=True)
class LogisticCuts:
    """Lazy oracle of the RiskSLIM program: tangent rows of the loss and the true objective.

    ``cuts(x)`` returns ``(rows, lb)`` with ``rows @ x' >= lb`` the tangent at ``x``'s model (one CSR
    row over all program variables), or zero rows when ``x``'s loss variable already matches the
    loss within :data:`CUT_TOLERANCE`. ``value(x)`` is the program objective with ``L`` replaced by
    the true loss. The bound of a program solved under this oracle is below the true optimum by at
    most :attr:`tolerance`.
    """

    data: LogisticData
    coef: slice
    intercept: int
    loss_index: int
    n_variables: int
    c: np.ndarray
    offset: float
    tolerance: float = CUT_TOLERANCE
    polisher: Any = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"LogisticCuts({self.data.X.shape[0]} rows, {self.n_variables} variables, tolerance={self.tolerance:g})"

    def polish(self, x: np.ndarray) -> np.ndarray:
        """A feasible vector at least as good as ``x`` near it (the formulation's polisher; ``x`` itself
        when there is none or ``x`` is fractional)."""
        x = np.asarray(x, dtype=float)
        return x.copy() if self.polisher is None else self.polisher(x)

    def model(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        x = np.asarray(x, dtype=float)
        return x[self.coef], float(x[self.intercept])

    def tangent(self, coef: np.ndarray, intercept: float) -> tuple[sp.csr_matrix, float, float]:
        """Row and right-hand side of ``L >= l(theta0) + grad . (theta - theta0)``; also ``l(theta0)``."""
        value, g_coef, g_b = self.data.gradient(coef, intercept)
        row = np.zeros(self.n_variables)
        row[self.coef] = -g_coef
        row[self.intercept] = -g_b
        row[self.loss_index] = 1.0
        rhs = value - float(g_coef @ coef) - g_b * intercept
        return _one_row(row), rhs, value

    def cuts(self, x: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        coef, b = self.model(x)
        if np.asarray(x, dtype=float)[self.loss_index] >= self.data.loss(coef, b) - self.tolerance:
            return sp.csr_matrix((0, self.n_variables)), np.zeros(0)
        row, rhs, _ = self.tangent(coef, b)
        return row, np.array([rhs])

    def cutoff_rows(self, value: float) -> tuple[sp.csr_matrix, np.ndarray]:
        """Rows valid for every solution of objective at most ``value`` (RiskSLIM's bound tightening
        from the incumbent, Ustun & Rudin 2019, section 4.2): such a solution has loss at most
        ``value - (c x minus the loss term) <= value`` (other costs are non-negative), and each merged
        row's share ``v_i log(1 + e^{-z_i / m})`` is at most the loss, so its margin
        ``z_i = y_i (x_i . coef + intercept) >= -m log(expm1(value / v_i))`` (``m`` the multiplier).
        Only rows where that bound is finite and informative (below 50 m in magnitude) are returned."""
        data = self.data
        if not np.isfinite(value) or value <= 0 or np.any(self.c < 0):
            return sp.csr_matrix((0, self.n_variables)), np.zeros(0)
        with np.errstate(over="ignore"):
            reach = data.scale * np.log(np.expm1(np.minimum(value / data.weights, 700.0)))
        keep = np.flatnonzero(reach < 50.0 * data.scale)
        full = np.zeros((keep.size, self.n_variables))
        full[:, self.coef] = data.X[keep] * data.y[keep, None]
        full[:, self.intercept] = data.y[keep]
        return sp.csr_matrix(full), -reach[keep]

    def value(self, x: np.ndarray) -> float:
        x = np.asarray(x, dtype=float)
        coef, b = self.model(x)
        rest = float(self.c @ x) - self.c[self.loss_index] * x[self.loss_index]
        return rest + self.c[self.loss_index] * self.data.loss(coef, b) + self.offset


@dataclass(frozen=True, repr=False)
class _LazyProgram(Program):
    """Stand-in used only while :class:`~formulations.program.Program` has no ``lazy`` field."""

    lazy: Any = None


def with_lazy(program: Program, oracle: Any) -> Program:
    """``program`` carrying the lazy oracle (``Program.lazy`` when it exists, else the stand-in)."""
    if "lazy" in {f.name for f in fields(Program)}:
        return replace(program, lazy=oracle)
    return _LazyProgram(**{f.name: getattr(program, f.name) for f in fields(program)}, lazy=oracle)
