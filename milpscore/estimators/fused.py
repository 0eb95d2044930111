"""FusedScoreClassifier: a DiaRem-style points table learned by the fused-lasso hinge ILP.

From a table of numeric and categorical variables the classifier (1) bins every column into
ordered one-hot bins (:class:`milpscore.binning.OrderedBinner`), (2) learns integer points per
bin and an intercept with the fused-lasso hinge ILP of ``feature-selection-fused-lasso-scores.txt``
part 2, eqs. (1)-(5) (:class:`formulations.fused.FusedLassoHinge`, solved by HiGHS), and (3)
merges adjacent bins with equal points into ranges ("Age < 40: 0, 40-49: 1, ...").
``predict`` applies those merged ranges to the raw values.

``solver="prox"`` learns continuous points instead, with the binarsity penalty
(``binarsity-weighted-tv.txt``: per-block TV + sum-to-zero, Algorithm 2) by the proximal
gradient method on a smoothed hinge; ``mip_start="prox"`` rounds those points into a MIP start
for the ILP.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from formulations.fused import FusedLassoHinge, FusedPoints
from milpscore.binning import NUMERIC, OrderedBinner, _as_frame
from milpscore.data import LabelMap, encode_labels, validate_sample_weight
from milpscore.estimators.direct import DirectFitClassifier, FitOutcome
from milpscore.scorecard import ScoreCard
from solvers.registry import solve

_SOLVERS = ("highs", "lp", "prox")
_MONOTONE_WORDS = {"increasing": 1, "decreasing": -1, 1: 1, -1: -1, 0: 0}


class FusedScoreClassifier(DirectFitClassifier):
    """Points table with contiguous ranges and integer points, learned by the fused-lasso hinge ILP.

    Parameters
    ----------
    n_bins : int or dict column -> int
        Maximum number of bins per numeric column (quantile cut points; every distinct value
        when there are at most that many).
    penalty : float
        lambda of eq. (1): cost of one point of difference between adjacent bins, in units of
        hinge loss of one sample. Larger values merge more bins.
    points_range : (lo, hi) or dict column -> (lo, hi)
        Integer points per bin (default ``(0, 5)``; dict entries override ``(0, 5)`` per column).
    reference : ``"min"`` (smallest points of each variable are 0), ``"first"`` or ``"sum_to_zero"``.
    monotone : dict column -> ``"increasing"`` / ``"decreasing"`` (or +1 / -1), optional.
    max_variables : int or None
        Maximum number of variables with non-zero points.
    must_include : column names always given a place in the model (see ``max_variables``).
    categories : dict column -> ordered categories (see :class:`~milpscore.binning.OrderedBinner`).
    unknown_category : ``"error"`` or ``"first"`` (bin of an unseen category at predict time).
    solver : ``"highs"`` (the ILP), ``"lp"`` (its LP relaxation: continuous points) or ``"prox"``
        (continuous binarsity points by proximal gradient).
    mip_start : None or ``"prox"``: MIP start from the rounded proximal points.
    time_limit, mip_rel_gap, threads, verbose : HiGHS options (a time-limited ILP keeps its best
        model, with status ``"feasible"`` and its gap).
    relaxed : bool
        Also solve the LP relaxation and keep it in ``relaxed_result_``.
    margin : hinge margin (1 in eq. 3).
    prox_smoothing : width delta of the Huberised hinge used by the proximal path.

    Attributes
    ----------
    binner_ : the fitted :class:`~milpscore.binning.OrderedBinner`.
    points_ : :class:`~formulations.fused.FusedPoints` (points per bin, intercept, blocks).
    coef_ : points per one-hot bin; intercept_ : intercept (rounded up to an integer when the
        points are integers: the same classifier, since scores are then integers).
    ranges_ : DataFrame ``variable, first_bin, last_bin, lower, upper, condition, points`` of
        the merged ranges of every variable.
    scorecard_, result_, status_, gap_, relaxed_result_, classes_, feature_names_in_.
    """

    _card_title = "Points table (fused-lasso hinge ILP)"

    def __init__(self, n_bins: int | Mapping[str, int] = 5, penalty: float = 1.0,
                 points_range: tuple[int, int] | Mapping[str, tuple[int, int]] = (0, 5), reference: str = "min",
                 monotone: Mapping[str, Any] | None = None, max_variables: int | None = None,
                 must_include: Sequence[str] = (), categories: Mapping[str, Sequence] | None = None,
                 unknown_category: str = "error", solver: str = "highs", mip_start: str | None = None,
                 time_limit: float | None = 60.0, mip_rel_gap: float = 1e-4, threads: int = 1,
                 verbose: bool = False, relaxed: bool = False, margin: float = 1.0, prox_smoothing: float = 0.1):
        self.n_bins = n_bins
        self.penalty = penalty
        self.points_range = points_range
        self.reference = reference
        self.monotone = monotone
        self.max_variables = max_variables
        self.must_include = must_include
        self.categories = categories
        self.unknown_category = unknown_category
        self.solver = solver
        self.mip_start = mip_start
        self.time_limit = time_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.verbose = verbose
        self.relaxed = relaxed
        self.margin = margin
        self.prox_smoothing = prox_smoothing

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "FusedScoreClassifier":
        """Bin ``X`` (DataFrame of numeric / categorical columns), solve, and build the points table."""
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}, got {self.solver!r}")
        if self.mip_start not in (None, "prox"):
            raise ValueError(f"mip_start must be None or 'prox', got {self.mip_start!r}")
        frame = _as_frame(X)
        y_pm1, labels = encode_labels(y)
        if len(frame) != len(y_pm1):
            raise ValueError(f"X has {len(frame)} rows but y has {len(y_pm1)} labels; they must match")
        w = validate_sample_weight(sample_weight, len(y_pm1))
        binner = OrderedBinner(self.n_bins, self.categories, self.unknown_category).fit(frame)
        onehot = binner.transform(frame)
        self.binner_ = binner
        builder = self._builder(binner)
        outcome = self._solve(builder, onehot, y_pm1, w, binner)
        points: FusedPoints = outcome.extras.pop("points")
        self.points_ = points
        self.coef_ = points.theta
        integral = np.all(points.theta == np.round(points.theta))
        self.intercept_ = float(math.ceil(points.intercept - 1e-9)) if integral else points.intercept
        self.feature_names_in_ = np.array(binner.feature_names_in_, dtype=object)
        self.n_features_in_ = len(binner.variables_)
        self.labels_ = labels
        self.classes_ = np.array([labels.negative, labels.positive])
        self.result_ = outcome.result
        self.relaxed_result_ = outcome.relaxed
        self.fit_info_ = dict(outcome.extras)
        self.status_ = outcome.result.status.value if outcome.result is not None else "n/a"
        self.gap_ = outcome.result.gap if outcome.result is not None else float("nan")
        self.ranges_ = self._ranges(binner, points)
        self.scorecard_ = self._make_scorecard(list(self.feature_names_in_), labels)
        return self

    def _builder(self, binner: OrderedBinner) -> FusedLassoHinge:
        names = [v.name for v in binner.variables_]
        lo, hi = _points_bounds(self.points_range, names)
        mono = np.zeros(len(names), int)
        for name, direction in (self.monotone or {}).items():
            if name not in names:
                raise ValueError(f"monotone names unknown column {name!r}; columns are {names}")
            if direction not in _MONOTONE_WORDS:
                raise ValueError(f"monotone[{name!r}] must be 'increasing', 'decreasing', +1 or -1; got {direction!r}")
            mono[names.index(name)] = _MONOTONE_WORDS[direction]
        unknown = [m for m in self.must_include if m not in names]
        if unknown:
            raise ValueError(f"must_include names unknown columns {unknown}; columns are {names}")
        return FusedLassoHinge(penalty=self.penalty, points_lb=lo, points_ub=hi, reference=self.reference,
                               monotone=mono, max_variables=self.max_variables,
                               must_include=[names.index(m) for m in self.must_include], margin=self.margin)

    def _solve(self, builder: FusedLassoHinge, onehot, y, w, binner) -> FitOutcome:
        sizes = [v.n_bins for v in binner.variables_]
        program = builder.exact(onehot, y, sizes, sample_weight=w)
        extras: dict[str, Any] = {"n_bins": int(onehot.shape[1]), "program": program.summary()}
        options = dict(time_limit=self.time_limit, mip_rel_gap=self.mip_rel_gap, threads=self.threads,
                       verbose=self.verbose)
        prox_points = None
        if self.solver == "prox" or self.mip_start == "prox":
            prox_points, prox_result = binarsity_points(onehot, y, w, sizes, builder, self.prox_smoothing)
            extras.update(prox_result=prox_result, prox_objective=builder_objective(program, builder, prox_points))
        relaxed = solve(program.relax(), "highs", **options) if (self.relaxed or self.solver == "lp") else None
        if self.solver == "prox":
            extras["points"] = prox_points
            return FitOutcome(prox_points.theta, prox_points.intercept, prox_result, relaxed, extras)
        if self.solver == "lp":
            _require_solution(relaxed, "LP relaxation")
            extras["points"] = builder.decode(relaxed.x)
            return FitOutcome(extras["points"].theta, extras["points"].intercept, relaxed, relaxed, extras)
        if prox_points is not None:
            start = builder.lift(_round_into_range(prox_points.theta, program))
            extras["warm_start_feasible"] = program.is_feasible(start)
            extras["warm_start_objective"] = program.objective(start)
            options["warm_start"] = start
        result = solve(program, "highs", **options)
        _require_solution(result, "fused-lasso hinge ILP")
        extras["points"] = builder.decode(result.x)
        return FitOutcome(extras["points"].theta, extras["points"].intercept, result, relaxed, extras)

    # --------------------------------------------------------------- ranges
    @staticmethod
    def _ranges(binner: OrderedBinner, points: FusedPoints) -> pd.DataFrame:
        rows = []
        for j, var in enumerate(binner.variables_):
            for first, last, pts in points.ranges(j):
                lower = upper = np.nan
                if var.kind == NUMERIC:
                    lower = -np.inf if first == 0 else float(var.cuts[first - 1])
                    upper = np.inf if last == var.n_bins - 1 else float(var.cuts[last])
                rows.append((var.name, first, last, lower, upper, var.range_label(first, last), pts))
        return pd.DataFrame(rows, columns=["variable", "first_bin", "last_bin", "lower", "upper", "condition",
                                           "points"])

    def _make_scorecard(self, names: list[str], labels: LabelMap) -> ScoreCard:
        used = set(np.array(names)[self.points_.used])
        table = self.ranges_.loc[self.ranges_["variable"].isin(used), ["variable", "condition", "points"]]
        constant = sum(float(self.points_.block_points(j)[0]) for j in np.flatnonzero(~self.points_.used))
        notes = []
        if self.result_ is not None:
            notes.append(f"solver: {self.result_.backend} status={self.status_} objective={self.result_.objective:.6g} "
                         f"bound={self.result_.bound:.6g} gap={self.gap_:.3g}")
        if self.solver == "prox":
            notes.append("continuous points from the binarsity proximal path (no ILP solved)")
        title = (self._card_title if self.solver == "highs"
                 else f"Points table (continuous points, solver={self.solver!r})")
        return ScoreCard(table.reset_index(drop=True), self.intercept_ + constant, labels.positive,
                         labels.negative, title, tuple(notes))

    # -------------------------------------------------------------- predict
    def decision_function(self, X: Any) -> np.ndarray:
        """Total points + intercept, from the merged ranges applied to the raw values of ``X``."""
        self._check_fitted()
        frame = self.binner_._check_frame(X)
        total = np.full(len(frame), self.intercept_)
        for var in self.binner_.variables_:
            rng = self.ranges_[self.ranges_["variable"] == var.name]
            pts = rng["points"].to_numpy()
            if var.kind == NUMERIC:
                values = frame[var.name].to_numpy()
                var.codes(values)  # NaN / inf / dtype checks, column named
                which = np.searchsorted(rng["lower"].to_numpy()[1:], values.astype(float), side="right")
            else:
                codes = var.codes(frame[var.name].to_numpy(), unknown_category=self.unknown_category)
                which = np.searchsorted(rng["first_bin"].to_numpy()[1:], codes, side="right")
            total += pts[which]
        return total

    def predict(self, X: Any) -> np.ndarray:
        """Positive class where total points + intercept > 0 (ranges applied to raw values)."""
        self._check_fitted()
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def total_points(self, X: Any) -> np.ndarray:
        """Card score per row (sum of the points of the row's ranges, without the intercept)."""
        return self.decision_function(X) - self.intercept_

    def plot_scores(self, X: Any, y: Any, ax: Any = None) -> Any:
        """Per-class histograms of the card score with the threshold (the slides' figures)."""
        self._check_fitted()
        scores = self.decision_function(X) - self.scorecard_.intercept  # points of the card's rows
        return self.scorecard_.plot(scores=scores, y=np.asarray(y), ax=ax)


def binarsity_points(onehot, y: np.ndarray, w: np.ndarray, sizes: list[int], builder: FusedLassoHinge,
                     smoothing: float = 0.1, tol: float = 1e-6, max_iter: int = 20000):
    """Continuous points of eq. (1) by FISTA with the binarsity prox (binarsity slides, Algorithm 2).

    Solves ``min (1/N) sum_i h_delta(y_i (theta . x̄_i + b)) + (lambda / N) sum_j TV(theta_j)`` with
    every block summing to zero (binarsity's ``delta_1``), ``h_delta`` the Huberised hinge
    (``hinge - delta/2 <= h_delta <= hinge``), so it is eq. (1) divided by N up to ``N delta / 2``
    in the objective. Box, monotone and L0 options do not exist in this convex problem. The points
    are returned shifted to the builder's reference level (scores unchanged).
    """
    from formulations.losses import SmoothedHinge
    from formulations.penalties import Binarsity
    from solvers.proximal import fista

    if not np.allclose(w, w[0]):
        raise ValueError("the proximal path (solver='prox' or mip_start='prox') has no sample weights; "
                         "use solver='highs' or duplicate rows instead")
    n = len(y)
    loss = SmoothedHinge(onehot, y, smoothing=smoothing)
    penalty = Binarsity(np.asarray(sizes, dtype=np.int64), weights=builder.penalty / n)
    result = fista(loss, penalty, tol=tol, max_iter=max_iter)
    if result.x is None:
        raise RuntimeError(f"the proximal path returned no solution ({result.message})")
    return builder.normalise(result.x, result.raw["intercept"]), result


def builder_objective(program, builder: FusedLassoHinge, points: FusedPoints) -> float:
    """Objective of eq. (1) (unsmoothed hinge, this intercept) at continuous points."""
    return program.objective(builder.lift(points.theta, points.intercept))


def _points_bounds(points_range, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    default = (0, 5)
    if isinstance(points_range, Mapping):
        unknown = set(points_range) - set(names)
        if unknown:
            raise ValueError(f"points_range names unknown columns {sorted(unknown)}; columns are {names}")
        pairs = [points_range.get(n, default) for n in names]
    else:
        pairs = [points_range] * len(names)
    try:
        lo, hi = (np.array(v, dtype=float) for v in zip(*pairs))
    except (TypeError, ValueError):
        raise ValueError(f"points_range must be (lo, hi) or a dict column -> (lo, hi); got {points_range!r}") from None
    if np.any(lo != np.round(lo)) or np.any(hi != np.round(hi)) or np.any(lo > hi):
        raise ValueError(f"points_range must hold integer pairs lo <= hi; got {points_range!r}")
    return lo, hi


def _round_into_range(theta: np.ndarray, program) -> np.ndarray:
    """Round continuous points to integers inside the points box of ``program``."""
    block = program.blocks["theta"]
    return np.clip(np.round(theta), program.col_lb[block], program.col_ub[block])


def _require_solution(result, what: str) -> None:
    if result is None or not result.has_solution:
        status = "none" if result is None else result.status.value
        raise RuntimeError(f"the {what} returned no solution (status {status}); raise time_limit or "
                           "relax the options (points range, max_variables, monotone)")
