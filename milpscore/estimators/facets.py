"""FacetsClassifier: linear classifiers with the Facets penalty (Belahcene et al., ACML 2020).

Three ways to fit the same objective ``(1/n) sum_i s_i loss_i + lam * Omega(coef / gamma)``
(eqs. 3, 8-9, 14; :class:`formulations.facets.FacetsProgram`):

* ``solver="prox"``: the convex (relaxed) problem by proximal gradient (FISTA / ISTA of
  :mod:`solvers.proximal`) with the Facets / SCF prox of eqs. 12 / 15 — section 5 of the paper;
* ``solver="ecos"``: the same convex problem as a conic program on ECOS (LP for the hinge);
* ``solver="highs-exact"``: the problem Facets relaxes, ``coef / gamma`` integer: a HiGHS MILP
  for the hinge loss, an outer approximation with a certified gap for logistic / least squares
  (:mod:`solvers.outer_approximation`); warm-started from the rounded convex solution.

The score card shows the points ``coef / gamma`` (integers for the exact fit) and the intercept
in the same units, which leaves every prediction unchanged.
"""
from __future__ import annotations

import numpy as np

from formulations.facets import FacetsProgram
from milpscore.estimators.base import FitOutcome, IntegerLinearClassifier
from milpscore.scorecard import ScoreCard
from solvers.ecos import solve_ecos
from solvers.highs import solve_highs
from solvers.outer_approximation import polish, solve_outer_approximation
from solvers.result import Result

SOLVERS = ("prox", "ecos", "highs-exact")


class FacetsClassifier(IntegerLinearClassifier):
    """Facets-penalised linear classifier (convex by prox or ECOS, or exact integer by HiGHS).

    Parameters
    ----------
    solver : ``"prox"``, ``"ecos"`` or ``"highs-exact"`` (see module docstring).
    loss : ``"logistic"``, ``"hinge"`` or ``"least_squares"`` (on labels -1/+1). ``"prox"``
        needs a smooth loss (logistic, least squares).
    lam : penalty weight (objective units per unit of Facets).
    gamma : grid unit: the fitted ``coef_`` concentrate on (exact: lie on) ``gamma * Z``.
    eps : strongly convex Facets weight in ``[0, 1)`` (eq. 14; the paper uses 0.01).
    bound : integer box ``|coef_j| <= bound * gamma`` (the facets represented; prox ignores it
        unless the solution leaves it, which is then reported in ``fit_info_``).
    margin : hinge margin.
    tol : prox: stopping tolerance of the certified criterion (scaled prox-gradient norm).
    max_iter : prox iterations.
    mip_gap : highs-exact: relative gap (MILP gap; certified gap on the true objective for the
        outer approximation).
    accelerated : prox: FISTA (True) or ISTA (False; the paper notes acceleration may hurt
        integrity along the path).
    time_limit, threads, verbose : HiGHS options for ``"highs-exact"``.

    Attributes
    ----------
    coef_, intercept_, classes_, result_, status_, gap_, scorecard_, relaxed_result_ (the convex
    solve used as warm start by ``"highs-exact"``), fit_info_ (``integrity``: share of
    ``coef_ / gamma`` within 1e-6 of an integer, ``magnitude``: ``max |coef_ / gamma|``,
    ``objective``: true objective of the model).
    """

    _card_title = "Facets score card"

    def __init__(self, solver: str = "prox", loss: str = "logistic", lam: float = 0.01, gamma: float = 1.0,
                 eps: float = 0.0, bound: int = 5, margin: float = 1.0, tol: float = 1e-6,
                 max_iter: int = 20000, accelerated: bool = True, mip_gap: float = 1e-4,
                 time_limit: float | None = 60.0,
                 threads: int = 1, verbose: bool = False):
        self.solver = solver
        self.loss = loss
        self.lam = lam
        self.gamma = gamma
        self.eps = eps
        self.bound = bound
        self.margin = margin
        self.tol = tol
        self.max_iter = max_iter
        self.accelerated = accelerated
        self.mip_gap = mip_gap
        self.time_limit = time_limit
        self.threads = threads
        self.verbose = verbose

    def _program(self) -> FacetsProgram:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.solver == "prox" and self.loss == "hinge":
            raise ValueError("solver='prox' needs a smooth loss: use loss='logistic' or 'least_squares', "
                             "or solver='ecos' / 'highs-exact' for the hinge loss")
        return FacetsProgram(loss=self.loss, lam=self.lam, gamma=self.gamma, eps=self.eps, bound=self.bound,
                             margin=self.margin)

    # ------------------------------------------------------------------------ fitting
    def _fit_coefficients(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitOutcome:
        fp = self._program()
        relaxed = None
        if self.solver == "prox":
            coef, intercept, result = _solve_prox(fp, X, y, sample_weight, tol=self.tol, max_iter=self.max_iter,
                                                  accelerated=self.accelerated)
        elif self.solver == "ecos":
            coef, intercept, result = _solve_convex(fp, X, y, sample_weight)
        else:
            coef, intercept, result, relaxed = self._solve_exact(fp, X, y, sample_weight)
        points = np.asarray(coef) / fp.gamma
        extras = {"integrity": float(np.mean(np.abs(points - np.round(points)) <= 1e-6)) if points.size else 1.0,
                  "magnitude": float(np.max(np.abs(points), initial=0.0)),
                  "objective": fp.objective_value(X, y, coef, intercept, sample_weight),
                  "inside_box": bool(np.all(np.abs(points) <= fp.bound + 1e-9))}
        return FitOutcome(np.asarray(coef, dtype=float), float(intercept), result, relaxed, extras)

    def _solve_exact(self, fp: FacetsProgram, X, y, s):
        coef0, b0, relaxed = _solve_convex(fp, X, y, s)
        start_coef = fp.gamma * np.clip(np.round(coef0 / fp.gamma), -fp.bound, fp.bound)
        if fp.loss == "hinge":
            program = fp.exact(X, y, s)
            start = fp.lift(program, X, y, start_coef, float(np.clip(b0, *fp.intercept_range(X, y))), s)
            result = solve_highs(program, time_limit=self.time_limit, mip_rel_gap=self.mip_gap, threads=self.threads,
                                 verbose=self.verbose, warm_start=start)
        else:
            oa = fp.outer_approximation(X, y, s)
            program = oa.program
            start = polish(oa, fp.lift(program, X, y, start_coef, 0.0, s))
            result = solve_outer_approximation(oa, tol=self.mip_gap, time_limit=self.time_limit, threads=self.threads,
                                               warm_start=start, verbose=self.verbose)
        if not result.has_solution:
            raise RuntimeError(f"the exact Facets program returned no model ({result.status.value}: "
                               f"{result.message}); raise time_limit")
        coef, intercept = fp.decode(result.x, program)
        coef = fp.gamma * np.round(coef / fp.gamma)  # remove solver round-off on the integers
        return coef, intercept, result, relaxed

    # ---------------------------------------------------------------------- score card
    def _make_scorecard(self, names, labels) -> ScoreCard:
        notes = [f"points = coef / gamma (gamma = {self.gamma:g}); solver = {self.solver}"]
        if self.result_ is not None:
            notes.append(f"status={self.status_} objective={self.result_.objective:.6g} "
                         f"bound={self.result_.bound:.6g} gap={self.gap_:.3g}")
        return ScoreCard.from_coefficients(self.coef_ / self.gamma, self.intercept_ / self.gamma, names,
                                           positive_label=labels.positive, negative_label=labels.negative,
                                           title=self._card_title, notes=notes)


def _solve_convex(fp: FacetsProgram, X, y, s) -> tuple[np.ndarray, float, Result]:
    """The relaxed program on ECOS (conic and LP alike)."""
    program = fp.relaxed(X, y, s)
    result = solve_ecos(program)
    if not result.has_solution:
        raise RuntimeError(f"ECOS found no solution of the convex Facets program ({result.status.value}: "
                           f"{result.message})")
    coef, intercept = fp.decode(result.x, program)
    return coef, intercept, result


def _solve_prox(fp: FacetsProgram, X, y, s, *, tol: float, max_iter: int, accelerated: bool):
    """The convex problem by FISTA / ISTA (:mod:`solvers.proximal`) with ``fp.penalty()``'s prox."""
    from formulations.losses import LeastSquares, Logistic
    from solvers.proximal import proximal_gradient

    if not np.allclose(s, 1.0):
        raise ValueError("solver='prox' fits unweighted losses; pass no sample_weight, or use solver='ecos'")
    loss = Logistic(X, y) if fp.loss == "logistic" else LeastSquares(X, y)
    result = proximal_gradient(loss, fp.penalty(), accelerated=accelerated, tol=tol, max_iter=max_iter)
    return result.x, float(result.raw["intercept"]), result
