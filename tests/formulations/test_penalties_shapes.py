"""Closed forms from the papers: Facets plateaus/slopes (eq. 12, Fig. 2), SCF (eq. 15), scaling
(eq. 16), Facets values (eq. 3 vs Definition 1), EYE limits (r = 0, r = 1), TV by Condat against
a plain reference and its optimality conditions, binarsity weights."""
import numpy as np
import pytest

from formulations.penalties import (EYE, L1, Binarsity, Facets, Scaled, StronglyConvexFacets,
                                    TotalVariation, facets_1d)


def test_facets_value_eq3_equals_definition_1_sum_of_hinges():
    x = np.linspace(-6.3, 6.3, 1001)
    hinge_sum = sum(np.maximum(0.0, np.abs(x) - i) for i in range(10))
    assert np.allclose(facets_1d(x), hinge_sum)
    k = np.arange(6.0)
    assert np.allclose(facets_1d(k), (k + k ** 2) / 2)  # equality case of eq. 4 at integers


@pytest.mark.parametrize("lam,mu,step", [(1.0, 1.0, 0.5), (0.3, 1.0, 2.0), (2.0, 0.5, 0.1)])
def test_facets_prox_plateaus_and_45_degree_slopes(lam, mu, step):
    """Fig. 2: plateau of width t*lam/mu at each grid value k*mu, then slope 1 over a height mu."""
    pen = Facets(lam, mu)
    plateau = step * lam / mu
    period = mu + plateau
    for k in range(4):
        start = k * period
        on_plateau = np.linspace(start, start + plateau, 7)[1:-1]
        assert np.allclose(pen.prox(on_plateau, step), k * mu)
        on_slope = np.linspace(start + plateau, start + period, 7)
        out = pen.prox(on_slope, step)
        assert np.allclose(np.diff(out), np.diff(on_slope))  # 45 degrees
        assert out[-1] == pytest.approx((k + 1) * mu)
    v = np.linspace(-10, 10, 2001)
    assert np.allclose(pen.prox(v + period, step)[v >= 0], pen.prox(v, step)[v >= 0] + mu)  # period
    assert np.allclose(pen.prox(-v, step), -pen.prox(v, step))  # odd


def test_facets_prox_is_soft_threshold_below_one_plus_mu():
    step, lam = 0.4, 1.0
    v = np.linspace(-1.4, 1.4, 301)
    assert np.allclose(Facets(lam).prox(v, step), L1(lam).prox(v, step))


def test_facets_prox_matches_eq12_literally():
    rng = np.random.default_rng(0)
    v = rng.normal(scale=5, size=1000)
    mu = 0.37
    a = np.abs(v)
    q = np.floor(a / (mu + 1))
    eq12 = np.sign(v) * (q + np.maximum(a - (mu + 1) * q - mu, 0.0))
    assert np.allclose(Facets(1.0).prox(v, mu), eq12)


def test_scf_prox_matches_eq15_and_is_contractive():
    rng = np.random.default_rng(1)
    v = rng.normal(scale=5, size=2000)
    mu, eps = 0.7, 0.1
    a = np.maximum((np.abs(v) - mu) / (1 + mu), 0.0)
    eq15 = np.sign(v) * (np.floor(a) + np.minimum((1 + mu) / (1 + mu * eps) * (a - np.floor(a)), 1.0))
    pen = StronglyConvexFacets(1.0, 1.0, eps)
    assert np.allclose(pen.prox(v, mu), eq15)
    x, y = rng.normal(scale=4, size=(2, 5000))
    ratio = np.abs(pen.prox(x, mu) - pen.prox(y, mu)) / np.abs(x - y)
    bound = 1.0 / (1.0 + mu * eps)
    assert ratio.max() <= bound + 1e-12
    assert ratio.max() >= 0.99 * bound  # the Lipschitz constant is attained on the slopes


def test_scf_with_eps_zero_is_facets_and_plateaus_shorten():
    v = np.linspace(-7, 7, 1401)
    assert np.allclose(StronglyConvexFacets(1.0, 1.0, 0.0).prox(v, 0.8), Facets(1.0).prox(v, 0.8))
    mu, eps = 0.8, 0.5
    out = StronglyConvexFacets(1.0, 1.0, eps).prox(np.linspace(0, 20, 200001), mu)
    widths = [np.ptp(np.linspace(0, 20, 200001)[out == k]) for k in (1, 2)]
    assert widths == pytest.approx([mu - mu * eps] * 2, abs=1e-3)  # section 5.3: shortened by mu*eps


@pytest.mark.parametrize("gamma", [0.25, 1.0, 3.0])
def test_scaled_prox_follows_eq16_and_grid_parameter(gamma):
    rng = np.random.default_rng(2)
    v = rng.normal(scale=4, size=500)
    scaled = Scaled(Facets(0.9), gamma)
    assert np.allclose(scaled.prox(v, 0.7), gamma * Facets(0.9).prox(v / gamma, 0.7 / gamma ** 2))
    assert np.allclose(scaled.prox(v, 0.7), Facets(0.9, mu=gamma).prox(v, 0.7))
    assert scaled.value(v) == pytest.approx(Facets(0.9, mu=gamma).value(v))
    assert scaled.value(v) == pytest.approx(Facets(0.9).value(v / gamma))
    out = scaled.prox(v, 0.7)
    on_grid = np.isclose(out / gamma, np.round(out / gamma), rtol=0, atol=1e-12)
    plateau = 0.7 * 0.9 / gamma  # section 5.3: scaling divides the plateau length by gamma
    in_plateau = np.mod(np.abs(v), gamma + plateau) <= plateau
    assert np.array_equal(on_grid, in_plateau)


def test_eye_limits_soft_threshold_and_l2_norm_prox():
    rng = np.random.default_rng(3)
    v = rng.normal(scale=2, size=30)
    step, lam = 0.7, 0.9
    # r = 0: eye = 2 ||.||_1, prox = soft-thresholding at 2 t lam
    assert np.allclose(EYE(np.zeros(30), lam).prox(v, step), L1(2 * lam).prox(v, step), atol=1e-10)
    # r = 1: eye = ||.||_2, prox = block soft-thresholding
    s = step * lam
    expected = max(0.0, 1 - s / np.linalg.norm(v)) * v
    assert np.allclose(EYE(np.ones(30), lam).prox(v, step), expected, atol=1e-10)
    small = v / np.linalg.norm(v) * 0.99 * s
    assert np.all(EYE(np.ones(30), lam).prox(small, step) == 0.0)


def test_eye_value_limits():
    w = np.array([1.0, -2.0, 2.0])
    assert EYE(np.zeros(3), 1.0).value(w) == pytest.approx(10.0)
    assert EYE(np.ones(3), 1.0).value(w) == pytest.approx(3.0)


def _condat_reference(y, lam):
    """Plain reference: the TV prox by projected gradient on the dual (box-constrained QP)."""
    n = y.size
    u = np.zeros(n - 1)
    for _ in range(20000):
        x = y - np.concatenate([[0.0], u]) + np.concatenate([u, [0.0]])
        u = np.clip(u - 0.25 * np.diff(x) * -1.0, -lam, lam)
    return y - np.concatenate([[0.0], u]) + np.concatenate([u, [0.0]])


def test_tv_prox_agrees_with_dual_projected_gradient():
    rng = np.random.default_rng(4)
    y = np.repeat(rng.normal(size=6) * 3, 5) + rng.normal(scale=0.3, size=30)
    lam = rng.uniform(0.0, 1.5, size=29)
    x = TotalVariation(lam).prox(y, 1.0)
    ref = _condat_reference(y, lam)
    assert np.allclose(x, ref, atol=1e-6)
    assert x.sum() == pytest.approx(y.sum())  # the TV prox preserves the mean


def test_tv_prox_large_weight_gives_constant_mean():
    y = np.random.default_rng(5).normal(size=50)
    out = TotalVariation(1e6).prox(y, 1.0)
    assert np.allclose(out, y.mean())


def _tv_kkt_violation(y, lam, x):
    """Largest violation of the optimality conditions of the weighted TV prox (a certificate, no solver).

    ``x`` minimises ``1/2 ||x - y||^2 + sum_k lam_k |x[k+1] - x[k]|`` iff ``s = cumsum(x - y)``
    has ``s[-1] = 0``, ``|s_k| <= lam_k`` on every edge and ``s_k = lam_k sign(x[k+1] - x[k])``
    where ``x`` jumps (stationarity ``x - y + D^T s = 0``; the problem is strongly convex).
    """
    s = np.cumsum(x - y)
    edges, jumps = s[:-1], np.diff(x)
    moved = jumps != 0.0
    return max(abs(s[-1]), np.max(np.abs(edges) - lam, initial=0.0),
               np.max(np.abs(edges[moved] - lam[moved] * np.sign(jumps[moved])), initial=0.0))


def _random_tv_instance(rng, n):
    kind = rng.integers(4)
    if kind == 0:  # piecewise constant plus noise
        y = np.repeat(rng.normal(size=n // 5 + 1) * 3, 5)[:n] + rng.normal(scale=0.3, size=n)
    elif kind == 1:  # random walk
        y = np.cumsum(rng.normal(size=n))
    elif kind == 2:  # a few distinct levels, exact ties
        y = rng.integers(-2, 3, size=n).astype(float)
    else:  # constant
        y = np.full(n, rng.normal())
    lam = rng.uniform(0.0, 1.5, size=n - 1) * rng.choice([0.01, 1.0, 10.0])
    lam[rng.random(n - 1) < 0.1] = 0.0  # zero weights: free jumps
    return y, lam


def test_tv_prox_satisfies_the_optimality_conditions_on_random_weighted_instances():
    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(1, 60))
        y, lam = _random_tv_instance(rng, n)
        step = float(rng.choice([0.3, 1.0, 2.5]))
        x = TotalVariation(lam).prox(y, step)
        assert _tv_kkt_violation(y, step * lam, x) <= 1e-11 * (1.0 + np.abs(y).sum())


@pytest.mark.parametrize("kind", ["blocks", "noise", "walk"])
def test_tv_prox_optimality_on_long_signals(kind):
    """The benchmark's regimes (long segments, very short segments, a drifting signal) at 1e5."""
    rng = np.random.default_rng(8)
    n = 100_000
    y = {"blocks": np.repeat(rng.normal(size=n // 100), 100) + rng.normal(scale=0.5, size=n),
         "noise": rng.normal(size=n), "walk": np.cumsum(rng.normal(size=n))}[kind]
    lam = rng.uniform(0.1, 1.0, size=n - 1) if kind == "blocks" else np.full(n - 1, 0.01 if kind == "noise" else 1.0)
    x = TotalVariation(lam).prox(y, 1.0)
    assert _tv_kkt_violation(y, lam, x) <= 1e-12 * np.abs(y).sum()


def test_tv_prox_two_points_closed_form_and_scalar_weight_equals_constant_weights():
    rng = np.random.default_rng(9)
    for _ in range(50):
        y, lam = rng.normal(size=2) * 2, float(rng.uniform(0, 2))
        t = np.clip((y[1] - y[0]) / 2, -lam, lam)  # each point moves towards the other by at most lam
        assert np.allclose(TotalVariation(lam).prox(y, 1.0), [y[0] + t, y[1] - t], rtol=0, atol=1e-15)
    y = np.cumsum(rng.normal(size=500))
    assert np.array_equal(TotalVariation(0.7).prox(y, 1.3), TotalVariation(np.full(499, 0.7)).prox(y, 1.3))


def test_binarsity_data_driven_weights_follow_the_slides():
    rng = np.random.default_rng(6)
    n, sizes = 200, np.array([3, 4])
    cols = []
    for d in sizes:
        bins = rng.integers(0, d, size=n)
        cols.append(np.eye(d)[bins])
    Xb = np.hstack(cols)
    pen = Binarsity.from_data(Xb, sizes, strength=2.0)
    d = Xb.shape[1]
    pi_first = Xb[:, 1:3].sum() / n  # block 0, k = 1: columns 1..2
    assert pen.weights[0] == pytest.approx(2.0 * np.sqrt(np.log(d) * pi_first / n))
    pi_last = Xb[:, 6].sum() / n  # block 1, k = 3: column 3 of block 1
    assert pen.weights[-1] == pytest.approx(2.0 * np.sqrt(np.log(d) * pi_last / n))
    out = pen.prox(rng.normal(size=d), 1.0)
    assert abs(out[:3].sum()) < 1e-12 and abs(out[3:].sum()) < 1e-12
    assert pen.value(np.ones(d)) == np.inf
