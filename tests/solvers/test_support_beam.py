"""The Bayes-error beam over supports (solvers.heuristics.support_beam) against brute force."""
from __future__ import annotations

import math

import numpy as np
import pytest

from formulations.coefficients import CoefficientSet
from formulations.constraints import AtMost
from formulations.slim import SLIM
from solvers.heuristics.slim import heuristic
from solvers.heuristics.support_beam import applies, bayes_beam, beam_memory
from solvers.exact.zero_one_supports import zero_one
from solvers.limits import MIN_MEMORY, Limits
from tests.solvers.test_box_wide import _brute_force as brute_force

#: points -BOUND..BOUND, at most SIZE features (brute force: every such point vector, best intercept)
BOUND, SIZE = 2, 3


def _conjunction(seed: int, n: int = 400, d: int = 8):
    """0/1 features; positives gather where three of them are all 1 (and are rare elsewhere), so no
    one feature beats the constant model, while their conjunction does."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d)).astype(float)
    inside = X[:, :3].all(axis=1)
    y = np.where(rng.random(n) < np.where(inside, 0.8, 0.03), 1.0, -1.0)
    return X, y


def _instance(X, y, **spec):
    return SLIM(c0=1e-3, coef_bound=BOUND, max_size=SIZE, **spec).instance(X, y)


@pytest.mark.parametrize("seed", range(3))
def test_the_beam_finds_the_brute_force_optimum_where_no_single_feature_beats_the_constant_model(seed):
    X, y = _conjunction(seed)
    inst = _instance(X, y)
    constant = inst.objective(inst.with_best_intercept(np.zeros(X.shape[1])))
    for j in range(X.shape[1]):  # the premise: one feature alone never beats the constant model
        for v in (-BOUND, -1, 1, BOUND):
            coef = np.zeros(X.shape[1])
            coef[j] = v
            assert inst.objective(inst.with_best_intercept(coef)) >= constant - 1e-12
    optimum = brute_force(inst, SIZE, BOUND)
    assert optimum < constant - 0.01
    found = bayes_beam(inst, constant, Limits.untimed())
    assert found is not None and inst.constraint_violation(found) == 0.0
    assert np.count_nonzero(found.coef) <= SIZE and np.all(np.abs(found.coef) <= BOUND)
    assert np.all(found.coef == np.round(found.coef)) and found.intercept == round(found.intercept)
    assert inst.objective(found) == pytest.approx(optimum, abs=1e-12)
    # and the SLIM heuristic, whose integer-move beams alone stay at the constant model here, starts there
    assert inst.objective(heuristic(inst, Limits(time_limit=30).started())) == pytest.approx(optimum, abs=1e-12)


def test_the_integer_move_beams_alone_miss_what_the_bayes_beam_finds(monkeypatch):
    """Why the beam is there: without it the heuristic keeps a worse model on such a table."""
    X, y = _conjunction(2)
    inst = _instance(X, y)
    monkeypatch.setattr("solvers.heuristics.slim.bayes_beam", lambda *args: None)
    without = inst.objective(heuristic(inst, Limits(time_limit=30).started()))
    assert without > brute_force(inst, SIZE, BOUND) + 1e-3


def test_nothing_below_an_optimal_incumbent():
    X, y = _conjunction(1)
    inst = _instance(X, y)
    assert bayes_beam(inst, brute_force(inst, SIZE, BOUND), Limits.untimed()) is None


@pytest.mark.parametrize("case", ["integer", "constrained", "forced"])
def test_the_beam_stays_out_where_its_fits_would_not_be_the_instance_s(case):
    X, y = _conjunction(2)
    if case == "integer":
        X = X + X[:, ::-1]
        inst = _instance(X, y)
    elif case == "constrained":
        inst = _instance(X, y, constraints=[AtMost(["x0", "x1", "x2"], 1)])
    else:
        cs = CoefficientSet.uniform(X.shape[1], BOUND, must_include=["x0"])
        inst = SLIM(coefficients=cs, c0=1e-3, max_size=SIZE).instance(X, y)
    assert applies(inst) is not None
    assert bayes_beam(inst, math.inf, Limits.untimed()) is None


def test_the_beam_stays_within_the_memory_budget():
    """Its bit sets take about 16 bytes per row copy and column: over the budget it does not start."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (20_000, 30)).astype(float)
    y = np.where(X[:, :3].all(axis=1) | (rng.random(X.shape[0]) < 0.05), 1.0, -1.0)
    inst = _instance(X, y)
    need = beam_memory(zero_one(inst))
    assert MIN_MEMORY < need < 64 * MIN_MEMORY
    assert bayes_beam(inst, math.inf, Limits(memory=MIN_MEMORY)) is None
    assert bayes_beam(inst, math.inf, Limits(memory=int(2 * need))) is not None
