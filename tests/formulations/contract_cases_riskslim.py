"""RiskSLIM instances for the formulation contract test."""
import numpy as np

from formulations.coefficients import CoefficientSet
from formulations.riskslim import RiskSLIM


def _data(seed=0, n=30, d=3, real=False):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 1) if real else rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 0.8, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


CASES = [
    ("riskslim-binary", lambda: RiskSLIM(coef_bound=2, c0=0.01).instance(*_data())),
    ("riskslim-real-max-size", lambda: RiskSLIM(coef_bound=2, c0=1e-3, max_size=1).instance(*_data(1, real=True))),
    ("riskslim-range-excluding-zero", lambda: RiskSLIM(
        coefficients=CoefficientSet.uniform(3, 2).with_feature("x1", lb=1, ub=2), c0=0.02).instance(*_data(2))),
]
