"""RiskScoreClassifier: certified logistic risk scores (RiskSLIM, Ustun & Rudin 2019) as a preset of
the generic estimator, with the risk table and the calibration of the learned score."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from formulations.coefficients import CoefficientSet
from formulations.constraints import operational_constraints
from formulations.riskslim import RiskSLIM
from milpscore.data.validation import encode_labels
from milpscore.estimators.base import IntegerLinearClassifier
from milpscore.estimators.slim import class_weight_pair
from milpscore.cards.risk_table import calibration, plot_risk_table, predicted_risk, risk_table
from milpscore.cards.scorecard import ScoreCard
from solvers.limits import Limits
from solvers.multipliers import certificate, check_multipliers, least, projected, solve_multipliers


class RiskScoreClassifier(IntegerLinearClassifier):
    """Integer-point risk score minimising the logistic loss (RiskSLIM), certified.

    The exact solve enumerates the supports of ``max_size`` features with a convex lower bound on
    each and branches on the integer points of the few whose bound is below the incumbent
    (:mod:`solvers.exact.supports`); with operational constraints, or too many supports, it is SCIP's
    branch-and-bound tree with lazy tangent cuts (:mod:`solvers.backends.scip`).

    Parameters
    ----------
    coef_bound : int
        Points per feature lie in ``{-coef_bound, ..., coef_bound}`` (ignored when ``coefficients``
        is given).
    c0 : float
        L0 cost per feature in units of mean logistic loss (default 1e-6: breaks ties only).
    max_size : int or None
        Maximum number of features with non-zero points.
    coefficients : CoefficientSet or None
        Per-feature bounds / signs / costs / must-include, matched to the columns by name.
    class_weight : (w_negative, w_positive), {label: weight}, "balanced" or None.
    method : "exact" (certified, default), "heuristic" (beam search + star ray + swaps of features,
        and on 0/1 features exact swaps of supports; no certificate), "relaxed" or "rounding".
    backend : exact / relaxed backend; None (default): the RiskSLIM route for the exact solve
        (:mod:`solvers.exact.riskslim_route`: support enumeration, then SCIP's lazy-cut tree) and
        "highs" for the relaxation (LP cutting planes from a tangent at the relaxation's smooth
        minimiser, :meth:`formulations.riskslim.RiskSLIMInstance.relaxed`). "scip" (one tree) or
        "highs" (restart loop) bypass the route.
    time_limit : wall-clock seconds of the whole fit; at the limit the best model is returned with
        status "feasible" and its certified gap.
    node_limit, mip_rel_gap, threads, seed, verbose : :class:`solvers.limits.Limits` and the backend.
    memory_limit : MiB one step of the exact solve may allocate (None: half the memory available);
        a step over it is skipped, with its reason in ``fit_.steps``.
    n_jobs : joblib workers that bound the supports of the exact enumeration (1: this process;
        -1: all cores), and threads of this process that screen the supports of a wide 0/1 table
        (the ``blocked`` step). Inside ``joblib.parallel_backend("dask")`` the workers run on the
        dask cluster. With ``time_limit=None`` the model, bound and status equal the one-process fit's.
    constraints : sequence of operational constraints (:mod:`formulations.constraints`: AtMost,
        AtLeast, Exactly, Implies, Monotone, Linear) by column name; the model obeys them
        (the card lists them, checked).
    one_threshold_per_variable : bool
        At most one ``"<variable> >= <t>"`` indicator of each variable (groups read off the column
        names that :class:`~milpscore.data.binarize.ThresholdBinarizer` writes).
    multiplier : float > 0, a sequence of them, or "auto"
        The risk is ``1 / (1 + exp(-(total points + base score) / m))`` (FasterRisk's multiplier
        ``m``). 1 (default) is RiskSLIM's problem; a larger value gives the same integer points a
        finer risk scale. With several values (``"auto"``: :data:`solvers.multipliers.MULTIPLIERS`) each is solved in
        its share of ``time_limit`` and the one of least objective (the same mean logistic loss +
        L0 cost for every ``m``) is kept: its certificate (``status_``, ``bound_``, ``gap_``) is
        over the points *and* the listed multipliers (the least bound over them), and
        ``multipliers_`` tables every one. Every multiplier's start is found before any exact
        solve (FasterRisk's way: the first's supports rounded along star rays for each multiplier),
        and each multiplier is solved against the least objective known (its ``objective_limit``,
        the first's included): its search prunes at that objective and stops once no model beats
        it, so its own row may stay uncertified while the certificate over all holds. Without
        operational constraints the first multiplier gets all the time but a reserve for the others
        (at most :data:`solvers.multipliers.MOST_RESERVED`): the saturated-loss bound does not
        depend on the multiplier, so the supports its enumeration screens out are ruled out for the
        later ones, which bound and search only the survivors (:mod:`solvers.exact.screen`). A
        multiplier whose set-up (its program's continuous fit, seconds on a wide table) would end
        past the time limit is skipped (``status`` "skipped" in ``multipliers_``, with the bound
        of :func:`solvers.multipliers.skipped_bound`): the whole sequence is
        :mod:`solvers.multipliers`.

    Attributes
    ----------
    coef_, intercept_ : integer points and base score. ``predict_proba`` is the logistic of the total
        divided by ``multiplier_``.
    multiplier_ : the multiplier of the model (the one kept when several were given).
    multipliers_ : DataFrame, one row per multiplier tried: objective, bound, gap, status (each its
        own certificate), objective_limit (the objective it had to beat), seconds, projected_seconds
        (unproven: when its proof would end by its steps' projection, its set-up included; nan: none).
        With several multipliers ``projection_`` is :class:`solvers.multipliers.Projections` (what each
        needs, summed; only a floor, the first's, while the first is unproven; None when one it needs has
        no projection).
    risk_table_ : DataFrame, every attainable total score -> predicted risk, observed rate, count.
    calibration_ : :class:`milpscore.cards.risk_table.Calibration` on the training data (curve, ECE).
    scorecard_ : points table with the risk table in its notes.
    status_, gap_, objective_, bound_, fit_, result_, projection_ : the certificate (see the generic estimator).
    """

    _card_title = "Risk score"

    def __init__(self, coef_bound: int = 5, c0: float = 1e-6, max_size: int | None = None,
                 coefficients: CoefficientSet | None = None, class_weight=None, method: str = "exact",
                 backend: str | None = None, time_limit: float | None = 60.0, node_limit: int | None = None,
                 mip_rel_gap: float = 1e-4, threads: int = 1, seed: int = 0, verbose: bool = False,
                 constraints: Sequence = (), one_threshold_per_variable: bool = False,
                 pos_label: Any = None, multiplier: float | Sequence[float] | str = 1.0,
                 memory_limit: float | None = None, n_jobs: int = 1):
        self.memory_limit = memory_limit
        self.n_jobs = n_jobs
        self.coef_bound = coef_bound
        self.c0 = c0
        self.max_size = max_size
        self.coefficients = coefficients
        self.class_weight = class_weight
        self.method = method
        self.backend = backend
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.pos_label = pos_label
        self.constraints = constraints
        self.one_threshold_per_variable = one_threshold_per_variable
        self.multiplier = multiplier

    def _formulation(self, y: np.ndarray, names: list[str]) -> RiskSLIM:
        return RiskSLIM(coefficients=self._coefficient_set(names), coef_bound=self.coef_bound, c0=self.c0,
                        max_size=self.max_size, class_weight=class_weight_pair(self.class_weight, self.labels_, y),
                        constraints=operational_constraints(self.constraints, names, self.one_threshold_per_variable),
                        multiplier=getattr(self, "multiplier_", self._multipliers()[0]))

    def _multipliers(self) -> tuple[float, ...]:
        return check_multipliers(self.multiplier)

    def fit(self, X: Any, y: Any, sample_weight: Any = None, *, limits: Limits | None = None) -> "RiskScoreClassifier":
        """Solve RiskSLIM by :func:`solvers.multipliers.solve_multipliers` (once per multiplier when
        several are given, keeping the least objective, within one budget), then tabulate the risks
        and their calibration on ``(X, y)``. ``limits``: as :meth:`IntegerLinearClassifier.fit`."""
        multipliers = self._multipliers()
        limits = self._budget(limits)
        method, backend, options = self._method()
        self.multiplier_ = multipliers[0]
        rows, y_pm1, w, names, labels = self._rows(X, y, sample_weight)
        spec = self._formulation(y_pm1, names)
        path = solve_multipliers(spec.instance(rows, y_pm1, w),
                                 lambda m: replace(spec, multiplier=m).instance(rows, y_pm1, w), multipliers, limits,
                                 method=method, backend=backend, verbose=self.verbose, options=options)
        chosen = least(path)
        self.multiplier_ = chosen.multiplier
        self._adopt(chosen.instance, chosen.fit, method, names, labels)
        self.multipliers_ = pd.DataFrame([f.row() for f in path])
        if len(multipliers) > 1:  # the certificate over the points and every multiplier listed
            status, self.gap_, self.bound_ = certificate(path, self.mip_rel_gap)
            self.status_ = status.value
            self.projection_ = projected(path, self.mip_rel_gap)  # (every multiplier's, summed)
        Xd = self._validated(X)
        events = (encode_labels(y, pos_label=self.pos_label)[0] > 0).astype(float)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.risk_table_ = risk_table(self.coef_, self.intercept_, Xd, events, w, self.multiplier_)
        self.calibration_ = calibration(self.coef_, self.intercept_, Xd, events, w, self.multiplier_)
        self.scorecard_ = self._make_scorecard(self._feature_names(self.n_features_in_), self.labels_)
        return self

    def _make_scorecard(self, names: list[str], labels) -> ScoreCard:
        over = "" if self.multiplier_ == 1 else f" / {self.multiplier_:g}"
        notes = self._notes()
        if len(getattr(self, "multipliers_", ())) > 1:
            notes.append(f"multiplier {self.multiplier_:g}: least objective of {len(self.multipliers_)} tried "
                         f"({', '.join(f'{m:g}' for m in self.multipliers_['multiplier'])}); certificate over all")
        notes += [f"risk of {labels.positive!r} = 1 / (1 + exp(-(total points + base score){over}))"]
        if hasattr(self, "risk_table_"):
            notes.append(f"expected calibration error on the training data: {self.calibration_.ece:.4f}")
        return ScoreCard.from_coefficients(self.coef_, self.intercept_, names, positive_label=labels.positive,
                                           negative_label=labels.negative, title=self._card_title, notes=notes,
                                           X=getattr(self.instance_, "X", None), risk=getattr(self, "risk_table_", None))

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[P(negative), P(positive)]`` per row: the logistic of the integer total score over ``multiplier``."""
        p = predicted_risk(self.decision_function(X) / self.multiplier_)
        return np.column_stack([1.0 - p, p])

    def plot_risk_table(self, ax: Any = None) -> Any:
        """Predicted and observed risk per total score (:func:`milpscore.cards.risk_table.plot_risk_table`)."""
        return plot_risk_table(self.risk_table_, ax=ax)
