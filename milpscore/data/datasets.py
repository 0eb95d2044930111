"""Bundled default data: scikit-learn's breast-cancer data (Wisconsin diagnostic), binarised.

The data ship with scikit-learn (a dependency), so nothing is downloaded. Each of the 30
continuous features becomes ``feature >= t`` indicators at quantile thresholds
(:class:`milpscore.data.binarize.ThresholdBinarizer`), the form a SLIM score card needs.
"""
from __future__ import annotations

import pandas as pd
from sklearn.datasets import load_breast_cancer

from milpscore.data.binarize import ThresholdBinarizer


def load_default(max_cuts: int = 2) -> tuple[pd.DataFrame, pd.Series]:
    """Binarised breast-cancer features (569 rows) and labels ``"malignant"`` / ``"benign"``."""
    raw = load_breast_cancer(as_frame=True)
    X = ThresholdBinarizer(max_cuts=max_cuts).fit_transform(raw.frame.drop(columns="target"))
    y = raw.target.map({0: "malignant", 1: "benign"}).rename("diagnosis")
    return X, y
