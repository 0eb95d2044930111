"""Penalised empirical risk as one program family: EYE and the baselines of EYE Tables 2-3.

:class:`PenalizedProgram` writes

.. math::

    \\min_{w, b}\\; \\frac{1}{n} \\sum_{i=1}^n s_i\\, \\ell(y_i, x_i^\\top w + b) + \\Omega(w)
    \\quad\\text{s.t.}\\quad w \\in \\mathcal{W}

with ``ell`` logistic (exponential cones), hinge (linear rows) or least squares (one SOC),
``Omega`` any penalty with a conic encoding (:mod:`formulations.conic_encodings`: L1, L2^2,
elastic net, weighted L1/L2^2, OWL, EYE, naive q, Facets...), and ``W`` the box and
integrality of a :class:`CoefficientSet` (free and continuous without one). This is the EYE
paper's ``L(theta) + n lambda J(theta)`` divided by ``n`` (Wang et al. 2018, section 3.1): our
``lam`` is the paper's ``lambda``.

``exact`` keeps integrality (a MILP for hinge with a linear penalty; a mixed-integer conic program
otherwise, which no backend here solves reliably), ``relaxed`` clears it, ``decode`` reads
``(coef, intercept)`` and ``lift`` turns a model into a feasible point of the program with the
same objective (every epigraph at its value).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from formulations.coefficients import CoefficientSet
from formulations.conic_encodings import LOSSES, add_loss, add_penalty, penalty_encoder
from formulations.program import Program, ProgramBuilder

WEIGHTS, INTERCEPT, LOSS, PENALTY = "w", "intercept", "loss", "penalty"


@dataclass(frozen=True)
class PenalizedProgram:
    """Builder of ``(1/n) sum_i s_i loss_i + penalty(w)`` (see module docstring).

    Parameters
    ----------
    penalty : a penalty object with a registered conic encoding (``formulations.penalties``).
    loss : ``"logistic"`` (y in {-1, +1}), ``"hinge"`` (y in {-1, +1}, ``margin``) or
        ``"squared"`` (``1/2 (y - z)^2``, real y).
    fit_intercept : add an unpenalised intercept ``b``.
    coefficients : per-feature box and integrality of ``w`` and intercept bounds (None: free).
    margin : hinge margin.
    """

    penalty: Any
    loss: str = "logistic"
    fit_intercept: bool = True
    coefficients: CoefficientSet | None = None
    margin: float = 1.0

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not self.margin > 0:
            raise ValueError(f"margin must be > 0, got {self.margin}")
        penalty_encoder(self.penalty)  # NotRepresentableError now, before any data is seen

    # ------------------------------------------------------------------ checks
    def _check(self, X, y, sample_weight):
        X = X if sp.issparse(X) else np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
        if self.loss != "squared" and not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError(f"the {self.loss} loss needs y in {{-1, +1}}; map 0/1 labels with 2*y - 1")
        if self.coefficients is not None and self.coefficients.d != X.shape[1]:
            raise ValueError(f"coefficients describe {self.coefficients.d} features but X has {X.shape[1]}")
        s = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return X, y, s

    def _build(self, X, y, s, integer: bool):
        n, d = X.shape
        b = ProgramBuilder()
        cs = self.coefficients
        if cs is None:
            b.add_variables(WEIGHTS, d)
        else:
            b.add_variables(WEIGHTS, d, lb=cs.lb, ub=cs.ub, integer=cs.integer & integer)
        if self.fit_intercept:
            lo, hi = (-np.inf, np.inf) if cs is None else cs.intercept_bounds(np.asarray(
                X.todense() if sp.issparse(X) else X), self.margin)
            b.add_variables(INTERCEPT, 1, lb=lo, ub=hi)
        options = {"margin": self.margin} if self.loss == "hinge" else {}
        loss_lift = add_loss(b, self.loss, X, y, weights=WEIGHTS,
                             intercept=INTERCEPT if self.fit_intercept else None,
                             sample_weight=s, name=LOSS, scale=1.0 / n, **options)
        penalty_lift = add_penalty(b, self.penalty, weights=WEIGHTS, name=PENALTY)
        return b, loss_lift, penalty_lift

    # ---------------------------------------------------------------- programs
    def exact(self, X, y, sample_weight=None) -> Program:
        """The program with ``w`` integer where the coefficient set says so."""
        X, y, s = self._check(X, y, sample_weight)
        return self._build(X, y, s, integer=True)[0].build()

    def relaxed(self, X, y, sample_weight=None) -> Program:
        """The continuous program (``exact`` with the integer mask cleared)."""
        return self.exact(X, y, sample_weight).relax()

    def decode(self, program: Program, x: np.ndarray) -> tuple[np.ndarray, float]:
        """``(coef, intercept)`` of a solution vector ``x`` of a program built here."""
        x = np.asarray(x, dtype=float)
        intercept = float(x[program.blocks[INTERCEPT]][0]) if INTERCEPT in program.blocks else 0.0
        return x[program.blocks[WEIGHTS]].copy(), intercept

    def lift(self, program: Program, X, y, coef, intercept: float = 0.0, sample_weight=None) -> np.ndarray:
        """Feasible point of ``program`` for the model ``(coef, intercept)``, each epigraph at its value.

        Its program objective equals :meth:`objective_value` (checked in the tests).
        """
        X, y, s = self._check(X, y, sample_weight)
        coef = np.asarray(coef, dtype=float)
        if coef.shape != (X.shape[1],):
            raise ValueError(f"coef has shape {coef.shape}; expected ({X.shape[1]},)")
        _, loss_lift, penalty_lift = self._build(X, y, s, integer=False)
        x = np.zeros(program.n_variables)
        x[program.blocks[WEIGHTS]] = coef
        if self.fit_intercept:
            x[program.blocks[INTERCEPT]] = intercept
        values = {**loss_lift(coef, intercept if self.fit_intercept else None), **penalty_lift(coef)}
        for name, value in values.items():
            x[program.blocks[name]] = value
        return x

    def objective_value(self, X, y, coef, intercept: float = 0.0, sample_weight=None) -> float:
        """``(1/n) sum_i s_i loss_i + penalty.value(coef)`` computed directly (no program)."""
        X, y, s = self._check(X, y, sample_weight)
        z = X @ np.asarray(coef, dtype=float) + (intercept if self.fit_intercept else 0.0)
        if self.loss == "logistic":
            losses = np.logaddexp(0.0, -y * z)
        elif self.loss == "hinge":
            losses = np.maximum(0.0, self.margin - y * z)
        else:
            losses = 0.5 * (y - z) ** 2
        return float(s @ losses) / y.size + float(self.penalty.value(np.asarray(coef, dtype=float)))
