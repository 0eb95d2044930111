"""Cutting-plane programs (Program.lazy) on HiGHS: exact Facets with a smooth loss against brute force.

The references are the true objective (logistic / least squares, not its tangents) minimised over
every integer model of a tiny box, with the intercept minimised exactly
(:func:`tests.formulations.test_facets_program.brute_force`) or by scipy without any box.
"""
import itertools
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from formulations.base import Model
from formulations.errors import NotRepresentableError
from formulations.facets import Facets
from solvers.backends.cutting_planes import solve_cutting_planes
from solvers.backends.ecos import solve_ecos
from solvers.backends.highs import solve_highs
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from solvers.registry import capable_backends, requirements, solve
from solvers.result import Status
from tests.formulations.test_facets_program import brute_force, penalty_by_definition, tiny


def assert_certified(inst, res):
    """objective is the true objective of the returned point and the gap is honest."""
    model = inst.decode(res.x)
    true = inst.objective(model)
    assert res.objective == pytest.approx(true, rel=1e-12)
    assert np.allclose(model.coef / inst.spec.grid_unit, np.round(model.coef / inst.spec.grid_unit))
    assert inst.exact().is_feasible(res.x, tol=1e-7)
    assert true - res.bound <= res.gap * abs(true) + 1e-12
    return true


def scipy_reference(spec, X, y, s=None):
    """Exact optimum by enumeration of the integer grid, each intercept by scipy (no box at all)."""
    s = np.ones(y.size) if s is None else np.asarray(s, dtype=float)
    v = s / s.sum()
    best = np.inf
    for w in itertools.product(range(-spec.bound, spec.bound + 1), repeat=X.shape[1]):
        scores = X @ (spec.grid_unit * np.asarray(w, dtype=float))
        if spec.loss == "logistic":
            f = lambda b: float(v @ np.logaddexp(0.0, -y * (scores + b)))  # noqa: E731
        else:
            f = lambda b: float(v @ (0.5 * (y - scores - b) ** 2))  # noqa: E731
        out = minimize_scalar(f, bracket=(-1.0, 1.0), tol=1e-12)
        best = min(best, out.fun + penalty_by_definition(np.asarray(w, float), spec.lam, spec.eps))
    return best


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("loss,eps,gamma,lam", [("logistic", 0.0, 0.7, 0.02), ("logistic", 0.2, 1.0, 0.03),
                                                ("logistic", 0.0, 0.4, 0.005), ("least_squares", 0.1, 0.3, 0.02)])
def test_cutting_planes_equal_brute_force_within_certified_gap(seed, loss, eps, gamma, lam):
    X, y = tiny(seed, n=30)
    spec = Facets(loss, lam=lam, grid_unit=gamma, eps=eps, bound=2)
    inst = spec.instance(X, y)
    res = solve_highs(inst.exact(), mip_rel_gap=1e-6)  # dispatched to the restart loop
    best, _, _ = brute_force(spec, X, y)
    assert res.status == Status.OPTIMAL and res.gap <= 1e-6
    true = assert_certified(inst, res)
    assert res.bound <= best + 1e-7  # a valid lower bound on the exact optimum
    assert best <= true + 1e-12  # brute force is the optimum
    assert true - best <= res.gap * abs(true) + 1e-9  # within the certified gap


@pytest.mark.parametrize("loss,eps", [("logistic", 0.0), ("logistic", 0.3), ("least_squares", 0.0)])
def test_exact_optimum_equals_enumeration_with_scipy_intercepts(loss, eps):
    """d = 2, bound 2: the 25 grid points, each intercept minimised by scipy with no box."""
    X, y = tiny(21, n=35, d=2)
    spec = Facets(loss, lam=0.02, grid_unit=0.5, eps=eps, bound=2)
    fit = solve_exact(spec.instance(X, y), limits=Limits(time_limit=60, mip_rel_gap=1e-7))
    reference = scipy_reference(spec, X, y)
    assert fit.status == Status.OPTIMAL
    assert fit.bound <= reference + 1e-9
    assert fit.objective - reference <= 1e-7 * abs(fit.objective) + 1e-9
    assert reference <= fit.objective + 1e-9


def test_logistic_intercept_box_contains_the_optimum_with_extreme_class_weights():
    """Class weights 1e6 : 1 and features in [-0.01, 0.01]: the optimal intercept (about 16) lay
    outside the old box [-12, 12], and the certified 'bound' exceeded the true optimum."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-0.01, 0.01, size=(40, 2))
    y = np.where(rng.uniform(size=40) < 0.5, 1.0, -1.0)
    s = np.where(y > 0, 1e6, 1.0)
    spec = Facets("logistic", lam=1e-3, grid_unit=1.0, bound=2)
    inst = spec.instance(X, y, s)
    reference = scipy_reference(spec, X, y, s)
    b_star = minimize_scalar(lambda b: float((s / s.sum()) @ np.logaddexp(0.0, -y * b)), bracket=(0, 1)).x
    lo, hi = inst.intercept_bounds
    assert lo < b_star < hi and b_star > 12
    fit = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-7))
    assert fit.bound <= reference + 1e-12
    assert fit.objective == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize("seed", range(2))
def test_relaxed_conic_program_is_below_exact(seed):
    X, y = tiny(seed, n=40)
    inst = Facets("logistic", lam=0.02, grid_unit=0.5, eps=0.1, bound=3).instance(X, y)
    relaxed = solve_ecos(inst.relaxed())
    exact = solve_highs(inst.exact(), mip_rel_gap=1e-6)
    assert relaxed.status == Status.OPTIMAL and exact.status == Status.OPTIMAL
    assert relaxed.objective <= exact.objective + 1e-7
    assert relaxed.objective <= exact.bound + 1e-6 * abs(exact.objective)


def test_round_limit_returns_incumbent_with_honest_gap():
    X, y = tiny(7, n=60, noise=1.0)
    inst = Facets("logistic", lam=0.01, grid_unit=0.5, bound=3).instance(X, y)
    res = solve_cutting_planes(inst.exact(), mip_rel_gap=1e-9, max_rounds=1)
    assert res.status == Status.FEASIBLE and res.iterations == 1
    assert res.gap > 1e-9
    assert_certified(inst, res)


def test_time_limit_keeps_the_warm_start_incumbent():
    X, y = tiny(8, n=300, d=3, noise=1.0)
    inst = Facets("logistic", lam=0.001, grid_unit=0.25, bound=8).instance(X, y)
    zero = Model(np.zeros(3), 0.0)
    res = solve_cutting_planes(inst.exact(), mip_rel_gap=1e-12, time_limit=0.05, warm_start=inst.lift(zero))
    assert res.status == Status.FEASIBLE
    assert res.objective <= inst.objective(zero) + 1e-12
    assert_certified(inst, res)


def test_polish_minimises_the_intercept_exactly():
    X, y = tiny(9, n=50)
    inst = Facets("logistic", lam=0.01, grid_unit=0.5, bound=3).instance(X, y)
    oracle = inst.exact().lazy
    coef = 0.5 * np.array([2.0, -1.0, 1.0])
    x = oracle.polish(inst.lift(Model(coef, 0.0)))
    b = inst.decode(x).intercept
    grid = np.linspace(b - 0.05, b + 0.05, 201)
    values = [inst.objective(Model(coef, v)) for v in grid]
    assert oracle.value(x) <= min(values) + 1e-12
    assert inst.exact().is_feasible(x, tol=1e-9)
    assert inst.with_best_intercept(coef).intercept == pytest.approx(b, abs=1e-8)


def test_lazy_programs_need_a_lazy_backend():
    X, y = tiny(0)
    program = Facets("logistic").instance(X, y).exact()
    assert "LAZY" in requirements(program) and "LAZY" not in requirements(replace(program, lazy=None))
    assert program.relax().lazy is program.lazy and "lazy=TangentCuts" in program.summary()
    assert "highs" in capable_backends(program) and "ecos" not in capable_backends(program)
    with pytest.raises(NotRepresentableError):
        solve(program, "ecos")


def test_bad_options_raise():
    X, y = tiny(0)
    program = Facets("logistic").instance(X, y).exact()
    with pytest.raises(ValueError, match="mip_rel_gap"):
        solve_cutting_planes(program, mip_rel_gap=-1.0)
    with pytest.raises(ValueError, match="time_limit"):
        solve_cutting_planes(program, time_limit=-1)
    with pytest.raises(ValueError, match="warm_start has shape"):
        solve_cutting_planes(program, warm_start=np.zeros(2))
    with pytest.raises(ValueError, match="lazy oracle"):
        solve_cutting_planes(replace(program, lazy=None))


def test_node_limit_stops_the_loop():
    X, y = tiny(8, n=200, d=3, noise=1.0)
    inst = Facets("logistic", lam=0.001, grid_unit=0.25, bound=8).instance(X, y)
    res = solve_cutting_planes(inst.exact(), mip_rel_gap=1e-12, node_limit=1)
    assert res.status in (Status.FEASIBLE, Status.NO_SOLUTION_FOUND) and res.nodes <= 3 * res.iterations


def test_duplicate_samples_are_merged_without_changing_the_optimum():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(80, 3)).astype(float)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.7 * rng.normal(size=80) > 0.2, 1.0, -1.0)
    s = rng.uniform(0.5, 2.0, 80)
    spec = Facets("logistic", lam=0.02, grid_unit=0.5, eps=0.1, bound=2)
    inst = spec.instance(X, y, s)
    program = inst.exact()
    n_distinct = np.unique(np.column_stack([X, y]), axis=0).shape[0]
    assert program.blocks["loss"].stop - program.blocks["loss"].start == n_distinct < 80
    res = solve_highs(program, mip_rel_gap=1e-7)
    true = inst.objective(inst.decode(res.x))
    assert res.objective == pytest.approx(true, rel=1e-12)
    best, _, _ = brute_force(spec, X, y, s)  # on the full (unmerged) weighted data
    assert res.bound <= best + 1e-7 and true - best <= res.gap * true + 1e-9
