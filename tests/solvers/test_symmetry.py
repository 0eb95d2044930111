"""Interchangeable columns (copies and 0/1 complements) in the support enumeration: the classes
found, the supports left out, and the certified optimum against brute force."""
import itertools
from dataclasses import replace

import numpy as np
import pytest

from formulations.base import Model
from formulations.coefficients import CoefficientSet
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.support_listing import Lister
from solvers.exact.supports import enumerate_supports
from solvers.exact.symmetry import predecessors
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits
from tests.solvers.test_parallel_supports import _data, _same_enumeration
from tests.solvers.test_slim_solver import _enumerate
from tests.solvers.test_supports import brute_force


def _table(seed, n=40):
    """Columns a, a, 1 - a, b, 1 - b, c (0/1) and a few-valued column v with its mirror 2 - v."""
    rng = np.random.default_rng(seed)
    a, b, c = (rng.random(n) < p for p in (0.4, 0.6, 0.5))
    v = rng.integers(0, 3, n)
    return np.column_stack([a, a, 1 - a, b, 1 - b, c, v, 2 - v]).astype(float)


def test_copies_and_complements_chain_to_their_first_member():
    X = _table(0)
    d = X.shape[1]
    lo, hi, cost = np.full(d, -3.0), np.full(d, 3.0), np.ones(d)
    prev = predecessors(X, np.arange(d), lo, hi, cost, complements=True)
    # a: 0 <- 1 <- 2; b: 3 <- 4; c alone; v and 2 - v are not 0/1 complements
    assert prev.tolist() == [-1, 0, 1, -1, 3, -1, -1, -1]
    assert predecessors(X, np.arange(d), lo, hi, cost, complements=False).tolist() == [-1, 0, -1, -1, -1, -1, -1, -1]


def test_columns_with_other_bounds_or_costs_are_not_interchangeable():
    X = _table(1)
    d = X.shape[1]
    lo, hi, cost = np.full(d, -3.0), np.full(d, 3.0), np.ones(d)
    lo[1] = 0.0  # the copy of a may only be positive
    cost[4] = 2.0  # 1 - b costs more
    prev = predecessors(X, np.arange(d), lo, hi, cost, complements=True)
    assert prev.tolist() == [-1, -1, 0, -1, -1, -1, -1, -1]
    lo[:] = 0.0  # asymmetric bounds: a complement is not a mirror image
    prev = predecessors(X, np.arange(d), lo, hi, np.ones(d), complements=True)
    assert prev.tolist() == [-1, 0, -1, -1, -1, -1, -1, -1]


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
def test_lister_leaves_out_exactly_the_non_canonical_supports(r):
    d = 8
    prev = np.array([-1, 0, 1, -1, 3, -1, -1, 6])
    free = np.arange(10, 10 + d)
    lister = Lister(np.array([2], np.int64), free, r, prev)
    rows = []
    while lister.listed < lister.total:
        rows += [tuple(x) for x in lister.next(3)]
    assert lister.listed == lister.total

    def canonical(c):
        return all(prev[p] < 0 or prev[p] in c for p in c)

    expected = [(2,) + tuple(free[list(c)]) for c in itertools.combinations(range(d), r) if canonical(c)]
    assert rows == expected


def _instance(seed, intercept_bounds=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 45))
    a, b = rng.random(n) < 0.5, rng.random(n) < 0.4
    X = np.column_stack([a, 1 - a, b, a, rng.random(n) < 0.5]).astype(float)
    y = np.where(1.3 * a - 0.9 * b + rng.normal(0, 1.0, n) > 0.2, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = [f"x{j}" for j in range(X.shape[1])]
    bound = float(rng.choice([1.0, 2.0]))
    lo_b, hi_b = intercept_bounds if intercept_bounds is not None else (None, None)
    cs = CoefficientSet.uniform(names, bound)
    cs = CoefficientSet(lb=cs.lb, ub=cs.ub, integer=cs.integer, c0=cs.c0, must_include=cs.must_include,
                        names=names, intercept_lb=lo_b, intercept_ub=hi_b)
    spec = RiskSLIM(coefficients=cs, c0=float(rng.choice([0.0, 0.01, 0.04])), max_size=int(rng.integers(1, 4)),
                    multiplier=float(rng.choice([1.0, 0.7, 2.0])))
    return spec.instance(X, y)


@pytest.mark.parametrize("seed", range(24))
def test_enumeration_over_canonical_supports_is_the_brute_force_optimum(seed):
    """Columns 0, 1 = 1 - x0, 3 = x0 are interchangeable: supports using 1 or 3 without their
    predecessor are skipped, and the optimum, model and bound are still the brute-force ones."""
    inst = _instance(seed)
    problem = SparseLogistic.from_instance(inst)
    (lister,) = problem.listers()
    assert lister.prev is not None and (lister.prev >= 0).sum() == 2
    optimum = brute_force(inst)
    found = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9))
    assert found.finished, found.message
    assert inst.objective(Model(*found.model)) == pytest.approx(found.objective, abs=1e-12)
    assert found.objective == pytest.approx(optimum, abs=1e-9)
    assert found.bound <= optimum + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_a_given_intercept_box_keeps_complements_apart(seed):
    inst = _instance(seed, intercept_bounds=(-1, 1))
    problem = SparseLogistic.from_instance(inst)
    assert not problem.complements
    (lister,) = problem.listers()
    assert (lister.prev >= 0).sum() == 1  # only the copy x3 of x0
    found = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9))
    assert found.finished and found.objective == pytest.approx(brute_force(inst), abs=1e-9)


@pytest.mark.parametrize("seed", range(18))
def test_slim_supports_with_a_copied_column_reach_the_brute_force_optimum(seed):
    """SLIM's zero-one enumeration leaves out the supports that use the copy x2 of x0 without x0
    (copies only: its intercept box is not shifted) and still proves the brute-force optimum."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 22))
    a = rng.integers(0, 2 if seed % 2 else 3, n)
    X = np.column_stack([a, rng.integers(0, 2, n), a]).astype(float)
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(0, 1, n) > 0.3, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = ["x0", "x1", "x2"]
    cs = CoefficientSet.uniform(names, 2)
    spec = SLIM(coefficients=cs, c0=float(rng.choice([0.0, 0.01, 0.05])), max_size=int(rng.integers(1, 4)))
    inst = spec.instance(X, y, np.ones(n))
    problem = ZeroOneProgram.from_instance(inst)
    assert [lister.prev.tolist() for lister in problem.listers()][-1] == [-1, -1, 0]
    _, best_total = _enumerate(X, y, np.ones(n), (1.0, 1.0), cs, spec, inst)
    found = enumerate_supports(problem, Limits(60, mip_rel_gap=1e-9))
    assert found.finished, found.message
    assert found.objective == pytest.approx(best_total, abs=1e-9)
    assert found.bound <= best_total + 1e-9


@pytest.mark.parametrize("kind", ["riskslim", "slim"])
def test_workers_skip_the_same_symmetric_supports_as_the_serial_run(kind):
    """With copies and complements among 26 columns (enough supports for the workers' tasks), the
    n_jobs=2 enumeration equals the serial one: model, objective, bound and counts."""
    X, y = _data(3, 300, 22)
    X = np.column_stack([X, X[:, :2], 1 - X[:, 2:4]])
    spec = RiskSLIM(coef_bound=3, c0=0.005, max_size=4) if kind == "riskslim" else SLIM(coef_bound=3, c0=0.002,
                                                                                       max_size=4)
    inst = spec.instance(X, y)
    problem = SparseLogistic.from_instance(inst) if kind == "riskslim" else ZeroOneProgram.from_instance(inst)
    assert (problem.listers()[-1].prev >= 0).sum() == (4 if kind == "riskslim" else 2)
    limits = Limits(120, mip_rel_gap=1e-9).started()
    serial = enumerate_supports(problem, limits)
    parallel = enumerate_supports(problem, replace(limits, n_jobs=2))
    assert serial.finished and "interchangeable" in serial.message
    _same_enumeration(serial, parallel)
