"""FacetsClassifier: the Facets formulation (Belahcene et al. 2020) as a preset of the generic estimator.

One objective ``sum_i v_i loss_i + lam Omega(coef / grid_unit)`` (eqs. 3, 8-9, 14;
:class:`formulations.facets.Facets`), three ways to fit it through :func:`solvers.pipeline.run`:

* ``solver="prox"``: the convex problem by proximal gradient (FISTA / ISTA with the Facets / SCF
  prox of eqs. 12 / 15, section 5 of the paper): method ``"relaxed"``, backend ``"prox"``;
* ``solver="ecos"``: the same convex problem as a conic program (LP for the hinge) on ECOS;
* ``solver="highs-exact"``: the problem Facets relaxes, ``coef / grid_unit`` integer: a HiGHS
  MILP for the hinge, tangent cutting planes with a certified gap for logistic / least squares
  (:mod:`solvers.backends.cutting_planes`), started from the rounded convex solution.

The score card shows the points ``coef / grid_unit`` (integers for the exact fit) and the
intercept in the same units, which leaves every prediction unchanged.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from formulations.base import Instance
from formulations.constraints import operational_constraints
from formulations.facets import Facets
from milpscore.estimators.base import IntegerLinearClassifier
from milpscore.cards.scorecard import ScoreCard
from solvers.limits import Limits
from solvers.pipeline import Fit

#: solver name -> (pipeline method, backend); None is the catalog's default ("highs" for the exact
#: program, "ecos" for the relaxation that ``relaxed=True`` adds with the same backend argument)
SOLVERS = {"prox": ("relaxed", "prox"), "ecos": ("relaxed", "ecos"), "highs-exact": ("exact", None)}


class FacetsClassifier(IntegerLinearClassifier):
    """Facets-penalised linear classifier (convex by prox or ECOS, or exact integer by HiGHS).

    Parameters
    ----------
    solver : ``"prox"``, ``"ecos"`` or ``"highs-exact"`` (see module docstring).
    loss : ``"logistic"``, ``"hinge"`` or ``"least_squares"`` (on labels -1/+1). ``"prox"``
        needs a smooth loss (logistic, least squares) and unweighted rows.
    lam : penalty strength (objective units per unit of Facets).
    grid_unit : the fitted ``coef_`` concentrate on (exact: lie on) ``grid_unit * Z``.
    eps : strongly convex Facets weight in ``[0, 1)`` (eq. 14; the paper uses 0.01).
    bound : integer box ``|coef_j| <= bound * grid_unit`` (prox ignores it; ``fit_info_["inside_box"]``
        says whether its solution stays inside).
    margin : hinge margin.
    tol, max_iter, accelerated : prox: stopping tolerance, iterations, FISTA (True) or ISTA. A
        prox fit stopped by ``max_iter`` has ``status_ == "feasible"`` and warns.
    mip_rel_gap : highs-exact: certified relative gap on the true objective.
    time_limit, node_limit, threads, seed, verbose : :class:`solvers.limits.Limits` and the solver log.
    relaxed : also solve the convex program (ECOS) within the same budget, kept in ``relaxed_fit_``.
    constraints : operational constraints by column name (:mod:`formulations.constraints`; points in
        grid steps ``coef / grid_unit``); the programs carry them, the proximal path cannot.
    one_threshold_per_variable : at most one ``"<variable> >= <t>"`` column of each variable.

    Attributes
    ----------
    coef_, intercept_, classes_, fit_, result_, status_, gap_, objective_, bound_, scorecard_,
    relaxed_fit_, fit_info_ (``integrity``: share of ``coef_ / grid_unit`` within 1e-6 of an
    integer, ``magnitude``: ``max |coef_ / grid_unit|``, ``inside_box``, ``objective``, times, ...).
    """

    _card_title = "Facets score card"

    def __init__(self, solver: str = "prox", loss: str = "logistic", lam: float = 0.01, grid_unit: float = 1.0,
                 eps: float = 0.0, bound: int = 5, margin: float = 1.0, tol: float = 1e-6, max_iter: int = 20000,
                 accelerated: bool = True, mip_rel_gap: float = 1e-4, time_limit: float | None = 60.0,
                 node_limit: int | None = None, threads: int = 1, seed: int = 0, verbose: bool = False,
                 relaxed: bool = False, constraints: Sequence = (), one_threshold_per_variable: bool = False,
                 pos_label: Any = None):
        self.solver = solver
        self.loss = loss
        self.lam = lam
        self.grid_unit = grid_unit
        self.eps = eps
        self.bound = bound
        self.margin = margin
        self.tol = tol
        self.max_iter = max_iter
        self.accelerated = accelerated
        self.mip_rel_gap = mip_rel_gap
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.pos_label = pos_label
        self.relaxed = relaxed
        self.constraints = constraints
        self.one_threshold_per_variable = one_threshold_per_variable

    def _formulation(self, y: np.ndarray, names: list[str]) -> Facets:
        return Facets(loss=self.loss, lam=self.lam, grid_unit=self.grid_unit, eps=self.eps, bound=self.bound,
                      margin=self.margin, feature_names=tuple(names),
                      constraints=operational_constraints(self.constraints, names, self.one_threshold_per_variable))

    def _method(self) -> tuple[str, str | None, dict]:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {tuple(SOLVERS)}, got {self.solver!r}")
        if self.solver == "prox" and self.loss == "hinge":
            raise ValueError("solver='prox' needs a smooth loss: use loss='logistic' or 'least_squares', "
                             "or solver='ecos' / 'highs-exact' for the hinge loss")
        if self.solver == "prox" and (self.constraints or self.one_threshold_per_variable):
            raise ValueError("solver='prox' cannot carry operational constraints: use solver='ecos' (the relaxed "
                             "program keeps them) or 'highs-exact'")
        method, backend = SOLVERS[self.solver]
        options = {"tol": self.tol, "max_iter": self.max_iter, "accelerated": self.accelerated} \
            if backend == "prox" else {}
        return method, backend, options

    def _limits(self) -> Limits:
        return Limits(time_limit=self.time_limit, node_limit=self.node_limit,
                      mip_rel_gap=self.mip_rel_gap, threads=self.threads,
                      seed=self.seed)

    def _keep(self, instance: Instance, fit: Fit) -> None:
        super()._keep(instance, fit)
        points = np.asarray(fit.model.coef, dtype=float) / instance.spec.grid_unit
        self.fit_info_.update(
            integrity=float(np.mean(np.abs(points - np.round(points)) <= 1e-6)) if points.size else 1.0,
            magnitude=float(np.max(np.abs(points), initial=0.0)),
            inside_box=bool(np.all(np.abs(points) <= instance.spec.bound + 1e-9)),
            objective=fit.objective)

    def _make_scorecard(self, names, labels) -> ScoreCard:
        g = self.instance_.spec.grid_unit
        notes = [f"points = coef / grid_unit (grid_unit = {g:g}); solver = {self.solver}",
                 f"status={self.status_} objective={self.objective_:.6g} bound={self.bound_:.6g} gap={self.gap_:.3g}"]
        return ScoreCard.from_coefficients(self.coef_ / g, self.intercept_ / g, names, positive_label=labels.positive,
                                           negative_label=labels.negative, title=self._card_title, notes=notes,
                                           X=getattr(self.instance_, "X", None))
