"""Fused-lasso hinge ILP (formulations/fused.py) against independent references.

References: brute-force enumeration over every integer points vector (with the exact best
intercept found by evaluating the hinge at every breakpoint, written here independently), an
independent cvxpy model of eq. (1) for the LP relaxation, and hand-built instances whose
optimum is known in closed form. Programs are solved by HiGHS directly (no pipeline), so these
are checks of the formulation alone.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.base import Model
from formulations.bins import infer_blocks, isotonic
from formulations.fused import FusedLassoHinge, FusedPoints, merge_runs
from formulations.intercept import hinge_intercept
from solvers.backends.highs import solve_highs


def one_hot(codes: np.ndarray, sizes) -> np.ndarray:
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    X = np.zeros((codes.shape[0], int(sum(sizes))))
    X[np.arange(codes.shape[0])[:, None], codes + offsets] = 1.0
    return X


def instance(seed: int, sizes, n: int = 14, signal: bool = True):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, s, n) for s in sizes])
    if signal:  # labels related to the first variable, with noise, so the optimum is not trivial
        y = np.where(codes[:, 0] + rng.normal(0, 1.0, n) > (sizes[0] - 1) / 2, 1.0, -1.0)
    else:
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[:2] = [-1.0, 1.0]
    return one_hot(codes, sizes), y


def min_hinge_over_b(scores, y, w, margin=1.0) -> float:
    """Exact min over b of the weighted hinge: the optimum lies at a breakpoint (O(N^2) check)."""
    cand = np.concatenate([margin - scores[y > 0], -margin - scores[y < 0]])
    losses = np.maximum(0.0, margin - y[None, :] * (scores[None, :] + cand[:, None])) @ w
    return float(losses.min())


def brute_force(X, y, sizes, lam, lo, hi, *, w=None, reference=None, monotone=None, max_size=None,
                must_include=()):
    """min over all integer points vectors of eq. (1), subject to the options, by enumeration."""
    w = np.ones(len(y)) if w is None else w
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    blocks = [slice(o, o + s) for o, s in zip(offsets, sizes)]
    best = np.inf
    for theta in itertools.product(range(lo, hi + 1), repeat=X.shape[1]):
        theta = np.array(theta, dtype=float)
        parts = [theta[b] for b in blocks]
        if reference == "min" and any(q.min() != 0 for q in parts):
            continue
        if reference == "first" and any(q[0] != 0 for q in parts):
            continue
        if reference == "sum_to_zero" and any(q.sum() != 0 for q in parts):
            continue
        if monotone is not None and any(m != 0 and np.any(m * np.diff(q) < 0) for m, q in zip(monotone, parts)):
            continue
        used = [j for j, q in enumerate(parts) if np.any(q != 0)]
        if max_size is not None and len(set(used) | set(must_include)) > max_size:
            continue
        tv = sum(np.abs(np.diff(q)).sum() for q in parts)
        best = min(best, min_hinge_over_b(X @ theta, y, w) + lam * tv)
    return best


def solve(spec, X, y, sample_weight=None):
    inst = spec.instance(X, y, sample_weight)
    result = solve_highs(inst.exact(), mip_rel_gap=0.0, time_limit=30)
    assert result.status.value == "optimal"
    return inst, result


# ------------------------------------------------------------ brute force
CASES = [
    # (seed, sizes, lam, lo, hi, options)
    (0, [3, 2, 2], 0.5, 0, 2, dict(reference="min")),
    (1, [3, 3], 0.0, 0, 2, dict(reference="min")),
    (2, [4, 2], 1.5, 0, 2, dict(reference="min")),
    (3, [3, 2], 0.3, -1, 1, dict(reference="first")),
    (4, [3, 3], 0.2, -2, 2, dict(reference="sum_to_zero")),
    (5, [4, 3], 0.25, 0, 2, dict(reference="min", monotone=[1, -1])),
    (6, [3, 2, 2], 0.1, 0, 2, dict(reference="min", max_size=1)),
    (7, [3, 2, 2], 0.1, 0, 2, dict(reference="min", max_size=1, must_include=[2])),
]


@pytest.mark.parametrize("seed,sizes,lam,lo,hi,options", CASES)
def test_ilp_optimum_equals_brute_force(seed, sizes, lam, lo, hi, options):
    X, y = instance(seed, sizes)
    spec = FusedLassoHinge(lam=lam, points_lb=lo, points_ub=hi, blocks=sizes, **options)
    inst, result = solve(spec, X, y)
    reference = brute_force(X, y, sizes, lam, lo, hi, **options)
    assert result.objective == pytest.approx(reference, abs=1e-7)
    # the decoded points reproduce the objective through an independent evaluation and objective()
    model = inst.decode(result.x)
    pts = model.extras["points"]
    tv = sum(np.abs(np.diff(pts.block_points(j))).sum() for j in range(len(sizes)))
    assert min_hinge_over_b(X @ pts.theta, y, np.ones(len(y))) + lam * tv == pytest.approx(reference, abs=1e-7)
    assert inst.objective(model) == pytest.approx(reference, abs=1e-6)
    # rounding the solver's (integral up to tolerances) model keeps the optimum
    assert inst.objective(inst.round(model)) == pytest.approx(reference, abs=1e-7)


def test_min_reference_loses_nothing():
    """'min' fixes the shift of each block without cutting off any score function (lb = 0)."""
    sizes = [3, 3]
    X, y = instance(11, sizes, signal=False)
    _, result = solve(FusedLassoHinge(lam=0.3, points_ub=2, reference="min", blocks=sizes), X, y)
    assert result.objective == pytest.approx(brute_force(X, y, sizes, 0.3, 0, 2), abs=1e-7)


def test_sample_weights_equal_duplicated_rows():
    sizes = [3, 2]
    X, y = instance(12, sizes, n=10)
    w = np.array([1, 2, 3, 1, 1, 2, 1, 1, 3, 1], dtype=float)
    spec = FusedLassoHinge(lam=0.4, points_ub=2, blocks=sizes)
    _, weighted = solve(spec, X, y, sample_weight=w)
    rep = np.repeat(np.arange(10), w.astype(int))
    _, duplicated = solve(spec, X[rep], y[rep])
    assert weighted.objective == pytest.approx(duplicated.objective, abs=1e-7)
    assert weighted.objective == pytest.approx(brute_force(X, y, sizes, 0.4, 0, 2, w=w, reference="min"), abs=1e-7)


def test_program_size_matches_the_paper():
    """Eqs. (2)-(5): d̄ points, 1 intercept, N slacks and one eta per within-block neighbour pair
    (rows not merged; merged, one slack per distinct row)."""
    sizes = [4, 3, 2]
    X, y = instance(13, sizes, n=20)
    program = FusedLassoHinge(lam=1.0, reference="first", blocks=sizes, merge_duplicates=False).instance(X, y).exact()
    d, p, n = sum(sizes), len(sizes), 20
    assert program.n_variables == d + 1 + n + (d - p)
    assert program.n_rows == n + 2 * (d - p)
    assert program.integer.sum() == d
    assert list(program.blocks)[:4] == ["coef", "intercept", "loss", "diff"]
    merged = FusedLassoHinge(lam=1.0, reference="first").instance(X, y)
    assert merged.exact().n_variables == d + 1 + merged.info["n_rows_kept"] + (d - p)
    assert merged.blocks == (slice(0, 4), slice(4, 7), slice(7, 9))  # read off the matrix


# --------------------------------------------------------- relaxation (LP)
def test_relaxed_lp_equals_independent_cvxpy_model():
    cp = pytest.importorskip("cvxpy")
    sizes = [4, 3]
    X, y = instance(21, sizes, n=30)
    lam, lo, hi = 0.7, -3, 3
    inst = FusedLassoHinge(lam=lam, points_lb=lo, points_ub=hi, reference="sum_to_zero", monotone=[1, 0],
                           blocks=sizes).instance(X, y)
    lp = inst.relaxed()
    assert not lp.is_mip
    result = solve_highs(lp)
    theta, b = cp.Variable(sum(sizes)), cp.Variable()
    tv = cp.abs(theta[1:4] - theta[0:3]).sum() + cp.abs(theta[5:7] - theta[4:6]).sum()
    problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ theta + b))) + lam * tv),
                         [theta >= lo, theta <= hi, cp.sum(theta[:4]) == 0, cp.sum(theta[4:]) == 0,
                          theta[1:4] >= theta[0:3]])
    problem.solve(solver=cp.CLARABEL)
    assert result.objective == pytest.approx(problem.value, rel=1e-6, abs=1e-6)
    exact = solve_highs(inst.exact(), mip_rel_gap=0.0)
    assert result.objective <= exact.objective + 1e-9


# ------------------------------------------------------------ decode / lift
def test_merge_runs():
    assert merge_runs(np.array([0, 0, 1, 1, 1, 3])) == [(0, 1, 0.0), (2, 4, 1.0), (5, 5, 3.0)]
    assert merge_runs(np.array([2.0])) == [(0, 0, 2.0)]
    assert merge_runs(np.array([1, 2, 1])) == [(0, 0, 1.0), (1, 1, 2.0), (2, 2, 1.0)]


def test_merged_ranges_reproduce_one_hot_scores():
    sizes = [4, 3, 2]
    X, y = instance(31, sizes, n=40)
    inst, result = solve(FusedLassoHinge(lam=0.5, points_ub=3, blocks=sizes), X, y)
    pts = inst.round(inst.decode(result.x)).extras["points"]
    codes = np.column_stack([np.argmax(X[:, b], axis=1) for b in pts.blocks])
    from_ranges = np.full(len(y), pts.intercept)
    for j in range(len(sizes)):
        for first, last, points in pts.ranges(j):
            from_ranges += points * ((codes[:, j] >= first) & (codes[:, j] <= last))
    np.testing.assert_allclose(from_ranges, pts.scores(X))


@pytest.mark.parametrize("reference,lo", [("min", 0), ("first", -2), ("sum_to_zero", -2)])
def test_lift_is_feasible_and_matches_the_independent_objective(reference, lo):
    sizes = [3, 3, 2]
    X, y = instance(41, sizes, n=25)
    lam = 0.6
    inst = FusedLassoHinge(lam=lam, points_lb=lo, points_ub=2, reference=reference, max_size=2,
                           blocks=sizes).instance(X, y)
    program = inst.exact()
    theta = np.array([0, 1, 2, 0, 0, 0, 1, 0], dtype=float)
    if reference == "sum_to_zero":
        theta = np.array([-1, 0, 1, 0, 0, 0, 1, -1], dtype=float)
    model = inst.with_best_intercept(theta)
    x = inst.lift(model)
    assert program.is_feasible(x)
    tv = np.abs(np.diff(theta[:3])).sum() + np.abs(np.diff(theta[6:])).sum()
    expected = min_hinge_over_b(X @ theta, y, np.ones(25)) + lam * tv
    assert program.objective(x) == pytest.approx(expected)
    assert inst.objective(model) == pytest.approx(expected)
    # a block shifted off the reference level is the same score function: lifted to the same point
    shifted = Model(theta + np.r_[np.zeros(3), np.ones(3), np.zeros(2)] * 2, model.intercept - 2)
    np.testing.assert_allclose(inst.lift(shifted), x, atol=1e-12)
    assert inst.objective(shifted) == pytest.approx(expected)
    # lifting an optimal solution's points gives back its objective
    result = solve_highs(program, mip_rel_gap=0.0)
    assert program.objective(inst.lift(inst.decode(result.x))) == pytest.approx(result.objective, abs=1e-7)


def test_lift_warm_start_is_accepted():
    sizes = [3, 3]
    X, y = instance(42, sizes, n=30)
    inst = FusedLassoHinge(lam=0.5, points_ub=2, blocks=sizes).instance(X, y)
    program = inst.exact()
    start = inst.lift(inst.with_best_intercept(np.array([0, 1, 2, 0, 0, 0], dtype=float)))
    assert program.is_feasible(start)
    cold = solve_highs(program, mip_rel_gap=0.0)
    warm = solve_highs(program, mip_rel_gap=0.0, warm_start=start)
    assert warm.objective == pytest.approx(cold.objective, abs=1e-7)


def test_hinge_intercept_is_optimal():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = rng.integers(3, 30)
        s = rng.integers(-4, 5, n).astype(float)
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        w = rng.random(n) + 0.1
        b = hinge_intercept(s, y, w)
        value = np.maximum(0, 1 - y * (s + b)) @ w
        assert value == pytest.approx(min_hinge_over_b(s, y, w), abs=1e-10)


# ---------------------------------------------------- behaviour of lambda
def test_large_lambda_collapses_every_variable_to_one_range():
    sizes = [4, 3, 3]
    X, y = instance(51, sizes, n=40)
    inst, result = solve(FusedLassoHinge(lam=1e3, points_ub=3, blocks=sizes), X, y)
    pts = inst.round(inst.decode(result.x)).extras["points"]
    assert all(len(pts.ranges(j)) == 1 for j in range(3))
    assert not pts.used.any() and pts.n_ranges() == 0


def test_zero_lambda_forces_no_merging():
    """A non-monotone pattern bin0 -> -1, bin1 -> +1, bin2 -> -1 is fitted with zero loss: 3 ranges.

    With lambda large enough the same data is fitted by merging instead (closed form: the
    hinge-only optimum is 0 at points (0, 2, 0); lambda * 4 > loss of the constant model).
    """
    codes = np.repeat([0, 1, 2], 2)[:, None]
    X, y = one_hot(codes, [3]), np.array([-1, -1, 1, 1, -1, -1], dtype=float)
    inst, result = solve(FusedLassoHinge(lam=0.0, points_ub=2), X, y)
    pts = inst.round(inst.decode(result.x)).extras["points"]
    assert result.objective == pytest.approx(0.0, abs=1e-9)
    assert [r[2] for r in pts.ranges(0)] == [0.0, 2.0, 0.0]
    strong, result = solve(FusedLassoHinge(lam=10.0, points_ub=2), X, y)
    assert len(strong.decode(result.x).extras["points"].ranges(0, tol=1e-6)) == 1
    assert result.objective == pytest.approx(brute_force(X, y, [3], 10.0, 0, 2), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_monotone_holds_in_every_solution(seed):
    sizes = [5, 4, 3]
    X, y = instance(60 + seed, sizes, n=40)
    monotone = [1, -1, 1]
    inst = FusedLassoHinge(lam=0.05, points_ub=4, monotone=monotone, blocks=sizes).instance(X, y)
    for program in (inst.exact(), inst.relaxed()):
        result = solve_highs(program, mip_rel_gap=0.0)
        theta = inst.decode(result.x).coef
        for m, b in zip(monotone, (slice(0, 5), slice(5, 9), slice(9, 12))):
            assert np.all(m * np.diff(theta[b]) >= -1e-7)
    # rounding keeps monotone blocks monotone, from any point
    rng = np.random.default_rng(seed)
    for _ in range(20):
        rounded = inst.round(Model(rng.normal(0, 3, 12), rng.normal()))
        for m, b in zip(monotone, (slice(0, 5), slice(5, 9), slice(9, 12))):
            assert np.all(m * np.diff(rounded.coef[b]) >= 0)
        assert inst.exact().is_feasible(inst.lift(rounded))


def test_max_size_limits_used_variables():
    sizes = [3, 3, 3, 2]
    X, y = instance(70, sizes, n=40, signal=False)
    for k in (0, 1, 2):
        inst, result = solve(FusedLassoHinge(lam=0.05, points_ub=2, max_size=k, blocks=sizes), X, y)
        assert inst.round(inst.decode(result.x)).extras["points"].used.sum() <= k
        dense = inst.round(Model(np.tile([0.0, 1.0, 2.0], 4)[:11], 0.0))  # every variable used before rounding
        assert dense.extras["points"].used.sum() <= k and inst.exact().is_feasible(inst.lift(dense))


def test_round_restores_sum_to_zero_and_reference_levels():
    sizes = [4, 3]
    X, y = instance(71, sizes, n=30)
    rng = np.random.default_rng(1)
    for reference, lo in (("min", 0), ("first", -2), ("sum_to_zero", -2)):
        inst = FusedLassoHinge(lam=0.1, points_lb=lo, points_ub=2, reference=reference, blocks=sizes).instance(X, y)
        for _ in range(20):
            rounded = inst.round(Model(rng.normal(0, 2, 7), rng.normal()))
            assert np.array_equal(rounded.coef, np.round(rounded.coef))
            assert inst.exact().is_feasible(inst.lift(rounded))
            blocks = (rounded.coef[:4], rounded.coef[4:])
            if reference == "sum_to_zero":
                assert all(q.sum() == 0 for q in blocks)
            elif reference == "min":
                assert all(q.min() == 0 for q in blocks)
            else:
                assert all(q[0] == 0 for q in blocks)
    np.testing.assert_allclose(isotonic(np.array([3.0, 1.0, 2.0, 5.0])), [2.0, 2.0, 2.0, 5.0])


# ------------------------------------------------------------ brute force through the pipeline
@pytest.mark.parametrize("options", [{}, {"monotone": [1, -1]}, {"max_size": 1}])
def test_pipeline_exact_optimum_equals_enumeration(options):
    """solve_exact on 2 variables x 3 bins equals the best of all integer tables in [0, 2]^6, each
    with its best hinge intercept (brute_force, independent of the formulation's code)."""
    from solvers.limits import Limits
    from solvers.pipeline import solve_exact

    X, y = instance(90, [3, 3], n=24)
    inst = FusedLassoHinge(lam=0.4, points_ub=2, **options).instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    assert fit.status.value == "optimal"
    assert fit.objective == pytest.approx(brute_force(X, y, [3, 3], 0.4, 0, 2, **options), abs=1e-9)
    assert np.array_equal(fit.model.coef, np.round(fit.model.coef))


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("mutate,match", [
    (lambda X, y, s: (np.where(X == 1, np.nan, X), y, s, {}), "NaN or inf"),
    (lambda X, y, s: (np.where(X == 1, np.inf, X), y, s, {}), "NaN or inf"),
    (lambda X, y, s: (X * 0.5, y, s, {}), "only 0 and 1"),
    (lambda X, y, s: (np.hstack([X, X[:, :1]]), y, s, {}), "blocks cover"),
    (lambda X, y, s: (X[:, 1:], y, [2, 2], {}), "exactly one 1 per variable"),
    (lambda X, y, s: (X, y[:-1], s, {}), "labels but X_onehot has"),
    (lambda X, y, s: (X, np.ones_like(y), s, {}), "single class"),
    (lambda X, y, s: (X, (y + 1) / 2, s, {}), r"\{-1, \+1\}"),
    (lambda X, y, s: (X, y, s, {"sample_weight": -np.ones(len(y))}), "sample_weight"),
    (lambda X, y, s: (np.zeros((0, 5)), y, s, {}), "non-empty"),
    (lambda X, y, s: (np.hstack([X, np.zeros((8, 1))]), y, None, {}), "empty"),
])
def test_bad_inputs_are_named(mutate, match):
    X, y = instance(80, [3, 2], n=8)
    X2, y2, sizes, kw = mutate(X, y, [3, 2])
    with pytest.raises((ValueError, TypeError), match=match):
        FusedLassoHinge(blocks=sizes).instance(X2, y2, **kw)


@pytest.mark.parametrize("options,match", [
    (dict(lam=-1.0), "lam"),
    (dict(lam=np.nan), "lam"),
    (dict(margin=0.0), "margin"),
    (dict(reference="median"), "reference"),
    (dict(points_lb=-1), "reference='min'"),
    (dict(points_lb=1, points_ub=3, reference="first"), "contain 0"),
    (dict(points_ub=[1, 2, 3]), "points_ub"),
    (dict(points_ub=2.5), "integers"),
    (dict(monotone=[2, 0]), "monotone"),
    (dict(max_size=1, must_include=[0, 1]), "exceed max_size"),
    (dict(max_size=-1), "max_size"),
    (dict(must_include=[5]), "must_include"),
    (dict(blocks=[3, 0, 2]), "block sizes"),
    (dict(blocks=[2.5, 2.5]), "blocks must be"),
])
def test_bad_options_are_named(options, match):
    with pytest.raises((ValueError, TypeError), match=match):
        FusedLassoHinge(**{"blocks": [3, 2], **options})


def test_spec_is_frozen_and_instances_do_not_share_state():
    spec = FusedLassoHinge(lam=0.5, points_ub=2)
    with pytest.raises(AttributeError):
        spec.lam = 1.0
    X1, y1 = instance(82, [3, 2], n=8)
    X2, y2 = instance(83, [2, 2, 2], n=10)
    a, b = spec.instance(sp.csr_matrix(X1), y1), spec.instance(X2, y2)
    assert a.sizes == [3, 2] and b.sizes == [2, 2, 2]
    assert a.exact().n_variables != b.exact().n_variables
    with pytest.raises(ValueError, match="coef has shape"):
        a.lift(Model(np.zeros(4), 0.0))
    assert isinstance(a.decode(np.zeros(a.relaxed().n_variables)).extras["points"], FusedPoints)
    assert infer_blocks(sp.csr_matrix(X2)) == (slice(0, 2), slice(2, 4), slice(4, 6))


def test_design_bins_raw_numeric_columns():
    rng = np.random.default_rng(3)
    raw = np.column_stack([rng.integers(20, 80, 50), rng.normal(size=50)])
    bins = FusedLassoHinge(n_bins=4).design(raw)
    Z = bins.transform(raw)
    assert Z.shape == (50, 8) and np.all(Z.sum(axis=1) == 2)
    y = np.where(raw[:, 0] > 50, 1.0, -1.0)
    assert FusedLassoHinge().instance(Z, y).sizes == [4, 4]
