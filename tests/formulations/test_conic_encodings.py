"""Conic loss and penalty encodings: tight epigraphs, exact lifts, and solutions checked against
closed forms / independent references (scipy BFGS for losses, the penalties' own prox and cvxpy
atoms for penalties)."""
import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize

from formulations.conic_encodings import PENALTY_ENCODERS, add_loss, add_penalty, penalty_encoder
from formulations.errors import NotRepresentableError
from formulations.penalties import (EYE, OWL, L1, ElasticNet, L2Squared, NaiveQ, WeightedL1,
                                    WeightedL2Squared)
from formulations.program import ProgramBuilder
from solvers.backends.ecos import solve_ecos

D = 7
RNG = np.random.default_rng(5)
R_BINARY = np.array([1, 0, 1, 0, 0, 1, 0], float)
PENALTIES = {
    "l1": L1(0.7),
    "l2sq": L2Squared(1.3),
    "enet": ElasticNet(0.8, 0.4),
    "enet_pure_l1": ElasticNet(0.8, 1.0),
    "wl1": WeightedL1(RNG.uniform(0, 2, D)),
    "wl2sq": WeightedL2Squared(RNG.uniform(0, 2, D)),
    "owl_linf": OWL(np.r_[1.5, np.zeros(D - 1)]),
    "owl_two_levels": OWL(np.r_[np.full(3, 1.0), np.full(D - 3, 0.5)]),
    "owl_decreasing": OWL(np.linspace(1.2, 0.1, D)),
    "eye": EYE(R_BINARY, 0.6),
    "eye_fractional": EYE(RNG.uniform(0, 1, D), 0.6),
    "eye_r0": EYE(np.zeros(D), 0.6),
    "eye_r1": EYE(np.ones(D), 0.6),
    "naive_q": NaiveQ(R_BINARY, 0.6, 0.3),
}
IDS = list(PENALTIES)


def _penalty_program(penalty, scale=1.0, fixed=None):
    b = ProgramBuilder()
    if fixed is None:
        b.add_variables("w", D)
    else:
        b.add_variables("w", D, lb=fixed, ub=fixed)
    lift = add_penalty(b, penalty, weights="w", name="pen", scale=scale)
    return b, lift


def _lifted(program, w, aux):
    x = np.zeros(program.n_variables)
    x[program.blocks["w"]] = w
    for name, values in aux.items():
        x[program.blocks[name]] = values
    return x


@pytest.mark.parametrize("key", IDS)
def test_lift_is_feasible_and_has_penalty_value(key):
    penalty = PENALTIES[key]
    b, lift = _penalty_program(penalty, scale=2.5)
    program = b.build()
    for _ in range(5):
        w = RNG.normal(size=D) * RNG.choice([0.0, 1.0], size=D, p=[0.3, 0.7])
        x = _lifted(program, w, lift(w))
        assert program.is_feasible(x, tol=1e-9), program.violations(x)
        assert program.objective(x) == pytest.approx(2.5 * penalty.value(w), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("key", IDS)
def test_epigraph_is_tight_at_fixed_weights(key):
    """With w fixed, minimising over the auxiliary variables gives exactly penalty.value(w)."""
    penalty = PENALTIES[key]
    w = RNG.normal(size=D)
    b, _ = _penalty_program(penalty, fixed=w)
    r = solve_ecos(b.build())
    assert r.objective == pytest.approx(penalty.value(w), rel=1e-7, abs=1e-8)


def _prox_program(penalty, v):
    b = ProgramBuilder()
    b.add_variables("w", D)
    add_loss(b, "least_squares", np.eye(D), v, weights="w", intercept=None)  # 1/2 ||v - w||^2
    add_penalty(b, penalty, weights="w", name="pen")
    return b.build()


@pytest.mark.parametrize("key", IDS)
def test_conic_solution_equals_prox(key):
    """argmin 1/2 ||w - v||^2 + Omega(w) on ECOS = penalty.prox(v, 1) (an independent algorithm).

    Objectives agree to 1e-8; the minimisers to about the square root of that (an interior
    point stops 1e-8 inside the cones, and the objective is 1-strongly convex).
    """
    penalty = PENALTIES[key]
    v = RNG.normal(size=D) * 2
    program = _prox_program(penalty, v)
    r = solve_ecos(program)
    w = program.block(r.x, "w")
    expected = penalty.prox(v, 1.0)
    f = lambda u: 0.5 * np.sum((u - v) ** 2) + penalty.value(u)  # noqa: E731
    assert -1e-9 <= f(w) - f(expected) <= 1e-8 * max(1.0, f(expected))
    assert r.objective == pytest.approx(f(w), rel=1e-6)
    np.testing.assert_allclose(w, expected, atol=2e-4)


def test_eye_and_owl_against_cvxpy_atoms():
    """Independent DCP forms: EYE as l1 + norm2([l1, r . w]); OWL as a sum of top-k sums."""
    v = RNG.normal(size=D) * 2
    r, lam = R_BINARY.copy(), 0.6
    w = cp.Variable(D)
    l1 = cp.norm1(cp.multiply(1 - r, w))
    eye = lam * (l1 + cp.norm2(cp.hstack([l1, cp.norm2(cp.multiply(r, w))])))
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w - v) + eye)).solve(solver="CLARABEL")
    assert solve_ecos(_prox_program(EYE(r, lam), v)).objective == pytest.approx(ref, rel=1e-6)
    c = np.array(PENALTIES["owl_decreasing"].weights)  # writable copy for cvxpy
    delta = c - np.r_[c[1:], 0]
    top = [cp.sum_largest(cp.abs(w), k + 1) for k in range(D - 1)] + [cp.norm1(w)]  # cvxpy: k < D
    owl = cp.sum(cp.hstack([delta[k] * top[k] for k in range(D)]))
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w - v) + owl)).solve(solver="CLARABEL")
    assert solve_ecos(_prox_program(OWL(c), v)).objective == pytest.approx(ref, rel=1e-6)


def test_owl_size_follows_distinct_levels():
    b, _ = _penalty_program(PENALTIES["owl_two_levels"])
    assert b.size("pen_tau") == 2 and b.size("pen_xi") == 2 * D


def test_eye_uses_one_soc():
    b, _ = _penalty_program(EYE(np.r_[0.5, np.ones(D - 1)], 1.0))
    program = b.build()
    assert len(program.cones) == 1 and program.cones[0].count == 1 and program.cones[0].dim == 2 + D


# --------------------------------------------------------------------------- losses
def _data(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, rng.uniform(0.5, 2.0, n)


def _loss_program(loss, X, y, s, fixed=None):
    b = ProgramBuilder()
    d = X.shape[1]
    if fixed is None:
        b.add_variables("w", d)
        b.add_variables("b", 1)
    else:
        b.add_variables("w", d, lb=fixed[:d], ub=fixed[:d])
        b.add_variables("b", 1, lb=fixed[d], ub=fixed[d])
    lift = add_loss(b, loss, X, y, weights="w", intercept="b", sample_weight=s, scale=1 / y.size)
    return b.build(), lift


LOSS_VALUE = {
    "logistic": lambda z, y: np.logaddexp(0.0, -y * z),
    "hinge": lambda z, y: np.maximum(0.0, 1.0 - y * z),
    "least_squares": lambda z, y: 0.5 * (y - z) ** 2,
}


@pytest.mark.parametrize("loss", ["logistic", "hinge", "least_squares"])
def test_loss_lift_and_tightness(loss):
    X, y, s = _data()
    theta = np.r_[RNG.normal(size=X.shape[1]), 0.3]
    value = float(s @ LOSS_VALUE[loss](X @ theta[:-1] + theta[-1], y)) / y.size
    program, lift = _loss_program(loss, X, y, s)
    x = _lifted(program, theta[:-1], lift(theta[:-1], theta[-1]))
    x[program.blocks["b"]] = theta[-1]
    assert program.is_feasible(x, tol=1e-9)
    assert program.objective(x) == pytest.approx(value, rel=1e-12)
    fixed_program, _ = _loss_program(loss, X, y, s, fixed=theta)
    assert solve_ecos(fixed_program).objective == pytest.approx(value, rel=1e-6)


@pytest.mark.parametrize("loss", ["logistic", "least_squares"])
def test_loss_minimum_matches_bfgs(loss):
    X, y, s = _data(seed=3)
    program, _ = _loss_program(loss, X, y, s)
    r = solve_ecos(program)
    f = lambda t: float(s @ LOSS_VALUE[loss](X @ t[:-1] + t[-1], y)) / y.size  # noqa: E731
    ref = minimize(f, np.zeros(X.shape[1] + 1), method="BFGS", options={"gtol": 1e-10})
    assert r.objective == pytest.approx(ref.fun, rel=1e-5)
    np.testing.assert_allclose(np.r_[program.block(r.x, "w"), program.block(r.x, "b")], ref.x, atol=1e-4)


def test_logistic_is_one_exp_block():
    X, y, s = _data(n=50)
    program, _ = _loss_program("logistic", X, y, s)
    exp = [c for c in program.cones if c.kind == "exp"]
    assert len(exp) == 1 and exp[0].count == 2 * y.size


def test_loss_input_errors():
    X, y, _ = _data(n=10)
    b = ProgramBuilder()
    b.add_variables("w", X.shape[1])
    with pytest.raises(ValueError, match="y in"):
        add_loss(b, "logistic", X, (y + 1) / 2, weights="w", intercept=None)
    with pytest.raises(ValueError, match="unknown loss"):
        add_loss(b, "poisson", X, y, weights="w", intercept=None)
    with pytest.raises(ValueError, match="one label per row"):
        add_loss(b, "hinge", X, y[:-1], weights="w", intercept=None)
    with pytest.raises(ValueError, match="sample_weight"):
        add_loss(b, "hinge", X, y, weights="w", intercept=None, sample_weight=-np.ones(10))


def test_dispatch_table():
    class Unknown:
        pass

    with pytest.raises(NotRepresentableError, match="encodable penalties"):
        penalty_encoder(Unknown())

    class MyL1(L1):
        pass

    assert penalty_encoder(MyL1(1.0)) is penalty_encoder(L1(1.0))  # found along the MRO

    from formulations.penalties import Facets, Scaled, StronglyConvexFacets

    assert {Facets, StronglyConvexFacets, Scaled} <= set(PENALTY_ENCODERS)  # one table, Facets included
    b, _ = _penalty_program(Scaled(L1(1.0), 0.5), fixed=np.ones(D))  # L1(w / 0.5) at w = 1: 2 per entry
    assert solve_ecos(b.build()).objective == pytest.approx(2 * D, rel=1e-7)
    with pytest.raises(ValueError, match="entries"):
        _penalty_program(WeightedL1(np.ones(D + 1)))


# ----------------------------------------------------------- PenalizedProgram exact
def test_penalized_exact_hinge_l1_matches_enumeration():
    """Integer weights in {-2..2}^2, hinge + L1: HiGHS on exact() = brute force over w (and b)."""
    from formulations.coefficients import CoefficientSet
    from formulations.penalized import PenalizedProgram
    from solvers.backends.highs import solve_highs

    rng = np.random.default_rng(11)
    X = rng.normal(size=(25, 2))
    y = np.where(X @ [1.0, -0.5] + 0.3 * rng.normal(size=25) > 0, 1.0, -1.0)
    cs = CoefficientSet.uniform(2, bound=2, integer=True)
    spec = PenalizedProgram(L1(0.05), loss="hinge", coefficients=cs)
    inst = spec.instance(X, y)
    exact = inst.exact()
    lo, hi = cs.intercept_bounds(X, 1.0)
    best = np.inf
    for w in np.array(np.meshgrid(range(-2, 3), range(-2, 3))).T.reshape(-1, 2):
        # hinge in b is convex piecewise linear: its minimum is at a breakpoint or a bound
        candidates = np.clip(np.r_[y - X @ w, lo, hi], lo, hi)
        best = min(best, min(0.05 * np.abs(w).sum() + np.mean(np.maximum(0, 1 - y * (X @ w + b))) for b in candidates))
    r = solve_highs(exact)
    assert r.objective == pytest.approx(best, abs=1e-9)
    model = inst.decode(r.x)
    np.testing.assert_allclose(model.coef, np.round(model.coef))
    assert inst.objective(model) == pytest.approx(best, abs=1e-9)
    relaxed = solve_highs(inst.relaxed())
    assert relaxed.objective <= r.objective + 1e-9
    assert not inst.relaxed().is_mip and exact.is_mip


def test_penalized_rejects_bad_input():
    from formulations.penalized import PenalizedProgram

    with pytest.raises(ValueError, match="loss"):
        PenalizedProgram(L1(1.0), loss="poisson")
    with pytest.raises(NotRepresentableError):
        PenalizedProgram(object())
    spec = PenalizedProgram(L1(1.0))
    with pytest.raises(ValueError, match="-1"):
        spec.instance(np.ones((3, 2)), np.array([0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="rows|labels"):
        spec.instance(np.ones((3, 2)), np.array([1.0, -1.0]))
