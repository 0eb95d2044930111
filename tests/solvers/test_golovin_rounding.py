"""Golovin et al.'s unbiased randomized rounding of the Facets relaxation, checked by exact enumeration."""
import itertools

import numpy as np
import pytest

from formulations.base import Model
from formulations.constraints import AtMost
from formulations.facets import Facets
from solvers.heuristics.golovin_rounding import (N_DRAWS, expected_objective_bound, golovin_rounding, random_round,
                                                 round_to_grid, rounding_variance)
from solvers.limits import Limits
from solvers.pipeline import run, solve_exact, solve_relaxed


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.array([1.0, -0.7, 0.4])[:d] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _enumerate(instance, model):
    """Exact ``E[F(w^, b)]`` over the ``2^d`` outcomes of the rounding (the reference), and ``E[w^]``."""
    g = instance.spec.grid_unit
    w = instance.grid_units(model.coef)
    low, p = np.floor(w), w - np.floor(w)
    expected, mean = 0.0, np.zeros_like(w)
    for bits in itertools.product((0, 1), repeat=w.size):
        b = np.array(bits, float)
        prob = float(np.prod(np.where(b == 1, p, 1 - p)))
        steps = low + b
        expected += prob * instance.objective(Model(g * steps, model.intercept))
        mean += prob * steps
    return expected, mean


def test_random_round_is_unbiased_and_moves_less_than_one_step():
    w = np.array([0.3, -1.25, 2.0, 4.9, -3.5])
    draws = random_round(w, 200_000, np.random.default_rng(1))
    assert set(np.unique(draws[:, 0])) == {0.0, 1.0} and set(np.unique(draws[:, 1])) == {-2.0, -1.0}
    assert (draws[:, 2] == 2.0).all()  # an integral step is never moved
    assert (np.abs(draws - w) < 1).all()
    var = rounding_variance(w)
    np.testing.assert_allclose(var, [0.21, 0.1875, 0.0, 0.09, 0.25])
    # mean of 2e5 draws within 5 standard errors of w, empirical variance close to p(1-p)
    assert (np.abs(draws.mean(axis=0) - w) <= 5 * np.sqrt(var / draws.shape[0]) + 1e-12).all()
    np.testing.assert_allclose(draws.var(axis=0), var, atol=3e-3)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "least_squares"])
@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_expected_objective_is_below_the_bound_by_enumeration(loss, eps):
    X, y = _data()
    inst = Facets(loss, lam=0.05, grid_unit=0.5, eps=eps, bound=4).instance(X, y)
    model = Model(np.array([0.85, -0.6, 0.35]), 0.2)  # grid steps 1.7, -1.2, 0.7: all fractional
    expected, mean = _enumerate(inst, model)
    np.testing.assert_allclose(mean, inst.grid_units(model.coef))  # E[w^] = w
    bound = expected_objective_bound(inst, model)
    assert bound.n_fractional == 3 and bound.relaxed_objective == pytest.approx(inst.objective(model))
    assert expected <= bound.bound + 1e-12
    assert expected >= bound.relaxed_objective - 1e-12 or loss == "hinge"  # Jensen: the loss and Omega are convex
    if loss == "least_squares":  # the bound is the expectation itself
        assert bound.exact and expected == pytest.approx(bound.bound, rel=1e-12)
    # the penalty part is exact: enumerate the penalty alone
    pen = inst.spec.penalty(unit=1.0)
    w = inst.grid_units(model.coef)
    p = w - np.floor(w)
    e_pen = sum(float(np.prod(np.where(np.array(b) == 1, p, 1 - p))) * pen.value(np.floor(w) + np.array(b))
                for b in itertools.product((0, 1), repeat=3))
    assert e_pen == pytest.approx(pen.value(w) + bound.penalty_excess, rel=1e-12)
    if eps == 0.0:
        assert bound.penalty_excess == 0.0 and e_pen == pytest.approx(pen.value(w), rel=1e-12)


def test_hinge_bound_is_not_vacuous_and_the_logistic_one_uses_smoothness():
    X, y = _data(n=200)
    model = Model(np.array([0.85, -0.6, 0.35]), 0.2)
    hinge = expected_objective_bound(Facets("hinge", lam=0.0, grid_unit=0.5).instance(X, y), model)
    logistic = expected_objective_bound(Facets("logistic", lam=0.0, grid_unit=0.5).instance(X, y), model)
    # sigma_i = 0.5 sqrt(sum_j x_ij^2 p_j(1-p_j)): the hinge excess is its weighted mean
    var = 0.25 * (X * X) @ rounding_variance(np.array([1.7, -1.2, 0.7]))
    assert hinge.loss_excess == pytest.approx(np.sqrt(var).mean(), rel=1e-12)
    assert logistic.loss_excess == pytest.approx(np.minimum(np.sqrt(var), var / 8).mean(), rel=1e-12)
    assert logistic.loss_excess < hinge.loss_excess


def test_draws_follow_the_enumerated_distribution():
    X, y = _data()
    inst = Facets("logistic", lam=0.05, grid_unit=0.5, eps=0.3, bound=4).instance(X, y)
    model = Model(np.array([0.85, -0.6, 0.35]), 0.2)
    expected, _ = _enumerate(inst, model)
    draws = round_to_grid(inst, model, n_draws=4000, seed=3)
    assert draws.objectives.size == 4000 and (draws.violations == 0).all()
    se = draws.objectives.std() / np.sqrt(draws.objectives.size)
    assert abs(draws.mean_objective - expected) <= 5 * se
    assert draws.objectives.min() >= solve_exact(inst, limits=Limits(time_limit=30)).objective - 1e-6


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_catalog_method_returns_a_grid_model_no_better_than_the_exact_optimum(loss):
    X, y = _data(n=60)
    inst = Facets(loss, lam=0.02, grid_unit=0.25, bound=6).instance(X, y)
    relaxed = solve_relaxed(inst, limits=Limits(time_limit=30))
    fit = run(inst, "golovin_rounding", source=relaxed, limits=Limits(time_limit=30, seed=5))
    exact = solve_exact(inst, limits=Limits(time_limit=60))
    assert exact.status.value == "optimal"
    steps = fit.model.coef / 0.25
    assert np.allclose(steps, np.round(steps)) and (np.abs(steps) <= 6).all()
    assert fit.violation == 0.0 and fit.bound == pytest.approx(relaxed.bound)
    assert relaxed.objective - 1e-6 <= exact.objective <= fit.objective + 1e-6
    summary = fit.model.extras["golovin"]
    assert summary["n_draws"] == N_DRAWS
    assert summary["best_objective"] == pytest.approx(fit.objective)
    assert summary["best_objective"] <= summary["mean_objective"] + 1e-12
    assert summary["relaxed_objective"] == pytest.approx(relaxed.objective, rel=1e-5, abs=1e-7)
    # same seed, same model
    again = run(inst, "golovin_rounding", source=relaxed, limits=Limits(time_limit=30, seed=5))
    np.testing.assert_array_equal(again.model.coef, fit.model.coef)


def test_integral_relaxation_is_returned_unchanged_with_an_exact_bound():
    X, y = _data()
    inst = Facets("hinge", lam=0.05, grid_unit=0.5, bound=4).instance(X, y)
    on_grid = Model(np.array([1.0, -0.5, 0.0]), 0.1)
    bound = expected_objective_bound(inst, on_grid)
    assert bound.exact and bound.n_fractional == 0 and bound.bound == pytest.approx(inst.objective(on_grid))
    draws = round_to_grid(inst, on_grid, n_draws=20, seed=0)
    assert (draws.steps == np.array([2.0, -1.0, 0.0])).all()


def test_constraints_are_obeyed_by_the_returned_draw():
    X, y = _data(n=60)
    spec = Facets("hinge", lam=0.01, grid_unit=0.25, bound=6, constraints=(AtMost(["x0", "x1"], 1),))
    inst = spec.instance(X, y)
    model, message = golovin_rounding(inst, solve_relaxed(inst), Limits(time_limit=30).started(), 0)
    if model is None:  # every draw broke the constraint: the method says so instead of returning one
        assert "obeys the operational constraints" in message
    else:
        assert inst.constraint_violation(model) <= 1e-6
        assert np.count_nonzero(model.coef[:2]) <= 1


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="n_draws"):
        random_round(np.array([0.5]), 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="finite 1-D"):
        random_round(np.array([np.nan]), 3, np.random.default_rng(0))
    from formulations.rounding import ConvexRounding

    X, y = _data()
    with pytest.raises(TypeError, match="Facets instance"):
        golovin_rounding(ConvexRounding().instance(X, y), None, Limits(time_limit=5).started(), 0)
