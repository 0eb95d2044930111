"""Support enumeration with convex bounds (``enumerate_supports`` on ``SparseLogistic``, the RiskSLIM
route's ``supports`` step): equals brute-force enumeration of every integer model on random tiny
instances (boxes, signs, forced features, L0 costs, multipliers); bounds are valid at any stop; the
route it leads agrees with SCIP; instances with operational constraints skip it and SCIP solves
them (the route's record says why)."""
import itertools
import math

import numpy as np
import pytest

import dataclasses

import solvers.exact.route as route_table
from formulations.coefficients import CoefficientSet
from formulations.constraints import AtMost, Implies, Monotone
from formulations.riskslim import RiskSLIM
from solvers.exact.box_logistic import (best_integer_intercept, binary_cells, binary_support_bounds, bit_cells,
                                        column_codes, fit_box, label_bits, support_bounds, support_node)
from formulations.rows import unique_rows
from formulations.base import Model
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.support_listing import Lister, unrank
from solvers.exact.support_rate import FIRST_CHUNK, SAMPLES, sampled_rate
from solvers.exact.supports import enumerate_supports
from solvers.limits import Limits
from solvers.pipeline import solve_exact


def brute_force(inst):
    """Least objective over every integer model of the box (every intercept of the box), with the
    program's own counting: a feature is used when its point is non-zero or it is forced."""
    cs, (lo, hi) = inst.coefficients, inst.intercept_bounds
    forced = inst.forced
    ranges = [range(int(np.ceil(a)), int(np.floor(b)) + 1) for a, b in zip(cs.lb, cs.ub)]
    best = np.inf
    for coef in itertools.product(*ranges):
        coef = np.array(coef, dtype=float)
        used = (coef != 0) | forced
        if inst.spec.max_size is not None and used.sum() > inst.spec.max_size:
            continue
        scores = inst.X @ coef
        loss = min(float(inst.weights @ np.logaddexp(0.0, -inst.y * (scores + b) / inst.data.scale))
                   for b in range(lo, hi + 1))
        best = min(best, loss + inst.spec.c0 * float(cs.c0 @ used))
    return best


def random_instance(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 5))
    n = int(rng.integers(15, 40))
    X = rng.integers(0, int(rng.integers(2, 4)), (n, d)).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) - 0.7 + rng.normal(0, 1.0, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    lb = rng.choice([-2.0, -1.0, 0.0, 1.0], d)
    ub = np.maximum(lb, rng.choice([0.0, 1.0, 2.0], d))
    names = [f"x{j}" for j in range(d)]
    must = rng.random(d) < 0.15
    cs = CoefficientSet(lb=lb, ub=ub, integer=np.ones(d, bool), c0=np.ones(d), must_include=must & (ub > lb),
                        names=names)
    max_size = int(rng.integers(max(1, int(cs.must_include.sum()) + int(((lb > 0) | (ub < 0)).sum())), d + 1))
    spec = RiskSLIM(coefficients=cs, c0=float(rng.choice([0.0, 1e-6, 0.01, 0.05])), max_size=max_size,
                    multiplier=float(rng.choice([1.0, 0.7, 2.0])))
    return spec.instance(X, y)


@pytest.mark.parametrize("seed", range(60))
def test_certified_optimum_equals_brute_force(seed):
    """The enumeration alone (no start) finishes, and its model, objective and bound are the
    brute-force optimum's."""
    inst = random_instance(seed)
    optimum = brute_force(inst)
    found = enumerate_supports(SparseLogistic.from_instance(inst), Limits.untimed(mip_rel_gap=1e-9))
    assert found.finished and found.model is not None, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(found.objective, abs=1e-12)
    assert found.objective == pytest.approx(optimum, abs=1e-9)
    assert found.objective - 1e-9 * max(abs(found.objective), 1e-10) <= found.bound <= optimum + 1e-9


def test_box_fit_bound_is_below_the_box_minimum_at_any_iterate():
    """The Frank-Wolfe bound holds from the first iterate on, and is tight at convergence (compared
    with a fine grid of the box)."""
    rng = np.random.default_rng(3)
    P = np.column_stack([rng.integers(0, 2, (25, 2)), np.ones(25)]).astype(float)
    wp, wn = rng.random(25) * (rng.random(25) < 0.5), rng.random(25)
    lo, hi = np.array([-2.0, -1.0, -3.0]), np.array([1.0, 2.0, 3.0])
    grid = np.stack(np.meshgrid(*[np.linspace(a, b, 61) for a, b in zip(lo, hi)]), -1).reshape(-1, 3)
    s = grid @ P.T
    grid_min = float((np.logaddexp(0, -s) @ wp + np.logaddexp(0, s) @ wn).min())
    lower, loss = fit_box(P, wp, wn, lo, hi, np.zeros(3))
    assert lower <= grid_min + 1e-12
    assert loss - lower < 1e-9
    assert loss <= grid_min + 1e-12
    early, _ = fit_box(P, wp, wn, lo, hi, np.zeros(3), cutoff=-np.inf)  # stops at the first iterate
    assert early <= lower + 1e-12


def test_merged_patterns_give_the_same_bounds_as_every_row():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, (80, 6)).astype(float)
    positive = rng.random(80) < 0.4
    w = rng.random(80)
    supports = np.array(list(itertools.combinations(range(6), 3)), dtype=np.int64)
    codes, radix, levels = column_codes(X)
    lo, hi = -np.full(6, 2.0), np.full(6, 2.0)
    merged, _ = support_bounds(codes, radix, levels, X, positive, w, supports, lo, hi, -5.0, 5.0, 1.0)
    rows, _ = support_bounds(codes, np.full(6, 10**6), levels, X, positive, w, supports, lo, hi, -5.0, 5.0, 1.0)
    np.testing.assert_allclose(merged, rows, atol=1e-9)


@pytest.mark.parametrize("seed,k", [(0, 1), (1, 3), (2, 5), (3, 8)])
def test_a_binary_supports_cells_are_its_merged_rows(seed, k):
    """``binary_cells`` merges the rows of a 0/1 table on a support exactly as sorting them does
    (``unique_rows``, then the weights of each label summed per distinct row): the same rows in the
    same order, over the multiplier, with an intercept column, and the same weights."""
    rng = np.random.default_rng(seed)
    n, d = 300, 10
    X = (rng.random((n, d)) < rng.uniform(0.05, 0.6, d)).astype(float)
    positive = rng.random(n) < 0.3
    w = rng.uniform(0.5, 2.0, n)
    support = np.sort(rng.choice(d, k, replace=False))
    P, wp, wn = binary_cells(X, support, positive, w, 3.0)
    keys, inverse = unique_rows(X[:, support])
    assert np.array_equal(P, np.column_stack([keys, np.ones(keys.shape[0])]) / 3.0)
    assert np.allclose(wp, np.bincount(inverse[positive], weights=w[positive], minlength=keys.shape[0]), atol=1e-12)
    assert np.allclose(wn, np.bincount(inverse[~positive], weights=w[~positive], minlength=keys.shape[0]), atol=1e-12)


@pytest.mark.parametrize("seed,k", [(0, 1), (1, 3), (2, 5), (3, 7)])
def test_a_supports_cells_from_bit_sets_are_its_merged_rows(seed, k):
    """``bit_cells`` (popcounts of the rows' bit sets, each row repeated by its weight over its label's
    unit) gives what ``binary_cells`` gives from the rows: the same cells in the same order and the same
    label weights, here with integer weights of a common unit 0.5 and a cell left empty."""
    rng = np.random.default_rng(seed)
    n, d = 300, 10
    X = (rng.random((n, d)) < rng.uniform(0.05, 0.6, d)).astype(float)
    support = np.sort(rng.choice(d, k, replace=False))
    if k > 1:
        X[X[:, support[0]] == 1, support[-1]] = 1.0
    positive = rng.random(n) < 0.3
    w = 0.5 * rng.integers(1, 5, n)
    P, wp, wn = bit_cells(*label_bits(X, positive, w), support, 3.0)
    P_rows, wp_rows, wn_rows = binary_cells(X, support, positive, w, 3.0)
    assert np.array_equal(P, P_rows)
    assert np.allclose(wp, wp_rows, atol=1e-12) and np.allclose(wn, wn_rows, atol=1e-12)
    assert P.shape[0] < 2 ** k or k == 1  # (with k > 1 the cells with the first feature 1 and the last 0 are empty)


@pytest.mark.parametrize("seed", range(4))
def test_the_best_integer_intercept_is_the_least_loss_over_every_integer(seed):
    """From any start, the downhill walk ends at the integer intercept of least loss in the box
    (every integer tried here), and reports that loss."""
    rng = np.random.default_rng(seed)
    m = 12
    P = np.column_stack([rng.integers(0, 2, (m, 3)), np.ones(m)]).astype(float) / 2.0
    wp, wn = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    coef = rng.integers(-4, 5, 3).astype(float)

    def loss(b):
        s = P @ np.append(coef, b)
        return float(wp @ np.logaddexp(0, -s) + wn @ np.logaddexp(0, s))
    for lo, hi in ((-10.0, 10.0), (2.0, 5.0), (-3.0, -3.0)):
        best = min(loss(b) for b in np.arange(lo, hi + 1))
        for start in (-20.0, lo, 0.4, hi, 20.0):
            theta = np.append(coef, start)
            value = best_integer_intercept(P, wp, wn, theta, lo, hi)
            assert lo <= theta[-1] <= hi and theta[-1] == round(theta[-1])
            assert value == pytest.approx(best, abs=1e-12) and loss(theta[-1]) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_a_support_nodes_bound_holds_and_its_rounded_model_is_priced_right(seed):
    """One node of the in-support search on a box of integer points: its bound is at most the least
    objective (loss, L0 costs, offset) of every integer model of the box, each with its best integer
    intercept (all enumerated); the rounded model it offers lies in the support's box and costs what
    it says; it branches on an open coordinate, or, at an integral point, on a paid-for zero."""
    rng = np.random.default_rng(seed)
    m, k = 16, 3
    P = np.column_stack([rng.integers(0, 2, (m, k)), np.ones(m)]).astype(float)
    wp, wn = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    box_lo, box_hi = np.array([-2.0, -2.0, -2.0, -4.0]), np.array([2.0, 2.0, 2.0, 4.0])
    lo, hi = box_lo.copy(), box_hi.copy()
    lo[0] = 1.0  # this node: the first point at least 1 (pays its cost)
    cost, forced = np.array([0.05, 0.02, 0.03]), np.array([False, False, True])

    def objective(theta):
        s = P @ theta
        loss = float(wp @ np.logaddexp(0, -s) + wn @ np.logaddexp(0, s))
        return 2.0 * loss + float(cost @ (forced | (theta[:k] != 0))) + 0.1
    least = min(min(objective(np.append(points, b)) for b in np.arange(lo[k], hi[k] + 1))
                for points in itertools.product(*(np.arange(lo[j], hi[j] + 1) for j in range(k))))
    theta = np.zeros(k + 1)
    bound, value, rounded, j, kind = support_node(P, wp, wn, lo, hi, theta, box_lo, box_hi, cost, forced, 2.0, 0.1,
                                                  1e-7)
    assert bound <= least + 1e-9
    assert np.all(rounded >= box_lo) and np.all(rounded <= box_hi) and np.array_equal(rounded, np.rint(rounded))
    assert value == pytest.approx(objective(rounded), abs=1e-12)
    if kind == 1:
        assert hi[j] > lo[j] and abs(theta[j] - round(theta[j])) > 1e-7
    elif kind == 2:
        assert round(theta[j]) != 0 and lo[j] <= 0 <= hi[j] and cost[j] > 0


def test_time_and_node_limits_return_a_valid_bound():
    inst = RiskSLIM(coef_bound=3, c0=1e-6, max_size=3).instance(*_wide(0))
    optimum = solve_exact(inst, "scip", limits=Limits(time_limit=60, mip_rel_gap=1e-9)).objective
    problem = SparseLogistic.from_instance(inst)
    # one node; a budget already spent
    for limit in (Limits.untimed(node_limit=1, mip_rel_gap=1e-9), Limits(1.0, mip_rel_gap=1e-9).ending_earlier(1.0)):
        found = enumerate_supports(problem, limit)
        assert found.bound <= optimum + 1e-9 and found.nodes <= 1, (limit, found.message)
        if found.model is not None:
            assert found.objective >= optimum - 1e-9
        if found.finished:
            assert found.objective == pytest.approx(optimum, abs=1e-9)


def _wide(seed, n=120, d=8):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) - 1.0 + rng.normal(0, 1.0, n) > 0, 1.0, -1.0)
    return X, y


def test_agrees_with_scip_on_a_wider_instance():
    """The route (its supports step proves the optimum, so SCIP's step does not run) and SCIP
    alone (outside the route) certify the same optimum."""
    inst = RiskSLIM(coef_bound=3, c0=1e-3, max_size=3).instance(*_wide(2))
    a = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    b = solve_exact(inst, "scip", limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    assert a.status.value == b.status.value == "optimal"
    assert a.result.backend == "route" and b.result.backend == "scip" and not b.steps
    _, supports, blocked, floor, scip = a.steps
    assert supports.step == "supports" and supports.ran, a.message
    for later in (blocked, floor, scip):
        assert not later.ran and "already proven optimal" in later.reason
    assert a.objective == pytest.approx(b.objective, abs=1e-8)


def test_constrained_instances_skip_the_enumeration_and_scip_solves_them():
    """An operational constraint that is not a rule on supports (an Implies): the route skips the
    enumeration (it would ignore the row), SCIP's step solves, and its optimum is that of the
    cutting-plane loop on HiGHS (a second solver)."""
    X, y = _wide(1)
    names = [f"x{j}" for j in range(X.shape[1])]
    cs = CoefficientSet.uniform(names, 2)
    inst = RiskSLIM(coefficients=cs, max_size=3, constraints=(Implies("x0", "x1"),)).instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    box_floor, supports, blocked, floor, scip = fit.steps
    assert box_floor.ran and box_floor.bound <= floor.bound
    assert not supports.ran and "operational constraints" in supports.reason, fit.message
    assert not blocked.ran and "operational constraints" in blocked.reason, fit.message
    assert floor.ran and floor.bound <= fit.objective
    assert scip.ran and "lazy-cut tree" in scip.message
    assert fit.status.value == "optimal" and (fit.model.coef[0] == 0 or fit.model.coef[1] != 0)
    other = solve_exact(inst, "highs", limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    assert other.status.value == "optimal"
    assert fit.objective == pytest.approx(other.objective, abs=1e-7)


def test_rules_on_supports_are_enumerated_and_agree_with_the_milp():
    """Rules on supports (one of x0, x1; x2's points >= 0, folded into its box): the enumeration
    lists only the supports that obey them and proves the optimum the cutting-plane loop on HiGHS
    (a second solver, with the rows) proves."""
    X, y = _wide(1)
    names = [f"x{j}" for j in range(X.shape[1])]
    cs = CoefficientSet.uniform(names, 2)
    rules = (AtMost(["x0", "x1"], 1), Monotone(["x2"], "increasing"))
    inst = RiskSLIM(coefficients=cs, max_size=3, constraints=rules).instance(X, y)
    assert inst.coefficients.lb[2] == 0 and inst.coefficients.lb[3] == -2
    fit = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    box_floor, supports, blocked, floor, scip = fit.steps
    assert supports.ran and fit.status.value == "optimal", fit.message
    assert not blocked.ran and not scip.ran
    assert np.count_nonzero(fit.model.coef[:2]) <= 1 and fit.model.coef[2] >= 0
    other = solve_exact(inst, "highs", limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    assert other.status.value == "optimal"
    assert fit.objective == pytest.approx(other.objective, abs=1e-7)


@pytest.mark.parametrize("d,k,forced", [(6, 3, ()), (7, 4, (2,)), (5, 5, ()), (4, 0, ()), (9, 2, (0, 8))])
def test_lister_gives_every_support_once_in_chunks(d, k, forced):
    cs = CoefficientSet.uniform([f"x{j}" for j in range(d)], 2, must_include=[f"x{j}" for j in forced])
    X, y = _wide(0, d=d)
    problem = SparseLogistic.from_instance(RiskSLIM(coefficients=cs, max_size=k + len(forced)).instance(X, y))
    (lister,) = problem.listers()
    rows = []
    while lister.listed < lister.total:
        rows += [tuple(r) for r in lister.next(4)]
    free = [j for j in range(d) if j not in forced]
    expected = [tuple(forced) + c for c in itertools.combinations(free, min(k, len(free)))]
    assert rows == expected


@pytest.mark.parametrize("k", [0, 1, 2, 4])
def test_bit_set_bounds_equal_the_merged_row_bounds(k):
    """0/1 rows with integer copies: popcounts of the patterns give the same bounds as merging."""

    rng = np.random.default_rng(k)
    X = rng.integers(0, 2, (150, 7)).astype(float)
    positive = rng.random(150) < 0.35
    w = rng.integers(1, 4, 150) / 150.0 * np.where(positive, 2.0, 1.0)  # integer copies, class weight 2
    supports = np.array(list(itertools.combinations(range(7), k)), dtype=np.int64).reshape(math.comb(7, k), k)
    lo, hi = -np.full(7, 3.0), np.full(7, 2.0)
    codes, radix, levels = column_codes(X)
    merged, _ = support_bounds(codes, radix, levels, X, positive, w, supports, lo, hi, -6.0, 6.0, 1.5)
    bits, _ = binary_support_bounds(*label_bits(X, positive, w), supports, lo, hi, -6.0, 6.0, 1.5)
    np.testing.assert_allclose(bits, merged, atol=1e-9)
    assert label_bits(X * 2.0, positive, w) is None  # not 0/1
    assert label_bits(X, positive, w * np.where(positive, rng.random(150), 1.0)) is None  # no common unit
    assert label_bits(X, np.zeros(150, bool), w) is None  # one class


@pytest.mark.parametrize("binary", [True, False])
def test_saturated_screen_prunes_only_supports_whose_box_minimum_reaches_the_cutoff(binary):
    """With a cutoff, a support whose saturated loss (any score per merged row: the conditional
    entropy of the label, computed here by np.unique and the closed form s = log(W+/W-)) reaches
    it is returned with a bound between the cutoff and that loss and no fit (NaN loss); every other support gets the fit's bound
    of the run without a cutoff; and the converged box minimum of every screened support is at
    least the cutoff (the screen never prunes a support the fit would keep)."""
    from solvers.exact.box_logistic import saturated_loss

    rng = np.random.default_rng(11 if binary else 12)
    n, d, k = 300, 8, 3
    X = rng.integers(0, 2 if binary else 4, (n, d)).astype(float)
    signal = X[:, 0] - X[:, 1] + 0.5 * X[:, 2]
    positive = rng.random(n) < 1.0 / (1.0 + np.exp(-(signal - 1.0)))
    w = np.ones(n)
    supports = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64)
    lo, hi = -np.full(d, 3.0), np.full(d, 3.0)
    codes, radix, levels = column_codes(X)

    def bounds(cutoff):
        if binary:
            return binary_support_bounds(*label_bits(X, positive, w), supports, lo, hi, -5.0, 5.0, 1.0, cutoff)
        return support_bounds(codes, radix, levels, X, positive, w, supports, lo, hi, -5.0, 5.0, 1.0, cutoff)

    def entropy(support):
        keys, inverse = np.unique(X[:, support], axis=0, return_inverse=True)
        a = np.bincount(inverse.ravel(), weights=w * positive, minlength=len(keys))
        b = np.bincount(inverse.ravel(), weights=w * ~positive, minlength=len(keys))
        both = (a > 0) & (b > 0)  # a pure pattern's loss tends to 0 as its score tends to +-inf
        s = np.log(a[both] / b[both])  # the best score of a mixed pattern
        return float(a[both] @ np.logaddexp(0.0, -s) + b[both] @ np.logaddexp(0.0, s))

    full, _ = bounds(np.inf)
    floors = np.array([entropy(s) for s in supports])
    assert np.all(floors <= full + 1e-9)  # a lower bound of every linear fit
    cutoff = float(np.quantile(floors, 0.4))
    screened, losses = bounds(cutoff)
    pruned = np.isnan(losses)
    assert 0 < pruned.sum() < len(supports)
    # a pruned support's bound is its saturated loss, or (bit sets) the part of it summed when the
    # cutoff was reached: between the two
    if binary:
        assert np.all(screened[pruned] <= floors[pruned] + 1e-9)
    else:
        np.testing.assert_allclose(screened[pruned], floors[pruned], rtol=1e-12, atol=1e-9)
    assert np.all(screened[pruned] >= cutoff) and np.all(full[pruned] >= cutoff - 1e-9)
    kept = ~pruned & (screened < cutoff)
    np.testing.assert_allclose(screened[kept], full[kept], rtol=0, atol=1e-12)
    assert saturated_loss(np.array([2.0, 0.0]), np.array([2.0, 3.0]), 2) == pytest.approx(4 * math.log(2))


def test_bayes_errors_equal_the_pattern_count_and_bound_every_model():
    """The Bayes error of a support (solvers.exact.bayes_error) equals sum_p min(W+, W-) counted here by
    np.unique, on random 0/1 rows and on rows of 2-5 values with integer-multiple weights, for every
    support of every size (all prefixes shared in lexicographic order); stopped at a cutoff it is
    the full sum or at least the cutoff; and it is at most the weighted 0-1 error (as SLIM counts
    it: margin 1) of every model on that support (a grid of points and intercepts)."""
    from solvers.exact.bayes_error import bayes_errors, value_bits

    rng = np.random.default_rng(5)
    for trial in range(12):
        n, d = int(rng.integers(20, 100)), int(rng.integers(1, 6))
        X = rng.integers(0, 2 if trial % 2 == 0 else int(rng.integers(2, 6)), (n, d)).astype(float)
        positive = rng.random(n) < 0.45
        positive[:2] = True, False
        w = rng.integers(1, 3, n) / 90.0
        w[:2] = 1 / 90.0
        y = np.where(positive, 1.0, -1.0)
        bits = value_bits(X, positive, w)
        for k in range(0, d + 1):
            supports = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64).reshape(math.comb(d, k), k)
            got = bayes_errors(*bits, supports, np.inf)
            stopped = bayes_errors(*bits, supports, 0.05)
            for support, value, early in zip(supports, got, stopped):
                if k:
                    keys, inverse = np.unique(X[:, support], axis=0, return_inverse=True)
                    inverse = inverse.ravel()
                else:
                    keys, inverse = np.zeros((1, 0)), np.zeros(n, dtype=np.int64)
                wp = np.bincount(inverse[positive], w[positive], minlength=len(keys))
                wn = np.bincount(inverse[~positive], w[~positive], minlength=len(keys))
                assert value == pytest.approx(np.minimum(wp, wn).sum(), abs=1e-12)
                assert early == pytest.approx(value, abs=1e-12) or value >= early >= 0.05 - 1e-12
                if k == 2 and trial < 4:
                    for coef in itertools.product(range(-2, 3), repeat=2):
                        s = X[:, support] @ np.array(coef, dtype=float)
                        for b in np.arange(-5.0, 5.5, 0.5):
                            assert w @ (y * (s + b) < 1.0) >= value - 1e-12
    assert value_bits(X, positive, w * rng.random(n)) is None  # weights without a common unit



def test_a_lister_started_anywhere_lists_the_rest_of_the_full_listing(monkeypatch):
    """unrank gives the combination itertools lists at each position (every position for small n, r);
    a lister started there with ``at`` lists exactly the rest of the full listing, symmetric supports
    left out the same way; the sampled rate is a positive time per support and leaves the lister
    where it was."""
    for n, r in [(1, 1), (5, 0), (6, 2), (7, 3), (9, 4), (8, 8)]:
        for rank, combination in enumerate(itertools.combinations(range(n), r)):
            assert tuple(unrank(rank, n, r)) == combination
    rng = np.random.default_rng(3)
    free, forced = np.arange(2, 14), np.array([0], np.int64)
    prev = np.full(free.size, -1, np.int64)
    prev[[3, 7]] = [1, 2]  # columns 3 and 7 only with 1 and 2
    whole = Lister(forced, free, 4, prev)
    every = whole.next(whole.total)
    for position in rng.integers(0, whole.total, 12):
        full = Lister(forced, free, 4, prev)
        full.skip(int(position))
        started = whole.at(int(position))
        np.testing.assert_array_equal(started.next(whole.total), full.next(whole.total))
        assert started.listed == whole.total
    assert every.shape[0] < whole.total  # some symmetric supports were left out
    lister = Lister(forced, free, 4, prev)
    X = rng.integers(0, 2, (60, 14)).astype(float)
    y = np.where(rng.random(60) < 0.4, 1.0, -1.0)
    instance = RiskSLIM(coef_bound=3, c0=1e-3, max_size=5).instance(X, y)
    bounder = SparseLogistic.from_instance(instance).bounder()
    rate = sampled_rate(bounder, lister, math.inf)
    assert rate > 0 and lister.listed == 0 and list(lister.state) == [0, 1, 2, 3]
    counted = []

    def counting(supports, level):  # the bounder, counting the supports it is given
        counted.append(supports.shape[0])
        return bounder(supports, level)

    sampled_rate(counting, lister, math.inf)
    full = len(counted)
    assert full > SAMPLES // 2  # the probe and the samples (those not past the listing's end)
    counted.clear()
    sampled_rate(counting, lister, math.inf, budget=0.0)  # any rate projects above 0 s: the first probe only
    assert len(counted) == 1 and 0 < counted[0] <= FIRST_CHUNK
    counted.clear()
    monkeypatch.setattr(route_table, "ENUMERATION", dataclasses.replace(route_table.ENUMERATION, decisive_share=math.inf))  # no probe is decisive: every sample runs
    sampled_rate(counting, lister, math.inf, budget=0.0)
    assert len(counted) == full
