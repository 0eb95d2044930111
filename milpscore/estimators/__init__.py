"""scikit-learn estimators, one per formulation, sharing :class:`IntegerLinearClassifier`."""
from milpscore.estimators.base import FitOutcome, IntegerLinearClassifier

__all__ = ["FitOutcome", "IntegerLinearClassifier"]
