"""Fused-lasso hinge ILP (formulations/fused.py) against independent references.

References: brute-force enumeration over every integer points vector (with the exact best
intercept found by evaluating the hinge at every breakpoint, written here independently), an
independent cvxpy model of eq. (1) for the LP relaxation, and hand-built instances whose
optimum is known in closed form.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.fused import FusedLassoHinge, FusedPoints, best_intercept, merge_runs
from solvers.highs import solve_highs


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


def brute_force(X, y, sizes, lam, lo, hi, *, w=None, reference=None, monotone=None, max_variables=None,
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
        if max_variables is not None and len(set(used) | set(must_include)) > max_variables:
            continue
        tv = sum(np.abs(np.diff(q)).sum() for q in parts)
        best = min(best, min_hinge_over_b(X @ theta, y, w) + lam * tv)
    return best


def solve(builder, X, y, sizes, **kw):
    program = builder.exact(X, y, sizes, **kw)
    result = solve_highs(program, mip_rel_gap=0.0, time_limit=30)
    assert result.status.value == "optimal"
    return program, result


# ------------------------------------------------------------ brute force
CASES = [
    # (seed, sizes, lam, lo, hi, options)
    (0, [3, 2, 2], 0.5, 0, 2, dict(reference="min")),
    (1, [3, 3], 0.0, 0, 2, dict(reference="min")),
    (2, [4, 2], 1.5, 0, 2, dict(reference="min")),
    (3, [3, 2], 0.3, -1, 1, dict(reference="first")),
    (4, [3, 3], 0.2, -2, 2, dict(reference="sum_to_zero")),
    (5, [4, 3], 0.25, 0, 2, dict(reference="min", monotone=[1, -1])),
    (6, [3, 2, 2], 0.1, 0, 2, dict(reference="min", max_variables=1)),
    (7, [3, 2, 2], 0.1, 0, 2, dict(reference="min", max_variables=1, must_include=[2])),
]


@pytest.mark.parametrize("seed,sizes,lam,lo,hi,options", CASES)
def test_ilp_optimum_equals_brute_force(seed, sizes, lam, lo, hi, options):
    X, y = instance(seed, sizes)
    builder = FusedLassoHinge(penalty=lam, points_lb=lo, points_ub=hi, **options)
    program, result = solve(builder, X, y, sizes)
    reference = brute_force(X, y, sizes, lam, lo, hi, **options)
    assert result.objective == pytest.approx(reference, abs=1e-7)
    # the decoded points reproduce the objective through an independent evaluation
    pts = builder.decode(result.x)
    tv = sum(np.abs(np.diff(pts.block_points(j))).sum() for j in range(len(sizes)))
    assert min_hinge_over_b(X @ pts.theta, y, np.ones(len(y))) + lam * tv == pytest.approx(reference, abs=1e-7)


def test_min_reference_loses_nothing():
    """'min' fixes the shift of each block without cutting off any score function (lb = 0)."""
    sizes = [3, 3]
    X, y = instance(11, sizes, signal=False)
    builder = FusedLassoHinge(penalty=0.3, points_ub=2, reference="min")
    _, result = solve(builder, X, y, sizes)
    assert result.objective == pytest.approx(brute_force(X, y, sizes, 0.3, 0, 2), abs=1e-7)


def test_sample_weights_equal_duplicated_rows():
    sizes = [3, 2]
    X, y = instance(12, sizes, n=10)
    w = np.array([1, 2, 3, 1, 1, 2, 1, 1, 3, 1], dtype=float)
    builder = FusedLassoHinge(penalty=0.4, points_ub=2)
    _, weighted = solve(builder, X, y, sizes, sample_weight=w)
    rep = np.repeat(np.arange(10), w.astype(int))
    _, duplicated = solve(FusedLassoHinge(penalty=0.4, points_ub=2), X[rep], y[rep], sizes)
    assert weighted.objective == pytest.approx(duplicated.objective, abs=1e-7)
    assert weighted.objective == pytest.approx(brute_force(X, y, sizes, 0.4, 0, 2, w=w, reference="min"), abs=1e-7)


def test_program_size_matches_the_paper():
    """Eqs. (2)-(5): d̄ points, 1 intercept, N slacks and one eta per within-block neighbour pair."""
    sizes = [4, 3, 2]
    X, y = instance(13, sizes, n=20)
    program = FusedLassoHinge(penalty=1.0, reference="first").exact(X, y, sizes)
    d, p, n = sum(sizes), len(sizes), 20
    assert program.n_variables == d + 1 + n + (d - p)
    assert program.n_rows == n + 2 * (d - p)
    assert program.integer.sum() == d


# --------------------------------------------------------- relaxation (LP)
def test_relaxed_lp_equals_independent_cvxpy_model():
    cp = pytest.importorskip("cvxpy")
    sizes = [4, 3]
    X, y = instance(21, sizes, n=30)
    lam, lo, hi = 0.7, -3, 3
    builder = FusedLassoHinge(penalty=lam, points_lb=lo, points_ub=hi, reference="sum_to_zero",
                              monotone=[1, 0])
    builder.exact(X, y, sizes)
    lp = builder.relaxed()
    assert not lp.is_mip
    result = solve_highs(lp)
    theta, b = cp.Variable(sum(sizes)), cp.Variable()
    tv = cp.abs(theta[1:4] - theta[0:3]).sum() + cp.abs(theta[5:7] - theta[4:6]).sum()
    problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ theta + b))) + lam * tv),
                         [theta >= lo, theta <= hi, cp.sum(theta[:4]) == 0, cp.sum(theta[4:]) == 0,
                          theta[1:4] >= theta[0:3]])
    problem.solve(solver=cp.CLARABEL)
    assert result.objective == pytest.approx(problem.value, rel=1e-6, abs=1e-6)
    exact = solve_highs(builder.exact(X, y, sizes), mip_rel_gap=0.0)
    assert result.objective <= exact.objective + 1e-9


# ------------------------------------------------------------ decode / lift
def test_merge_runs():
    assert merge_runs(np.array([0, 0, 1, 1, 1, 3])) == [(0, 1, 0.0), (2, 4, 1.0), (5, 5, 3.0)]
    assert merge_runs(np.array([2.0])) == [(0, 0, 2.0)]
    assert merge_runs(np.array([1, 2, 1])) == [(0, 0, 1.0), (1, 1, 2.0), (2, 2, 1.0)]


def test_merged_ranges_reproduce_one_hot_scores():
    sizes = [4, 3, 2]
    X, y = instance(31, sizes, n=40)
    builder = FusedLassoHinge(penalty=0.5, points_ub=3)
    _, result = solve(builder, X, y, sizes)
    pts = builder.decode(result.x)
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
    builder = FusedLassoHinge(penalty=lam, points_lb=lo, points_ub=2, reference=reference, max_variables=2)
    program = builder.exact(X, y, sizes)
    theta = np.array([0, 1, 2, 0, 0, 0, 1, 0], dtype=float)
    if reference == "sum_to_zero":
        theta = np.array([-1, 0, 1, 0, 0, 0, 1, -1], dtype=float)
    x = builder.lift(theta)
    assert program.is_feasible(x)
    tv = np.abs(np.diff(theta[:3])).sum() + np.abs(np.diff(theta[6:])).sum()
    assert program.objective(x) == pytest.approx(min_hinge_over_b(X @ theta, y, np.ones(25)) + lam * tv)
    # lifting an optimal solution's points gives back its objective
    result = solve_highs(program, mip_rel_gap=0.0)
    pts = builder.decode(result.x)
    assert program.objective(builder.lift(pts.theta, pts.intercept)) == pytest.approx(result.objective, abs=1e-7)


def test_lift_warm_start_is_accepted():
    sizes = [3, 3]
    X, y = instance(42, sizes, n=30)
    builder = FusedLassoHinge(penalty=0.5, points_ub=2)
    program = builder.exact(X, y, sizes)
    start = builder.lift(np.array([0, 1, 2, 0, 0, 0], dtype=float))
    cold = solve_highs(program, mip_rel_gap=0.0)
    warm = solve_highs(program, mip_rel_gap=0.0, warm_start=start)
    assert warm.objective == pytest.approx(cold.objective, abs=1e-7)


def test_best_intercept_is_optimal():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = rng.integers(3, 30)
        s = rng.integers(-4, 5, n).astype(float)
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        w = rng.random(n) + 0.1
        b = best_intercept(s, y, w)
        value = np.maximum(0, 1 - y * (s + b)) @ w
        assert value == pytest.approx(min_hinge_over_b(s, y, w), abs=1e-10)


# ---------------------------------------------------- behaviour of lambda
def test_large_lambda_collapses_every_variable_to_one_range():
    sizes = [4, 3, 3]
    X, y = instance(51, sizes, n=40)
    builder = FusedLassoHinge(penalty=1e3, points_ub=3)
    _, result = solve(builder, X, y, sizes)
    pts = builder.decode(result.x)
    assert all(len(pts.ranges(j)) == 1 for j in range(3))
    assert not pts.used.any() and pts.n_ranges() == 0


def test_zero_lambda_forces_no_merging():
    """A non-monotone pattern bin0 -> -1, bin1 -> +1, bin2 -> -1 is fitted with zero loss: 3 ranges.

    With lambda large enough the same data is fitted by merging instead (closed form: the
    hinge-only optimum is 0 at points (0, 2, 0); lambda * 4 > loss of the constant model).
    """
    codes = np.repeat([0, 1, 2], 2)[:, None]
    X, y = one_hot(codes, [3]), np.array([-1, -1, 1, 1, -1, -1], dtype=float)
    builder = FusedLassoHinge(penalty=0.0, points_ub=2)
    _, result = solve(builder, X, y, [3])
    pts = builder.decode(result.x)
    assert result.objective == pytest.approx(0.0, abs=1e-9)
    assert [r[2] for r in pts.ranges(0)] == [0.0, 2.0, 0.0]
    strong = FusedLassoHinge(penalty=10.0, points_ub=2)
    _, result = solve(strong, X, y, [3])
    assert len(strong.decode(result.x).ranges(0)) == 1
    assert result.objective == pytest.approx(brute_force(X, y, [3], 10.0, 0, 2), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_monotone_holds_in_every_solution(seed):
    sizes = [5, 4, 3]
    X, y = instance(60 + seed, sizes, n=40)
    monotone = [1, -1, 1]
    for program in (FusedLassoHinge(penalty=0.05, points_ub=4, monotone=monotone).exact(X, y, sizes),):
        for lp in (False, True):
            result = solve_highs(program.relax() if lp else program, mip_rel_gap=0.0)
            theta = program.block(result.x, "theta")
            for m, b in zip(monotone, (slice(0, 5), slice(5, 9), slice(9, 12))):
                assert np.all(m * np.diff(theta[b]) >= -1e-7)


def test_max_variables_limits_used_variables():
    sizes = [3, 3, 3, 2]
    X, y = instance(70, sizes, n=40, signal=False)
    for k in (0, 1, 2):
        builder = FusedLassoHinge(penalty=0.05, points_ub=2, max_variables=k)
        _, result = solve(builder, X, y, sizes)
        assert builder.decode(result.x).used.sum() <= k


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("mutate,match", [
    (lambda X, y, s: (np.where(X == 1, np.nan, X), y, s, {}), "only 0 and 1"),
    (lambda X, y, s: (np.where(X == 1, np.inf, X), y, s, {}), "only 0 and 1"),
    (lambda X, y, s: (X * 0.5, y, s, {}), "only 0 and 1"),
    (lambda X, y, s: (np.hstack([X, X[:, :1]]), y, s, {}), "blocks cover"),
    (lambda X, y, s: (X[:, 1:], y, [2, 2], {}), "exactly one 1 per variable"),
    (lambda X, y, s: (X, y[:-1], s, {}), "y has shape"),
    (lambda X, y, s: (X, np.ones_like(y), s, {}), "single class"),
    (lambda X, y, s: (X, (y + 1) / 2, s, {}), r"\{-1, \+1\}"),
    (lambda X, y, s: (X, y, s, {"sample_weight": -np.ones(len(y))}), "sample_weight"),
    (lambda X, y, s: (X, y, [3, 0, 2], {}), "block sizes"),
    (lambda X, y, s: (X, y, [2.5, 2.5], {}), "blocks must be"),
    (lambda X, y, s: (np.zeros((0, 5)), y, s, {}), "non-empty"),
])
def test_bad_inputs_are_named(mutate, match):
    X, y = instance(80, [3, 2], n=8)
    X2, y2, sizes, kw = mutate(X, y, [3, 2])
    with pytest.raises((ValueError, TypeError), match=match):
        FusedLassoHinge().exact(X2, y2, sizes, **kw)


@pytest.mark.parametrize("options,match", [
    (dict(penalty=-1.0), "penalty"),
    (dict(penalty=np.nan), "penalty"),
    (dict(reference="median"), "reference"),
    (dict(points_lb=-1), "reference='min'"),
    (dict(points_lb=1, points_ub=3, reference="first"), "contain 0"),
    (dict(points_ub=[1, 2, 3]), "points_ub"),
    (dict(monotone=[2, 0]), "monotone"),
    (dict(max_variables=1, must_include=[0, 1]), "exceed max_variables"),
    (dict(must_include=[5]), "must_include"),
])
def test_bad_options_are_named(options, match):
    X, y = instance(81, [3, 2], n=8)
    with pytest.raises(ValueError, match=match):
        FusedLassoHinge(**options).exact(X, y, [3, 2])


def test_decode_and_lift_need_an_instance():
    with pytest.raises(RuntimeError, match="exact"):
        FusedLassoHinge().decode(np.zeros(3))
    builder = FusedLassoHinge()
    X, y = instance(82, [3, 2], n=8)
    builder.exact(sp.csr_matrix(X), y, [slice(0, 3), slice(3, 5)])
    with pytest.raises(ValueError, match="theta has shape"):
        builder.lift(np.zeros(4))
    assert isinstance(builder.decode(np.zeros(builder.relaxed().n_variables)), FusedPoints)
