"""scikit-learn estimators: one generic estimator and one thin preset per formulation.

=============================  ==========================================================
``IntegerLinearClassifier``    generic: any catalog formulation, any pipeline method
``SLIMClassifier``             SLIM (0-1 loss, L0 + tiny L1, integer points), the SLIM route
``ConvexRoundingClassifier``   convex-rounding / sparse-rounding LP + randomized rounding, or the ILP
``LocalSearchClassifier``      supermodular local search / hill climbing, ternary weights
``FacetsClassifier``           Facets / SCF penalty: proximal path, ECOS, or exact integer MILP
``EYEClassifier``              EYE credible-model penalty (ECOS or proximal path)
``FusedScoreClassifier``       fused-lasso hinge ILP: points table over ordered bins
``RiskScoreClassifier``        RiskSLIM: certified logistic risk score (the RiskSLIM route), risk table
``BinarsityLogisticClassifier``  logistic GLM + weighted binarsity on ordered bins (certified path), card
=============================  ==========================================================

Imported lazily: ``from milpscore.estimators import SLIMClassifier`` loads only what it needs.
"""
from __future__ import annotations

import importlib

_WHERE = {"IntegerLinearClassifier": "base", "SLIMClassifier": "slim", "ConvexRoundingClassifier": "rounding",
          "LocalSearchClassifier": "rounding", "FacetsClassifier": "facets", "EYEClassifier": "eye",
          "FusedScoreClassifier": "fused", "RiskScoreClassifier": "riskscore",
          "BinarsityLogisticClassifier": "binarsity"}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"milpscore.estimators.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'milpscore.estimators' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
