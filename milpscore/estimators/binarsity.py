"""BinarsityLogisticClassifier: the binarsity slides' logistic GLM on ordered one-hot bins.

From a table of numeric and categorical columns (a DataFrame, a numpy array, a scipy.sparse
matrix or a DataFrame of pandas sparse columns) the classifier

1. bins every column into ordered one-hot bins (:class:`milpscore.data.binning.OrderedBinner`,
   columns by position for arrays: ``x0, x1, ...``), a CSR design with int32 indices;
2. fits the logistic loss plus the weighted binarsity penalty with the slides' data-driven
   weights :math:`\\hat\\omega_{j,k}` (Alaya 2018; block total variation plus sum-to-zero per
   block) along a warm-started path of strengths, each point certified by its duality gap
   (:func:`solvers.proximal.binarsity.binarsity_logistic_path`);
3. reads off the block support (the raw columns whose points are not constant), the points
   table of the fitted blocks merged into ranges, and its rounding onto integer points: the
   points scaled so that the widest block spans ``max_points``, rounded, each block shifted so
   that its smallest points are 0 (:func:`formulations.bins.round_points`); the card
   (:class:`~milpscore.cards.scorecard.ScoreCard`) prints that integer table.

``predict`` / ``decision_function`` use the continuous (certified) model;
:meth:`points_decision_function` and :meth:`predict_points` use the integer card.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted

from formulations.bins import FusedPoints, round_points
from formulations.losses import Logistic
from milpscore.data.binning import OrderedBinner, _as_frame
from milpscore.data.dask_tables import encode_dask_labels, is_dask_collection, onehot_blocks, partition_lengths
from milpscore.data.validation import encode_labels
from milpscore.estimators.fused import ranges_table
from milpscore.cards.scorecard import ScoreCard
from solvers.proximal.binarsity import PATH_MAX_ITER, PATH_TOL, binarsity_path, block_support
from solvers.proximal.distributed import DaskLogistic


class BinarsityLogisticClassifier(LinearClassifierMixin, BaseEstimator):
    """Logistic regression with weighted binarsity on ordered bins (binarsity slides), with a card.

    Parameters
    ----------
    n_bins : int or dict column -> int
        Maximum number of bins per numeric column (quantile cut points; one bin per distinct
        value when there are at most that many).
    strength : float > 0
        Strength ``s`` of the fitted model: the penalty is ``s * sum_j sum_k w_jk |theta_jk -
        theta_j(k-1)|`` with the slides' weights ``w_jk = sqrt(log(d) pi_jk / n)`` (``s`` is the
        constant of the slides' O(.)). Larger values merge more bins and drop more columns.
    n_strengths : int
        Points of the warm-started path from the smallest strength giving the null model down to
        ``strength`` (one point when ``strength`` is at or above it).
    tol : float
        Relative duality gap certifying each point of the path.
    max_iter : int
        FISTA iterations per point of the path.
    max_points : int >= 1
        Integer card: the points of the widest block (largest minus smallest points) after
        scaling; every block is scaled by the same factor, rounded and shifted to start at 0.
    categories, unknown_category : see :class:`~milpscore.data.binning.OrderedBinner`.
    pos_label : the class the points score for (default: the larger label).

    Attributes
    ----------
    binner_ : the fitted :class:`~milpscore.data.binning.OrderedBinner`.
    coef_ : (d,) points per bin (each block sums to 0); intercept_ : float.
    path_ : list of :class:`~solvers.proximal.path.PathPoint` (decreasing strength); the last is the model.
    path_table_ : DataFrame ``strength, objective, bound, gap, status, iterations, n_used``.
    status_, gap_, objective_, bound_, n_iter_ : certificate of the last point (``gap_`` relative).
    penalty_ : the :class:`~formulations.penalties.Binarsity` of the fitted strength.
    support_ : (n_features_in_,) bool, the raw columns used; used_features_ : their names.
    points_ : :class:`~formulations.bins.FusedPoints` of the continuous model; ranges_ : its merged ranges.
    integer_points_ : :class:`~formulations.bins.FusedPoints` of the integer card (intercept in points);
    points_scale_ : points per unit of log-odds of the card; integer_ranges_ : its ranges.
    scorecard_ : the integer card; classes_, n_features_in_, feature_names_in_.
    """

    def __init__(self, n_bins: int | Mapping[str, int] = 10, strength: float = 1.0, n_strengths: int = 10,
                 tol: float = PATH_TOL, max_iter: int = PATH_MAX_ITER, max_points: int = 10,
                 categories: Mapping[str, Sequence] | None = None, unknown_category: str = "error",
                 pos_label: Any = None):
        self.n_bins = n_bins
        self.strength = strength
        self.n_strengths = n_strengths
        self.tol = tol
        self.max_iter = max_iter
        self.max_points = max_points
        self.categories = categories
        self.unknown_category = unknown_category
        self.pos_label = pos_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        if isinstance(self.max_points, bool) or not isinstance(self.max_points, (int, np.integer)) \
                or self.max_points < 1:
            raise ValueError(f"max_points must be an integer >= 1, got {self.max_points!r}")
        for name in ("strength", "tol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                    or not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any) -> "BinarsityLogisticClassifier":
        """Bin ``X``, solve the certified path, and build the points tables and the card."""
        self._check_params()
        self.binner_ = OrderedBinner(self.n_bins, self.categories, self.unknown_category).fit(X)
        loss, labels = self._loss(X, y)
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.array(self.binner_.feature_names_in_, dtype=object)
        elif hasattr(self, "feature_names_in_"):  # refitted on an array: no names from an earlier fit
            del self.feature_names_in_
        self.n_features_in_ = len(self.binner_.variables_)
        self.labels_ = labels
        self.classes_ = np.array([labels.negative, labels.positive])
        sizes = np.array([v.n_bins for v in self.binner_.variables_], dtype=np.int64)
        self.path_, base = binarsity_path(loss, sizes, strength=float(self.strength), n_strengths=self.n_strengths,
                                          tol=float(self.tol), max_iter=int(self.max_iter))
        last = self.path_[-1]
        self.penalty_ = base.scaled(last.lam)
        self.coef_ = np.asarray(last.coef, dtype=float)
        self.intercept_ = float(last.intercept)
        self.status_ = last.result.status.value
        self.gap_ = float(last.result.gap)
        self.objective_ = float(last.objective)
        self.bound_ = float(last.result.bound)
        self.n_iter_ = int(sum(p.result.iterations for p in self.path_))
        self.path_table_ = pd.DataFrame({
            "strength": [p.lam for p in self.path_], "objective": [p.objective for p in self.path_],
            "bound": [p.result.bound for p in self.path_], "gap": [p.result.gap for p in self.path_],
            "status": [p.result.status.value for p in self.path_],
            "iterations": [p.result.iterations for p in self.path_],
            "n_used": [int(block_support(p.coef, sizes).sum()) for p in self.path_]})
        self.support_ = block_support(self.coef_, sizes)
        names = [v.name for v in self.binner_.variables_]
        self.used_features_ = [n for n, used in zip(names, self.support_) if used]
        self.points_ = FusedPoints(self.coef_, self.intercept_, self.binner_.blocks_)
        self.ranges_ = ranges_table(self.binner_, self.points_)
        self._round()
        self.scorecard_ = self._make_scorecard(labels)
        if self.status_ != "optimal":
            warnings.warn(f"BinarsityLogisticClassifier: the last point of the path is not certified (relative "
                          f"duality gap {self.gap_:.3g} > tol {self.tol:g} after max_iter={self.max_iter}); "
                          "raise max_iter", ConvergenceWarning, stacklevel=2)
        return self

    def _loss(self, X: Any, y: Any) -> tuple[Any, Any]:
        """The logistic loss on the one-hot design of ``X`` and the label map: in memory
        (:class:`~formulations.losses.Logistic` on CSR), or over the partitions of a dask table
        (:class:`~solvers.proximal.distributed.DaskLogistic` on CSR chunks, on the workers)."""
        if is_dask_collection(X):
            lengths = partition_lengths(X)
            y_pm1, labels = encode_dask_labels(y, lengths, pos_label=self.pos_label)
            design = onehot_blocks(X, self.binner_._transform_in_memory, self.binner_.n_bins_out, lengths)
            return DaskLogistic(design, y_pm1), labels
        frame = _as_frame(X)
        y_pm1, labels = encode_labels(y, pos_label=self.pos_label)
        if frame.shape[0] != y_pm1.shape[0]:
            raise ValueError(f"X has {frame.shape[0]} rows but y has {y_pm1.shape[0]} labels; they must match")
        return Logistic(self.binner_.transform(frame), y_pm1), labels

    def _round(self) -> None:
        """Integer card: one scale for all blocks (the widest block spans ``max_points``), rounded,
        each block shifted so that its smallest points are 0; the intercept absorbs the shifts and
        is rounded up (the score being an integer, that keeps every prediction)."""
        blocks = self.binner_.blocks_
        spread = max((float(np.ptp(self.coef_[s])) for s in blocks), default=0.0)
        scale = self.max_points / spread if spread > 1e-12 else 1.0
        p = len(blocks)
        scaled = self.coef_ * scale
        inf = np.full(p, np.inf)
        points = round_points(scaled, blocks, -inf, inf, np.zeros(p, int), "min", None, np.zeros(0, int))
        # score_int(x) = sum_j points_j(x) + b_int with points_j = round(s theta_j) - min_j round(s theta_j)
        shift = sum(float(np.min(np.round(scaled[s]))) for s in blocks)
        self.points_scale_ = scale
        # integer scores: score + b > 0 iff score + ceil(b) > 0, so the base score is rounded up exactly
        self.integer_points_ = FusedPoints(points, float(math.ceil(scale * self.intercept_ + shift)), blocks)
        self.integer_ranges_ = ranges_table(self.binner_, self.integer_points_)

    def _make_scorecard(self, labels: Any) -> ScoreCard:
        """The card lists the columns whose *integer* points vary (a column the continuous model
        uses but whose points all round to one value scores nothing and is left out)."""
        sizes = [v.n_bins for v in self.binner_.variables_]
        used = {v.name for v, on in zip(self.binner_.variables_, block_support(self.integer_points_.theta, sizes)) if on}
        table = self.integer_ranges_.loc[self.integer_ranges_["variable"].isin(used),
                                         ["variable", "condition", "points"]]
        notes = (f"binarsity logistic path ({len(self.path_)} strengths, last {self.path_[-1].lam:.4g}): "
                 f"status={self.status_} objective={self.objective_:.6g} bound={self.bound_:.6g} "
                 f"relative gap={self.gap_:.3g}",
                 f"points = round({self.points_scale_:.4g} x log-odds per bin), each variable's smallest at 0")
        return ScoreCard(table.reset_index(drop=True), self.integer_points_.intercept, labels.positive,
                         labels.negative, "Points table (binarsity logistic regression, rounded)", notes)

    # -------------------------------------------------------------- predict
    def _design(self, X: Any) -> Any:
        """One-hot design of ``X``: CSR, or a dask array of CSR row chunks for a dask table."""
        check_is_fitted(self, "coef_")
        if is_dask_collection(X):
            return self.binner_.transform(X)
        frame = _as_frame(X)
        if not hasattr(X, "columns") and frame.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {frame.shape[1]} features, but BinarsityLogisticClassifier is expecting "
                             f"{self.n_features_in_} features as input")
        return self.binner_.transform(frame)

    def decision_function(self, X: Any) -> Any:
        """Log-odds of ``classes_[1]``: ``onehot(X) . coef_ + intercept_`` (the certified model);
        a dask array, computed partition by partition, for a dask table."""
        return _linear(self._design(X), self.coef_, self.intercept_)

    def predict(self, X: Any) -> Any:
        """``classes_[1]`` where :meth:`decision_function` > 0, else ``classes_[0]``."""
        return _to_classes(self.decision_function(X), self.classes_)

    def predict_proba(self, X: Any) -> Any:
        """(n, 2) class probabilities of the logistic model, columns in ``classes_`` order."""
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        stack = np.column_stack if isinstance(p, np.ndarray) else _dask_column_stack
        return stack([1.0 - p, p])

    def points_decision_function(self, X: Any) -> Any:
        """Card score plus its base score per row: sum of the integer points of the row's ranges
        plus ``integer_points_.intercept`` (``> 0`` predicts ``classes_[1]``)."""
        return _linear(self._design(X), self.integer_points_.theta, self.integer_points_.intercept)

    def predict_points(self, X: Any) -> Any:
        """The integer card's prediction (``classes_[1]`` where :meth:`points_decision_function` > 0)."""
        return _to_classes(self.points_decision_function(X), self.classes_)


def _row_scores(block: Any, coef: np.ndarray, intercept: float) -> np.ndarray:
    return np.asarray(block @ coef, dtype=np.float64).reshape(-1) + intercept


def _linear(design: Any, coef: np.ndarray, intercept: float) -> Any:
    """``design @ coef + intercept`` for CSR / dense designs, block by block for a dask array."""
    if is_dask_collection(design):
        return design.map_blocks(_row_scores, np.asarray(coef, dtype=np.float64), float(intercept), drop_axis=1,
                                 dtype=np.float64, meta=np.array((), dtype=np.float64))
    return _row_scores(design, coef, intercept)


def _to_classes(scores: Any, classes: np.ndarray) -> Any:
    if is_dask_collection(scores):
        return scores.map_blocks(lambda s: classes[(s > 0).astype(int)], dtype=classes.dtype,
                                 meta=np.array((), dtype=classes.dtype))
    return classes[(np.asarray(scores) > 0).astype(int)]


def _dask_column_stack(columns: list) -> Any:
    import dask.array as da

    return da.stack(columns, axis=1)
