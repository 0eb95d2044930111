"""Base of the two estimators not yet moved onto the formulation contract (EYE, fused).

They solve their own programs (``_fit_coefficients``) instead of going through
:mod:`solvers.pipeline`; the generic estimator of :mod:`milpscore.estimators.base` replaces
this class once their builders meet the contract. Shared scikit-learn base:

Subclasses store their parameters in ``__init__`` (nothing else) and implement
:meth:`DirectFitClassifier._fit_coefficients`, which receives validated float ``X``,
labels ``y`` in ``{-1, +1}`` and sample weights and returns a :class:`FitOutcome`. The base
does validation, label mapping, fitted attributes (``coef_``, ``intercept_``, ``result_``,
``status_``, ``gap_``, ``scorecard_``), prediction and scoring.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from milpscore.data import LabelMap, feature_names, validate_features, validate_sample_weight, validate_xy
from milpscore.scorecard import ScoreCard
from solvers.result import Result


@dataclass
class FitOutcome:
    """What a formulation's fit produced: the model and the solver's account of it."""

    coef: np.ndarray
    intercept: float
    result: Result | None = None
    relaxed: Result | None = None
    extras: dict[str, Any] = field(default_factory=dict)


class DirectFitClassifier(ClassifierMixin, BaseEstimator):
    """Base class: linear classifier ``sign(x . coef + intercept)`` learned by a formulation.

    Predicts the positive class when ``x . coef_ + intercept_ > 0``.
    """

    #: title printed on the score card
    _card_title = "Score card"

    def _fit_coefficients(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitOutcome:
        raise NotImplementedError  # pragma: no cover - abstract

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "DirectFitClassifier":
        """Validate ``X`` and ``y``, solve the formulation, and build the score card."""
        Xa, y_pm1, names, labels = validate_xy(X, y)
        w = validate_sample_weight(sample_weight, Xa.shape[0])
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.array(names, dtype=object)
        self.n_features_in_ = Xa.shape[1]
        self.labels_ = labels
        self.classes_ = np.array([labels.negative, labels.positive])
        outcome = self._fit_coefficients(Xa, y_pm1, w)
        self.coef_ = np.asarray(outcome.coef, dtype=float)
        self.intercept_ = float(outcome.intercept)
        self.result_ = outcome.result
        self.relaxed_result_ = outcome.relaxed
        self.fit_info_ = dict(outcome.extras)
        self.status_ = outcome.result.status.value if outcome.result is not None else "n/a"
        self.gap_ = outcome.result.gap if outcome.result is not None else float("nan")
        self.scorecard_ = self._make_scorecard(names, labels)
        return self

    def _feature_names(self, n_features: int) -> list[str]:
        """Column names seen in fit (``x0 .. x{d-1}`` for arrays), usable inside ``_fit_coefficients``."""
        return list(getattr(self, "feature_names_in_", feature_names(None, n_features)))

    def _make_scorecard(self, names: list[str], labels: LabelMap) -> ScoreCard:
        notes = []
        if self.result_ is not None:
            notes.append(f"solver: {self.result_.backend} status={self.status_} objective={self.result_.objective:.6g} "
                         f"bound={self.result_.bound:.6g} gap={self.gap_:.3g}")
        return ScoreCard.from_coefficients(self.coef_, self.intercept_, names, positive_label=labels.positive,
                                           negative_label=labels.negative, title=self._card_title, notes=notes)

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")

    def decision_function(self, X: Any) -> np.ndarray:
        """Total score ``x . coef_ + intercept_`` per row."""
        self._check_fitted()
        columns = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") and hasattr(X, "columns") else None
        Xa = validate_features(X, n_features=self.n_features_in_, columns=columns, owner=type(self).__name__)
        return Xa @ self.coef_ + self.intercept_

    def predict(self, X: Any) -> np.ndarray:
        """Positive class where the score is strictly positive, else the negative class."""
        self._check_fitted()
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
