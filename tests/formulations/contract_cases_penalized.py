"""Penalised-risk instances (EYE and the EYE paper's baselines) for the formulation contract test."""
import numpy as np

from formulations.coefficients import CoefficientSet
from formulations.eye import EYEPenalized
from formulations.penalized import PenalizedProgram
from formulations.penalties import OWL, ElasticNet, L1


def data(seed=0, n=30, d=3, real=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    z = X @ np.r_[1.0, -0.5, np.zeros(d - 2)] + 0.5 * rng.normal(size=n)
    return X, (z if real else np.where(z > 0, 1.0, -1.0))


CASES = [
    ("eye-logistic", lambda: EYEPenalized(lam=0.05, known=(1, 0, 0.5)).instance(*data())),
    ("eye-least-squares-no-intercept", lambda: EYEPenalized(lam=0.1, loss="least_squares", fit_intercept=False)
     .instance(*data(1, real=True))),
    ("penalized-owl-hinge", lambda: PenalizedProgram(OWL(np.array([0.1, 0.05, 0.0])), loss="hinge")
     .instance(*data(2))),
    ("penalized-enet-integer-hinge", lambda: PenalizedProgram(
        ElasticNet(0.05, 0.5), loss="hinge", coefficients=CoefficientSet.uniform(3, bound=2, integer=True))
     .instance(*data(3))),
    ("penalized-l1-logistic-weighted", lambda: PenalizedProgram(L1(0.02)).instance(
        *data(4), sample_weight=np.linspace(0.5, 2.0, 30))),
]
