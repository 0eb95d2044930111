"""Penalised empirical risk as one program family: the baselines of EYE Tables 2-3 and EYE itself.

An instance of :class:`PenalizedProgram` (or of :class:`formulations.eye.EYEPenalized`) writes

.. math::

    \\min_{w, b}\\; \\frac{1}{n} \\sum_{i=1}^n s_i\\, \\ell(y_i, x_i^\\top w + b) + \\Omega(w)
    \\quad\\text{s.t.}\\quad w \\in \\mathcal{W}

with ``ell`` logistic (exponential cones), hinge (linear rows) or least squares (one SOC),
``Omega`` any penalty with a conic encoding (:data:`formulations.conic_encodings.PENALTY_ENCODERS`:
L1, L2^2, elastic net, weighted L1/L2^2, OWL, EYE, naive q, Facets, SCF), and ``W`` the box and
integrality of a :class:`CoefficientSet` (free and continuous without one). This is the EYE
paper's ``L(theta) + n lambda J(theta)`` divided by ``n`` (Wang et al. 2018, section 3.1): the
penalty's ``lam`` is the paper's ``lambda``.

``exact()`` keeps the coefficient set's integrality (a MILP for hinge with a polyhedral penalty,
solved by HiGHS; a mixed-integer conic program otherwise, which no backend here solves
reliably, so the catalog lists no exact backend); ``relaxed()`` clears it. Blocks ``coef`` and
``intercept`` (fixed at 0 without ``fit_intercept``) come first, then the loss and penalty
epigraphs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from formulations.base import CachedPrograms, Model
from formulations.coefficients import CoefficientSet
from formulations.conic_encodings import LOSSES, add_loss, add_penalty, penalty_encoder
from formulations.penalties import L1
from formulations.program import Program, ProgramBuilder
from formulations.validation import check_number, check_training_set

COEF, INTERCEPT, LOSS, PENALTY = "coef", "intercept", "loss", "penalty"


def check_loss_choice(loss: str, margin: float) -> None:
    """The loss is one of :data:`LOSSES` and the hinge margin is positive (named errors)."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    check_number("margin", margin)


@dataclass(frozen=True)
class PenalizedProgram:
    """``(1/n) sum_i s_i loss_i + penalty(w)`` over ``w`` in a coefficient set (module docstring).

    Parameters
    ----------
    penalty : a penalty with a conic encoding (:mod:`formulations.penalties`); default ``L1(0.01)``.
    loss : ``"logistic"`` (y in {-1, +1}), ``"hinge"`` (y in {-1, +1}, ``margin``) or
        ``"least_squares"`` (``1/2 (y - z)^2``, real y).
    fit_intercept : fit an unpenalised intercept ``b`` (else ``b = 0``).
    coefficients : per-feature box and integrality of ``w`` and intercept bounds (None: free).
    margin : hinge margin.
    """

    penalty: Any = field(default_factory=lambda: L1(0.01))
    loss: str = "logistic"
    fit_intercept: bool = True
    coefficients: CoefficientSet | None = None
    margin: float = 1.0

    def __post_init__(self) -> None:
        check_loss_choice(self.loss, self.margin)
        penalty_encoder(self.penalty)  # NotRepresentableError now, before any data is seen

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> "PenalizedInstance":
        return bind(self, self.penalty, X, y, sample_weight, self.coefficients)


def bind(spec: Any, penalty: Any, X: Any, y: Any, sample_weight: Any,
         coefficients: CoefficientSet | None = None) -> "PenalizedInstance":
    """A :class:`PenalizedInstance` of ``spec`` (its ``loss``, ``fit_intercept``, ``margin``) with
    ``penalty`` on validated data."""
    X, y, s = check_training_set(X, y, sample_weight, labels="real" if spec.loss == "least_squares" else "binary")
    if coefficients is not None and coefficients.d != X.shape[1]:
        raise ValueError(f"coefficients describe {coefficients.d} features but X has {X.shape[1]}")
    return PenalizedInstance(spec, penalty, coefficients, X, y, s)


@dataclass(frozen=True)
class PenalizedInstance(CachedPrograms):
    """Penalised risk on data: programs, decode / lift / objective / round, and the composite form."""

    spec: Any
    penalty: Any
    coefficients: CoefficientSet | None
    X: np.ndarray | sp.csr_matrix = field(repr=False)
    y: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def info(self) -> dict[str, Any]:
        return {"n_rows": int(self.X.shape[0]), "penalty": type(self.penalty).__name__, "loss": self.spec.loss}

    def intercept_bounds(self) -> tuple[float, float]:
        if not self.spec.fit_intercept:
            return 0.0, 0.0
        if self.coefficients is None:
            return -np.inf, np.inf
        dense = self.X.toarray() if sp.issparse(self.X) else self.X
        return self.coefficients.intercept_bounds(dense, self.spec.margin)

    def _build(self) -> Program:
        n, d = self.X.shape
        b = ProgramBuilder()
        cs = self.coefficients
        if cs is None:
            b.add_variables(COEF, d)
        else:
            b.add_variables(COEF, d, lb=cs.lb, ub=cs.ub, integer=cs.integer)
        b.add_variables(INTERCEPT, 1, *self.intercept_bounds())
        options = {"margin": self.spec.margin} if self.spec.loss == "hinge" else {}
        loss_lift = add_loss(b, self.spec.loss, self.X, self.y, weights=COEF, intercept=INTERCEPT,
                             sample_weight=self.weights, name=LOSS, scale=1.0 / n, **options)
        penalty_lift = add_penalty(b, self.penalty, weights=COEF, name=PENALTY)
        self._cache["lifts"] = (loss_lift, penalty_lift)
        return b.build()

    def decode(self, x: np.ndarray) -> Model:
        """``coef`` and ``intercept`` of a solution vector of either program, as solved."""
        p = self.exact()
        x = np.asarray(x, dtype=float)
        if x.shape != (p.n_variables,):
            raise ValueError(f"x has shape {x.shape}; the program has {p.n_variables} variables")
        return Model(p.block(x, COEF).copy(), float(p.block(x, INTERCEPT)[0]))

    def lift(self, model: Model) -> np.ndarray:
        """Feasible point of :meth:`exact` for ``model``, every epigraph at its value (so its program
        objective is :meth:`objective`)."""
        p = self.exact()
        coef = np.asarray(model.coef, dtype=float)
        if coef.shape != (self.X.shape[1],):
            raise ValueError(f"coef has shape {coef.shape}; expected ({self.X.shape[1]},)")
        loss_lift, penalty_lift = self._cache["lifts"]
        x = np.zeros(p.n_variables)
        x[p.blocks[COEF]] = coef
        x[p.blocks[INTERCEPT]] = model.intercept
        for name, value in {**loss_lift(coef, model.intercept), **penalty_lift(coef)}.items():
            x[p.blocks[name]] = value
        return x

    def objective(self, model: Model) -> float:
        """``(1/n) sum_i s_i loss_i + penalty.value(coef)``, computed from the data (no program)."""
        coef = np.asarray(model.coef, dtype=float)
        z = np.asarray(self.X @ coef).ravel() + model.intercept
        if self.spec.loss == "logistic":
            losses = np.logaddexp(0.0, -self.y * z)
        elif self.spec.loss == "hinge":
            losses = np.maximum(0.0, self.spec.margin - self.y * z)
        else:
            losses = 0.5 * (self.y - z) ** 2
        return float(self.weights @ losses) / self.y.size + float(self.penalty.value(coef))

    def round(self, model: Model) -> Model:
        """Nearest model of :meth:`exact`: coefficients clipped to the coefficient set's box and the
        integer ones rounded, the intercept clipped (0 without ``fit_intercept``). Without a
        coefficient set the model is already feasible and comes back unchanged."""
        coef = np.asarray(model.coef, dtype=float).copy()
        cs = self.coefficients
        if cs is not None:
            coef = np.clip(coef, cs.lb, cs.ub)
            coef[cs.integer] = np.clip(np.round(coef[cs.integer]), np.ceil(cs.lb[cs.integer]),
                                       np.floor(cs.ub[cs.integer]))
        lo, hi = self.intercept_bounds()
        return Model(coef, float(np.clip(model.intercept, lo, hi)))

    def composite(self) -> tuple[Any, Any]:
        """``(loss, penalty)`` for the proximal path: the same objective (logistic or least squares,
        mean over rows), without a coefficient set and with equal sample weights."""
        from formulations.losses import LeastSquares, Logistic

        if self.spec.loss == "hinge":
            raise ValueError("the hinge loss is not smooth: the proximal path needs loss='logistic' or "
                             "'least_squares'; solve the hinge program with backend 'highs' or 'ecos'")
        if self.coefficients is not None:
            raise ValueError("the proximal path has no box or integrality: drop `coefficients` or use backend 'ecos'")
        if not np.all(self.weights == self.weights[0]) or self.weights[0] != 1.0:
            raise ValueError("the proximal path does not take sample weights; pass none, or use backend 'ecos'")
        make = Logistic if self.spec.loss == "logistic" else LeastSquares
        return make(self.X, self.y, fit_intercept=self.spec.fit_intercept), self.penalty


__all__ = ["PenalizedProgram", "PenalizedInstance", "bind", "check_loss_choice"]
