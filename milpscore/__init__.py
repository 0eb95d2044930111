"""milpscore: exact and relaxed integer programs for sparse linear models with small integer weights.

The user-facing layer: data validation, estimators, score cards, comparison tables and plots::

    from milpscore import SLIMClassifier, compare, Limits
    card = SLIMClassifier(c0=0.01, max_size=5).fit(X, y).scorecard_
    table = compare(X, y, ["slim", "convex_rounding"], time_limit=10)

The names below are imported on first use, so ``import milpscore`` stays light. ``compare`` is
bound at import: it shares its name with the module :mod:`milpscore.compare`, and importing that
module later would otherwise replace the function by the module (the module itself stays
importable: ``from milpscore.compare import COLUMNS``).
"""
from __future__ import annotations

import importlib

from milpscore.compare import compare  # bound now: the function shadows its module (see __getattr__)

__version__ = "0.1.0"

#: public name -> (module, attribute)
_WHERE = {
    "IntegerLinearClassifier": ("milpscore.estimators", "IntegerLinearClassifier"),
    "SLIMClassifier": ("milpscore.estimators", "SLIMClassifier"),
    "ConvexRoundingClassifier": ("milpscore.estimators", "ConvexRoundingClassifier"),
    "LocalSearchClassifier": ("milpscore.estimators", "LocalSearchClassifier"),
    "FacetsClassifier": ("milpscore.estimators", "FacetsClassifier"),
    "EYEClassifier": ("milpscore.estimators", "EYEClassifier"),
    "FusedScoreClassifier": ("milpscore.estimators", "FusedScoreClassifier"),
    "RiskScoreClassifier": ("milpscore.estimators", "RiskScoreClassifier"),
    "BinarsityLogisticClassifier": ("milpscore.estimators", "BinarsityLogisticClassifier"),
    "ScoreCard": ("milpscore.cards.scorecard", "ScoreCard"),
    "solve": ("solvers.registry", "solve"),
    "Limits": ("solvers.limits", "Limits"),
    "solve_exact": ("solvers.pipeline", "solve_exact"),
    "solve_relaxed": ("solvers.pipeline", "solve_relaxed"),
    "solve_rounded": ("solvers.pipeline", "solve_rounded"),
}

__all__ = sorted([*_WHERE, "compare"])


def __getattr__(name: str):
    if name in _WHERE:
        module, attribute = _WHERE[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'milpscore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
