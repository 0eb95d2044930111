"""Facets instances for the formulation contract test (hinge MILP, cutting-plane logistic / least squares, SCF)."""
import numpy as np

from formulations.facets import Facets


def _data(seed=0, n=24, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.array([1.0, -1.5, 0.5, 0.3])[:d] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


CASES = [
    ("facets-hinge", lambda: Facets("hinge", lam=0.05, grid_unit=0.5, bound=2).instance(*_data())),
    ("facets-hinge-scf", lambda: Facets("hinge", lam=0.04, grid_unit=0.7, eps=0.3, bound=2).instance(*_data(1))),
    ("facets-logistic", lambda: Facets("logistic", lam=0.02, grid_unit=0.5, bound=2).instance(*_data(2))),
    ("facets-logistic-scf-weighted", lambda: Facets("logistic", lam=0.03, grid_unit=1.0, eps=0.2, bound=2).instance(
        *_data(3), sample_weight=np.linspace(0.5, 2.0, 24))),
    ("facets-least-squares-scf", lambda: Facets("least_squares", lam=0.02, grid_unit=0.3, eps=0.1, bound=2).instance(
        *_data(4, d=2))),
]
