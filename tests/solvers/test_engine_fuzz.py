"""The exact engine on random instances of every shape: a model, a valid bound, an honest status, no exception.

300 instances (issue 26): SLIM and RiskSLIM, n 10-20,000 rows, d 2-150 features (0/1, few-valued,
real), with and without operational constraints, ``max_size`` None or 1-8, memory budgets from
50 MB, time limits 0.5-5 s. Every fit must end with a model that obeys the program, a bound no
larger than its objective, and a status that says "optimal" only when the bound certifies it. On
the tiny instances (at most 3 features, points in -2..2) the optimum is found by brute-force
enumeration of every point vector (and every integer intercept for RiskSLIM; SLIM's best intercept
per point vector is the instance's exact one): the bound must not exceed it, the objective must
not be below it, and "optimal" must equal it.
"""
from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from formulations.base import Model
from formulations.constraints import AtMost, Implies
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.limits import Limits
from solvers.pipeline import FEASIBILITY_TOL, solve_exact, violation
from solvers.result import Status

TINY, LARGE = 240, 60
TOL = 1e-7


def _features(rng: np.random.Generator, n: int, d: int, kind: str) -> np.ndarray:
    if kind == "binary":
        return (rng.random((n, d)) < rng.uniform(0.1, 0.6, d)).astype(float)
    if kind == "few":
        return rng.integers(0, rng.integers(2, 6), size=(n, d)).astype(float)
    return np.round(rng.normal(size=(n, d)), 2)


def _labels(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    d = X.shape[1]
    w = rng.integers(-2, 3, size=d) * (rng.random(d) < min(1.0, 4 / d))
    score = (X - X.mean(axis=0)) @ w + rng.logistic(size=X.shape[0]) * rng.uniform(0.3, 2.0)
    y = np.where(score > np.quantile(score, rng.uniform(0.5, 0.9)), 1, -1)
    y[:2] = (1, -1)  # both classes, always
    return y


def _case(seed: int, tiny: bool):
    rng = np.random.default_rng(seed)
    if tiny:
        n, d, bound = int(rng.integers(10, 60)), int(rng.integers(2, 4)), int(rng.integers(1, 3))
    else:
        n = int(rng.choice([100, 500, 2000, 5000, 20000], p=[0.3, 0.3, 0.2, 0.15, 0.05]))
        d, bound = int(rng.integers(5, 151)), int(rng.integers(1, 6))
    kind = str(rng.choice(["binary", "few", "real"]))
    X = _features(rng, n, d, kind)
    y = _labels(rng, X)
    max_size = None if rng.random() < 0.3 else int(rng.integers(1, min(8, d) + 1))
    constraints = ()
    if rng.random() < 0.3:
        a, b = (f"x{j}" for j in rng.choice(d, 2, replace=False))
        constraints = (AtMost([a, b], 1),) if rng.random() < 0.5 else (Implies(a, b),)
    family = "slim" if rng.random() < 0.5 else "riskslim"
    c0 = float(rng.choice([1e-4, 1e-3, 1e-2]))
    if family == "slim":
        spec = SLIM(coef_bound=bound, c0=c0, max_size=max_size, constraints=constraints)
    else:
        spec = RiskSLIM(coef_bound=bound, c0=c0, max_size=max_size, constraints=constraints)
    memory = int(float(rng.choice([50, 200, 1000, 8000])) * 2**20)
    time_limit = float(rng.choice([0.5, 1.0, 2.0, 5.0])) if tiny else float(rng.choice([0.5, 1.0]))
    return spec, X, y, Limits(time_limit=time_limit, memory=memory, mip_rel_gap=1e-6)


def _brute_force(instance) -> float:
    """Least true objective over every point vector in the box (of at most ``max_size`` non-zeros)
    that obeys the operational constraints, with its best intercept."""
    cs, spec = instance.coefficients, instance.spec
    d = cs.lb.size
    ranges = [range(int(math.ceil(cs.lb[j])), int(math.floor(cs.ub[j])) + 1) for j in range(d)]
    k = d if spec.max_size is None else spec.max_size
    best = math.inf
    for coef in itertools.product(*ranges):
        coef = np.array(coef, dtype=float)
        if np.count_nonzero(coef) > k:
            continue
        if isinstance(spec, SLIM):
            models = [instance.with_best_intercept(coef)]
        else:
            lo, hi = instance.intercept_bounds
            models = [Model(coef, float(b)) for b in range(int(math.ceil(lo)), int(math.floor(hi)) + 1)]
        for model in models:
            if instance.constraint_violation(model) <= 1e-9:
                best = min(best, instance.objective(model))
    return best


def _check(spec, X, y, limits, reference: bool) -> float:
    instance = spec.instance(X, y)
    started = time.perf_counter()
    fit = solve_exact(instance, limits=limits)
    elapsed = time.perf_counter() - started
    assert fit.model is not None, fit.message
    assert violation(instance, fit.model) <= FEASIBILITY_TOL, fit.message
    assert fit.objective == pytest.approx(instance.objective(fit.model), abs=1e-12)
    assert fit.bound <= fit.objective + TOL, fit.message
    if fit.status == Status.OPTIMAL:
        assert fit.objective - fit.bound <= limits.mip_rel_gap * max(abs(fit.objective), 1e-10) + 1e-9
    else:
        assert fit.status == Status.FEASIBLE, (fit.status, fit.message)
    ran = [r for r in fit.steps if r.ran]
    assert ran or fit.status == Status.OPTIMAL or "no time left" in fit.message, fit.message
    if reference:
        optimum = _brute_force(instance)
        assert fit.bound <= optimum + TOL, (fit.bound, optimum, fit.message)
        assert fit.objective >= optimum - TOL
        if fit.status == Status.OPTIMAL:
            assert fit.objective == pytest.approx(optimum, rel=1e-6, abs=1e-9), fit.message
    return elapsed - limits.time_limit


def test_tiny_instances_agree_with_brute_force():
    overruns = [_check(*_case(seed, tiny=True), reference=True) for seed in range(TINY)]
    # a limit is a limit: generous slack for a loaded machine, not a speed claim
    assert max(overruns) < 1.5


def test_instances_of_every_shape_end_with_a_model_and_a_valid_bound():
    overruns = [_check(*_case(10_000 + seed, tiny=False), reference=False) for seed in range(LARGE)]
    assert max(overruns) < 1.5
