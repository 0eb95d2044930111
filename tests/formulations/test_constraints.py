"""Operational constraints: every exact formulation's optimum equals the best enumerated model that
obeys them, every model any method returns obeys them, and impossible combinations end INFEASIBLE.

The constraints are checked here by :func:`obeys`, written from their definitions (used means
non-zero points), not by the project's compiled rows or ``violations``.
"""
import itertools

import numpy as np
import pandas as pd
import pytest

from formulations.coefficients import CoefficientSet
from formulations.constraints import (AtLeast, AtMost, Exactly, Implies, Linear, MaxFalsePositiveRate,
                                      MinTruePositiveRate, Monotone, binding, compile_constraints, excludes,
                                      threshold_groups)
from formulations.errors import NotRepresentableError
from formulations.facets import Facets
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from solvers.limits import Limits
from solvers.pipeline import solve_exact, solve_heuristic, solve_relaxed, solve_rounded

NAMES = ("a", "b", "c")
EXACT = Limits(time_limit=60, mip_rel_gap=0.0)


def obeys(constraints, coef, intercept, X=None, y=None) -> bool:
    """Each constraint evaluated from its definition at ``coef`` (points) and ``intercept``."""
    idx = {n: j for j, n in enumerate(NAMES)}
    used = np.asarray(coef) != 0
    for c in constraints:
        if isinstance(c, (AtMost, AtLeast, Exactly)):
            k = int(sum(used[idx[f]] for f in c.features))
            ok = {AtMost: k <= c.k, AtLeast: k >= c.k, Exactly: k == c.k}[type(c)]
        elif isinstance(c, Implies):
            ok = (not used[idx[c.feature]]) or used[idx[c.then]]
        elif isinstance(c, Monotone):
            p = np.array([coef[idx[f]] for f in c.features])
            steps = p if c.kind == "thresholds" else np.diff(p)
            ok = bool(np.all(steps >= 0)) if c.direction == "increasing" else bool(np.all(steps <= 0))
        elif isinstance(c, Linear):
            v = sum(a * coef[idx[f]] for f, a in c.points.items()) + sum(a * used[idx[f]] for f, a in c.used.items())
            v += c.intercept * intercept
            ok = c.lb - 1e-9 <= v <= c.ub + 1e-9
        else:  # performance, counted as SLIM counts errors: a tie (score 0) is an error
            score = X @ coef + intercept
            if isinstance(c, MaxFalsePositiveRate):
                ok = np.mean(score[y < 0] >= 0) <= c.rate + 1e-12
            else:
                ok = np.mean(score[y > 0] >= 1) >= c.rate - 1e-12
        if not ok:
            return False
    return True


def random_constraints(rng) -> tuple:
    pool = [
        lambda: AtMost(tuple(rng.choice(NAMES, 2, replace=False)), 1),
        lambda: AtLeast(tuple(rng.choice(NAMES, 2, replace=False)), int(rng.integers(1, 3))),
        lambda: Exactly(NAMES, int(rng.integers(1, 3))),
        lambda: Implies(*rng.choice(NAMES, 2, replace=False)),
        lambda: excludes(*rng.choice(NAMES, 2, replace=False)),
        lambda: Monotone(tuple(rng.choice(NAMES, 2, replace=False)), str(rng.choice(["increasing", "decreasing"])),
                         str(rng.choice(["thresholds", "levels"]))),
        lambda: Linear(points={"a": 1.0, "b": -1.0}, ub=float(rng.integers(-1, 2))),
        lambda: Linear(points={"c": 1.0}, used={"a": 1.0}, lb=1.0),
    ]
    k = int(rng.integers(1, 4))
    return tuple(pool[i]() for i in rng.choice(len(pool), k, replace=False))


def tiny(seed, n=16):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, 3)).astype(float)
    y = np.where(X @ rng.normal(size=3) + rng.normal(0, 0.7, n) > 0.3, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def settled(fit, best, cons) -> bool:
    """An infeasible enumeration must be an INFEASIBLE solve (True: nothing more to check);
    otherwise the solve must be proven optimal."""
    if not np.isfinite(best):
        assert fit.status.value == "infeasible" and fit.model is None, (cons, fit.message)
        return True
    assert fit.status.value == "optimal", (cons, fit.message)
    return False


def brute_force(values, intercepts, objective, constraints, X, y):
    best = np.inf
    for coef in itertools.product(values, repeat=3):
        coef = np.array(coef, float)
        for b in intercepts(coef):
            if obeys(constraints, coef, b, X, y):
                best = min(best, objective(coef, b))
    return best


# ----------------------------------------------------------------------------------- SLIM
@pytest.mark.parametrize("seed", range(120))
def test_slim_optimum_equals_enumeration_under_random_constraints(seed):
    rng = np.random.default_rng(1000 + seed)
    X, y = tiny(seed)
    cons = random_constraints(rng)
    if seed % 4 == 0:
        cons += (MaxFalsePositiveRate(float(rng.choice([0.0, 0.2]))),)
    if seed % 4 == 1:
        cons += (MinTruePositiveRate(float(rng.choice([0.8, 1.0]))),)
    c0 = 0.02
    inst = SLIM(coefficients=CoefficientSet.uniform(NAMES, 2), c0=c0, constraints=cons).instance(X, y)
    lo, hi = inst.intercept_bounds
    eps = inst.epsilon

    def objective(coef, b):
        return np.mean(y * (X @ coef + b) < 1) + c0 * np.count_nonzero(coef) + eps * np.abs(coef).sum()

    best = brute_force(range(-2, 3), lambda coef: range(int(lo), int(hi) + 1), objective, cons, X, y)
    fit = solve_exact(inst, limits=EXACT)
    if settled(fit, best, cons):
        return
    assert obeys(cons, fit.model.coef, fit.model.intercept, X, y), (cons, fit.model)
    assert objective(fit.model.coef, fit.model.intercept) == pytest.approx(best, abs=1e-9), cons
    # the performance bound holds for predict (score > 0), not only for SLIM's error count
    score = X @ fit.model.coef + fit.model.intercept
    for c in cons:
        if isinstance(c, MaxFalsePositiveRate):
            assert np.mean(score[y < 0] > 0) <= c.rate + 1e-12
    # heuristic and rounding: either a model that obeys, or "no solution" with the violation said
    for other in (solve_heuristic(inst, limits=Limits(time_limit=10)),
                  solve_rounded(inst, solve_relaxed(inst, limits=Limits(time_limit=10)))):
        if other.status.value in ("feasible", "optimal"):
            assert obeys(cons, other.model.coef, other.model.intercept, X, y), (cons, other.method)
        else:
            assert other.model is None or "violates" in other.message


def test_infeasible_combination_is_a_status_and_a_clear_estimator_error():
    from milpscore import SLIMClassifier

    X, y = tiny(3)
    cons = (AtLeast(("a", "b"), 2), excludes("a", "b"))
    fit = solve_exact(SLIM(coefficients=CoefficientSet.uniform(NAMES, 2), constraints=cons).instance(X, y),
                      limits=EXACT)
    assert fit.status.value == "infeasible" and fit.model is None
    with pytest.raises(RuntimeError, match="infeasible"):
        SLIMClassifier(constraints=cons, time_limit=10).fit(pd.DataFrame(X, columns=NAMES), y)


# --------------------------------------------------------------------------------- RiskSLIM
@pytest.mark.parametrize("seed", range(20))
def test_riskslim_optimum_equals_enumeration_under_random_constraints(seed):
    rng = np.random.default_rng(2000 + seed)
    X, y = tiny(seed, n=24)
    cons = random_constraints(rng)
    c0 = 1e-3
    inst = RiskSLIM(coefficients=CoefficientSet.uniform(NAMES, 2), c0=c0, constraints=cons).instance(X, y)
    lo, hi = inst.intercept_bounds

    def objective(coef, b):
        return np.mean(np.logaddexp(0.0, -y * (X @ coef + b))) + c0 * np.count_nonzero(coef)

    best = brute_force(range(-2, 3), lambda coef: range(lo, hi + 1), objective, cons, X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-9))
    if settled(fit, best, cons):
        return
    assert obeys(cons, fit.model.coef, fit.model.intercept)
    assert objective(fit.model.coef, fit.model.intercept) == pytest.approx(best, abs=1e-7), cons
    heuristic = solve_heuristic(inst, limits=Limits(time_limit=10))
    if heuristic.status.value == "feasible":
        assert obeys(cons, heuristic.model.coef, heuristic.model.intercept)


# ----------------------------------------------------------------------------- Facets hinge
@pytest.mark.parametrize("seed", range(8))
def test_facets_hinge_optimum_equals_enumeration_under_random_constraints(seed):
    rng = np.random.default_rng(3000 + seed)
    X, y = tiny(seed, n=14)
    X = X + rng.normal(0, 0.3, X.shape)  # real-valued features: a continuous intercept
    cons = random_constraints(rng)
    spec = Facets(loss="hinge", lam=0.05, grid_unit=0.5, bound=2, constraints=cons, feature_names=NAMES)
    inst = spec.instance(X, y)
    lo, hi = inst.intercept_bounds
    penalty = spec.penalty(unit=1.0)

    def objective(w, b):
        return np.mean(np.maximum(0.0, 1.0 - y * (0.5 * X @ w + b))) + penalty.value(w)

    def intercepts(w):  # the hinge in b is piecewise linear: its minimum is at a kink or a bound
        return np.clip(np.r_[y - 0.5 * X @ w, lo, hi], lo, hi)

    best = brute_force(range(-2, 3), intercepts, objective, cons, X, y)
    fit = solve_exact(inst, limits=EXACT)
    if settled(fit, best, cons):
        return
    w = inst.grid_units(fit.model.coef)
    assert obeys(cons, w, fit.model.intercept)
    assert objective(w, fit.model.intercept) == pytest.approx(best, abs=1e-7), cons
    relaxed = solve_relaxed(inst, limits=Limits(time_limit=20))
    assert relaxed.result.objective <= fit.objective + 1e-7  # the constrained LP bounds the constrained MILP


# --------------------------------------------------------------------------- errors, cards
def test_errors_name_the_problem():
    X, y = tiny(0)
    with pytest.raises(ValueError, match=r"unknown features \['age'\]"):
        SLIM(coefficients=CoefficientSet.uniform(NAMES, 2), constraints=(AtMost(("a", "age"), 1),)).instance(X, y)
    with pytest.raises(NotRepresentableError, match="per-row error"):
        RiskSLIM(constraints=(MaxFalsePositiveRate(0.1),))
    with pytest.raises(NotRepresentableError, match="per-row error"):
        Facets(loss="hinge", constraints=(MinTruePositiveRate(0.9),), feature_names=NAMES).instance(X, y).exact()
    with pytest.raises(ValueError, match="k must be"):
        AtMost(("a", "b"), 3)
    with pytest.raises(TypeError, match="not a constraint"):
        SLIM(constraints=("a <= 1",))
    cs = CoefficientSet.uniform(NAMES, 2, integer=False)
    with pytest.raises(NotRepresentableError, match="integer points"):
        SLIM(coefficients=cs, constraints=(AtLeast(("a",), 1),)).instance(X, y).exact()
    from milpscore import FacetsClassifier

    with pytest.raises(ValueError, match="prox"):
        FacetsClassifier(solver="prox", constraints=(AtMost(("x0", "x1"), 1),)).fit(X, y)


def test_one_threshold_per_variable_on_real_data(shared_data):
    from milpscore import SLIMClassifier
    from milpscore.data.binarize import ThresholdBinarizer

    frame = pd.read_csv(shared_data / "breastcancer_data.csv")
    y = frame.pop(frame.columns[0])
    Xb = ThresholdBinarizer(max_cuts=3).fit_transform(frame)
    groups = threshold_groups(Xb.columns)
    assert set(groups) == set(frame.columns)
    clump = groups["ClumpThickness"]
    model = SLIMClassifier(c0=0.01, coef_bound=5, max_size=5, time_limit=5, one_threshold_per_variable=True,
                           constraints=[Monotone(clump, "increasing")]).fit(Xb, y)
    used = dict(zip(Xb.columns, model.coef_))
    for variable, cols in groups.items():  # independent check from the column names
        assert sum(used[c] != 0 for c in cols) <= 1, variable
    assert all(used[c] >= 0 for c in clump)
    text = str(model.scorecard_)
    assert "obeys the operational constraints" in text and "ClumpThickness >= {" in text


# ------------------------------------------------------------------------------ fused table
@pytest.mark.parametrize("cons", [
    (AtMost(("x0", "x1"), 1),),
    (AtLeast(("x0", "x1"), 2),),
    (Implies("x1", "x0"), Monotone(("x0",), "decreasing", kind="levels")),
    (Linear(used={"x0": 1.0, "x1": 1.0}, lb=2.0), Monotone(("x1",), "increasing", kind="levels")),
    (Exactly(("x0", "x1"), 1), Monotone(("x0", "x1"), "increasing", kind="levels")),
], ids=lambda c: "+".join(type(x).__name__ for x in c))
def test_fused_table_optimum_equals_enumeration_under_constraints(cons):
    from formulations.fused import FusedLassoHinge

    rng = np.random.default_rng(7)
    n, lam = 30, 0.3
    codes = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 3, n)])
    codes[:3] = np.arange(3)[:, None]
    X = np.zeros((n, 6))
    X[np.arange(n)[:, None], codes + [0, 3]] = 1.0
    y = np.where(codes[:, 0] - 0.6 * codes[:, 1] + rng.normal(0, 0.8, n) > 0.2, 1.0, -1.0)
    inst = FusedLassoHinge(lam=lam, points_ub=2, blocks=(3, 3), constraints=cons,
                           variable_names=("x0", "x1")).instance(X, y)

    def obeys_table(theta):
        used = [np.ptp(theta[:3]) > 0, np.ptp(theta[3:]) > 0]
        for c in cons:
            if isinstance(c, Monotone):
                for f in c.features:
                    block = theta[:3] if f == "x0" else theta[3:]
                    d = np.diff(block)
                    if not (np.all(d >= 0) if c.direction == "increasing" else np.all(d <= 0)):
                        return False
            elif isinstance(c, (AtMost, AtLeast, Exactly)):
                k = sum(used[int(f[1])] for f in c.features)
                if not {AtMost: k <= c.k, AtLeast: k >= c.k, Exactly: k == c.k}[type(c)]:
                    return False
            elif isinstance(c, Implies):
                if used[int(c.feature[1])] and not used[int(c.then[1])]:
                    return False
            elif isinstance(c, Linear):
                v = sum(a * used[int(f[1])] for f, a in c.used.items())
                if not c.lb - 1e-9 <= v <= c.ub + 1e-9:
                    return False
        return True

    best = np.inf
    for theta in itertools.product(range(3), repeat=6):
        theta = np.array(theta, float)
        if theta[:3].min() != 0 or theta[3:].min() != 0 or not obeys_table(theta):
            continue  # reference 'min': each variable's smallest points are 0
        s = X @ theta
        tv = lam * (np.abs(np.diff(theta[:3])).sum() + np.abs(np.diff(theta[3:])).sum())
        for b in y - s:  # the hinge in b is minimal at a kink
            best = min(best, np.maximum(0.0, 1.0 - y * (s + b)).sum() + tv)
    fit = solve_exact(inst, limits=EXACT)
    assert fit.status.value == "optimal", fit.message
    theta = inst.normalise(fit.model).coef
    assert obeys_table(theta)
    assert fit.objective == pytest.approx(best, abs=1e-7)


def test_compare_reports_the_violation_of_each_method():
    from milpscore.compare import compare

    X, y = tiny(5, n=30)
    cons = (AtMost(("x0", "x1", "x2"), 1), Monotone(("x0", "x1"), "increasing"))
    df = compare(X, y, ["slim"], time_limit=10, test_size=None, progress=False,
                 params={"slim": {"coef_bound": 2, "c0": 0.01, "constraints": cons}}).set_index("method")
    assert df.loc["exact", "status"] == "optimal" and df.loc["exact", "violation"] == 0.0
    for method, row in df.iterrows():  # a method whose model breaks a constraint does not claim a model
        assert row["violation"] <= 1e-6 or row["status"] == "no_solution_found", method


# ---------------------------------------------------------------- convex rounding, Facets logistic
@pytest.mark.parametrize("seed", range(6))
def test_convex_rounding_ilp_optimum_equals_enumeration_under_random_constraints(seed):
    from formulations.rounding import ConvexRounding

    rng = np.random.default_rng(4000 + seed)
    X, y = tiny(seed, n=20)
    cons = random_constraints(rng)
    inst = ConvexRounding(margin=1.0, constraints=cons, feature_names=NAMES).instance(X, y)

    def objective(c, b):
        return np.maximum(0.0, 1.0 - y * (X @ c + b)).sum()

    best = brute_force((-1, 0, 1), lambda c: y - X @ c, objective, cons, X, y)
    fit = solve_exact(inst, limits=EXACT)
    if settled(fit, best, cons):
        return
    assert obeys(cons, fit.model.coef, fit.model.intercept)
    assert objective(fit.model.coef, fit.model.intercept) == pytest.approx(best, abs=1e-7), cons


@pytest.mark.parametrize("seed", range(3))
def test_facets_logistic_exact_obeys_and_matches_enumeration(seed):
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(5000 + seed)
    X, y = tiny(seed, n=20)
    cons = random_constraints(rng)
    spec = Facets(loss="logistic", lam=0.02, grid_unit=1.0, bound=1, constraints=cons, feature_names=NAMES)
    inst = spec.instance(X, y)
    lo, hi = inst.intercept_bounds
    penalty = spec.penalty(unit=1.0)

    def objective(w, b):
        return np.mean(np.logaddexp(0.0, -y * (X @ w + b))) + penalty.value(w)

    def best_intercept(w):
        res = minimize_scalar(lambda b: objective(w, b), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-10})
        return [res.x]

    best = brute_force((-1, 0, 1), best_intercept, objective, cons, X, y)
    fit = solve_exact(inst, limits=Limits(time_limit=60, mip_rel_gap=1e-7))
    if settled(fit, best, cons):
        return
    assert obeys(cons, inst.grid_units(fit.model.coef), fit.model.intercept)
    assert objective(inst.grid_units(fit.model.coef), fit.model.intercept) == pytest.approx(best, abs=1e-6), cons


def test_binding_is_true_for_rows_or_performance_constraints_only():
    names = ["a", "b", "c"]
    assert not binding(None)
    assert not binding(compile_constraints((), names))
    assert binding(compile_constraints((AtMost(("a", "b"), 1),), names))
    assert binding(compile_constraints((MinTruePositiveRate(0.9),), names))
