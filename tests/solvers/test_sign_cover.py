"""Sign-cover cuts and bound (solvers.exact.sign_cover), checked by enumeration on tiny SLIM instances.

Every cut is checked against every integer model (points on the integer box, every intercept
worth trying): a model's true error indicators and signs satisfy all pair and one-row cuts, so no
model (optimal or not) is cut off. The row-generation bound is checked against the LP over all
pairs at once (scipy's HiGHS, a second path) and against the enumerated optimum, also with
operational constraints (which the LP ignores: its bound is that of a relaxation); a bound that
reaches the start ends the SLIM route after its first step.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from formulations.coefficients import CoefficientSet
from formulations.constraints import AtMost
from formulations.slim import SLIM
import solvers.exact.sign_cover as sign_cover_module
from solvers.exact.sign_cover import (VIOLATION, SignCover, SignCoverProblem, _cut_rows, _one_row_cuts, price,
                                      sign_cover)
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from solvers.registry import solve
from solvers.result import Status
from tests.solvers.test_slim_solver import _enumerate, _intercepts, _random_case, _reference_terms


def _problem(inst) -> SignCoverProblem:
    """The cuts' view of a SLIM instance, as the route builds it."""
    return SignCoverProblem.from_zero_one(ZeroOneProgram.from_instance(inst))


def _all_cuts(problem: SignCoverProblem) -> sp.csr_matrix:
    """Every pair cut and every one-row cut of the problem, over ``[z, s+, s-]``."""
    m, d = problem.X.shape
    P, N = np.flatnonzero(problem.y > 0), np.flatnonzero(problem.y < 0)
    pos, neg = np.repeat(P, N.size), np.tile(N, P.size)
    return sp.vstack([_cut_rows(problem.X, pos, neg), _one_row_cuts(problem)], format="csr")


def _case(seed: int):
    """A tiny SLIM instance: 0/1, small-integer or real features, some sign-constrained points, a
    pinned or narrow intercept now and then (so the one-row cuts appear), margins 1 and 0.5."""
    rng = np.random.default_rng(9000 + seed)
    n, d = int(rng.integers(6, 16)), int(rng.integers(1, 4))
    kind = seed % 3
    X = (rng.integers(0, 2, (n, d)) if kind == 0 else rng.integers(-2, 3, (n, d)) if kind == 1
         else np.round(rng.normal(size=(n, d)), 1)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = [f"x{j}" for j in range(d)]
    cs = CoefficientSet.uniform(names, 2, sign=rng.choice([-1, 0, 1], d) if seed % 4 == 1 else 0)
    if seed % 5 == 0:
        b = float(rng.choice([0.0, 1.0, -1.0]))
        cs = CoefficientSet(cs.lb, cs.ub, cs.integer, cs.c0, cs.must_include, cs.names, intercept_lb=b, intercept_ub=b)
    spec = SLIM(coefficients=cs, c0=float(rng.choice([0.0, 0.02, 0.1])), margin=float(rng.choice([1.0, 0.5])))
    return X, y, cs, spec


@pytest.mark.parametrize("seed", range(200))
def test_every_integer_model_satisfies_every_cut(seed):
    """No model is cut off: for every point vector on the box and every intercept worth trying,
    the model's error indicators (as the program counts them) and its signs satisfy all cuts."""
    X, y, cs, spec = _case(seed)
    inst = spec.instance(X, y)
    problem = _problem(inst)
    cuts = _all_cuts(problem)
    lo, hi = inst.intercept_bounds
    ranges = [range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in range(cs.d)]
    checked = 0
    for coef in itertools.product(*ranges):
        coef = np.array(coef, dtype=float)
        for b in _intercepts(problem.X, problem.y, coef, spec.margin, lo, hi, inst.integer_intercept):
            z = (problem.y * (problem.X @ coef + b) < spec.margin - 1e-9).astype(float)
            left = cuts @ np.concatenate([z, coef > 0, coef < 0])
            assert left.min(initial=math.inf) >= 1.0 - 1e-12, (coef, b)
            checked += 1
    assert checked > 0


def test_the_check_above_catches_a_wrong_cut():
    """The same check fails for cuts with the signs swapped (s+ where s- belongs), on some of the
    instances above: the enumeration does test the direction of the cuts."""
    caught = 0
    for seed in range(40):
        X, y, cs, spec = _case(seed)
        inst = spec.instance(X, y)
        problem = _problem(inst)
        m, d = problem.X.shape
        cuts = _all_cuts(problem).tocsc()
        swapped = sp.hstack([cuts[:, :m], cuts[:, m + d:], cuts[:, m:m + d]], format="csr")
        lo, hi = inst.intercept_bounds
        for coef in itertools.product(*[range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in range(cs.d)]):
            coef = np.array(coef, dtype=float)
            for b in _intercepts(problem.X, problem.y, coef, spec.margin, lo, hi, inst.integer_intercept):
                z = (problem.y * (problem.X @ coef + b) < spec.margin - 1e-9).astype(float)
                if (swapped @ np.concatenate([z, coef > 0, coef < 0])).min(initial=math.inf) < 1.0:
                    caught += 1
                    break
            else:
                continue
            break
    assert caught >= 10


@pytest.mark.parametrize("seed", range(60))
def test_row_generation_reaches_the_lp_over_all_pairs_and_stays_below_the_optimum(seed):
    """The bound of the row generation equals the LP over every cut at once (scipy's HiGHS), and
    is at most the enumerated optimum of SLIM (loss + L0 + L1)."""
    X, y, sw, cw, cs, spec = _random_case(seed)
    inst = spec.instance(X, y, sw)
    problem = _problem(inst)
    cover = sign_cover(problem, Limits.untimed())
    assert cover.converged
    m, d = problem.X.shape
    cuts = _all_cuts(problem)
    split = sp.hstack([sp.csr_matrix((d, m)), sp.identity(d), sp.identity(d)])
    total = sp.csr_matrix(np.r_[np.zeros(m), np.ones(2 * d)][None, :])
    A_ub = sp.vstack([-cuts, split, -split, total]).tocsr()
    b_ub = np.r_[-np.ones(cuts.shape[0]), np.ones(d), np.zeros(d), problem.max_size]
    lo, hi = problem.lo, problem.hi
    bounds = list(zip(np.r_[np.zeros(m), lo > 0, hi < 0], np.r_[np.ones(m), hi > 0, lo < 0]))
    lp = linprog(np.r_[problem.weights, problem.cost_pos, problem.cost_neg], A_ub=A_ub, b_ub=b_ub, bounds=bounds,
                 method="highs")
    assert lp.status == 0
    assert cover.bound == pytest.approx(lp.fun + problem.offset, abs=1e-7)
    _, best_total = _enumerate(X, y, sw, cw, cs, spec, inst)
    assert cover.bound <= best_total + 1e-9


def test_each_round_reports_its_bound():
    """With a reporter, every LP round reports its bound (no incumbent: ``inf``): as many reports as
    rounds, never decreasing, the last one the bound returned."""
    from solvers import progress

    X, y, sw, cw, cs, spec = _random_case(3)
    problem = _problem(spec.instance(X, y, sw))
    seen = []
    with progress.reporting(lambda elapsed, incumbent, bound, gap: seen.append((incumbent, bound))):
        cover = sign_cover(problem, Limits.untimed())
    assert cover.rounds >= 2 and len(seen) == cover.rounds
    bounds = [b for _, b in seen]
    assert all(i == math.inf for i, _ in seen) and bounds == sorted(bounds) and bounds[-1] == cover.bound


def test_strengthened_program_keeps_every_model_and_its_objective():
    """The strengthened program holds each model (its signs appended) at the same objective, and
    HiGHS finds the plain program's optimum on it."""
    X, y, sw, cw, cs, spec = _random_case(4)
    inst = spec.instance(X, y, sw)
    program = inst.exact()
    cover = sign_cover(_problem(inst), Limits.untimed())
    strong = cover.strengthen(program)
    assert set(strong.blocks) == set(program.blocks) | {"sign_pos", "sign_neg"}
    assert {"sign_split", "sign_pos_link", "sign_neg_link", "sign_cover"} <= set(strong.row_blocks)
    for coef in itertools.product(*[range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in range(cs.d)]):
        model = inst.with_best_intercept(np.array(coef, dtype=float))
        x = inst.lift(model)
        lifted = SignCover.signed(program, x)
        assert strong.is_feasible(lifted) and strong.objective(lifted) == pytest.approx(program.objective(x))
    plain = solve_exact(inst, "highs", limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    strengthened = solve(strong, "highs", time_limit=30, mip_rel_gap=1e-9)
    assert strengthened.objective == pytest.approx(plain.objective, abs=1e-9)


def test_a_bound_that_reaches_the_start_certifies_it_without_a_tree():
    """One feature separating the labels (margin 0.5, a real intercept: point 1, intercept -0.5):
    the LP bound is C0 plus the tie-breaker of one point of 1, the optimum, which the heuristic's
    start reaches, so the route stops after the LP and says why the later steps did not run. (Values
    0 and 2: the support enumeration, which comes first on 0/1 features, does not apply.)"""
    X = np.array([[0.0], [0.0], [2.0], [2.0], [2.0]])
    y = np.array([-1.0, -1.0, 1.0, 1.0, 1.0])
    inst = SLIM(c0=0.05, coef_bound=3, margin=0.5, integer_intercept=False).instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=10, mip_rel_gap=1e-9))
    assert fit.status == Status.OPTIMAL and fit.result.backend == "route", fit.message
    names = [r.step for r in fit.steps]
    first, *rest = fit.steps[names.index("sign_cover_lp"):]
    assert first.ran and not any(r.ran for r in fit.steps[:names.index("sign_cover_lp")] if r.step != "floor")
    assert rest and all(not r.ran and "already proven optimal" in r.reason for r in rest), fit.message
    assert fit.objective == pytest.approx(0.05 + float(np.ravel(inst.epsilon)[0]), abs=1e-12)
    assert first.bound == pytest.approx(fit.objective, abs=1e-9) and fit.bound <= fit.objective
    assert np.count_nonzero(fit.model.coef) == 1 and inst.errors(fit.model).sum() == 0


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_bound_ignores_operational_constraints_and_stays_below_their_optimum(seed):
    """With an operational constraint (at most one feature) the LP, which does not see it, bounds a
    relaxation: its value is at most the constrained optimum, enumerated here over the models that
    obey it."""
    X, y, sw, cw, cs, spec = _random_case(seed)
    names = list(cs.names)
    inst = SLIM(coefficients=cs, c0=spec.c0, max_size=spec.max_size, class_weight=cw,
                constraints=[AtMost(names, 1)]).instance(X, y, sw)
    cover = sign_cover(_problem(inst), Limits.untimed())
    forced = cs.must_include | (cs.lb > 0) | (cs.ub < 0)
    lo, hi = inst.intercept_bounds
    best = math.inf
    for coef in itertools.product(*[range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in range(cs.d)]):
        coef = np.array(coef, dtype=float)
        used = (coef != 0) | forced
        if used.sum() > 1 or (spec.max_size is not None and used.sum() > spec.max_size):
            continue
        for b in _intercepts(X, y, coef, spec.margin, lo, hi, inst.integer_intercept):
            err, _, l1 = _reference_terms(X, y, sw, cw, coef, b, spec.margin, spec.c0, cs.c0)
            best = min(best, err + spec.c0 * cs.c0 @ used + inst.epsilon * l1)
    assert cover.bound <= best + 1e-9
    if math.isfinite(best):
        fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
        assert fit.status == Status.OPTIMAL and fit.objective == pytest.approx(best, abs=1e-9), fit.message


def _brute_pricing(Xp, Xn, zp, zn, s_plus, s_minus):
    """Every pair's violation (``-inf`` where its rows' errors cover it) and size, pair by pair."""
    diff = Xp[:, None, :] - Xn[None, :, :]
    cover = np.where(diff > 0, s_plus, 0.0).sum(-1) + np.where(diff < 0, s_minus, 0.0).sum(-1)
    room = 1.0 - zp[:, None] - zn[None, :]
    return np.where(room > VIOLATION, room - cover, -np.inf), (diff != 0).sum(-1)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block", [1, 7, 2**20])
def test_on_zero_one_rows_the_products_price_each_row_by_its_most_violated_pair_of_fewest_features(seed, block,
                                                                                                   monkeypatch):
    """On 0/1 rows the pricing by matrix products picks, for every row, a pair of the greatest violation (the
    pair-by-pair kernel's, and brute force's), on the fewest features among those within VIOLATION of it, and
    none where no pair is violated; in blocks of any size (merged across blocks)."""
    rng = np.random.default_rng(seed)
    n_pos, n_neg, d = rng.integers(1, 30), rng.integers(1, 30), rng.integers(1, 9)
    Xp = (rng.random((n_pos, d)) < 0.4).astype(float)
    Xn = np.vstack([Xp[: n_neg // 3], (rng.random((n_neg - n_neg // 3, d)) < 0.5).astype(float)])  # (equal rows)
    m = n_pos + n_neg
    P, N = np.arange(n_pos), np.arange(n_pos, m)
    point = [np.zeros(m + 2 * d), rng.random(m + 2 * d) * (rng.random(m + 2 * d) < 0.5),
             np.round(rng.random(m + 2 * d) * 4) / 4][seed % 3]  # (all pairs tied; fractional; ties on quarters)
    monkeypatch.setattr(sign_cover_module, "PAIRS_PER_BLOCK", block)
    by_products = price(Xp, Xn, point, P, N, m, d, Limits.untimed().started(), zero_one=True)
    pairwise = price(Xp, Xn, point, P, N, m, d, Limits.untimed().started(), zero_one=False)
    v, size = _brute_pricing(Xp, Xn, point[P], point[N], point[m:m + d], point[m + d:])
    for axis, picked, other in ((1, by_products[0], pairwise[0]), (0, by_products[1], pairwise[1])):
        top = v.max(axis=axis)
        violated = top > VIOLATION
        assert np.array_equal(picked >= 0, violated) and np.array_equal(other >= 0, violated)
        rows = np.flatnonzero(violated)
        pairs = (rows, picked[rows]) if axis == 1 else (picked[rows], rows)
        assert np.allclose(v[pairs], top[rows], atol=1e-12)
        near = np.where(v >= np.expand_dims(top, axis) - VIOLATION, size, d + 1)
        assert np.array_equal(size[pairs], near.min(axis=axis)[rows])
        other_pairs = (rows, other[rows]) if axis == 1 else (other[rows], rows)
        assert np.allclose(v[other_pairs], top[rows], atol=1e-9)


def test_the_bound_on_zero_one_rows_is_the_same_by_either_pricing(monkeypatch):
    """Row generation on a 0/1 table ends at the LP over every cut whichever pricing finds its cuts: the
    bound by matrix products equals the bound pair by pair."""
    rng = np.random.default_rng(5)
    X = (rng.random((120, 10)) < 0.35).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.7, 120) > 0.4, 1, -1)
    spec = SLIM(c0=0.01, coef_bound=5)
    problem = _problem(spec.instance(X, y))
    by_products = sign_cover(problem, Limits.untimed())
    monkeypatch.setattr(sign_cover_module, "price", lambda *args: price(*args[:8], zero_one=False))
    pairwise = sign_cover(problem, Limits.untimed())
    assert by_products.converged and pairwise.converged
    assert by_products.bound == pytest.approx(pairwise.bound, abs=1e-7)


def test_a_round_the_interior_point_cannot_finish_is_finished_by_the_simplex(monkeypatch):
    """When HiGHS's interior point stops short of the LP's optimum (here: at 2 iterations), the round is solved
    by the simplex: the row generation still ends at the bound it reaches otherwise."""
    rng = np.random.default_rng(7)
    X = (rng.random((150, 8)) < 0.4).astype(float)
    y = np.where(X[:, 0] - X[:, 3] + rng.normal(0, 0.6, 150) > 0.1, 1, -1)
    problem = _problem(SLIM(c0=0.01, coef_bound=5).instance(X, y))
    reference = sign_cover(problem, Limits.untimed())
    made = sign_cover_module.new_highs

    def short_of_iterations(**options):
        h = made(**options)
        h.setOptionValue("ipm_iteration_limit", 2)
        return h

    monkeypatch.setattr(sign_cover_module, "new_highs", short_of_iterations)
    stopped = sign_cover(problem, Limits.untimed())
    assert reference.converged and stopped.converged and reference.rounds > 1
    assert stopped.bound == pytest.approx(reference.bound, abs=1e-7)
