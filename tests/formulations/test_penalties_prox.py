"""Every penalty: value(0) = 0, prox optimality, firm non-expansiveness, input checks.

References: brute-force 1-D minimisation for separable penalties, cvxpy (Clarabel) for the
non-separable ones, and the prox-subproblem inequality (no reference needed).
"""
import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from formulations.penalties import (EYE, L1, OWL, Binarsity, ElasticNet, Facets, FusedLasso, L2Squared,
                                    NaiveQ, Scaled, StronglyConvexFacets, TotalVariation, WeightedL1,
                                    WeightedL2Squared)

P = 8
R = np.array([1, 1, 0, 0, 0.5, 0, 1, 0.25])
PENALTIES = {
    "L1": L1(0.7),
    "L2Squared": L2Squared(0.7),
    "ElasticNet": ElasticNet(0.7, 0.4),
    "WeightedL1": WeightedL1(np.linspace(0.0, 1.5, P)),
    "WeightedL2Squared": WeightedL2Squared(np.linspace(0.0, 1.5, P)),
    "OWL": OWL(np.linspace(1.5, 0.1, P)),
    "Facets": Facets(0.6),
    "FacetsGrid": Facets(0.6, mu=0.5),
    "SCF": StronglyConvexFacets(0.6, 1.0, 0.2),
    "SCFGrid": StronglyConvexFacets(0.8, 0.7, 0.05),
    "ScaledFacets": Scaled(Facets(0.6), 2.5),
    "ScaledOWL": Scaled(OWL(np.linspace(1.5, 0.1, P)), 0.5),
    "TotalVariation": TotalVariation(np.linspace(0.0, 1.2, P - 1)),
    "FusedLasso": FusedLasso(0.5, 0.3),
    "Binarsity": Binarsity(np.array([3, 1, 4]), np.array([0.4, 0.9, 0.2, 0.5, 1.0])),
    "EYE": EYE(R, 0.8),
    "EYEbinary": EYE((R > 0.5).astype(float), 0.8),
    "NaiveQ": NaiveQ(R, 0.8, 0.3),
}
SEPARABLE = [k for k, pen in PENALTIES.items() if pen.separable]
STEPS = [0.05, 0.6, 3.0]


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(scale=s, size=P) for s in (0.3, 1.5, 4.0)]


@pytest.mark.parametrize("name", PENALTIES)
def test_value_of_zero_is_zero_and_prox_of_zero_is_zero(name):
    pen = PENALTIES[name]
    assert pen.value(np.zeros(P)) == 0.0
    out = pen.prox(np.zeros(P), 1.3)
    assert out.shape == (P,) and np.all(out == 0.0)


@pytest.mark.parametrize("pen", [L1(1.0), L2Squared(1.0), ElasticNet(1.0, 0.5), Facets(1.0), StronglyConvexFacets(1.0),
                                 Scaled(Facets(1.0), 2.0), TotalVariation(1.0), FusedLasso(1.0, 1.0), WeightedL1([]),
                                 WeightedL2Squared([]), OWL([]), EYE([]), NaiveQ([])])
def test_length_zero_input(pen):
    assert pen.value(np.zeros(0)) == 0.0
    assert pen.prox(np.zeros(0), 1.0).shape == (0,)


@pytest.mark.parametrize("name", PENALTIES)
@pytest.mark.parametrize("step", [0.0, -1.0, np.nan, np.inf])
def test_prox_rejects_non_positive_step(name, step):
    with pytest.raises(ValueError, match="step"):
        PENALTIES[name].prox(np.ones(P), step)


@pytest.mark.parametrize("name", PENALTIES)
def test_prox_rejects_matrix_input(name):
    with pytest.raises(ValueError, match="1-D"):
        PENALTIES[name].prox(np.ones((2, P)), 1.0)


def _subproblem(pen, v, step, x):
    return 0.5 * float(np.sum((x - v) ** 2)) + step * pen.value(x)


@pytest.mark.parametrize("name", PENALTIES)
@pytest.mark.parametrize("step", STEPS)
def test_prox_beats_every_perturbation(name, step):
    """The prox minimises 1/2||x - v||^2 + t Omega(x): no nearby or random point does better."""
    pen = PENALTIES[name]
    rng = np.random.default_rng(1)
    for v in _inputs(2):
        p = pen.prox(v, step)
        best = _subproblem(pen, v, step, p)
        candidates = [p + rng.normal(scale=s, size=P) for s in (1e-3, 1e-1, 1.0) for _ in range(20)]
        candidates += [v, np.zeros(P), np.round(v)]
        if name == "Binarsity":  # stay in the domain: centre the perturbed blocks
            candidates = [pen.prox(c, 1e-12) for c in candidates]
        values = np.array([_subproblem(pen, v, step, c) for c in candidates])
        assert np.all(values >= best - 1e-9 * max(1.0, abs(best)))


@pytest.mark.parametrize("name", PENALTIES)
@pytest.mark.parametrize("step", STEPS)
def test_prox_is_firmly_non_expansive(name, step):
    pen = PENALTIES[name]
    xs, ys = _inputs(3), _inputs(4)
    for x, y in zip(xs, ys):
        px, py = pen.prox(x, step), pen.prox(y, step)
        assert np.sum((px - py) ** 2) <= np.dot(px - py, x - y) + 1e-10


@pytest.mark.parametrize("name", SEPARABLE)
@pytest.mark.parametrize("step", STEPS)
def test_separable_prox_matches_brute_force_1d(name, step):
    pen = PENALTIES[name]
    for v in _inputs(5):
        p = pen.prox(v, step)
        for j in range(P):
            def h(x, j=j):
                e = np.zeros(P)
                e[j] = x
                return 0.5 * (x - v[j]) ** 2 + step * pen.value(e)
            lo, hi = -abs(v[j]) - 1.0, abs(v[j]) + 1.0
            grid = np.linspace(lo, hi, 301)
            x0 = grid[np.argmin([h(g) for g in grid])]
            width = grid[1] - grid[0]
            ref = minimize_scalar(h, bounds=(x0 - 2 * width, x0 + 2 * width), method="bounded",
                                  options={"xatol": 1e-12}).x
            assert h(p[j]) <= h(ref) + 1e-10
            assert p[j] == pytest.approx(ref, abs=1e-5)


def _cvx_prox(name, pen, v, step):
    x = cp.Variable(v.size)
    cons = []
    if name == "OWL":
        c = pen.weights
        diffs = np.append(c[:-1] - c[1:], c[-1])
        omega = sum(diffs[i] * cp.sum_largest(cp.abs(x), i + 1) for i in range(P))
    elif name == "TotalVariation":
        omega = cp.sum(cp.multiply(pen.weights, cp.abs(cp.diff(x))))
    elif name == "FusedLasso":
        omega = pen.lam_tv * cp.norm1(cp.diff(x)) + pen.lam_l1 * cp.norm1(x)
    elif name == "Binarsity":
        st = pen.starts
        terms, k = [], 0
        for a, b in zip(st[:-1], st[1:]):
            cons.append(cp.sum(x[a:b]) == 0)
            if b - a > 1:
                terms.append(cp.sum(cp.multiply(pen.weights[k:k + b - a - 1], cp.abs(cp.diff(x[a:b])))))
            k += b - a - 1
        omega = sum(terms)
    elif name.startswith("EYE"):
        l1 = cp.norm1(cp.multiply(1 - pen.r, x))
        omega = pen.lam * (l1 + cp.norm2(cp.hstack([l1, cp.norm2(cp.multiply(pen.r, x))])))
    else:
        raise KeyError(name)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - v) + step * omega), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return x.value


@pytest.mark.parametrize("name", ["OWL", "TotalVariation", "FusedLasso", "Binarsity", "EYE", "EYEbinary"])
@pytest.mark.parametrize("step", STEPS)
def test_structured_prox_matches_cvxpy(name, step):
    pen = PENALTIES[name]
    for v in _inputs(6):
        p = pen.prox(v, step)
        ref = _cvx_prox(name, pen, v, step)
        assert np.allclose(p, ref, atol=2e-5), (p, ref)
        assert _subproblem(pen, v, step, p) <= _subproblem(pen, v, step, ref) + 1e-8


@pytest.mark.parametrize("seed", range(3))
def test_eye_prox_on_grouped_coordinates_matches_cvxpy(seed):
    """The EYE prox sums over groups of equal ``r`` by sorted prefix moments (eye_kernels): many coordinates
    in three groups, tied and zero entries, against Clarabel."""
    rng = np.random.default_rng(seed)
    p = 120
    pen = EYE(rng.choice([0.0, 0.4, 1.0], p), 0.3)
    v = np.round(rng.standard_normal(p), 1) * rng.choice([0.0, 1.0, 3.0], p)
    for step in (0.01, 0.2, 1.5):
        got = pen.prox(v, step)
        ref = _cvx_prox("EYE", pen, v, step)
        assert np.allclose(got, ref, atol=2e-5), np.max(np.abs(got - ref))
        assert _subproblem(pen, v, step, got) <= _subproblem(pen, v, step, ref) + 1e-8


def test_weight_length_mismatch_is_reported():
    with pytest.raises(ValueError, match="length"):
        WeightedL1(np.ones(3)).prox(np.ones(4), 1.0)
    with pytest.raises(ValueError, match="length"):
        TotalVariation(np.ones(3)).value(np.ones(6))


@pytest.mark.parametrize("bad", [
    lambda: L1(-1.0), lambda: ElasticNet(1.0, 1.5), lambda: OWL([0.1, 0.5]),
    lambda: WeightedL1([1.0, -2.0]), lambda: Facets(1.0, mu=0.0), lambda: StronglyConvexFacets(1.0, 1.0, 2.0),
    lambda: EYE([0.0, 1.5]), lambda: Binarsity([2, 0]), lambda: Binarsity([2, 3], [1.0]),
    lambda: Scaled(Facets(1.0), -1.0), lambda: NaiveQ([0, 1], 1.0, beta=1.5)])
def test_invalid_parameters_raise_value_error(bad):
    with pytest.raises(ValueError):
        bad()


def test_scaled_requires_a_penalty():
    with pytest.raises(TypeError, match="penalty"):
        Scaled(np.abs, 2.0)


@pytest.mark.parametrize("name", [k for k in SEPARABLE if hasattr(PENALTIES[k], "coordinate_thresholds")])
def test_coordinate_thresholds_and_restrict(name):
    """tau_j is the exact zero threshold of the prox; restrict(cols) is the penalty on cols."""
    pen = PENALTIES[name]
    tau = pen.coordinate_thresholds(P)
    step = 0.8
    below = pen.prox(0.999 * step * tau * np.sign(np.arange(P) - 3.5), step)
    assert np.all(below == 0.0)
    above = pen.prox(1.001 * step * tau + 1e-9, step)
    assert np.all(above != 0.0)
    cols = np.array([1, 4, 6])
    w = np.zeros(P)
    w[cols] = [0.7, -1.9, 2.6]
    assert pen.restrict(cols).value(w[cols]) == pytest.approx(pen.value(w))
    assert np.allclose(pen.restrict(cols).prox(w[cols], step), pen.prox(w, step)[cols])


@pytest.mark.parametrize("name", ["L1", "ElasticNet", "WeightedL1", "OWL", "Facets", "SCF", "ScaledFacets",
                                  "EYE", "NaiveQ"])
def test_zero_gauge_is_the_prox_zero_threshold(name):
    pen = PENALTIES[name]
    z = np.random.default_rng(8).normal(size=P)
    if name == "WeightedL1":
        z[0] = 0.0  # zero weight: no threshold there, keep the gauge finite
    if name == "NaiveQ":
        z[[0, 1, 6]] = 0.0  # r = 1 coordinates have no threshold
    g = pen.zero_gauge(z)
    assert np.isfinite(g) and g > 0
    assert np.all(pen.prox(z, g * (1 + 1e-9)) == 0.0)
    assert np.any(pen.prox(z, g * (1 - 1e-6)) != 0.0)


@pytest.mark.parametrize("name", PENALTIES)
def test_prox_into_preallocated_output_and_in_place(name):
    pen = PENALTIES[name]
    v = _inputs(9)[1]
    expected = pen.prox(v, 0.7)
    buf = np.empty(P)
    assert pen.prox(v, 0.7, out=buf) is buf and np.array_equal(buf, expected)
    inplace = v.copy()
    pen.prox(inplace, 0.7, out=inplace)
    assert np.array_equal(inplace, expected)
    with pytest.raises(ValueError, match="out"):
        pen.prox(v, 0.7, out=np.empty(P + 1))


@pytest.mark.parametrize("name", PENALTIES)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_prox_rejects_non_finite_input(name, bad):
    v = np.ones(P)
    v[3] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        PENALTIES[name].prox(v, 1.0)
