"""milpscore: exact and relaxed integer programs for sparse linear models with small integer weights.

The user-facing layer: data validation, estimators, score cards, comparison tables and plots.
"""
__version__ = "0.1.0"
