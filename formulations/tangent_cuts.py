"""Tangent cuts of a sum of per-sample convex 1-D losses: the lazy oracle of a cutting-plane Program.

A program whose objective holds ``sum_i c_i f(z_i)`` with ``z = M x + o`` (one affine argument per
sample, ``f`` a convex loss of :data:`formulations.losses.LOSS_1D`) is written with epigraph
variables ``t_i`` (cost ``c_i``) and only a few tangent rows ``t_i >= f(z0) + f'(z0) (z_i - z0)``;
tangents under-estimate the convex ``f``, so the program is a relaxation and its dual bound is
valid for the true objective (Kelley's cutting planes; Duran & Grossmann 1986 outer approximation
for a loss that is a sum of 1-D convex terms). The :class:`TangentCuts` oracle, carried as
``Program.lazy``, adds the missing tangents on demand:

* ``cuts(x) -> (rows, lb)``: the tangents at ``x``'s arguments of every sample whose ``t_i`` is
  below ``f(z_i)`` by more than :attr:`TangentCuts.tolerance` (rows over all variables);
* ``value(x)``: the objective with each ``t_i`` replaced by ``f(z_i)`` (the true objective);
* ``polish(x)``: the same point with the intercept (one column of ``M``) re-optimised exactly and
  ``t_i = f(z_i)``: a feasible point at least as good, for incumbents.

When the program has one variable ``z_i`` per sample (rows ``z = M x + o``), tangents are written
on ``(t_i, z_i)`` only: two non-zeros per row.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from formulations.losses import LOSS_1D

#: absolute shortfall ``f(z_i) - t_i`` above which a sample's tangent is returned (above the
#: 1e-9 feasibility tolerance used for rows, so a tangent already added is not "violated" again)
CUT_TOLERANCE = 1e-9
#: starting tangent points of the outer approximation (both sides of the kink / curvature at 0)
INITIAL_POINTS = (-2.0, 0.0, 2.0)


@dataclass(frozen=True, repr=False)
class TangentCuts:
    """Lazy oracle of the per-sample loss epigraph ``t_i >= f(z_i)`` (module docstring).

    Attributes
    ----------
    loss : name of ``f`` in :data:`formulations.losses.LOSS_1D`.
    argument : (n, n_variables) CSR ``M``; ``offset`` (n,) ``o``: ``z = M x + o``.
    loss_block : slice of the epigraph variables ``t`` in the program.
    weights : (n,) objective cost ``c_i`` of ``t_i``.
    c, constant : the program's objective vector and offset (for :meth:`value`).
    argument_block : slice of variables ``z`` (rows ``z = M x + o`` in the program) or None.
    intercept : index of the variable :meth:`polish` re-optimises (None: no polishing), with its
        bounds ``intercept_bounds``.
    tolerance : see :data:`CUT_TOLERANCE`.
    """

    loss: str
    argument: sp.csr_matrix
    offset: np.ndarray
    loss_block: slice
    weights: np.ndarray
    c: np.ndarray
    constant: float = 0.0
    argument_block: slice | None = None
    intercept: int | None = None
    intercept_bounds: tuple[float, float] = (-np.inf, np.inf)
    tolerance: float = CUT_TOLERANCE

    def __post_init__(self) -> None:
        if self.loss not in LOSS_1D:
            raise ValueError(f"loss must be one of {sorted(LOSS_1D)}, got {self.loss!r}")

    def __repr__(self) -> str:
        return f"TangentCuts({self.loss}, {self.offset.size} samples, {self.n_variables} variables)"

    @property
    def n_variables(self) -> int:
        return self.argument.shape[1]

    def arguments(self, x: np.ndarray) -> np.ndarray:
        """Loss arguments ``z = M x + o`` at a full vector ``x``."""
        return self.argument @ np.asarray(x, dtype=float) + self.offset

    def tangents(self, z0: np.ndarray, samples: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Rows ``t_i - f'(z0) z_i >= f(z0) - f'(z0) z0`` (one per entry of ``samples``) and their bounds."""
        value, slope = LOSS_1D[self.loss]
        z0 = np.asarray(z0, dtype=float).reshape(-1)
        samples = np.asarray(samples, dtype=np.int64).reshape(-1)
        g = slope(z0)
        k = np.arange(samples.size)
        t_rows = sp.csr_matrix((np.ones(samples.size), (k, self.loss_block.start + samples)),
                               shape=(samples.size, self.n_variables))
        if self.argument_block is not None:
            z_rows = sp.csr_matrix((-g, (k, self.argument_block.start + samples)), shape=t_rows.shape)
        else:
            z_rows = sp.diags(-g) @ self.argument[samples]
        return (t_rows + z_rows).tocsr(), value(z0) - g * z0

    def cuts(self, x: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Tangents at ``x``'s arguments for the samples whose ``t_i < f(z_i) - tolerance``."""
        x = np.asarray(x, dtype=float)
        z = self.arguments(x)
        violated = np.flatnonzero(x[self.loss_block] < LOSS_1D[self.loss][0](z) - self.tolerance)
        return self.tangents(z[violated], violated)

    def value(self, x: np.ndarray) -> float:
        """Objective of ``x`` with every ``t_i`` replaced by ``f(z_i)`` (the true objective)."""
        x = np.asarray(x, dtype=float)
        c = self.c
        linear = float(c @ x) - float(c[self.loss_block] @ x[self.loss_block])
        return linear + float(self.weights @ LOSS_1D[self.loss][0](self.arguments(x))) + self.constant

    def polish(self, x: np.ndarray) -> np.ndarray:
        """``x`` with the intercept minimising the true objective and ``z``, ``t`` at their values.

        The true objective is convex in the intercept (a column ``m`` of ``M``), so its derivative
        ``sum_i c_i f'(z_i) m_i + c_b`` is bisected on the intercept's bounds (100 halvings of a
        finite box: machine precision). The result satisfies every tangent row (tangents lie below
        ``f``): a valid incumbent whose :meth:`value` is at most that of ``x``.
        """
        x = np.array(x, dtype=float)
        j = self.intercept
        if j is not None:
            lo, hi = self.intercept_bounds
            column = self.argument[:, j].toarray().ravel()
            base = self.arguments(x) - column * x[j]
            slope = LOSS_1D[self.loss][1]

            def derivative(b: float) -> float:
                return float(self.weights @ (slope(base + column * b) * column)) + float(self.c[j])

            if hi > lo and np.isfinite(lo) and np.isfinite(hi):
                if derivative(lo) >= 0:
                    x[j] = lo
                elif derivative(hi) <= 0:
                    x[j] = hi
                else:
                    a, b = lo, hi
                    for _ in range(100):
                        mid = 0.5 * (a + b)
                        if mid in (a, b):
                            break
                        a, b = (mid, b) if derivative(mid) < 0 else (a, mid)
                    x[j] = 0.5 * (a + b)
        z = self.arguments(x)
        if self.argument_block is not None:
            x[self.argument_block] = z
        x[self.loss_block] = LOSS_1D[self.loss][0](z)
        return x
