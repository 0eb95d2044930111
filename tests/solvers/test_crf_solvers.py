"""Numba forward-backward, Viterbi, BCD, FISTA and OWL-QN against enumeration, the numpy criterion and each other."""
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from formulations.crf import criterion
from formulations.crf.synthetic import markov_sentences
from formulations.crf.templates import FeatureSpace, parse_templates
from solvers.proximal import crf_forward_backward as fb
from solvers.proximal import crf_bcd
from solvers.proximal.crf_bcd import solve_bcd
from solvers.proximal.crf_fista import solve_fista
from solvers.proximal import crf_owlqn
from solvers.proximal.crf_owlqn import solve_owlqn
from solvers.proximal.crf_problem import rho1_max

TEMPLATES = "U:w=%x[0,0]\n*:t=%x[-1,1]\n*\nU:n=%x[1,0]"


def compiled(seed, n_sentences=4, n_labels=3, max_length=4, templates=TEMPLATES):
    sentences, labels = markov_sentences(n_sentences, n_labels=n_labels, max_length=max_length, seed=seed)
    columns = np.array([tok for s in sentences for tok in s], dtype=object)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in sentences])])
    flat = np.array([lab for s in labels for lab in s])
    return FeatureSpace.fit(parse_templates(templates), columns, ptr, flat).encode(columns, ptr, flat)


def sparse_theta(data, seed, density=0.3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=data.n_params) * (rng.random(data.n_params) < density)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_loss_gradient_match_the_numpy_criterion(seed, sparse):
    data = compiled(seed, n_sentences=6)
    theta = sparse_theta(data, seed)
    loss, grad = fb.loss_and_gradient(theta, data, sparse=sparse)
    assert loss == pytest.approx(criterion.negative_log_likelihood(theta, data), rel=1e-12)
    np.testing.assert_allclose(grad, criterion.gradient(theta, data), atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_marginals_and_viterbi_equal_enumeration(seed):
    data = compiled(seed, n_labels=3, max_length=5)
    theta = np.random.default_rng(seed).normal(size=data.n_params)
    log_z, marg = fb.marginals(theta, data)
    best = fb.decode(theta, data)
    unary, pair = criterion.potentials(theta, data)
    for s in range(data.n_sentences):
        a, b = data.sentence_ptr[s], data.sentence_ptr[s + 1]
        paths = list(itertools.product(range(data.n_labels), repeat=b - a))
        scores = np.array([unary[a, p[0]] + sum(unary[a + t, p[t]] + pair[a + t, p[t - 1], p[t]]
                                                 for t in range(1, b - a)) for p in paths])
        assert log_z[s] == pytest.approx(logsumexp(scores), abs=1e-10)
        prob = np.exp(scores - logsumexp(scores))
        ref = np.zeros((b - a, data.n_labels))
        for p, w in zip(paths, prob):
            ref[np.arange(b - a), p] += w
        np.testing.assert_allclose(marg[a:b], ref, atol=1e-10)
        assert tuple(best[a:b]) == paths[int(np.argmax(scores))]


def test_long_sentence_does_not_overflow():
    sentences, labels = markov_sentences(1, min_length=3000, max_length=3000, seed=7)
    columns = np.array(sentences[0], dtype=object)
    ptr = np.array([0, 3000])
    flat = np.array(labels[0])
    data = FeatureSpace.fit(parse_templates(TEMPLATES), columns, ptr, flat).encode(columns, ptr, flat)
    theta = 5 * np.random.default_rng(7).normal(size=data.n_params)
    for sparse in (False, True):
        loss, grad = fb.loss_and_gradient(theta, data, sparse=sparse)
        assert np.isfinite(loss) and np.isfinite(grad).all()
        assert loss == pytest.approx(criterion.negative_log_likelihood(theta, data), rel=1e-9)


def kkt_holds(theta, data, rho1, rho2, tol):
    grad = criterion.gradient(theta, data) + rho2 * theta
    zero = theta == 0
    assert np.all(np.abs(grad[zero]) <= rho1 + tol)
    np.testing.assert_allclose(grad[~zero], -rho1 * np.sign(theta[~zero]), atol=tol)


def test_bcd_and_fista_reach_the_same_optimum_and_support():
    data = compiled(11, n_sentences=30, max_length=6)
    rho1, rho2 = 0.15 * rho1_max(data), 0.1
    bcd = solve_bcd(data, rho1, rho2, tol=1e-10, max_iter=2000)
    fista = solve_fista(data, rho1, rho2, tol=1e-10, max_iter=20000)
    assert bcd.status == "converged" and fista.status == "converged"
    assert bcd.objective == pytest.approx(fista.objective, rel=1e-7)
    assert np.array_equal(bcd.theta != 0, fista.theta != 0)
    assert 0 < bcd.n_active < data.n_params
    for fit in (bcd, fista):
        assert fit.objective == pytest.approx(criterion.objective(fit.theta, data, rho1, rho2), rel=1e-12)
        kkt_holds(fit.theta, data, rho1, rho2, tol=1e-6)
        values = [h[1] for h in fit.history]
        assert all(b <= a + 1e-9 * abs(a) for a, b in zip(values, values[1:])), "F must decrease"


def test_block_model_on_stale_caches_equals_the_criterion():
    """The BCD block kernel (cached exponentials moved multiplicatively, forward / backward vectors
    recomputed lazily) gives the block's log Z, expectations and diagonal Hessian of the numpy
    criterion at the moved point, after a partial sweep has left the caches stale."""
    data = compiled(21, n_sentences=8, max_length=7)
    rng = np.random.default_rng(21)
    theta = sparse_theta(data, 21, density=0.5)
    n, Y = data.n_tokens, data.n_labels
    block_ptr, tokens, sent = crf_bcd.block_index(data)
    assert all(np.all(np.diff(tokens[a:b]) > 0) for a, b in zip(block_ptr[:-1], block_ptr[1:]))
    uoff, boff = crf_bcd.observation_offsets(data)
    unary, pair = fb.potentials(theta, data)
    eu, eb, cu, cb = np.empty_like(unary), np.empty_like(pair), np.empty(n), np.empty(n)
    crf_bcd.refresh_cache(unary, pair, eu, cu, eb, cb)
    alpha, beta, la, lb = np.empty_like(unary), np.empty_like(unary), np.empty(n), np.empty(n)
    lengths = np.diff(data.sentence_ptr)
    a_valid, b_valid = np.zeros_like(lengths), lengths.copy()
    caches = (eu, cu, eb, cb, alpha, la, beta, lb, a_valid, b_valid)
    crf_bcd.bcd_sweep(theta, np.arange(0, data.n_observations, 2), Y, data.sentence_ptr, sent, data.y, block_ptr,
                      tokens, uoff, boff, *caches, 0.05, 0.1, 2)
    longest = lengths.max()
    scratch = (np.empty((longest, Y)), np.empty((longest, Y)), np.zeros(longest, dtype=np.int64), np.empty(Y),
               np.empty(Y * Y))
    for o in rng.permutation(data.n_observations)[:12]:
        k0, k1 = block_ptr[o], block_ptr[o + 1]
        move_u, move_b = rng.normal(size=Y), rng.normal(size=Y * Y)
        moved = theta.copy()
        for off, move in ((uoff[o], move_u), (boff[o], move_b)):
            if off >= 0:
                moved[off:off + len(move)] += move
        ex_u, ex_b = np.empty(Y), np.empty(Y * Y)
        shift_u, shift_b = crf_bcd._exp_shifted(move_u, ex_u), crf_bcd._exp_shifted(move_b, ex_b)
        out = [np.zeros(Y), np.zeros(Y), np.zeros(Y * Y), np.zeros(Y * Y)]
        crf_bcd._ensure(Y, tokens, k0, k1, sent, data.sentence_ptr, *caches, scratch[3])
        log_z = crf_bcd._block_eval(Y, tokens, k0, k1, sent, data.sentence_ptr, *caches[:8], uoff[o] >= 0,
                                    boff[o] >= 0, ex_u, shift_u, ex_b, shift_b, True, *out, *scratch)
        ref_z, _, _ = criterion.marginals(moved, data)
        assert log_z == pytest.approx(ref_z[np.unique(sent[tokens[k0:k1]])].sum(), rel=1e-12)
        grad, hess = criterion.gradient(moved, data), criterion.diagonal_hessian(moved, data)
        tok = tokens[k0:k1]
        later = tok[tok > data.sentence_ptr[sent[tok]]]
        for off, g, h, width, count in ((uoff[o], out[0], out[1], Y, np.bincount(data.y[tok], minlength=Y)),
                                        (boff[o], out[2], out[3], Y * Y,
                                         np.bincount(data.y[later - 1] * Y + data.y[later], minlength=Y * Y))):
            if off >= 0:
                np.testing.assert_allclose(g - count, grad[off:off + width], atol=1e-10)
                np.testing.assert_allclose(h, hess[off:off + width], atol=1e-10)


def test_inner_newton_steps_reach_the_same_optimum():
    data = compiled(14, n_sentences=25, max_length=6)
    rho1 = 0.1 * rho1_max(data)
    fits = [solve_bcd(data, rho1, 0.05, tol=1e-10, inner=inner, max_iter=2000) for inner in (1, 4)]
    assert all(f.status == "converged" for f in fits)
    assert fits[0].objective == pytest.approx(fits[1].objective, rel=1e-9)
    with pytest.raises(ValueError, match="inner"):
        solve_bcd(data, rho1, 0.05, inner=0)


def test_sparse_and_dense_bcd_agree():
    data = compiled(12, n_sentences=20, max_length=5)
    rho1 = 0.2 * rho1_max(data)
    dense = solve_bcd(data, rho1, 0.05, tol=1e-9, sparse=False, max_iter=2000)
    sparse = solve_bcd(data, rho1, 0.05, tol=1e-9, sparse=True, max_iter=2000)
    assert dense.objective == pytest.approx(sparse.objective, rel=1e-9)


def test_rho1_max_is_where_the_solution_leaves_zero():
    """At rho1 = rho1_max = ||grad l(0)||_inf, theta = 0 is optimal (every solver stops at once,
    KKT holds); just below it the solution has a non-zero weight."""
    data = compiled(13, n_sentences=20, max_length=5)
    top = rho1_max(data)
    for solve in (solve_owlqn, solve_bcd, solve_fista):
        fit = solve(data, top, 0.1, tol=1e-9)
        assert fit.status == "converged" and fit.n_active == 0 and fit.n_iter == 0
    below = solve_owlqn(data, 0.9 * top, 0.1, tol=1e-9, max_iter=2000)
    assert below.status == "converged" and below.n_active > 0
    kkt_holds(below.theta, data, 0.9 * top, 0.1, tol=1e-5)


def test_relative_decrease_rule_in_every_solver():
    """Wapiti's -o/-e rule: status small_decrease exactly when F fell by less than stop_eps over the
    last stop_window iterations (checked on the recorded history)."""
    data = compiled(20, n_sentences=20, max_length=5)
    rho1 = 0.05 * rho1_max(data)
    for solve in (solve_owlqn, solve_bcd, solve_fista):
        fit = solve(data, rho1, 0.05, tol=1e-14, stop_eps=1e-3, stop_window=2, max_iter=10000)
        values = [h[1] for h in fit.history]
        assert fit.status == "small_decrease"
        assert (values[-3] - values[-1]) / values[-3] < 1e-3
        assert all((a - b) / a >= 1e-3 for a, b in zip(values[:-3], values[2:-1]))
        with pytest.raises(ValueError, match="stop_eps"):
            solve(data, rho1, 0.05, stop_eps=0.0)


def test_bad_penalties_are_rejected():
    data = compiled(0)
    with pytest.raises(ValueError, match="rho1"):
        solve_bcd(data, -1.0, 0.1)
    with pytest.raises(ValueError, match="rho2"):
        solve_fista(data, 0.1, np.nan)


def test_points_beyond_floating_point_give_an_infinite_loss():
    """FISTA's first trial steps can be huge: such a point has loss +inf (rejected), not an error."""
    data = compiled(3, n_sentences=5)
    theta = 1e6 * np.random.default_rng(3).normal(size=data.n_params)
    for sparse in (False, True):
        loss, _ = fb.loss_and_gradient(theta, data, sparse=sparse)
        assert loss == np.inf or np.isfinite(loss)
    fit = solve_fista(data, 0.1 * rho1_max(data), 0.1, tol=1e-8, lipschitz=1e-9)
    assert fit.status == "converged"


def test_warm_start_of_the_wrong_shape_is_refused():
    data = compiled(1)
    with pytest.raises(ValueError, match="warm start"):
        solve_bcd(data, 0.1, 0.1, theta=np.zeros(data.n_params + 1))
    with pytest.raises(ValueError, match="warm start"):
        solve_fista(data, 0.1, 0.1, theta=np.full(data.n_params, np.nan))


# ---------------------------------------------------------------- OWL-QN (Andrew & Gao 2007)

@pytest.mark.parametrize("seed", [11, 15])
def test_owlqn_reaches_the_optimum_of_bcd_and_fista(seed):
    """Three algorithms, one minimiser: same F to 1e-9, same support, KKT of the numpy criterion."""
    data = compiled(seed, n_sentences=30, max_length=6)
    rho1, rho2 = 0.15 * rho1_max(data), 0.1
    owlqn = solve_owlqn(data, rho1, rho2, tol=1e-10, max_iter=5000)
    bcd = solve_bcd(data, rho1, rho2, tol=1e-10, max_iter=2000)
    fista = solve_fista(data, rho1, rho2, tol=1e-10, max_iter=20000)
    assert owlqn.status == "converged"
    assert owlqn.objective == pytest.approx(bcd.objective, rel=1e-9)
    assert owlqn.objective == pytest.approx(fista.objective, rel=1e-9)
    assert np.array_equal(owlqn.theta != 0, bcd.theta != 0)
    assert 0 < owlqn.n_active < data.n_params
    assert owlqn.objective == pytest.approx(criterion.objective(owlqn.theta, data, rho1, rho2), rel=1e-12)
    kkt_holds(owlqn.theta, data, rho1, rho2, tol=1e-6)
    # the reported KKT measure is the distance of 0 to the subdifferential, from the numpy gradient
    violation = criterion.kkt_violation(owlqn.theta, criterion.gradient(owlqn.theta, data), rho1, rho2).max()
    assert owlqn.kkt == pytest.approx(violation, abs=1e-9)


def test_owlqn_decreases_F_at_every_iteration():
    data = compiled(16, n_sentences=25, max_length=6)
    rho1 = 0.05 * rho1_max(data)
    fit = solve_owlqn(data, rho1, 0.01, tol=1e-9, max_iter=5000)
    values = [h[1] for h in fit.history]
    assert fit.status == "converged" and len(values) > 10
    # strictly, up to the rounding of F (steps certified by convexity near the optimum)
    assert all(b <= a + 1e-13 * abs(a) for a, b in zip(values, values[1:])), "every step must decrease F"
    assert values[-1] < values[len(values) // 2] < values[0]


def test_owlqn_without_l1_is_lbfgs_to_the_smooth_optimum():
    """rho1 = 0: the smooth problem; its gradient vanishes at the answer (numpy criterion), which
    FISTA (plain accelerated gradient at rho1 = 0) reaches too."""
    data = compiled(17, n_sentences=20, max_length=5)
    fit = solve_owlqn(data, 0.0, 0.5, tol=1e-10, max_iter=5000)
    grad = criterion.gradient(fit.theta, data) + 0.5 * fit.theta
    assert fit.status == "converged"
    assert np.abs(grad).max() <= 1e-7
    fista = solve_fista(data, 0.0, 0.5, tol=1e-10, max_iter=20000, scale=1.0)
    assert fit.objective == pytest.approx(fista.objective, rel=1e-12)
    np.testing.assert_allclose(fit.theta, fista.theta, atol=1e-7)


def test_orthant_step_keeps_signs_and_zeroes_the_crossings():
    """pi(theta + a d; xi): a coordinate keeps the sign of theta (of -pg where theta = 0) or is 0."""
    rng = np.random.default_rng(3)
    theta = rng.normal(size=400) * (rng.random(400) < 0.5)
    pg = rng.normal(size=400)
    direction = rng.normal(size=400) * 3
    out = np.empty(400)
    slope, l1, l2 = crf_owlqn.orthant_step(theta, pg, direction, 1.0, out)
    orthant = np.where(theta != 0, np.sign(theta), np.sign(-pg))
    assert np.all(out * orthant >= 0)
    free = (theta + direction) * orthant > 0
    np.testing.assert_array_equal(out[free], (theta + direction)[free])
    assert np.all(out[~free] == 0) and np.any(~free & (theta != 0))
    assert slope == pytest.approx(pg @ (out - theta)) and l1 == pytest.approx(np.abs(out).sum())
    assert l2 == pytest.approx(out @ out)


def test_pseudo_gradient_is_the_minimum_norm_subgradient():
    """|pg_k| = distance of 0 to the subdifferential of g_k theta_k + rho1 |theta_k| (checked on a
    grid of subgradients), with the sign of that nearest subgradient."""
    rng = np.random.default_rng(4)
    theta = np.concatenate([rng.normal(size=50), np.zeros(50)])
    grad = rng.normal(size=100) * 2
    pg = np.empty(100)
    largest = crf_owlqn.pseudo_gradient(theta, grad - 0.3 * theta, 1.0, 0.3, pg)
    for k in range(100):
        sub = grad[k] + (np.array([np.sign(theta[k])]) if theta[k] else np.linspace(-1, 1, 20001))
        nearest = sub[np.argmin(np.abs(sub))]
        assert pg[k] == pytest.approx(nearest, abs=1e-4)
    assert largest == pytest.approx(np.abs(pg).max())


def test_owlqn_stopping_rules_and_bad_input():
    data = compiled(18, n_sentences=20, max_length=5)
    rho1 = 0.1 * rho1_max(data)
    loose = solve_owlqn(data, rho1, 0.05, tol=1e-12, stop_eps=1e-2, stop_window=3)
    assert loose.status == "small_decrease"
    values = [h[1] for h in loose.history]
    assert (values[-4] - values[-1]) / values[-4] < 1e-2
    assert solve_owlqn(data, rho1, 0.05, tol=1e-12, max_iter=3).status == "max_iter"
    warm = solve_owlqn(data, rho1, 0.05, theta=loose.theta, tol=1e-8)
    assert warm.status == "converged" and warm.history[0][1] == pytest.approx(loose.objective, rel=1e-12)
    with pytest.raises(ValueError, match="memory"):
        solve_owlqn(data, rho1, 0.05, memory=0)
    with pytest.raises(ValueError, match="stop_eps"):
        solve_owlqn(data, rho1, 0.05, stop_eps=-1.0)
    with pytest.raises(ValueError, match="rho1"):
        solve_owlqn(data, -1.0, 0.05)


def test_loss_gradient_evaluator_skips_zero_blocks_exactly():
    """The reusable evaluator (zero blocks skipped in the potentials) equals the plain pass, on
    sparse and dense points, called repeatedly on its own buffers."""
    data = compiled(19, n_sentences=10, max_length=6)
    evaluate = fb.LossGradient(data)
    grad = np.empty(data.n_params)
    for density in (0.0, 0.05, 0.3, 1.0):
        theta = sparse_theta(data, 19, density)
        loss, out = evaluate(theta, grad)
        ref_loss, ref_grad = fb.loss_and_gradient(theta, data)
        assert out is grad and loss == pytest.approx(ref_loss, rel=1e-13)
        np.testing.assert_allclose(out, ref_grad, atol=1e-12)
        assert loss == pytest.approx(criterion.negative_log_likelihood(theta, data), rel=1e-12)


def test_sparse_forward_backward_by_default_from_ten_labels():
    """sparse=None picks the slides' sparse pass from SPARSE_MIN_LABELS labels on; both passes give
    the numpy criterion's loss and gradient there."""
    many = compiled(22, n_sentences=30, n_labels=fb.SPARSE_MIN_LABELS, max_length=6)
    few = compiled(22, n_sentences=6, n_labels=3, max_length=5)
    assert fb.LossGradient(many).sparse and not fb.LossGradient(few).sparse
    assert not fb.LossGradient(many, sparse=False).sparse and fb.LossGradient(few, sparse=True).sparse
    theta = sparse_theta(many, 22, density=0.1)
    for sparse in (None, False, True):
        loss, grad = fb.loss_and_gradient(theta, many, sparse=sparse)
        assert loss == pytest.approx(criterion.negative_log_likelihood(theta, many), rel=1e-12)
        np.testing.assert_allclose(grad, criterion.gradient(theta, many), atol=1e-10)


@pytest.mark.parametrize("solve", [solve_owlqn, solve_bcd, solve_fista], ids=["owlqn", "bcd", "fista"])
def test_the_crf_solvers_stop_on_the_budget(solve):
    """A budget already spent stops every CRF solver at its first look (status "out_of_time", the
    start's objective kept); without a budget the same solve runs on (more iterations, lower F)."""
    import time

    from solvers.limits import Limits

    data = compiled(3, n_sentences=20, n_labels=3, max_length=6)
    spent = Limits(time_limit=1e-3).started()
    time.sleep(0.01)
    stopped = solve(data, 0.05, 0.01, limits=spent, max_iter=50, tol=1e-12)
    free = solve(data, 0.05, 0.01, max_iter=50, tol=1e-12)
    assert stopped.status == "out_of_time" and stopped.n_iter == 0
    assert free.status != "out_of_time" and free.n_iter > 0 and free.objective < stopped.objective
