"""SLIM instances for the formulation contract test."""
import numpy as np

from formulations.coefficients import CoefficientSet
from formulations.slim import SLIM


def _data(seed=0, n=30, d=3, real=False):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 2) if real else rng.integers(0, 3, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 0.5, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


CASES = [
    ("slim-integer", lambda: SLIM(coef_bound=2, c0=0.01).instance(*_data())),
    ("slim-real-max-size", lambda: SLIM(coef_bound=2, c0=0.01, max_size=1).instance(*_data(1, real=True))),
    ("slim-range-excluding-zero", lambda: SLIM(
        coefficients=CoefficientSet.uniform(3, 2).with_feature("x1", lb=1, ub=2), c0=0.02).instance(*_data(2))),
]
