"""The exact engine's route tables (solvers.exact.route, slim_route, riskslim_route), end to end.

What each route runs on which instance is checked against expectations computed here from the raw
data (0/1 features, integer points, free features, operational constraints); every fit records each
row of its table, in order, as run or skipped with its reason; operational constraints send SLIM to
the MILP and RiskSLIM to SCIP, whose optimum equals brute-force enumeration over the models that obey
the constraint; a memory budget too small for a step skips it (reason naming ``memory_limit``) and
the route still returns a model; and on random tiny instances under node and time limits the
route's bound is at most the enumerated optimum, which is at most its objective. The backends
``"highs"`` / ``"scip"`` bypass the route.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from formulations.coefficients import CoefficientSet
from formulations.constraints import AtMost, Implies
from formulations.rows import is_binary
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from formulations.support_rules import NOT_RULES
from solvers.exact import riskslim_route, slim_route
import solvers.exact.route as route_module
from solvers.exact.route import Outcome, Step, run_route
from solvers.limits import LEAST_SHARE, MIN_MEMORY, Limits
from solvers.pipeline import solve_exact
from solvers.result import Status
from tests.solvers.test_slim_solver import _intercepts, _reference_terms

SLIM_STEPS = ("floor", "bayes_supports", "blocked", "support_floor", "monotone_supports", "sign_cover_lp",
              "sign_cover_lp_long", "box_search",
              "box_search_wide",
              "highs")
RISKSLIM_STEPS = ("box_floor", "supports", "blocked", "floor", "scip")
COUNTS = "the instance counts the features used (the box search does not read counts)"
PROVEN = "the incumbent is already proven optimal"


def _slim_case(seed: int, kind: str, d: int = 3, constrained: bool = False):
    """A tiny SLIM instance: ``kind`` "binary", "integer" (values -2..2) or "real" features."""
    rng = np.random.default_rng(700 + seed)
    n = int(rng.integers(10, 22))
    X = (rng.integers(0, 2, (n, d)) if kind == "binary" else rng.integers(-2, 3, (n, d)) if kind == "integer"
         else np.round(rng.normal(size=(n, d)), 2)).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = [f"x{j}" for j in range(d)]
    cs = CoefficientSet.uniform(names, 2)
    constraints = [AtMost(names, 1)] if constrained and seed % 2 == 0 else \
        [Implies(names[0], names[1]), AtMost(names[1:], 1)] if constrained else []
    spec = SLIM(coefficients=cs, c0=float(rng.choice([0.005, 0.02])), constraints=constraints)
    return X, y, cs, spec, constraints


def _slim_brute_force(X, y, cs, spec, inst, allowed) -> float:
    """Least SLIM objective (raw rows, every intercept worth trying) over the point vectors that
    ``allowed(coef)`` admits."""
    ones = np.ones(y.size)
    best = math.inf
    lo, hi = inst.intercept_bounds
    for coef in itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(cs.lb, cs.ub)]):
        coef = np.array(coef, dtype=float)
        if not allowed(coef):
            continue
        for b in _intercepts(X, y, coef, spec.margin, lo, hi, inst.integer_intercept):
            err, l0, l1 = _reference_terms(X, y, ones, (1.0, 1.0), coef, b, spec.margin, spec.c0, cs.c0)
            best = min(best, err + l0 + inst.epsilon * l1)
    return best


def _obeys(constraints, names):
    """``allowed(coef)`` for the operational constraints of :func:`_slim_case` / :func:`_risk_case`."""
    index = {name: j for j, name in enumerate(names)}

    def allowed(coef: np.ndarray) -> bool:
        used = coef != 0
        for c in constraints:
            if isinstance(c, AtMost) and used[[index[f] for f in c.features]].sum() > c.k:
                return False
            if isinstance(c, Implies) and used[index[c.feature]] and not used[index[c.then]]:
                return False
        return True

    return allowed


def _risk_case(seed: int, d: int = 3, constrained: bool = False, max_size: int | None = None):
    rng = np.random.default_rng(800 + seed)
    n = int(rng.integers(20, 40))
    X = rng.integers(0, 2 if seed % 2 else 3, (n, d)).astype(float)
    y = np.where(X @ rng.normal(0, 1.5, d) - 0.5 + rng.normal(0, 1.0, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    names = [f"x{j}" for j in range(d)]
    constraints = [AtMost(names[:2], 1)] if constrained else []
    spec = RiskSLIM(coefficients=CoefficientSet.uniform(names, 2), c0=float(rng.choice([1e-6, 0.01])),
                    max_size=max_size, constraints=constraints)
    return X, y, spec, constraints


def _risk_brute_force(inst, allowed=lambda coef: True, support=None) -> float:
    """Least RiskSLIM objective over every integer model ``allowed`` admits (max_size respected),
    the logistic loss written out on the instance's rows, every intercept of its box. With
    ``support``, only the models whose non-zero points lie in it are listed (the other points are
    0, which their ranges must hold; inf if one does not)."""
    cs, (lo, hi) = inst.coefficients, inst.intercept_bounds
    listed = np.arange(cs.lb.size) if support is None else np.asarray(list(support), dtype=int)
    outside = np.setdiff1d(np.arange(cs.lb.size), listed)
    if np.any(cs.lb[outside] > 0) or np.any(cs.ub[outside] < 0):
        return math.inf
    best = math.inf
    for values in itertools.product(*[range(int(cs.lb[j]), int(cs.ub[j]) + 1) for j in listed]):
        coef = np.zeros(cs.lb.size)
        coef[listed] = values
        used = coef != 0
        if not allowed(coef) or (inst.spec.max_size is not None and used.sum() > inst.spec.max_size):
            continue
        s = inst.X @ coef
        loss = min(float(inst.weights @ np.logaddexp(0.0, -inst.y * (s + b) / inst.data.scale))
                   for b in range(lo, hi + 1))
        best = min(best, loss + inst.spec.c0 * float(cs.c0 @ used))
    return best


# ------------------------------------------------------------------------ which step applies
@pytest.mark.parametrize("seed", range(12))
def test_slim_table_reads_the_instance(seed):
    """Each row's ``applies`` against the data: the support enumeration takes 0/1 features with
    counted weights, and the orthant search few-valued integer features, with operational constraints
    that are at most rules on supports (an AtMost: :mod:`formulations.support_rules`; an Implies is
    not); the box search takes integer points on at most 16 free features that are not all 0/1, with
    no operational constraint but signs (not an AtMost); the LP and the MILP take everything."""
    kind = ("binary", "integer", "real")[seed % 3]
    d = 17 if seed in (4, 10) else 3  # (integer features: too many for the box search)
    X, y, cs, spec, _ = _slim_case(seed, kind, d=d, constrained=seed >= 6)
    inst = spec.instance(X, y)
    limits = Limits()
    why = {step.name: step.applies(inst, limits) for step in slim_route.ROUTE}
    assert tuple(why) == SLIM_STEPS
    assert why["floor"] is None and why["sign_cover_lp"] is None and why["highs"] is None
    assert "fewer than" in why["sign_cover_lp_long"]  # (few rows: the LP takes its share)
    binary = bool(np.isin(X, (0.0, 1.0)).all())
    monotone = ("every feature is 0/1 (the Bayes-error steps take them)" if binary
                else "the points or the intercept are not integers" if kind != "integer"
                else "supports of more than 8 features" if d > 8  # (no max_size)
                else None)  # few rows of integers
    if seed >= 6:
        rules_only = seed % 2 == 0  # (an AtMost alone; else an Implies too: _slim_case)
        assert why["bayes_supports"] == (NOT_RULES if not rules_only else None if binary
                                         else "some features take values other than 0 and 1")
        if not rules_only:
            assert why["box_search"] == why["box_search_wide"] == why["monotone_supports"] == NOT_RULES
            return
        assert why["box_search"] == why["box_search_wide"] == COUNTS
        assert why["monotone_supports"] == monotone  # (it reads the rule)
        return
    if binary:
        assert why["bayes_supports"] is None  # unit weights: counted
        assert "0/1" in why["box_search"]
    else:
        assert why["bayes_supports"] == "some features take values other than 0 and 1"
        assert why["box_search"] == (None if d <= 16 else f"it has {d} free features (over 16)")
        assert why["monotone_supports"] == monotone
        # past 16 features, on these few rows (few pairs), the same search
        assert why["box_search_wide"] == (f"it has {d} free features (the box search takes them)" if d <= 16
                                          else None)


def test_riskslim_table_reads_the_instance():
    X, y, spec, _ = _risk_case(0)
    limits = Limits()
    assert [s.name for s in riskslim_route.ROUTE] == list(RISKSLIM_STEPS)
    why = [s.applies(spec.instance(X, y), limits) for s in riskslim_route.ROUTE]
    assert why[:2] == [None, None] and why[3:] == [None, None]
    assert why[2] == (None if is_binary(X) else "the features are not all 0/1, a label is absent, or a label's "
                      "weights have no common unit")
    X, y, spec, _ = _risk_case(0, constrained=True)  # (an AtMost: a rule on supports)
    box_floor, supports, blocked, floor, scip = (s.applies(spec.instance(X, y), limits) for s in riskslim_route.ROUTE)
    assert supports is None and blocked == why[2]  # (the rule changes nothing there: the features' reason)
    assert box_floor is None and floor is None and scip is None
    implies = replace(spec, constraints=(Implies("x0", "x1"),))
    assert [s.applies(implies.instance(X, y), limits) for s in riskslim_route.ROUTE][1] == NOT_RULES


# ------------------------------------------------------------------------------ what runs
def test_every_row_is_recorded_and_highs_or_scip_bypass_the_route():
    X, y, cs, spec, _ = _slim_case(0, "binary")
    inst = spec.instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=20, mip_rel_gap=1e-9))
    assert fit.result.backend == "route" and tuple(r.step for r in fit.steps) == SLIM_STEPS
    assert fit.steps[0].ran and all(r.ran or r.reason for r in fit.steps)
    assert "; ".join(str(r) for r in fit.steps) == fit.result.message
    plain = solve_exact(inst, "highs", limits=Limits(time_limit=20, mip_rel_gap=1e-9))
    assert plain.result.backend == "highs" and plain.steps == ()
    assert fit.status == plain.status == Status.OPTIMAL
    assert fit.objective == pytest.approx(plain.objective, abs=1e-9)
    X, y, spec, _ = _risk_case(1)
    inst = spec.instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=20, mip_rel_gap=1e-9))
    assert fit.result.backend == "route" and tuple(r.step for r in fit.steps) == RISKSLIM_STEPS
    scip = solve_exact(inst, "scip", limits=Limits(time_limit=20, mip_rel_gap=1e-9))
    assert scip.result.backend == "scip" and scip.steps == ()
    assert fit.objective == pytest.approx(scip.objective, abs=1e-8)


@pytest.mark.parametrize("seed", range(8))
def test_operational_constraints_go_to_the_milp_which_proves_the_brute_force_optimum(seed):
    """SLIM with operational constraints: odd seeds, 0/1 features and an Implies (not a rule on supports):
    both searches are skipped, with the reason, and the MILP step (or the LP already, when it reaches the
    start) proves the optimum of the models that obey the constraints, enumerated here; even seeds,
    integer features and an AtMost (a rule): the orthant search proves it, and the box search, which does
    not read counts, says so."""
    X, y, cs, spec, constraints = _slim_case(seed, "binary" if seed % 2 else "integer", constrained=True)
    inst = spec.instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    steps = {r.step: r for r in fit.steps}
    assert steps["box_search"].reason in ((NOT_RULES, PROVEN) if seed % 2 else (COUNTS, PROVEN)), fit.message
    assert steps["highs"].ran or steps["highs"].reason == PROVEN, fit.message
    assert steps["monotone_supports"].ran or steps["monotone_supports"].reason in (NOT_RULES, PROVEN), fit.message
    assert not steps["bayes_supports"].ran and not steps["box_search"].ran
    assert steps["bayes_supports"].reason == (NOT_RULES if seed % 2 else "some features take values other than 0 "
                                              "and 1") or steps["bayes_supports"].reason == PROVEN, fit.message
    if seed % 2 == 0:
        assert not steps["highs"].ran, fit.message
    best = _slim_brute_force(X, y, cs, spec, inst, _obeys(constraints, cs.names))
    assert fit.status == Status.OPTIMAL, fit.message
    assert fit.objective == pytest.approx(best, abs=1e-9)
    assert fit.bound <= best + 1e-9
    assert _obeys(constraints, cs.names)(fit.model.coef)


def test_the_milp_step_runs_under_operational_constraints():
    """Some of the constrained instances above need the MILP step (the LP alone does not prove
    them), so the previous test does exercise it; there both searches say why they did not run."""
    ran = 0
    for seed in range(1, 16, 2):
        X, y, cs, spec, _ = _slim_case(seed, "binary", constrained=True)
        fit = solve_exact(spec.instance(X, y), limits=Limits(time_limit=30, mip_rel_gap=1e-9))
        if fit.steps[-1].ran:
            ran += 1
            why = {s.step: s.reason for s in fit.steps}
            assert why["monotone_supports"] == NOT_RULES, fit.message
            assert why["bayes_supports"] in (NOT_RULES, "some features take values other than 0 and 1"), fit.message
            assert why["blocked"] in (NOT_RULES, "no max_size (supports of every feature)"), fit.message
    assert ran >= 2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rule", ["at_most", "implies"])
def test_riskslim_with_constraints_proves_the_brute_force_optimum(seed, rule):
    """An AtMost is a rule on supports: the enumeration lists only the supports that obey it and proves the
    optimum. An Implies is not: the enumeration is skipped with the reason, and SCIP's tree proves it."""
    X, y, spec, constraints = _risk_case(seed, constrained=True)
    if rule == "implies":
        constraints = [Implies("x0", "x1")]
        spec = replace(spec, constraints=tuple(constraints))
    inst = spec.instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    box_floor, supports, blocked, floor, scip = fit.steps
    assert box_floor.ran and math.isfinite(box_floor.bound)
    assert not blocked.ran
    if rule == "at_most":
        assert supports.ran and "stopped" not in supports.message, fit.message
        assert blocked.reason == PROVEN and not scip.ran
    else:
        assert "operational constraints" in blocked.reason
        assert not supports.ran and supports.reason == NOT_RULES
        assert floor.ran and scip.ran or scip.reason == PROVEN, fit.message
    best = _risk_brute_force(inst, _obeys(constraints, list(inst.coefficients.names)))
    assert fit.status == Status.OPTIMAL, fit.message
    assert fit.objective == pytest.approx(best, abs=1e-9)
    assert fit.bound <= best + 1e-9
    assert _obeys(constraints, list(inst.coefficients.names))(fit.model.coef)


@pytest.mark.parametrize("least", [0.0, 6.0, 15.0])
def test_a_step_gets_its_share_of_the_time_left_or_its_least_seconds(least):
    """The route gives a row ``max(share * left, min(least, LEAST_SHARE * left))`` seconds: the support
    enumeration's least seconds let it finish short passes at short limits, and leave the steps after it
    at least as much."""
    X, y, _, spec, _ = _slim_case(0, "binary")
    inst = spec.instance(X, y)
    seen = []

    def run(instance, best, limits, notes):
        seen.append(limits.seconds_left())
        return Outcome()

    step = Step("stand-in", run, lambda instance, limits: None, lambda instance, limits: 0.0, 0.2, "nothing",
                least=least)
    run_route((step,), inst, None, Limits(time_limit=20.0).started(), lambda model: True)
    assert seen[0] == pytest.approx(max(0.2 * 20.0, min(least, LEAST_SHARE * 20.0)), abs=0.1)
    assert slim_route.ROUTE[1].name == "bayes_supports" and slim_route.ROUTE[1].least == slim_route.BAYES_LEAST_SECONDS


def test_on_a_large_binary_table_the_lp_keeps_the_time():
    """On 0/1 features with ``LONG_LP_NONZEROS`` non-zero entries or more, the LP row that runs is the one
    whose share is the whole time left (HiGHS does not solve the strengthened MILP's root there); with one
    entry fewer, or the same entries as integers 0/2, the quarter-share row runs."""
    rng = np.random.default_rng(0)
    rows, d = 10_000, 60
    cells = rng.permutation(rows * d)
    y = np.where(rng.random(rows) < 0.3, 1.0, -1.0)
    limits = Limits()
    share = {step.name: step.share for step in slim_route.ROUTE}
    assert share["sign_cover_lp_long"] == 1.0 and share["sign_cover_lp"] < 1.0

    def why(ones: int, value: float = 1.0) -> dict:
        X = np.zeros(rows * d)
        X[cells[:ones]] = value
        inst = SLIM(c0=1e-3, coef_bound=3, max_size=3).instance(X.reshape(rows, d), y)
        return {step.name: step.applies(inst, limits) for step in slim_route.ROUTE if step.name.startswith("sign_")}

    long = why(slim_route.LONG_LP_NONZEROS)
    assert long["sign_cover_lp_long"] is None and "sign_cover_lp_long" in long["sign_cover_lp"]
    for short in (why(slim_route.LONG_LP_NONZEROS - 1), why(slim_route.LONG_LP_NONZEROS, 2.0)):
        assert short["sign_cover_lp"] is None and "sign_cover_lp)" in short["sign_cover_lp_long"]


# ------------------------------------------------------------------------------- memory
def test_riskslim_without_max_size_on_many_binary_features_skips_the_enumeration_by_memory():
    """40 binary features, ``max_size=None``: bounding every support of 40 features needs bit sets
    of ``2^39`` patterns, far over any budget; the step is skipped saying so (``memory_limit``), SCIP
    runs, and the fit ends with a model and a valid certificate inside its time."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (300, 40)).astype(float)
    y = np.where(X[:, :4] @ np.array([1.5, -1.0, 1.0, 0.5]) - 1.0 + rng.normal(0, 1, 300) > 0, 1.0, -1.0)
    inst = RiskSLIM(coef_bound=3, c0=0.01).instance(X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=4))
    _, supports, blocked, floor, scip = fit.steps
    assert not supports.ran and "memory_limit" in supports.reason and "MiB" in supports.reason, supports
    assert not blocked.ran, blocked
    assert floor.ran and scip.ran, fit.message
    assert fit.model is not None and fit.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert fit.bound <= fit.objective + 1e-9 and fit.times["total"] < 4 + 2.0


def test_a_tiny_memory_budget_skips_every_step_but_the_floor_and_the_route_returns_the_start():
    """``Limits(memory=16 MiB)`` (the least accepted): on 4000 rows x 25 real features the LP and
    the MILP would exceed it and the searches do not apply; each record says why, and the fit
    returns the heuristic's model, feasible, with no bound beyond it but the floor's (which always
    runs: a finite bound). The RiskSLIM route likewise."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(4000, 25)), 3)
    y = np.where(X[:, :3] @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 1, 4000) > 0, 1.0, -1.0)
    fit = solve_exact(SLIM(c0=0.01, coef_bound=3).instance(X, y), limits=Limits(time_limit=3, memory=MIN_MEMORY))
    reasons = {r.step: r.reason for r in fit.steps}
    assert [r.step for r in fit.steps if r.ran] == ["floor"], fit.message
    assert "memory_limit" in reasons["sign_cover_lp"] and "memory_limit" in reasons["highs"]
    assert reasons["bayes_supports"] == "some features take values other than 0 and 1"
    assert reasons["box_search"] == "it has 25 free features (over 16)"
    assert fit.model is not None and fit.status == Status.FEASIBLE and fit.violation == 0.0
    assert not fit.bound > fit.objective and math.isfinite(fit.bound)

    Xb = rng.integers(0, 2, (600, 20)).astype(float)
    yb = np.where(Xb[:, :3] @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 1, 600) > 0, 1.0, -1.0)
    fit = solve_exact(RiskSLIM(coef_bound=3, c0=0.01).instance(Xb, yb), limits=Limits(time_limit=3, memory=MIN_MEMORY))
    assert [r.ran for r in fit.steps] == [True, False, False, True, False], fit.message
    assert all("memory_limit" in r.reason for r in fit.steps if r.step not in ("box_floor", "floor", "blocked"))
    assert "supports of more than" in fit.steps[2].reason  # no max_size: supports of all 20 features
    assert math.isfinite(fit.bound) and not fit.bound > fit.objective
    assert fit.model is not None and fit.status == Status.FEASIBLE and fit.violation == 0.0


# --------------------------------------------------------------- bounds under any limit
@pytest.mark.parametrize("seed", range(24))
def test_route_bound_is_below_the_brute_force_optimum_and_the_objective_above(seed):
    """Random tiny SLIM and RiskSLIM instances (with and without constraints, binary or
    few-valued features) under node limits of 1-20 and time limits of 0.3-3 s: bound <= enumerated
    optimum <= objective, and a fit called optimal reaches the optimum."""
    rng = np.random.default_rng(seed)
    limits = Limits(time_limit=float(rng.uniform(0.3, 3.0)), node_limit=int(rng.integers(1, 21)), mip_rel_gap=1e-9)
    constrained = seed % 4 >= 2
    if seed % 2 == 0:
        X, y, cs, spec, constraints = _slim_case(seed, ("binary", "integer", "real")[seed % 3],
                                                 constrained=constrained)
        inst = spec.instance(X, y)
        optimum = _slim_brute_force(X, y, cs, spec, inst, _obeys(constraints, cs.names))
    else:
        X, y, spec, constraints = _risk_case(seed, constrained=constrained, max_size=2 if seed % 3 else None)
        inst = spec.instance(X, y)
        optimum = _risk_brute_force(inst, _obeys(constraints, list(inst.coefficients.names)))
    fit = solve_exact(inst, limits=limits, heuristic=seed % 3 != 0)
    assert fit.model is not None, fit.message
    assert not fit.bound > optimum + 1e-9, fit.message
    assert fit.objective >= optimum - 1e-9
    if fit.status == Status.OPTIMAL:
        assert fit.objective == pytest.approx(optimum, abs=1e-8)


# --------------------------------------------------------------------------- objective limit
@pytest.mark.parametrize("seed", range(8))
def test_objective_limit_prunes_and_stops_with_a_valid_bound(seed):
    """With ``Limits(objective_limit=L)``: L above the optimum changes nothing (the optimum,
    certified); L below it (no model beats it), the route stops once its bound shows that, with a
    bound between L's prune level and the enumerated optimum, its own model uncertified unless it
    meets that bound, and the skipped rows say why. SLIM and RiskSLIM routes, 0/1 and integer
    features."""
    gap = 1e-4
    if seed % 2:
        X, y, spec, _ = _risk_case(seed)
        inst = spec.instance(X, y)
        optimum = _risk_brute_force(inst, lambda coef: True)
    else:
        X, y, cs, spec, _ = _slim_case(seed, ("binary", "integer")[seed % 4 // 2])
        inst = spec.instance(X, y)
        optimum = _slim_brute_force(X, y, cs, spec, inst, lambda coef: True)
    above = solve_exact(inst, limits=Limits(time_limit=None, node_limit=10**6, mip_rel_gap=gap,
                                            objective_limit=optimum * 1.5 + 0.01))
    assert above.status == Status.OPTIMAL and above.objective == pytest.approx(optimum, rel=gap, abs=1e-9)
    limit = optimum * 0.8 - 0.01
    below = solve_exact(inst, heuristic=False, limits=Limits(time_limit=None, node_limit=10**6, mip_rel_gap=gap,
                                                             objective_limit=limit))
    assert limit - gap * max(abs(limit), 1e-10) - 1e-9 <= below.bound <= optimum + 1e-9
    if below.model is not None:
        assert below.objective >= optimum - 1e-9
        assert (below.status == Status.OPTIMAL) == (below.objective - below.bound <= gap * abs(below.objective) + 1e-9)
    # the route stops once the limit is proven unbeatable: its last row (the MILP / SCIP) says so
    assert below.steps[-1].reason == "no model beats the objective limit (proven)"


def test_objective_limit_is_checked():
    for bad in (float("nan"), -math.inf, "1", True):
        with pytest.raises(ValueError, match="objective_limit"):
            Limits(objective_limit=bad)


@pytest.mark.parametrize("kind", ["binary", "integer"])
def test_the_sign_cover_lp_waits_for_its_kernels_only_on_integer_features(kind, monkeypatch):
    """Before its numba kernels are compiled, the sign-cover LP still runs on 0/1 features (it prices them by
    matrix products) and is skipped on integer ones (it prices them with numba)."""
    monkeypatch.setattr(route_module, "kernels_ready", lambda modules, limits: False)
    X, y, _, spec, _ = _slim_case(1, kind)
    step = next(s for s in slim_route.ROUTE if s.name == "sign_cover_lp")
    limits = Limits(time_limit=30.0).started()
    records = run_route((step,), spec.instance(X, y), None, limits, lambda model: True).records
    assert records[0].ran == (kind == "binary")
    assert records[0].ran or records[0].reason == route_module.NOT_COMPILED
