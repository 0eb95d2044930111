"""Outer approximation of exact Facets with a smooth loss, against brute-force enumeration.

The reference is the true objective (logistic / least squares, not its tangents) minimised over
every integer model of a tiny box with the intercept minimised exactly
(:func:`tests.formulations.test_facets_program.brute_force`).
"""
import numpy as np
import pytest

from formulations.facets import FacetsProgram
from solvers.ecos import solve_ecos
from solvers.outer_approximation import polish, solve_outer_approximation
from solvers.result import Status
from tests.formulations.test_facets_program import brute_force, tiny


def assert_certified(fp, X, y, oa, res):
    """objective is the true objective of the returned model and the gap is honest."""
    coef, b = fp.decode(res.x, oa.program)
    true = fp.objective_value(X, y, coef, b)
    assert res.objective == pytest.approx(true, rel=1e-12)
    assert np.allclose(coef / fp.gamma, np.round(coef / fp.gamma))
    assert oa.program.is_feasible(res.x, tol=1e-7)
    assert true - res.bound <= res.gap * abs(true) + 1e-12
    return true


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("loss,eps,gamma,lam", [("logistic", 0.0, 0.7, 0.02), ("logistic", 0.2, 1.0, 0.03),
                                                ("logistic", 0.0, 0.4, 0.005), ("least_squares", 0.1, 0.3, 0.02)])
def test_outer_approximation_equals_brute_force_within_certified_gap(seed, loss, eps, gamma, lam):
    X, y = tiny(seed, n=30)
    fp = FacetsProgram(loss, lam=lam, gamma=gamma, eps=eps, bound=2)
    oa = fp.outer_approximation(X, y)
    res = solve_outer_approximation(oa, tol=1e-6)
    best, _, _ = brute_force(fp, X, y)
    assert res.status == Status.OPTIMAL and res.gap <= 1e-6
    true = assert_certified(fp, X, y, oa, res)
    assert res.bound <= best + 1e-7  # a valid lower bound on the exact optimum
    assert best <= true + 1e-12  # brute force is the optimum
    assert true - best <= res.gap * abs(true) + 1e-9  # within the certified gap


@pytest.mark.parametrize("seed", range(2))
def test_relaxed_conic_program_is_below_exact(seed):
    X, y = tiny(seed, n=40)
    fp = FacetsProgram("logistic", lam=0.02, gamma=0.5, eps=0.1, bound=3)
    relaxed = solve_ecos(fp.relaxed(X, y))
    exact = solve_outer_approximation(fp.outer_approximation(X, y), tol=1e-6)
    assert relaxed.status == Status.OPTIMAL and exact.status == Status.OPTIMAL
    assert relaxed.objective <= exact.objective + 1e-7
    assert relaxed.objective <= exact.bound + 1e-6 * abs(exact.objective)


def test_round_limit_returns_incumbent_with_honest_gap():
    X, y = tiny(7, n=60, noise=1.0)
    fp = FacetsProgram("logistic", lam=0.01, gamma=0.5, bound=3)
    oa = fp.outer_approximation(X, y, points=(0.0,))
    res = solve_outer_approximation(oa, tol=1e-9, max_rounds=1)
    assert res.status == Status.FEASIBLE and res.iterations == 1
    assert res.gap > 1e-9
    assert_certified(fp, X, y, oa, res)


def test_time_limit_keeps_the_warm_start_incumbent():
    X, y = tiny(8, n=300, d=3, noise=1.0)
    fp = FacetsProgram("logistic", lam=0.001, gamma=0.25, bound=8)
    oa = fp.outer_approximation(X, y, points=(0.0,))
    start = fp.lift(oa.program, X, y, np.zeros(3), 0.0)
    res = solve_outer_approximation(oa, tol=1e-12, time_limit=0.05, warm_start=start)
    assert res.status == Status.FEASIBLE
    assert res.objective <= fp.objective_value(X, y, np.zeros(3), 0.0) + 1e-12
    assert_certified(fp, X, y, oa, res)


def test_polish_minimises_the_intercept_exactly():
    X, y = tiny(9, n=50)
    fp = FacetsProgram("logistic", lam=0.01, gamma=0.5, bound=3)
    oa = fp.outer_approximation(X, y)
    coef = 0.5 * np.array([2.0, -1.0, 1.0])
    x = polish(oa, fp.lift(oa.program, X, y, coef, 0.0))
    b = fp.decode(x, oa.program)[1]
    grid = np.linspace(b - 0.05, b + 0.05, 201)
    values = [fp.objective_value(X, y, coef, v) for v in grid]
    assert oa.true_objective(x) <= min(values) + 1e-12
    assert oa.program.is_feasible(x, tol=1e-9)


def test_bad_options_raise():
    X, y = tiny(0)
    oa = FacetsProgram("logistic").outer_approximation(X, y)
    with pytest.raises(ValueError, match="tol must be > 0"):
        solve_outer_approximation(oa, tol=0.0)
    with pytest.raises(ValueError, match="time_limit"):
        solve_outer_approximation(oa, time_limit=-1)
    with pytest.raises(ValueError, match="warm_start has shape"):
        solve_outer_approximation(oa, warm_start=np.zeros(2))


def test_duplicate_samples_are_merged_without_changing_the_optimum():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(80, 3)).astype(float)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.7 * rng.normal(size=80) > 0.2, 1.0, -1.0)
    s = rng.uniform(0.5, 2.0, 80)
    fp = FacetsProgram("logistic", lam=0.02, gamma=0.5, eps=0.1, bound=2)
    oa = fp.outer_approximation(X, y, s)
    n_distinct = np.unique(np.column_stack([X, y]), axis=0).shape[0]
    assert oa.loss_block.stop - oa.loss_block.start == n_distinct < 80
    res = solve_outer_approximation(oa, tol=1e-7)
    coef, b = fp.decode(res.x, oa.program)
    true = fp.objective_value(X, y, coef, b, s)
    assert res.objective == pytest.approx(true, rel=1e-12)
    best, _, _ = brute_force(fp, X, y, s)  # on the full (unmerged) weighted data
    assert res.bound <= best + 1e-7 and true - best <= res.gap * true + 1e-9
