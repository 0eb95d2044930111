"""EYEClassifier: logistic regression with the EYE penalty (Wang et al., KDD 2018, eq. 2).

The model minimises ``(1/n) sum_i s_i log(1 + exp(-y_i (x_i . theta + b))) + lam * eye(theta)``,
``eye(theta) = ||(1-r) . theta||_1 + sqrt(||(1-r) . theta||_1^2 + ||r . theta||_2^2)``, with
``r`` the known-factor mask given by the expert (feature names, a boolean vector, or fractions
in [0, 1], section 3.4). The formulation is :class:`formulations.eye.EYEPenalized` (catalog
``"eye"``); its convex program (exponential cones + one SOC) is solved through
:func:`solvers.pipeline.run` by ECOS (default) or Clarabel, or by the proximal path (FISTA with
the EYE prox).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from formulations.base import Model
from formulations.eye import EYEPenalized
from milpscore.credibility import average_precision, sparsity
from milpscore.estimators.base import IntegerLinearClassifier
from solvers.limits import Limits

SOLVERS = ("ecos", "clarabel", "prox")
#: options of the proximal path: a certified relative duality gap of 1e-9
PROX_OPTIONS = {"tol": 1e-9, "max_iter": 100_000}


def known_factor_mask(known: Any, names: Sequence[str]) -> np.ndarray:
    """The mask ``r`` (shape (d,), entries in [0, 1]) from names, a boolean vector or fractions.

    ``known`` may be None (no known factor: EYE is then twice the lasso), a list of feature
    names, or an array of length d (bool, 0/1 or fractions).
    """
    d = len(names)
    if known is None:
        return np.zeros(d)
    items = list(known) if not isinstance(known, str) else [known]
    if items and all(isinstance(k, str) for k in items):
        unknown = sorted(set(items) - set(names))
        if unknown:
            raise ValueError(f"known factors {unknown} are not feature names; known names: {list(names)[:20]}")
        return np.isin(np.array(names, dtype=object), items).astype(float)
    r = np.asarray(known, dtype=float).reshape(-1)
    if r.size != d:
        raise ValueError(f"known has {r.size} entries but X has {d} features; give one per feature or a list of names")
    if not np.all(np.isfinite(r)) or np.any(r < 0) or np.any(r > 1):
        raise ValueError("known must be feature names, a boolean mask or fractions in [0, 1]")
    return r


class EYEClassifier(IntegerLinearClassifier):
    """Credible sparse logistic regression with the EYE penalty.

    Parameters
    ----------
    known : list of str, array of bool / float in [0, 1], or None
        Known (expert) risk factors ``r``: by feature name or as a mask over the columns.
    lam : float
        Penalty weight ``lambda`` (the paper's, since the loss is averaged over samples).
    fit_intercept : bool
        Fit an unpenalised intercept.
    solver : {"ecos", "clarabel", "prox"}
        Conic backend (``solvers.backends.ecos`` directly, or Clarabel through cvxpy), or the proximal path
        (FISTA with the EYE prox, no sample weights).
    zero_tol : float
        Weights with ``|theta_j| <= zero_tol * max(1, max_k |theta_k|)`` are set to 0 (an
        interior-point method stops about 1e-8 away from exact zeros).
    solver_options : dict or None
        Passed to the backend (e.g. ``{"max_iters": 200}`` for ECOS, ``{"tol": 1e-7}`` for prox).
    verbose : print the solver's log.

    Attributes
    ----------
    coef_, intercept_, classes_, fit_, result_, status_, gap_, objective_, bound_, scorecard_,
    known_mask_ (the ``r`` used), fit_info_ (adds ``objective`` of the thresholded model, ``ap``
    when ``r`` is binary with a known factor, ``sparsity``).
    """

    _card_title = "EYE model (real-valued points)"

    def __init__(self, known: Any = None, lam: float = 0.01, fit_intercept: bool = True,
                 solver: str = "ecos", zero_tol: float = 1e-6, solver_options: dict | None = None,
                 verbose: bool = False, pos_label: Any = None):
        self.known = known
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.zero_tol = zero_tol
        self.solver_options = solver_options
        self.verbose = verbose
        self.pos_label = pos_label

    def _limits(self) -> Limits:
        return Limits(time_limit=None)  # a convex solve: its own iteration limits end it

    def _method(self) -> tuple[str, str | None, dict]:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if not self.zero_tol >= 0:
            raise ValueError(f"zero_tol must be >= 0, got {self.zero_tol!r}")
        options = {**PROX_OPTIONS, **(self.solver_options or {})} if self.solver == "prox" else dict(
            self.solver_options or {})
        return "relaxed", self.solver, options

    def _formulation(self, y: np.ndarray, names: list[str]) -> EYEPenalized:
        if not (isinstance(self.lam, (int, float)) and np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError(f"lam must be a finite number >= 0, got {self.lam!r}")
        self.known_mask_ = known_factor_mask(self.known, names)
        return EYEPenalized(lam=float(self.lam), known=self.known_mask_, fit_intercept=self.fit_intercept)

    def _model_coefficients(self, model: Model) -> tuple[np.ndarray, float]:
        """The solved weights with interior-point residues below ``zero_tol`` set to 0."""
        coef = np.array(model.coef, dtype=float)
        coef[np.abs(coef) <= self.zero_tol * max(1.0, float(np.abs(coef).max(initial=0.0)))] = 0.0
        r = self.known_mask_
        self.fit_info_.update(objective=self.instance_.objective(Model(coef, model.intercept)),
                              sparsity=sparsity(coef) if coef.any() else 1.0)
        if np.all(np.isin(r, (0.0, 1.0))) and r.any():
            self.fit_info_["ap"] = average_precision(coef, r)
        return coef, model.intercept
