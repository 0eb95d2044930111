"""Randomized rounding: E[c] = w_hat (CLT), Propositions 1 and 2, seeds, the catalog method, errors."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.base import Model
from formulations.rounding import ConvexRounding, cumulative_hinge_loss, double_features
from solvers.backends.highs import solve_highs
from solvers.limits import Limits
from solvers.pipeline import run, solve_method, solve_relaxed
from solvers.heuristics.rounding import lp_options, randomized_rounding, randomized_rounding_method, rounding_bounds


def _instance(m=30, n=5, seed=0, margin=1.0, max_size=None):
    """X, y, the instance (zero threshold, paper's ternary class), the LP result and the doubled X."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, (m, n)).astype(float)
    y = np.where(X @ rng.choice([-1.0, 1.0], n) + rng.normal(0, 1.0, m) > 0, 1.0, -1.0)
    inst = ConvexRounding(margin=margin, weights="ternary", threshold=0.0, max_size=max_size).instance(X, y)
    lp = solve_highs(inst.relaxed())
    return X, y, inst, inst.relaxed(), lp, double_features(X)


def test_mean_of_draws_is_w_hat_within_clt_tolerance():
    w = np.array([0.0, 1.0, 0.5, 0.1, 0.9, 0.33, 0.75])
    X = np.random.default_rng(0).poisson(1.0, (10, 7)).astype(float)
    y = np.tile([1.0, -1.0], 5)
    n = 4000
    out = randomized_rounding(w, X, y, margin=1.0, n_draws=n, seed=3, keep_draws=True)
    assert out.draws.shape == (n, 7)
    mean = out.draws.mean(axis=0)
    tol = 5 * np.sqrt(w * (1 - w) / n) + 1e-12
    assert np.all(np.abs(mean - w) <= tol)
    assert out.n_fractional == 5
    # each draw's loss, recomputed from the kept draw with the plain formula
    recomputed = np.array([cumulative_hinge_loss(c.astype(float), X, y, margin=1.0) for c in out.draws[:200]])
    np.testing.assert_allclose(out.losses[:200], recomputed, atol=1e-12)
    errors = [np.mean(np.where(X @ c > 0, 1.0, -1.0) != y) for c in out.draws[:200].astype(float)]
    np.testing.assert_allclose(out.error_rates[:200], errors)
    assert out.summary()["best_error"] == out.error_rates[out.best]
    assert out.loss == pytest.approx(out.losses.min())
    assert cumulative_hinge_loss(out.weights, X, y, margin=1.0) == pytest.approx(out.loss)


def test_proposition_1_against_the_enumerated_optimum():
    X, y, inst, program, lp, Xd = _instance(margin=0.5)
    w_hat = program.block(lp.x, "coef")
    c_star = min(cumulative_hinge_loss(np.array(c, float), X, y, margin=0.5)
                 for c in itertools.product((-1, 0, 1), repeat=5))
    out = randomized_rounding(w_hat, Xd, y, margin=0.5, n_draws=3000, seed=0)
    clt = 4 * out.std_loss / np.sqrt(out.losses.size)
    m, x1 = X.shape[0], np.abs(Xd).sum(axis=1).max()
    assert out.relaxed_loss == pytest.approx(lp.objective, abs=1e-7)
    assert out.relaxed_loss <= c_star + 1e-7
    assert out.bound_prop1 == pytest.approx(out.relaxed_loss + m * x1 / (2 * 0.5))
    assert out.mean_loss <= c_star + m * x1 / (2 * 0.5) + clt  # Proposition 1 as stated
    assert out.relaxed_loss <= out.bound_variance <= out.bound_prop1
    assert out.mean_loss <= out.bound_variance + clt  # eq. (4) of the proof
    assert out.loss >= c_star - 1e-9  # no draw beats the integer optimum


def test_proposition_2_expected_l1_norm_equals_budget():
    X, y, inst, program, lp, Xd = _instance(m=40, n=6, seed=0, margin=1.0, max_size=2.0)
    w_hat = program.block(lp.x, "coef")
    assert w_hat.sum() == pytest.approx(2.0, abs=1e-7)  # the budget binds on this instance
    n = 4000
    out = randomized_rounding(w_hat, Xd, y, margin=1.0, n_draws=n, seed=1, max_l1=2.0)
    var = float((w_hat * (1 - w_hat)).sum())
    assert out.expected_l1 == pytest.approx(2.0, abs=1e-7)
    assert abs(out.l1_norms.mean() - 2.0) <= 5 * np.sqrt(var / n) + 1e-12
    assert out.best_within_budget and np.abs(out.weights).sum() <= 2.0
    assert out.loss == pytest.approx(out.losses[out.within_budget].min())
    assert not out.within_budget.all()  # Bernoulli draws meet the budget only on average


def test_binary_lp_solution_is_returned_unchanged():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    w = np.array([1.0, 0.0])
    out = randomized_rounding(w, X, y, margin=1.0, n_draws=50, seed=0)
    assert out.n_fractional == 0
    np.testing.assert_array_equal(out.weights, w)
    np.testing.assert_allclose(out.losses, out.relaxed_loss)
    assert out.bound_variance == pytest.approx(out.relaxed_loss)


def test_seeds_and_sparse_input():
    X, y, inst, program, lp, Xd = _instance(m=40, n=8, seed=3)
    w_hat = program.block(lp.x, "coef")
    a = randomized_rounding(w_hat, Xd, y, margin=1.0, n_draws=300, seed=7)
    b = randomized_rounding(w_hat, sp.csr_matrix(Xd), y, margin=1.0, n_draws=300, seed=7)
    c = randomized_rounding(w_hat, Xd, y, margin=1.0, n_draws=300, seed=8)
    np.testing.assert_allclose(a.losses, b.losses, atol=1e-10)
    assert a.n_fractional > 0 and not np.allclose(a.losses, c.losses)
    bounds = rounding_bounds(w_hat, sp.csr_matrix(Xd), y, margin=1.0)
    assert bounds["bound_prop1"] == pytest.approx(a.bound_prop1)
    assert bounds["bound_variance"] == pytest.approx(a.bound_variance)


def test_many_draws_are_chunked_consistently():
    X, y, inst, program, lp, Xd = _instance(m=30, n=5, seed=4)
    w_hat = program.block(lp.x, "coef")
    out = randomized_rounding(w_hat, Xd, y, margin=1.0, n_draws=150_001, seed=0)
    assert out.losses.shape == (150_001,) and np.isfinite(out.losses).all()
    assert out.loss == pytest.approx(out.losses.min())


def test_bad_inputs_are_rejected():
    X = np.ones((4, 3))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="w_hat must lie in"):
        randomized_rounding(np.array([0.5, 1.5, 0.0]), X, y, margin=1.0)
    with pytest.raises(ValueError, match="w_hat has shape"):
        randomized_rounding(np.array([0.5, 0.5]), X, y, margin=1.0)
    with pytest.raises(ValueError, match="n_draws"):
        randomized_rounding(np.full(3, 0.5), X, y, margin=1.0, n_draws=0)


# --------------------------------------------------------------------------- catalog method
def test_catalog_method_returns_the_best_draw_inside_the_class_and_budget():
    X, y, inst, program, lp, Xd = _instance(m=40, n=6, seed=0, margin=1.0, max_size=2.0)
    relaxed = solve_relaxed(inst, "highs", options=lp_options("ipm"))
    assert relaxed.status.value == "optimal"
    np.testing.assert_allclose(relaxed.model.extras["weights"].sum(), 2.0, atol=1e-7)
    fit = solve_method(inst, "randomized_rounding", source=relaxed, limits=Limits(seed=3))
    assert fit.status.value == "feasible" and fit.violation == 0.0
    assert set(fit.model.coef) <= {-1.0, 0.0, 1.0} and np.count_nonzero(fit.model.coef) <= 2
    assert fit.bound == pytest.approx(relaxed.bound) and fit.bound <= fit.objective + 1e-9
    summary = fit.model.extras["rounding"]
    assert summary["n_draws"] == inst.spec.n_draws
    assert summary["mean_loss"] <= summary["bound_prop1"]
    assert fit.objective == pytest.approx(summary["best_loss"])  # fixed threshold: the best draw itself
    assert "Proposition 1" in fit.message
    # same seed, same model; run() solves the relaxation itself when no source is given
    again = run(inst, "randomized_rounding", limits=Limits(seed=3))
    np.testing.assert_array_equal(again.model.coef, fit.model.coef)


def test_catalog_method_with_a_learned_intercept_improves_on_the_lp_intercept():
    rng = np.random.default_rng(5)
    X = rng.poisson(1.0, (40, 5)).astype(float)
    y = np.where(X @ [1.0, -1.0, 1.0, 0.0, 0.0] > 1.5, 1.0, -1.0)
    inst = ConvexRounding(margin=1.0, threshold=None).instance(X, y)
    source = solve_relaxed(inst)
    model, message = randomized_rounding_method(inst, source, Limits(time_limit=None).started(), 0)
    best = Model(model.coef, inst.best_intercept(model.coef))
    assert inst.objective(model) == pytest.approx(inst.objective(best), abs=1e-12)  # the best intercept
    assert inst.objective(model) <= model.extras["rounding"]["best_loss"] + 1e-12
    # without a source there is nothing to round (the pipeline's solve_method passes the relaxation)
    alone, message = randomized_rounding_method(inst, None, Limits(time_limit=None).started(), 0)
    assert alone is None and "no relaxed model" in message


def test_randomized_rounding_stops_on_the_clock():
    X, y, inst, program, lp, Xd = _instance(m=30, n=5, seed=4)
    w_hat = program.block(lp.x, "coef")

    class Expired:
        def expired(self):
            return True

    out = randomized_rounding(w_hat, Xd, y, margin=1.0, n_draws=1_000_000, seed=0, limits=Expired())
    assert 1 <= out.losses.size < 1_000_000  # one chunk, then the clock stops it
    assert out.loss == pytest.approx(out.losses.min())


def test_lp_options():
    assert lp_options("ipm") == {"options": {"solver": "ipm", "run_crossover": "on"}}
    assert lp_options("simplex") == {"options": {"solver": "simplex"}}
    with pytest.raises(ValueError, match="lp_solver"):
        lp_options("cg")
