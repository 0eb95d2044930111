"""Convex-rounding instances for the formulation contract test (ternary / binary, budgets, thresholds)."""
import numpy as np

from formulations.rounding import ConvexRounding


def _data(seed=0, n=30, d=3, real=False):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 2) if real else rng.poisson(1.5, (n, d)).astype(float)
    y = np.where(X @ rng.choice([-1.0, 1.0], d) + rng.normal(0, 0.7, n) > (0 if real else 0.5), 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


CASES = [
    ("rounding-ternary-learned-intercept", lambda: ConvexRounding(margin=1.0).instance(*_data())),
    ("rounding-ternary-max-size", lambda: ConvexRounding(margin=2.0, max_size=1).instance(*_data(1, real=True))),
    ("rounding-binary-fixed-threshold", lambda: ConvexRounding(margin=1.0, weights="binary", threshold=2.0)
     .instance(*_data(2))),
    ("rounding-ternary-zero-threshold-weighted", lambda: ConvexRounding(margin=0.5, threshold=0.0, max_size=2)
     .instance(*_data(3, n=25, d=4), np.linspace(0.5, 2.0, 25))),
]
