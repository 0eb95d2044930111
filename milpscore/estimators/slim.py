"""SLIMClassifier: the SLIM MILP (Ustun & Rudin 2016) as a preset of the generic estimator."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from formulations.coefficients import CoefficientSet
from formulations.constraints import operational_constraints
from formulations.slim import SLIM
from milpscore.estimators.base import IntegerLinearClassifier


def class_weight_pair(class_weight, labels, y: np.ndarray) -> tuple[float, float]:
    """``(w_negative, w_positive)`` from None, ``"balanced"``, a pair or a ``{label: weight}`` dict."""
    cw = class_weight
    if isinstance(cw, dict):
        unknown = set(cw) - {labels.negative, labels.positive}
        if unknown:
            raise ValueError(f"class_weight keys {sorted(map(str, unknown))} are not labels of y")
        cw = (cw.get(labels.negative, 1.0), cw.get(labels.positive, 1.0))
    elif cw is None:
        cw = (1.0, 1.0)
    elif isinstance(cw, str):
        if cw != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or (w_negative, w_positive); got {cw!r}")
        n_pos, n_neg = (y > 0).sum(), (y < 0).sum()
        cw = (len(y) / (2.0 * n_neg), len(y) / (2.0 * n_pos))
    try:
        pair = tuple(float(w) for w in cw)
    except (TypeError, ValueError):
        raise ValueError(f"class_weight must be None, 'balanced', (w_negative, w_positive) or a dict; got {cw!r}") from None
    if len(pair) != 2 or not all(math.isfinite(w) and w >= 0 for w in pair) or max(pair) <= 0:
        raise ValueError(f"class_weight must hold two finite non-negative weights, not both 0; got {class_weight!r}")
    return pair


class SLIMClassifier(IntegerLinearClassifier):
    """Supersparse Linear Integer Model (Ustun & Rudin 2016), certified, from a heuristic start.

    The exact solve is the SLIM route (:mod:`solvers.exact.slim_route`): the sign-cover LP bound,
    the support enumeration with Bayes-error bounds, the box search and HiGHS on the strengthened
    MILP, each where it applies; ``fit_.steps`` records which ran and why the others did not.
    Operational constraints stay rows of the MILP.

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
        Score margin (1 = exact 0-1 loss for integer data; see :mod:`formulations.slim`).
    class_weight : (w_negative, w_positive), {label: weight}, "balanced" or None.
    coefficients : CoefficientSet or None
        Per-feature bounds / signs / costs / must-include, matched to the columns by name.
    time_limit : float or None
        Wall-clock seconds of the whole fit (heuristic, exact solve and, with ``relaxed=True``,
        the LP). At the limit the best model found is returned with status "feasible" and its
        gap. Time-limited runs can return different models; for reproducible fits use
        ``time_limit=None`` and ``node_limit``.
    node_limit, mip_rel_gap, threads, seed, verbose : :class:`solvers.limits.Limits` and the backend.
    memory_limit : MiB one step of the exact solve may allocate (None: half the memory available);
        a step over it is skipped, with its reason in ``fit_.steps``.
    n_jobs : joblib workers that bound the supports of the exact enumeration and search the boxes
        of the box search (1: this process; -1: all cores), and threads of this process that screen
        the supports of a wide 0/1 table (the ``blocked`` step) and the sign orthants of few-valued
        integer features (the ``monotone_supports`` step: the same optimum, possibly another model
        of it). Inside
        ``joblib.parallel_backend("dask")`` they run on the dask cluster. With ``time_limit=None``
        the support enumeration's model, bound and status equal the one-process fit's; the box
        search certifies the same optimum (its boxes start from the incumbent known when they
        are sent, so it may return another model of the same objective).
    relaxed : bool
        Also solve the LP relaxation (within the same time budget) and keep it in ``relaxed_fit_``.
    constraints : sequence of operational constraints (:mod:`formulations.constraints`: AtMost,
        AtLeast, Exactly, Implies, Monotone, Linear, MaxFalsePositiveRate, MinTruePositiveRate) by column name; the model obeys them
        (the card lists them, checked).
    one_threshold_per_variable : bool
        At most one ``"<variable> >= <t>"`` indicator of each variable (groups read off the column
        names that :class:`~milpscore.data.binarize.ThresholdBinarizer` writes).

    Attributes
    ----------
    coef_, intercept_, classes_, fit_, result_, status_, gap_, objective_, bound_, projection_, scorecard_,
    relaxed_fit_, fit_info_ (``n_rows_kept``, ``epsilon``, times, ...).
    """

    _card_title = "SLIM score card"

    def __init__(self, coef_bound: int = 10, c0: float = 1e-3, max_size: int | None = None,
                 margin: float = 1.0, class_weight=None, coefficients: CoefficientSet | None = None,
                 time_limit: float | None = 60.0, node_limit: int | None = None, mip_rel_gap: float = 1e-6,
                 threads: int = 1, seed: int = 0, verbose: bool = False, relaxed: bool = False,
                 constraints: Sequence = (), one_threshold_per_variable: bool = False,
                 pos_label: Any = None,
                 memory_limit: float | None = None, n_jobs: int = 1):
        self.memory_limit = memory_limit
        self.n_jobs = n_jobs
        self.coef_bound = coef_bound
        self.c0 = c0
        self.max_size = max_size
        self.margin = margin
        self.class_weight = class_weight
        self.coefficients = coefficients
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.pos_label = pos_label
        self.relaxed = relaxed
        self.constraints = constraints
        self.one_threshold_per_variable = one_threshold_per_variable

    def _method(self) -> tuple[str, str | None, dict]:
        return "exact", None, {}  # the catalog's: the SLIM route, relaxed by "highs"

    def _formulation(self, y: np.ndarray, names: list[str]) -> SLIM:
        coefs = self._coefficient_set(names)
        return SLIM(coefficients=coefs, coef_bound=self.coef_bound, c0=self.c0, margin=self.margin,
                    max_size=self.max_size, class_weight=class_weight_pair(self.class_weight, self.labels_, y),
                    constraints=operational_constraints(self.constraints, names, self.one_threshold_per_variable))
