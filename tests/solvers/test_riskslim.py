"""RiskSLIM: certified optimum equals enumeration on tiny instances; cuts, bounds, heuristics."""
import itertools

import numpy as np
import pytest

from formulations.base import Model
from formulations.riskslim import RiskSLIM
from solvers.limits import Limits
from solvers.pipeline import solve_exact, solve_heuristic, solve_relaxed
from solvers.heuristics.polish import polish
from solvers.heuristics.riskslim import beam_search, heuristic, star_ray_round, swap_search


def _data(seed, n=30, d=3, levels=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, d)).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) - 0.5 + rng.normal(0, 1.0, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def enumerate_optimum(inst):
    """Best objective over every integer model of the set (max_size respected), every intercept in the box."""
    cs = inst.coefficients
    ranges = [range(int(np.ceil(lo)), int(np.floor(hi)) + 1) for lo, hi in zip(cs.lb, cs.ub)]
    lo, hi = inst.intercept_bounds
    best = np.inf
    for coef in itertools.product(*ranges):
        coef = np.array(coef, dtype=float)
        if inst.spec.max_size is not None and np.count_nonzero(coef) > inst.spec.max_size:
            continue
        scores = inst.X @ coef
        values = [inst.data.loss_of_scores(scores, float(b)) for b in range(lo, hi + 1)]
        best = min(best, min(values) + inst.penalty(coef))
    return best


CASES = [(seed, d, k, c0) for seed, d, k, c0 in
         [(0, 2, None, 1e-6), (1, 3, None, 0.01), (2, 3, 2, 1e-6), (3, 3, 1, 0.02), (4, 3, None, 0.05)]]


@pytest.mark.parametrize("seed,d,max_size,c0", CASES)
def test_scip_certified_optimum_equals_enumeration(seed, d, max_size, c0):
    inst = RiskSLIM(coef_bound=2, c0=c0, max_size=max_size).instance(*_data(seed, d=d, levels=3))
    optimum = enumerate_optimum(inst)
    fit = solve_exact(inst, "scip", limits=Limits(time_limit=60, mip_rel_gap=1e-9), heuristic=False)
    assert fit.status.value == "optimal"
    assert fit.objective == pytest.approx(optimum, abs=1e-9)
    assert fit.bound <= optimum + 1e-9
    assert fit.objective - fit.bound <= 1e-8


@pytest.mark.parametrize("seed,d,max_size,c0", CASES[:3])
def test_highs_loop_equals_enumeration(seed, d, max_size, c0):
    from solvers.backends.cutting_planes import solve_cutting_planes

    inst = RiskSLIM(coef_bound=2, c0=c0, max_size=max_size).instance(*_data(seed, d=d, levels=3))
    optimum = enumerate_optimum(inst)
    r = solve_cutting_planes(inst.exact(), time_limit=60, mip_rel_gap=1e-9, threads=1, warm_start=None,
                             node_limit=None, seed=0, verbose=False)
    assert r.objective == pytest.approx(optimum, abs=1e-7)
    assert r.bound <= optimum + 1e-9


def enumerate_sparse_optimum(inst, size):
    """Best objective over every model with at most ``size`` non-zero points (supports enumerated,
    every point value of the set, the best integer intercept of the box by a full scan)."""
    cs, (lo, hi) = inst.coefficients, inst.intercept_bounds
    intercepts = np.arange(lo, hi + 1, dtype=float)
    best = np.inf
    for k in range(size + 1):
        for support in itertools.combinations(range(inst.X.shape[1]), k):
            ranges = [[v for v in range(int(cs.lb[j]), int(cs.ub[j]) + 1) if v != 0] for j in support]
            for values in itertools.product(*ranges):
                coef = np.zeros(inst.X.shape[1])
                coef[list(support)] = values
                scores = inst.X @ coef
                loss = min(inst.data.loss_of_scores(scores, b) for b in intercepts)
                best = min(best, loss + inst.penalty(coef))
    return best


def test_highs_loop_and_scip_agree_with_enumeration_on_mammo(shared_data):
    """Real data (mammo, 961 rows merged to 146, 14 features), points -3..3, at most 2 features:
    SCIP, the cutting-plane loop on HiGHS and the route (whose support enumeration runs) certify the
    optimum that enumeration of every sparse model finds."""
    import pandas as pd

    frame = pd.read_csv(shared_data / "mammo_data.csv")
    X, y = frame.iloc[:, 1:].to_numpy(float), np.where(frame.iloc[:, 0] > 0, 1.0, -1.0)
    inst = RiskSLIM(max_size=2, coef_bound=3, c0=1e-6).instance(X, y)
    optimum = enumerate_sparse_optimum(inst, 2)
    for backend in ("scip", "highs", None):
        fit = solve_exact(inst, backend, limits=Limits(time_limit=120, mip_rel_gap=1e-6))
        assert fit.status.value == "optimal", (backend, fit.message)
        assert fit.objective == pytest.approx(optimum, rel=1e-9), backend
        assert fit.bound <= optimum + 1e-9, backend
    assert fit.result.backend == "route" and fit.steps[1].step == "supports" and fit.steps[1].ran, fit.message


def test_intercept_box_contains_the_optimal_intercept():
    rng = np.random.default_rng(5)
    for seed in range(5):
        inst = RiskSLIM(coef_bound=3, max_size=2).instance(*_data(seed, d=3, levels=4))
        lo, hi = inst.intercept_bounds
        for _ in range(20):
            coef = rng.integers(-3, 4, 3).astype(float)
            coef[rng.integers(0, 3)] = 0.0
            scores = inst.X @ coef
            wide = {b: inst.data.loss_of_scores(scores, float(b)) for b in range(lo - 30, hi + 31)}
            best = min(wide.values())
            assert min(wide[b] for b in range(lo, hi + 1)) == pytest.approx(best, abs=1e-12)
            b, value = inst.data.best_intercept(scores, (lo, hi), start=float(rng.integers(lo, hi + 1)))
            assert value == pytest.approx(best, abs=1e-12) and lo <= b <= hi


def test_newton_intercept_on_real_data_matches_a_grid():
    X, y = _data(3, d=2)
    X = X + np.round(np.random.default_rng(0).normal(0, 0.3, X.shape), 2)
    inst = RiskSLIM(coef_bound=2).instance(X, y)
    assert inst.data.table is None
    scores = X @ np.array([1.0, -2.0])
    b, value = inst.data.best_intercept(scores, inst.intercept_bounds)
    grid = min(inst.data.loss_of_scores(scores, float(k)) for k in range(inst.intercept_bounds[0],
                                                                         inst.intercept_bounds[1] + 1))
    assert value == pytest.approx(grid, abs=1e-12)


def test_lookup_table_equals_direct_loss():
    inst = RiskSLIM(coef_bound=5).instance(*_data(1, d=3, levels=5))
    assert inst.data.table is not None
    coef = np.array([3.0, -2.0, 5.0])
    direct = float(inst.weights @ np.logaddexp(0.0, -inst.y * (inst.X @ coef - 4.0)))
    assert inst.data.loss(coef, -4.0) == pytest.approx(direct, rel=1e-14)


def test_cuts_are_tangents_below_the_loss_everywhere():
    inst = RiskSLIM(coef_bound=3, c0=0.01).instance(*_data(0, d=3, levels=3))
    p = inst.exact()
    rng = np.random.default_rng(0)
    pool = p.row_blocks["cuts"]
    A, lb = p.A[pool].toarray(), p.row_lb[pool]
    for _ in range(30):
        x = np.zeros(p.n_variables)
        x[p.blocks["coef"]] = rng.uniform(-3, 3, 3)
        x[p.blocks["intercept"]] = rng.uniform(-4, 4)
        x[p.blocks["loss"]] = -5.0
        rows, rhs = p.lazy.cuts(x)
        assert rows.shape[0] == 1
        A, lb = np.vstack([A, rows.toarray()]), np.r_[lb, rhs]
    for _ in range(200):
        coef, b = rng.uniform(-3, 3, 3), rng.uniform(-6, 6)
        x = np.zeros(p.n_variables)
        x[p.blocks["coef"]], x[p.blocks["intercept"]] = coef, b
        x[p.blocks["loss"]] = inst.data.loss(coef, b)
        assert np.all(A @ x >= lb - 1e-12)  # each tangent is below the loss at x
        assert p.lazy.cuts(x)[0].shape[0] == 0
        assert p.lazy.value(x) == pytest.approx(p.objective(x), abs=1e-12)
    assert inst.loss_floor() <= enumerate_optimum(inst) + 1e-12


def test_relaxation_bounds_the_exact_optimum():
    inst = RiskSLIM(coef_bound=2, c0=0.01).instance(*_data(2, d=3, levels=3))
    relaxed = solve_relaxed(inst, limits=Limits(time_limit=30))
    assert relaxed.result.status.value == "optimal"
    assert relaxed.bound <= enumerate_optimum(inst) + 1e-9
    assert relaxed.bound >= inst.loss_floor() - 1e-9


def _relaxation_by_cvxpy(inst) -> float:
    """The continuous relaxation of RiskSLIM's MILP (indicators in [0, 1], the L0 rows, max_size, the boxes),
    solved by Clarabel on its exponential-cone form."""
    cp = pytest.importorskip("cvxpy")
    cs, data, d = inst.coefficients, inst.data, inst.X.shape[1]
    w, b, z = cp.Variable(d), cp.Variable(), cp.Variable(d)
    margins = cp.multiply(data.y, inst.X @ w + b) / data.scale
    cons = [w <= cp.multiply(np.maximum(cs.ub, 0), z), w >= cp.multiply(np.minimum(cs.lb, 0), z), z <= 1,
            z >= inst.forced.astype(float), w >= cs.lb, w <= cs.ub, b >= inst.intercept_bounds[0],
            b <= inst.intercept_bounds[1]]
    if inst.spec.max_size is not None:
        cons.append(cp.sum(z) <= inst.spec.max_size)
    objective = data.weights @ cp.logistic(-margins) + inst.spec.c0 * (cs.c0 @ z)
    problem = cp.Problem(cp.Minimize(objective), cons)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return float(problem.value)


@pytest.mark.parametrize("seed, k, c0", [(0, None, 0.02), (1, 1, 1e-6), (2, 2, 0.01), (3, None, 1e-6)])
def test_relaxation_value_equals_the_convex_program_solved_by_cvxpy(seed, k, c0):
    """The relaxed solve (LP cutting planes from a tangent at the smooth minimiser, and that minimiser as first
    incumbent) reaches the relaxation's optimum, which Clarabel computes independently; max_size binds at k = 1."""
    inst = RiskSLIM(coef_bound=3, c0=c0, max_size=k).instance(*_data(seed, n=80, d=4, levels=3))
    relaxed = solve_relaxed(inst, limits=Limits(time_limit=30))
    reference = _relaxation_by_cvxpy(inst)
    assert relaxed.result.status.value == "optimal"
    assert relaxed.bound <= reference + 1e-7
    assert relaxed.result.objective == pytest.approx(reference, rel=1e-5)
    start = inst.relaxed_start()
    assert inst.relaxed().is_feasible(start, tol=1e-9)
    assert inst.relaxed().lazy.value(start) >= reference - 1e-9


def test_heuristic_stays_in_the_set_and_finds_the_tiny_optimum():
    for seed in range(3):
        inst = RiskSLIM(coef_bound=2, c0=1e-3, max_size=2).instance(*_data(seed, d=3, levels=3))
        model = heuristic(inst, Limits(time_limit=30).started(), 0)
        assert np.count_nonzero(model.coef) <= 2
        assert np.all(np.abs(model.coef) <= 2) and np.array_equal(model.coef, np.rint(model.coef))
        assert inst.exact().is_feasible(inst.lift(model))
        assert inst.objective(model) >= enumerate_optimum(inst) - 1e-12
        assert inst.objective(model) == pytest.approx(enumerate_optimum(inst), abs=1e-9)
    fit = solve_heuristic(inst, limits=Limits(time_limit=10))
    assert fit.status.value == "feasible" and fit.violation == 0.0


def test_heuristic_parts_respect_an_expired_clock_and_the_set():
    inst = RiskSLIM(coef_bound=3, max_size=2).instance(*_data(0, n=60, d=4, levels=3))
    limits = Limits(time_limit=1e-9).started()
    model = heuristic(inst, limits, 0)
    assert inst.exact().is_feasible(inst.lift(model))
    fits = beam_search(inst, 2)
    assert all(np.count_nonzero(c) <= 2 for c, _ in fits)
    for coef, b in fits[:3]:
        m = star_ray_round(inst, coef, b)
        assert np.count_nonzero(m.coef) <= 2 and inst.exact().is_feasible(inst.lift(m))
        s = swap_search(inst, m)
        assert inst.objective(s) <= inst.objective(m) + 1e-15 and np.count_nonzero(s.coef) <= 2


def test_polish_never_worsens_and_never_adds_features():
    inst = RiskSLIM(coef_bound=3, max_size=2).instance(*_data(4, n=60, d=4, levels=3))
    start = inst.round(Model(np.array([3.0, 0.0, -3.0, 0.0]), 0.0))
    polished = polish(inst, start)
    assert inst.objective(polished) <= inst.objective(start)
    assert set(np.flatnonzero(polished.coef)) <= set(np.flatnonzero(start.coef))


def test_the_exact_programs_lazy_oracle_polishes_with_the_heuristic():
    """The formulation declares the oracle's polisher hook only; the catalog's exact program (what
    SCIP solves) polishes an integral point exactly as :func:`polish` does, and leaves a fractional
    one as it is."""
    from solvers.catalog import entry_for

    inst = RiskSLIM(coef_bound=3, max_size=2).instance(*_data(4, n=60, d=4, levels=3))
    start = inst.round(Model(np.array([3.0, 0.0, -3.0, 0.0]), 0.0))
    assert inst.exact().lazy.polisher is None
    program = entry_for(inst.spec).exact_program(inst)
    x = program.lazy.polish(inst.lift(start))
    expected = polish(inst, start)
    np.testing.assert_array_equal(inst.decode(x).coef, expected.coef)
    assert inst.decode(x).intercept == expected.intercept
    fractional = inst.lift(start).astype(float)
    fractional[program.blocks["coef"].start] += 0.5
    np.testing.assert_array_equal(program.lazy.polish(fractional), fractional)


@pytest.mark.parametrize("kwargs,match", [({"c0": -1.0}, "c0"), ({"coef_bound": np.inf}, "coef_bound"),
                                          ({"max_size": 1.5}, "max_size"), ({"class_weight": (0, 0)}, "class_weight")])
def test_spec_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RiskSLIM(**kwargs)


def test_one_class_data_is_refused():
    X, _ = _data(0)
    with pytest.raises(ValueError, match="both classes"):
        RiskSLIM().instance(X, np.ones(X.shape[0]))


@pytest.mark.parametrize("multiplier", [0.6, 2.5])
def test_multiplier_optimum_equals_enumeration_for_every_backend(multiplier):
    """Risk 1 / (1 + exp(-(x . lambda + lambda_0) / m)): the certified optimum of SCIP, of the
    cutting-plane loop on HiGHS and of the route (its support enumeration) equals enumeration with the
    loss written out here and intercepts far beyond the derived box."""
    X, y = _data(5, d=3, levels=3)
    inst = RiskSLIM(coef_bound=2, c0=1e-6, multiplier=multiplier).instance(X, y)
    Xu, yu, v = inst.X, inst.y, inst.weights
    best = np.inf
    for coef in itertools.product(range(-2, 3), repeat=3):
        scores = Xu @ np.array(coef, dtype=float)
        losses = [float(v @ np.logaddexp(0.0, -yu * (scores + b) / multiplier)) for b in range(-40, 41)]
        best = min(best, min(losses) + 1e-6 * np.count_nonzero(coef))
    for backend in ("scip", "highs", None):
        fit = solve_exact(inst, backend, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
        assert fit.status.value == "optimal", backend
        assert fit.objective == pytest.approx(best, abs=1e-9), backend
        assert fit.bound <= best + 1e-9, backend
    assert fit.steps[1].step == "supports" and fit.steps[1].ran, fit.message
    with pytest.raises(ValueError, match="multiplier"):
        RiskSLIM(multiplier=0.0)


@pytest.mark.parametrize("options", [{"polish": False}, {"tighten": False}, {"root_cuts": 0}, {"initial_cuts": False}])
def test_scip_with_one_part_switched_off_still_certifies_the_enumerated_optimum(options):
    """The ablation switches of benchmarks/riskslim_ablation.py change speed, never the optimum."""
    inst = RiskSLIM(coef_bound=2, c0=1e-6, max_size=2).instance(*_data(2, d=3, levels=3))
    optimum = enumerate_optimum(inst)
    fit = solve_exact(inst, "scip", limits=Limits(time_limit=60, mip_rel_gap=1e-9), options=options)
    assert fit.status.value == "optimal"
    assert fit.objective == pytest.approx(optimum, abs=1e-9)
    assert fit.bound <= optimum + 1e-9
    if options == {"initial_cuts": False}:
        assert "cuts" in inst.exact().row_blocks  # the instance's program is untouched
