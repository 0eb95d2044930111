"""SLIMClassifier: scikit-learn estimator for the SLIM MILP (formulations.slim, solvers.slim)."""
from __future__ import annotations

import numpy as np

from formulations.coefficients import CoefficientSet
from formulations.slim import SLIM
from milpscore.estimators.base import FitOutcome, IntegerLinearClassifier
from solvers.highs import solve_highs
from solvers.slim import solve_slim


class SLIMClassifier(IntegerLinearClassifier):
    """Supersparse Linear Integer Model (Ustun & Rudin 2016) solved by HiGHS from a heuristic start.

    Parameters
    ----------
    coef_bound : int
        Points per feature lie in ``{-coef_bound, ..., coef_bound}`` (ignored when
        ``coefficients`` is given).
    c0 : float
        L0 cost: the training error rate a feature must save to be used.
    max_size : int or None
        Maximum number of features with non-zero points.
    margin : float
        Score margin gamma (1 = exact 0-1 loss for integer data; see formulations.slim).
    class_weight : (w_negative, w_positive), {label: weight}, "balanced" or None.
    coefficients : CoefficientSet or None
        Per-feature bounds / signs / costs / must-include (names must match the columns).
    time_limit : float or None
        Seconds for HiGHS. At the limit the best model found is returned with status "feasible"
        and its gap.
    mip_rel_gap, threads, verbose : HiGHS options.
    relaxed : bool
        Also solve the LP relaxation and keep it in ``relaxed_result_``.

    Attributes
    ----------
    coef_, intercept_, classes_, result_, status_, gap_, scorecard_, relaxed_result_,
    fit_info_ (``n_rows_kept``, ``heuristic_objective``, ...).
    """

    _card_title = "SLIM score card"

    def __init__(self, coef_bound: int = 10, c0: float = 1e-3, max_size: int | None = None,
                 margin: float = 1.0, class_weight=None, coefficients: CoefficientSet | None = None,
                 time_limit: float | None = 60.0, mip_rel_gap: float = 1e-6, threads: int = 1,
                 verbose: bool = False, relaxed: bool = False):
        self.coef_bound = coef_bound
        self.c0 = c0
        self.max_size = max_size
        self.margin = margin
        self.class_weight = class_weight
        self.coefficients = coefficients
        self.time_limit = time_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.verbose = verbose
        self.relaxed = relaxed

    def _spec(self, y: np.ndarray, names: list[str]) -> SLIM:
        cw = self.class_weight
        if isinstance(cw, dict):
            labels = self.labels_
            unknown = set(cw) - {labels.negative, labels.positive}
            if unknown:
                raise ValueError(f"class_weight keys {sorted(map(str, unknown))} are not labels of y")
            cw = (cw.get(labels.negative, 1.0), cw.get(labels.positive, 1.0))
        if cw is None:
            cw = (1.0, 1.0)
        elif isinstance(cw, str):
            if cw != "balanced":
                raise ValueError(f"class_weight must be None, 'balanced' or (w_negative, w_positive); got {cw!r}")
            n_pos, n_neg = (y > 0).sum(), (y < 0).sum()
            cw = (len(y) / (2.0 * n_neg), len(y) / (2.0 * n_pos))
        coefs = self.coefficients
        if coefs is not None and list(coefs.names) != list(names) and len(coefs.names) == len(names):
            if set(coefs.names) != set(names):
                raise ValueError("coefficients.names do not match the columns of X; build the CoefficientSet "
                                 "from the same column names")
        return SLIM(coefficients=coefs, coef_bound=self.coef_bound, c0=self.c0, margin=self.margin,
                    max_size=self.max_size, class_weight=tuple(cw))

    def _fit_coefficients(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitOutcome:
        names = self._feature_names(X.shape[1])
        instance = self._spec(y, names).instance(X, y, sample_weight)
        coef, intercept, result = solve_slim(instance, time_limit=self.time_limit, mip_rel_gap=self.mip_rel_gap,
                                             threads=self.threads, verbose=self.verbose)
        relaxed = solve_highs(instance.relaxed(), threads=self.threads) if self.relaxed else None
        extras = {"n_rows": instance.n_rows_in, "n_rows_kept": instance.n_rows_kept,
                  "epsilon": instance.epsilon, **{k: result.raw[k] for k in ("heuristic_objective", "heuristic_time")
                                                  if k in result.raw}}
        return FitOutcome(coef, intercept, result, relaxed, extras)
