"""FusedScoreClassifier: a DiaRem-style points table learned by the fused-lasso hinge ILP.

From a table of numeric and categorical variables the classifier (1) bins every column into
ordered one-hot bins (:class:`milpscore.data.binning.OrderedBinner`), (2) learns integer points per
bin and an intercept with the fused-lasso hinge ILP (Sokolovska, eqs. 1-5;
:class:`formulations.fused.FusedLassoHinge`) through :func:`solvers.pipeline.run`, and (3)
merges adjacent bins with equal points into ranges ("Age < 40: 0, 40-49: 1, ..."). ``predict``
applies the points of the bins of the raw values, which are the merged ranges' points.

``solver="lp"`` solves the LP relaxation instead (continuous points), ``solver="prox"`` the
binarsity proximal path (continuous points, Alaya 2018, Algorithm 2;
:meth:`formulations.fused.FusedInstance.composite`). The ILP starts from its LP relaxation rounded
into the table, or the flat table (:mod:`solvers.heuristics.fused`), so a fit stopped at its time
limit keeps a table; ``mip_start="prox"`` also offers the proximal points rounded into the table
(:func:`solvers.pipeline.solve_rounded`).
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from formulations.base import Model
from formulations.fused import FusedLassoHinge, FusedPoints
from milpscore.data.binning import NUMERIC, OrderedBinner, _as_frame
from milpscore.data.validation import LabelMap
from milpscore.estimators.base import IntegerLinearClassifier
from milpscore.cards.scorecard import ScoreCard

_SOLVERS = {"highs": ("exact", "highs"), "lp": ("relaxed", "highs"), "prox": ("relaxed", "prox")}
_MONOTONE_WORDS = {"increasing": 1, "decreasing": -1, 1: 1, -1: -1, 0: 0}
#: options of the proximal path (FISTA on the Huberised hinge + binarsity)
PROX_OPTIONS = {"tol": 1e-6, "max_iter": 20000}


class FusedScoreClassifier(IntegerLinearClassifier):
    """Points table with contiguous ranges and integer points, learned by the fused-lasso hinge ILP.

    Parameters
    ----------
    n_bins : int or dict column -> int
        Maximum number of bins per numeric column (quantile cut points; every distinct value
        when there are at most that many).
    lam : float
        lambda of eq. (1): cost of one point of difference between adjacent bins, in units of
        hinge loss of one sample. Larger values merge more bins.
    points_range : (lo, hi) or dict column -> (lo, hi)
        Integer points per bin (default ``(0, 5)``; dict entries override ``(0, 5)`` per column).
    reference : ``"min"`` (smallest points of each variable are 0), ``"first"`` or ``"sum_to_zero"``.
    monotone : dict column -> ``"increasing"`` / ``"decreasing"`` (or +1 / -1), optional.
    max_size : int or None
        Maximum number of variables with non-zero points.
    must_include : column names always given a place in the model (see ``max_size``).
    categories : dict column -> ordered categories (see :class:`~milpscore.data.binning.OrderedBinner`).
    unknown_category : ``"error"`` or ``"first"`` (bin of an unseen category at predict time).
    solver : ``"highs"`` (the ILP), ``"lp"`` (its LP relaxation: continuous points) or ``"prox"``
        (continuous binarsity points by the proximal path).
    mip_start : None or ``"prox"``: warm-start the ILP from the rounded proximal points.
    time_limit : wall-clock seconds of the whole fit (a time-limited ILP keeps its best model,
        status ``"feasible"``, with its gap). node_limit, mip_rel_gap, threads, seed, verbose: see
        :class:`solvers.limits.Limits`.
    relaxed : bool
        Also solve the LP relaxation (same time budget) and keep it in ``relaxed_fit_``.
    margin : hinge margin (1 in eq. 3).
    prox_smoothing : width delta of the Huberised hinge used by the proximal path.
    constraints : operational constraints over the columns (variables), see
        :class:`formulations.fused.FusedLassoHinge`: ``Monotone(cols, direction, kind="levels")``,
        ``AtMost`` / ``AtLeast`` / ``Exactly`` / ``Implies`` / ``Linear`` on which variables are used.

    Attributes
    ----------
    binner_ : the fitted :class:`~milpscore.data.binning.OrderedBinner`.
    points_ : :class:`~formulations.fused.FusedPoints` (points per bin at the reference level,
        intercept, blocks).
    coef_ : points per one-hot bin; intercept_ : intercept (rounded up to an integer when the
        points are integers: the same classifier, since scores are then integers).
    ranges_ : DataFrame ``variable, first_bin, last_bin, lower, upper, condition, points``.
    scorecard_, fit_, result_, status_, gap_, objective_, bound_, relaxed_fit_, start_fit_
    (the rounded proximal start with ``mip_start="prox"``), fit_info_, classes_.
    """

    _card_title = "Points table (fused-lasso hinge ILP)"

    def __init__(self, n_bins: int | Mapping[str, int] = 5, lam: float = 1.0,
                 points_range: tuple[int, int] | Mapping[str, tuple[int, int]] = (0, 5), reference: str = "min",
                 monotone: Mapping[str, Any] | None = None, max_size: int | None = None,
                 must_include: Sequence[str] = (), categories: Mapping[str, Sequence] | None = None,
                 unknown_category: str = "error", solver: str = "highs", mip_start: str | None = None,
                 time_limit: float | None = 60.0, node_limit: int | None = None, mip_rel_gap: float = 1e-4,
                 threads: int = 1, seed: int = 0, verbose: bool = False, relaxed: bool = False, margin: float = 1.0,
                 prox_smoothing: float = 0.1, constraints: Sequence = (), pos_label: Any = None):
        self.n_bins = n_bins
        self.lam = lam
        self.points_range = points_range
        self.reference = reference
        self.monotone = monotone
        self.max_size = max_size
        self.must_include = must_include
        self.categories = categories
        self.unknown_category = unknown_category
        self.solver = solver
        self.mip_start = mip_start
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.relaxed = relaxed
        self.margin = margin
        self.prox_smoothing = prox_smoothing
        self.constraints = constraints
        self.pos_label = pos_label

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, *, limits: Any = None) -> "FusedScoreClassifier":
        """Bin ``X`` (DataFrame of numeric / categorical columns), solve, and build the points table
        (``limits``: as :meth:`IntegerLinearClassifier.fit`)."""
        self._method()  # parameter errors before any work
        return super().fit(X, y, sample_weight, limits=limits)

    def _prepare_input(self, X: Any) -> pd.DataFrame:
        """Fit the binner on the raw columns (categorical ones included, which the generic numeric
        validation refuses) and hand the bin codes of every column to the generic fit;
        :meth:`_design` turns them into the one-hot matrix."""
        frame = _as_frame(X)
        self.binner_ = OrderedBinner(self.n_bins, self.categories, self.unknown_category).fit(frame)
        return pd.DataFrame(self.binner_.codes(frame), columns=[v.name for v in self.binner_.variables_])

    def _method(self) -> tuple[str, str | None, dict]:
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {tuple(_SOLVERS)}, got {self.solver!r}")
        if self.mip_start not in (None, "prox"):
            raise ValueError(f"mip_start must be None or 'prox', got {self.mip_start!r}")
        method, backend = _SOLVERS[self.solver]
        return method, backend, dict(PROX_OPTIONS) if backend == "prox" else {}

    def _start(self, instance: Any, limits: Any) -> Any:
        """The proximal points rounded into the table (a :class:`~solvers.pipeline.Fit`, kept in
        ``start_fit_``) with ``mip_start="prox"``; the exact solve checks it before using it."""
        if self.mip_start is None or self.solver != "highs":
            return None
        from solvers.pipeline import solve_relaxed, solve_rounded

        prox = solve_relaxed(instance, "prox", limits=limits, options=PROX_OPTIONS)
        self.start_fit_ = solve_rounded(instance, prox, limits=limits)
        return self.start_fit_

    def _formulation(self, y: np.ndarray, names: list[str]) -> FusedLassoHinge:
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
        return FusedLassoHinge(lam=self.lam, margin=self.margin, points_lb=lo,
                               points_ub=hi, reference=self.reference, monotone=mono,
                               max_size=self.max_size,
                               must_include=[names.index(m) for m in self.must_include],
                               blocks=[v.n_bins for v in self.binner_.variables_], smoothing=self.prox_smoothing,
                               constraints=tuple(self.constraints or ()), variable_names=tuple(names))

    def _design(self, X: np.ndarray, names: list[str], *, fitting: bool) -> sp.csr_matrix:
        """One-hot matrix of the bin codes ``X`` (one column of codes per variable, from :meth:`fit`)."""
        codes = np.asarray(X, dtype=np.int64)
        n, p = codes.shape
        offsets = np.array([b.start for b in self.binner_.blocks_], dtype=np.int64)
        return sp.csr_matrix((np.ones(n * p), (codes + offsets).reshape(-1), np.arange(0, n * p + 1, p)),
                             shape=(n, self.binner_.n_bins_out))

    def _model_coefficients(self, model: Model) -> tuple[np.ndarray, float]:
        """Points at the reference level; an integer table gets its intercept rounded up (same classifier)."""
        normal = self.instance_.normalise(model)
        self.points_ = FusedPoints(normal.coef, normal.intercept, self.instance_.blocks)
        integral = np.all(normal.coef == np.round(normal.coef))
        return normal.coef, float(math.ceil(normal.intercept - 1e-9)) if integral else normal.intercept

    # --------------------------------------------------------------- ranges
    def _ranges(self) -> pd.DataFrame:
        return ranges_table(self.binner_, self.points_)

    def _make_scorecard(self, names: list[str], labels: LabelMap) -> ScoreCard:
        self.ranges_ = self._ranges()
        used = set(np.array(names)[self.points_.used])
        table = self.ranges_.loc[self.ranges_["variable"].isin(used), ["variable", "condition", "points"]]
        constant = sum(float(self.points_.block_points(j)[0]) for j in np.flatnonzero(~self.points_.used))
        notes = self._notes()
        if self.solver == "prox":
            notes.append("continuous points from the binarsity proximal path (no ILP solved)")
        title = self._card_title if self.solver == "highs" else f"Points table (continuous points, solver={self.solver!r})"
        card = ScoreCard(table.reset_index(drop=True), self.intercept_ + constant, labels.positive, labels.negative,
                         title, tuple(notes))
        if card.is_integral or table.empty:
            return card
        # continuous points: printed rounded, keeping every training row's prediction (each row's range indicator)
        onehot, kept = sp.csc_matrix(self.instance_.X), self.ranges_.loc[table.index]
        start = {v.name: b.start for v, b in zip(self.binner_.variables_, self.binner_.blocks_)}
        return card.with_training_rows(np.column_stack([
            np.asarray(onehot[:, start[v] + a:start[v] + b + 1].sum(axis=1)).ravel()
            for v, a, b in kept[["variable", "first_bin", "last_bin"]].itertuples(index=False)]))

    # -------------------------------------------------------------- predict
    def _coef_names(self) -> list[str]:
        return list(self.binner_.get_feature_names_out())

    def _validated(self, X: Any) -> sp.csr_matrix:
        """One-hot bins of raw ``X`` (the fitted binner checks columns, NaN and unseen categories)."""
        check_is_fitted(self, "coef_")
        return self.binner_.transform(X)

    def plot_scores(self, X: Any, y: Any, ax: Any = None) -> Any:
        """Per-class histograms of the card score with the threshold (the slides' figures)."""
        check_is_fitted(self, "coef_")
        scores = self.decision_function(X) - self.scorecard_.intercept  # points of the card's rows
        return self.scorecard_.plot(scores=scores, y=np.asarray(y), ax=ax)


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


def ranges_table(binner: OrderedBinner, points: FusedPoints) -> pd.DataFrame:
    """Merged ranges of a points table over a fitted binner's bins: one row per run of adjacent
    bins with equal points, ``variable, first_bin, last_bin, lower, upper, condition, points``."""
    rows = []
    for j, var in enumerate(binner.variables_):
        for first, last, pts in points.ranges(j):
            lower = upper = np.nan
            if var.kind == NUMERIC:
                lower = -np.inf if first == 0 else float(var.cuts[first - 1])
                upper = np.inf if last == var.n_bins - 1 else float(var.cuts[last])
            rows.append((var.name, first, last, lower, upper, var.range_label(first, last), pts))
    return pd.DataFrame(rows, columns=["variable", "first_bin", "last_bin", "lower", "upper", "condition", "points"])
