"""EYEClassifier: logistic regression with the EYE penalty (Wang et al., KDD 2018, eq. 2).

The model minimises ``(1/n) sum_i s_i log(1 + exp(-y_i (x_i . theta + b))) + lam * eye(theta)``,
``eye(theta) = ||(1-r) . theta||_1 + sqrt(||(1-r) . theta||_1^2 + ||r . theta||_2^2)``, with
``r`` the known-factor mask given by the expert (feature names, a boolean vector, or fractions
in [0, 1], section 3.4). The program (exponential cones + one SOC,
:class:`formulations.penalized.PenalizedProgram`) is solved by ECOS (default) or Clarabel.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from formulations.penalized import PenalizedProgram
from formulations.penalties import EYE
from milpscore.credibility import average_precision, sparsity
from milpscore.estimators.direct import DirectFitClassifier, FitOutcome
from solvers.registry import solve

SOLVERS = ("ecos", "clarabel", "prox")


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


class EYEClassifier(DirectFitClassifier):
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
        Conic backend (``solvers.ecos`` directly, or Clarabel through cvxpy), or FISTA with the
        EYE prox (``solvers.proximal``, no sample weights).
    zero_tol : float
        Weights with ``|theta_j| <= zero_tol * max(1, max_k |theta_k|)`` are set to 0 (an
        interior-point method stops about 1e-8 away from exact zeros).
    solver_options : dict or None
        Passed to the backend (e.g. ``{"max_iters": 200}`` for ECOS).

    Attributes
    ----------
    coef_, intercept_, classes_, result_, status_, gap_, scorecard_, known_mask_ (the ``r``
    used), fit_info_ (``objective``, ``ap`` when ``r`` is binary with a known factor,
    ``sparsity``).
    """

    _card_title = "EYE model (real-valued points)"

    def __init__(self, known: Any = None, lam: float = 0.01, fit_intercept: bool = True,
                 solver: str = "ecos", zero_tol: float = 1e-6, solver_options: dict | None = None):
        self.known = known
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.zero_tol = zero_tol
        self.solver_options = solver_options

    def _fit_coefficients(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitOutcome:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError(f"lam must be a finite number >= 0, got {self.lam!r}")
        if not self.zero_tol >= 0:
            raise ValueError(f"zero_tol must be >= 0, got {self.zero_tol!r}")
        names = self._feature_names(X.shape[1])
        r = known_factor_mask(self.known, names)
        self.known_mask_ = r
        spec = PenalizedProgram(EYE(r, self.lam), loss="logistic", fit_intercept=self.fit_intercept)
        if self.solver == "prox":
            coef, intercept, result = self._fit_prox(X, y, sample_weight, spec.penalty)
        else:
            program = spec.relaxed(X, y, sample_weight)
            result = solve(program, backend=self.solver, **(self.solver_options or {}))
            if not result.has_solution:
                raise RuntimeError(f"{self.solver} found no solution (status {result.status.value}: "
                                   f"{result.message}); try solver='clarabel' or a larger lam")
            coef, intercept = spec.decode(program, result.x)
        coef[np.abs(coef) <= self.zero_tol * max(1.0, float(np.abs(coef).max(initial=0.0)))] = 0.0
        extras = {"objective": spec.objective_value(X, y, coef, intercept, sample_weight),
                  "sparsity": sparsity(coef) if coef.any() else 1.0}
        if np.all(np.isin(r, (0.0, 1.0))) and r.any():
            extras["ap"] = average_precision(coef, r)
        return FitOutcome(coef, intercept, result, None, extras)

    def _fit_prox(self, X, y, sample_weight, penalty):
        from formulations.losses import Logistic
        from solvers.proximal import fista

        if not np.allclose(sample_weight, 1.0):
            raise ValueError("solver='prox' does not take sample weights; use solver='ecos'")
        result = fista(Logistic(X, y, fit_intercept=self.fit_intercept), penalty,
                       **{"tol": 1e-9, "max_iter": 100_000, **(self.solver_options or {})})
        if not result.has_solution:
            raise RuntimeError(f"FISTA found no solution (status {result.status.value}: {result.message})")
        return np.array(result.x, dtype=float), float(result.raw.get("intercept", 0.0)), result
