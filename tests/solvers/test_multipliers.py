"""RiskSLIM's multipliers in one budget (solvers.multipliers): the set-up of each multiplier (its
instance and continuous fit, which look at no clock) is planned against the deadline, so a limited
``multiplier="auto"`` fit on a wide table ends within its limit plus a small grace; a skipped
multiplier's bound is valid (below its proven optimum), so the certificate over all is; a later multiplier
inherits the first's floor, valid for its models; the continuous fit of a multiplier is not the
fit of multiplier 1 scaled once a bound binds."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

from formulations.riskslim import RiskSLIM
from milpscore.estimators import RiskScoreClassifier
from solvers.limits import Limits
from solvers.pipeline import solve_exact
from solvers.multipliers import SETUP_GRACE, certificate, check_multipliers, least, skipped_bound, solve_multipliers
from solvers.result import Status

#: seconds a fit may end past its limit here: the multipliers' set-up grace, plus the validation and
#: the last step's own overrun (a solver stops at its next look at the clock) on a loaded machine
GRACE = SETUP_GRACE + 1.5


def _wide(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X[:, :5] @ np.array([1.0, -1.0, 1.0, 1.0, -1.0]) + rng.normal(0, 1, n) > 0.5, 1, -1)
    return X, y


def _weak(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Weak effects: the larger multipliers' models beat multiplier 1's."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (300, 5)).astype(float)
    return X, np.where(X @ np.array([0.5, -0.5, 0.4, 0.0, 0.0]) + rng.logistic(size=300) > 0.2, 1, -1)


def test_a_limited_auto_fit_on_a_wide_table_ends_within_its_limit():
    """8,000 rows x 300 columns: each multiplier's set-up takes about a second here (its continuous
    fit alone 0.3-0.7 s), so the seven multipliers of "auto" used to overrun a 4 s limit several
    times over (32 s for 5 s at 2f85f32); now the fit ends within the limit and the grace, the
    multipliers left out say so with a positive bound, and the certificate over all stays valid
    (below the objective)."""
    X, y = _wide(8000, 300)
    limit = 4.0
    started = time.perf_counter()
    est = RiskScoreClassifier(coef_bound=5, max_size=5, multiplier="auto", time_limit=limit).fit(X, y)
    took = time.perf_counter() - started
    assert took <= limit + GRACE, (took, est.multipliers_)
    rows = est.multipliers_
    assert len(rows) == 7 and rows["status"].iloc[0] != "skipped"
    skipped = rows["status"] == "skipped"
    assert (rows["bound"][skipped] > 0).all() and rows["objective"][skipped].isna().all()
    assert est.bound_ <= est.objective_ + 1e-12 and est.bound_ == rows["bound"].min()


def test_a_skipped_multiplier_keeps_a_valid_bound_and_the_least_objective_is_kept():
    """Solved with time, every multiplier is certified and the kept one has the least objective;
    with a budget already spent, the first multiplier still runs (its floor gives a bound) and the
    others are skipped without building their instances, each with a bound (the first's loss floor
    through ``lambda -> lambda / m``) that is positive and at most its own proven optimum."""
    X, y = _wide(300, 6, seed=1)
    first = RiskSLIM(coef_bound=3, max_size=2).instance(X, y)
    built = []

    def instance_for(m):
        built.append(m)
        return RiskSLIM(coef_bound=3, max_size=2, multiplier=m).instance(X, y)

    alone = [solve_exact(instance_for(m), limits=Limits(time_limit=60, mip_rel_gap=1e-9)) for m in (1.0, 2.0, 4.0)]
    assert all(f.status == Status.OPTIMAL for f in alone)  # each multiplier's own optimum
    built.clear()
    solved = solve_multipliers(first, instance_for, (1.0, 2.0, 4.0), Limits(time_limit=60, mip_rel_gap=1e-9))
    assert built == [2.0, 4.0] and least(solved).objective == pytest.approx(min(f.objective for f in alone), abs=1e-9)
    status, _, bound = certificate(solved, 1e-6)
    assert status == Status.OPTIMAL and bound <= least(solved).objective + 1e-12
    spent = Limits(time_limit=1e-3).started()
    time.sleep(2 * SETUP_GRACE + 0.01)
    built.clear()
    fits = solve_multipliers(first, instance_for, (1.0, 2.0, 4.0), spent)
    assert built == [] and [f.skipped != "" for f in fits] == [False, True, True]
    assert all(f.fit is None and 0 < f.bound <= own.objective + 1e-12 for f, own in zip(fits[1:], alone[1:]))
    assert least(fits) is fits[0]
    status, gap, bound = certificate(fits, 1e-6)
    assert bound == min(f.bound for f in fits) and bound <= least(solved).objective + 1e-12
    # a box whose ranges exclude 0 (or a first multiplier larger than the skipped one): bound 0
    assert skipped_bound(first, 2.0, 1.0) == 0.0 and skipped_bound(first, 1.0, 2.0) > 0


@pytest.mark.parametrize("seed", range(3))
def test_a_later_multiplier_inherits_the_first_ones_floor_and_it_holds_for_its_models(seed):
    """The first multiplier's floors hold for the real models of its box, and a larger multiplier's models
    are such models (``lambda -> lambda / m``): each later multiplier's inherited bound is finite and at
    most its brute-force optimum (every integer model of every support), its bound is at least the
    inherited one, and the certificate over all stays below the least objective. In the other order
    (a smaller multiplier after a larger one) nothing is inherited."""
    from tests.solvers.test_routes import _risk_brute_force
    X, y = _weak(seed)  # (multipliers 2 and 4 beat 1, so 1's optimum bounds neither)

    def instance_for(m):
        return RiskSLIM(coef_bound=2, c0=1e-3, max_size=2, multiplier=m).instance(X, y)

    fits = solve_multipliers(instance_for(1.0), instance_for, (1.0, 2.0, 4.0), Limits(time_limit=60, mip_rel_gap=1e-9))
    assert fits[0].inherited == -math.inf
    for f in fits[1:]:
        optimum = _risk_brute_force(instance_for(f.multiplier))
        assert -math.inf < f.inherited <= optimum + 1e-9 and f.bound >= f.inherited
        assert f.row()["bound"] == f.bound
    assert certificate(fits, 1e-6)[2] <= least(fits).objective + 1e-12
    backwards = solve_multipliers(instance_for(4.0), instance_for, (4.0, 1.0), Limits(time_limit=60, mip_rel_gap=1e-9))
    assert backwards[1].inherited == -math.inf


def test_the_continuous_fit_of_a_multiplier_is_the_scaled_fit_only_while_no_bound_binds():
    """``mu = lambda / m`` maps the loss of multiplier ``m`` on ``[lb, ub]`` to the loss of 1 on
    ``[lb / m, ub / m]``: with a box that never binds the fits agree after scaling; with a box that
    binds at ``m = 1`` they do not (why each multiplier makes its own fit)."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (400, 3)).astype(float)
    y = np.where(X @ np.array([0.8, -0.6, 0.4]) + rng.logistic(size=400) > 0.2, 1, -1)
    wide1, wide2 = (RiskSLIM(coef_bound=50, multiplier=m).instance(X, y).continuous_fit()[0] for m in (1.0, 2.0))
    np.testing.assert_allclose(wide2, 2.0 * wide1, rtol=1e-3, atol=1e-3)
    y = np.where(X @ np.array([6.0, -0.6, 0.4]) + rng.logistic(size=400) > 2.0, 1, -1)  # the first weight binds
    tight1, tight2 = (np.append(*RiskSLIM(coef_bound=1, multiplier=m).instance(X, y).continuous_fit())
                      for m in (1.0, 2.0))
    assert abs(tight1[0]) >= 1 - 1e-9
    assert not np.allclose(np.clip(2.0 * tight1, [-1, -1, -1, -np.inf], [1, 1, 1, np.inf]), tight2, atol=1e-2)


@pytest.mark.parametrize("bad", ["best", [], [1.0, 0.0], [1.0, math.nan], True])
def test_multipliers_are_checked(bad):
    with pytest.raises(ValueError, match="multiplier"):
        check_multipliers(bad)


def test_every_multipliers_start_is_found_before_the_first_exact_solve_which_prunes_at_their_least(monkeypatch):
    """Every start is found before any route runs, the first fit's objective limit is the least start
    objective (below the first's own start), and the least objective is still the least of every
    multiplier's brute-force optimum, certified."""
    import solvers.multipliers as multipliers
    import solvers.pipeline as pipeline
    from tests.solvers.test_routes import _risk_brute_force

    X, y = _weak()
    spec = {m: RiskSLIM(coef_bound=2, c0=1e-3, max_size=2, multiplier=m) for m in (1.0, 2.0, 4.0)}
    best = min(_risk_brute_force(s.instance(X, y)) for s in spec.values())
    calls, starts, route = [], multipliers.multiplier_starts, pipeline._solve_by_route
    monkeypatch.setattr(multipliers, "multiplier_starts", lambda instances, *args: calls.append(
        ("starts", tuple(i.spec.multiplier for i in instances))) or starts(instances, *args))
    monkeypatch.setattr(pipeline, "_solve_by_route", lambda r, instance, *args: calls.append(
        ("route", instance.spec.multiplier)) or route(r, instance, *args))
    solved = solve_multipliers(spec[1.0].instance(X, y), lambda m: spec[m].instance(X, y), (1.0, 2.0, 4.0),
                               Limits(time_limit=60, mip_rel_gap=1e-9))
    assert calls == [("starts", (1.0, 2.0, 4.0)), ("route", 1.0), ("route", 2.0), ("route", 4.0)]
    instances = [spec[m].instance(X, y) for m in spec]
    objectives = [i.objective(model) for i, model in zip(instances, starts(instances))]
    assert solved[0].objective_limit == pytest.approx(min(objectives), abs=1e-12)
    assert solved[0].objective_limit < objectives[0] - 1e-6
    assert least(solved).objective == pytest.approx(best, abs=1e-9)
    status, _, bound = certificate(solved, 1e-6)
    assert status == Status.OPTIMAL and bound <= best + 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_multiplier_starts_are_valid_the_first_is_its_heuristic_and_none_is_lost_when_time_is_out(seed):
    """Each start lies in its instance's box with at most ``max_size`` points; the first is the first
    instance's own heuristic; a later start is no worse than its rounded logistic start; with the
    budget spent every instance still gets a valid model."""
    from formulations.base import Model
    from solvers.heuristics.riskslim import heuristic, multiplier_starts, rounded_logistic_start

    X, y = _weak(seed)
    instances = [RiskSLIM(coef_bound=3, c0=1e-3, max_size=2, multiplier=m).instance(X, y) for m in (1.0, 2.0, 4.0)]
    spent = Limits(time_limit=1e-6).started()
    time.sleep(1e-3)
    for limits in (None, spent):
        starts = multiplier_starts(instances, limits)
        assert len(starts) == 3 and all(isinstance(s, Model) for s in starts)
        for instance, start in zip(instances, starts):
            cs = instance.coefficients
            assert np.all(start.coef >= cs.lb) and np.all(start.coef <= cs.ub)
            assert np.array_equal(start.coef, np.round(start.coef)) and np.count_nonzero(start.coef) <= 2
            if limits is None:
                assert instance.objective(start) <= instance.objective(rounded_logistic_start(instance)) + 1e-12
    starts = multiplier_starts(instances)
    first = heuristic(instances[0])
    assert np.array_equal(starts[0].coef, first.coef) and starts[0].intercept == first.intercept


def test_a_start_that_breaks_an_operational_constraint_sets_no_objective_limit():
    """Only a feasible start may set the objective limit the fits prune with: one using both features of
    an at-most-one constraint counts as inf, one using a single feature as its objective."""
    from formulations.base import Model
    from formulations.coefficients import CoefficientSet
    from formulations.constraints import AtMost
    from solvers.multipliers import SetUp

    X, y = _weak()
    cs = CoefficientSet.uniform([f"x{j}" for j in range(5)], 2)
    instance = RiskSLIM(coefficients=cs, max_size=3, constraints=(AtMost(["x0", "x1"], 1),)).instance(X, y)
    both, one = Model(np.array([1.0, -1.0, 0, 0, 0]), 0.0), Model(np.array([1.0, 0, 0, 0, 0]), 0.0)
    assert SetUp(1.0, instance, start=both).objective == math.inf
    assert SetUp(1.0, instance, start=one).objective == pytest.approx(instance.objective(one), abs=1e-12)
    assert SetUp(1.0, instance).objective == math.inf
