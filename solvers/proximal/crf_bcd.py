"""Blockwise coordinate descent for the elastic-net CRF (Sokolovska, Lavergne, Cappé & Yvon 2010).

Minimises ``F(theta) = l(D; theta) + rho1 ||theta||_1 + rho2 / 2 ||theta||^2``
(``formulations/crf/criterion.py``). A *block* is every unigram ``mu[., x]`` and bigram
``lambda[., ., x]`` parameter of one observation ``x`` (slide "Block Approximation"); moving it
by ``delta`` changes the potentials of the tokens where ``x`` fires only. In a sentence where ``x``
fires at local positions ``t1 <= ... <= tk``,

    log Z(delta) = log sum_{y', y} A_{t1-1}(y') [forward over t1..tk with the moved potentials](y', y) B_tk(y)

where the forward vector ``A_{t1-1}`` and the backward vector ``B_tk`` do not depend on ``delta``.
The block's loss ``sum_s log Z_s(delta) - c . delta`` (``c`` the empirical counts of the block's
features) and its gradient and diagonal Hessian (``sum_t p (1 - p)`` of the slide "Hessian Matrix
and its Approximation") therefore cost a forward-backward over ``t1..tk`` only: ``Y^2`` products
for a block that fires once in a sentence, whatever the sentence's length.

Cached per token: ``eu_t = exp(u_t - max u_t)``, ``eb_t = exp(b_t - max b_t)`` (the potentials'
exponentials, so the recursions need no exponential) and the scaled forward / backward vectors
with their cumulative log scales. The vectors are kept lazily: after a block moves the potentials
of positions ``t1..tk`` of a sentence, forward vectors before ``t1`` and backward vectors from
``tk`` on stay valid, and the others are recomputed only when a later block needs them. An
accepted move multiplies the cached exponentials of its tokens by ``exp(move)``; every sweep
starts from caches rebuilt from ``theta``. (Wapiti's ``-a bcd`` instead recomputes the potentials
of every sentence containing the block and its forward-backward over the block's range, for each
block, and takes one step with the Hessian scaled by ``kappa max(1, max |g / h|)``, no line search.)

For each block (in observation order, Wapiti's), up to ``inner`` Newton steps:

1. the direction of the one-dimensional elastic-net Newton step of slide "Analytical Solution in
   One-Dimensional Case" per coordinate, ``theta_k+ = S(h_k theta_k - g_k, rho1) / (h_k + rho2)``,
   ``S`` the soft threshold, ``d = theta+ - theta`` (``g``, ``h`` at the block's current point),
   with the unigram part's and the bigram part's ``h`` each scaled by
   ``max(1, max_k |g_k / h_k| / STEP_CAP)`` so that no smooth Newton step ``g_k / h_k`` exceeds
   ``STEP_CAP`` (Wapiti's ``kappa`` rule, ``bcd.c``, with ``kappa = 1 / STEP_CAP``): far from the
   optimum, where ``h = sum p (1 - p)`` is small, the full steps overshoot and shift the work to
   the blocks that share the tokens; near it the scale is 1 and the step is Newton's;
2. a backtracking line search (Tseng & Yun 2009) takes the largest ``a in {1, 1/2, ...}`` with
   ``F(theta + a d) <= F(theta) + sigma a Delta``,
   ``Delta = g.d + rho1 (||theta + d||_1 - ||theta||_1) + rho2 / 2 (||theta + d||^2 - ||theta||^2) < 0``,
   the block's loss evaluated exactly, or, where that decrease is below the rounding of the
   block's ``log Z`` sums, with the directional derivative of ``F`` along ``d`` at the trial point
   ``<= sigma Delta`` (by convexity ``F(theta + a d) - F(theta) <= a F'(theta + a d; d)``, a
   certificate free of cancellation); so every accepted step decreases ``F``. The evaluation at
   the accepted point gives the next step's ``g`` and ``h``. The inner loop stops after a step
   smaller than ``INNER_STEP`` in every coordinate, or when no step is accepted.

A block at zero with ``|g_k| <= rho1`` for all its coordinates does not move (its Newton step is
zero). Each outer iteration sweeps a *working set*: the blocks with a non-zero weight or a
violated optimality condition at the last exact gradient; then the exact gradient is recomputed by
a full forward-backward pass (dense by default, ``crf_forward_backward.SPARSE_DEFAULT``).

Stopping rules: ``"small_decrease"`` with ``stop_eps`` set (``crf_problem.small_decrease``);
KKT: stop when ``max_k kkt_k <= tol * rho1_max``, with
``kkt_k = |g_k + rho2 theta_k + rho1 sign(theta_k)|`` where ``theta_k != 0`` and
``(|g_k + rho2 theta_k| - rho1)_+`` where ``theta_k = 0`` (``g`` the exact gradient of ``l``), i.e.
the distance of zero to the subdifferential of ``F``; ``rho1_max = ||grad l(0)||_inf`` makes
``tol`` scale-free.
"""
from __future__ import annotations

import time

import numba
import numpy as np

from solvers.proximal.crf_forward_backward import SPARSE_DEFAULT, fill_potentials
from solvers.proximal.crf_problem import (CRFFit, check_problem, check_stop, full_gradient, kkt_max, objective_value,
                                          rho1_max, stop_status, start_point)

SIGMA = 0.01
MAX_HALVINGS = 30
HESSIAN_FLOOR = 1e-8
INNER_STEPS = 1
INNER_STEP = 1e-3
STEP_CAP = 1.0


@numba.njit(cache=True)
def refresh_cache(unary, pair, eu, cu, eb, cb):
    """``eu = exp(unary - cu)``, ``eb = exp(pair - cb)`` per token, ``cu``, ``cb`` the row maxima."""
    for i in range(unary.shape[0]):
        m = unary[i, 0]
        for y in range(1, unary.shape[1]):
            m = max(m, unary[i, y])
        cu[i] = m
        for y in range(unary.shape[1]):
            eu[i, y] = np.exp(unary[i, y] - m)
        m = pair[i, 0]
        for d in range(1, pair.shape[1]):
            m = max(m, pair[i, d])
        cb[i] = m
        for d in range(pair.shape[1]):
            eb[i, d] = np.exp(pair[i, d] - m)


@numba.njit(cache=True)
def _alpha_row(i, first, n_labels, eu, cu, eb, cb, alpha, la):
    """Scaled forward vector of token ``i`` from the cache (``first``: a sentence's first token)."""
    s = 0.0
    if first:
        for y in range(n_labels):
            alpha[i, y] = eu[i, y]
            s += eu[i, y]
        for y in range(n_labels):
            alpha[i, y] /= s
        la[i] = cu[i] + np.log(s)
        return
    for y in range(n_labels):
        alpha[i, y] = 0.0
    for yp in range(n_labels):
        a = alpha[i - 1, yp]
        base = yp * n_labels
        for y in range(n_labels):
            alpha[i, y] += a * eb[i, base + y]
    for y in range(n_labels):
        alpha[i, y] *= eu[i, y]
        s += alpha[i, y]
    for y in range(n_labels):
        alpha[i, y] /= s
    la[i] = la[i - 1] + cu[i] + cb[i] + np.log(s)


@numba.njit(cache=True)
def _beta_row(i, last, n_labels, eu, cu, eb, cb, beta, lb, work):
    """Scaled backward vector of token ``i`` from the cache (``last``: a sentence's last token)."""
    if last:
        for y in range(n_labels):
            beta[i, y] = 1.0
        lb[i] = 0.0
        return
    for y in range(n_labels):
        work[y] = eu[i + 1, y] * beta[i + 1, y]
    s = 0.0
    for yp in range(n_labels):
        acc = 0.0
        base = yp * n_labels
        for y in range(n_labels):
            acc += eb[i + 1, base + y] * work[y]
        beta[i, yp] = acc
        s += acc
    for yp in range(n_labels):
        beta[i, yp] /= s
    lb[i] = lb[i + 1] + cu[i + 1] + cb[i + 1] + np.log(s)


@numba.njit(cache=True, inline="always")
def _power(x, m):
    return x if m == 1 else x ** m


@numba.njit(cache=True)
def _block_eval(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, eu, cu, eb, cb, alpha, la, beta, lb,
                has_u, has_b, ex_u, shift_u, ex_b, shift_b, need_grad, grad_u, hess_u, grad_b, hess_b,
                fa, gb, mult, work, marg):
    """``sum_s log Z_s`` over the sentences of ``tokens[k0:k1]`` with the block moved so that its
    features' potentials gain ``log ex_u + shift_u`` / ``log ex_b + shift_b``; with ``need_grad``,
    adds the model expectations and ``p (1 - p)`` of the block's features to ``grad_*``, ``hess_*``.
    Needs forward vectors before and backward vectors from each sentence's span (``_ensure``)."""
    n_labels2 = n_labels * n_labels
    total = 0.0
    k = k0
    while k < k1:
        s = token_sentence[tokens[k]]
        st = sentence_ptr[s]
        kend = k
        while kend < k1 and token_sentence[tokens[kend]] == s:
            kend += 1
        t1 = tokens[k] - st
        tk = tokens[kend - 1] - st
        n_span = tk - t1 + 1
        p = k
        log_norm = 0.0
        for r in range(n_span):
            i = st + t1 + r
            m = 0
            while p < kend and tokens[p] == i:
                m += 1
                p += 1
            mult[r] = m
            moved_b = has_b and m > 0 and i > st
            moved_u = has_u and m > 0
            ssum = 0.0
            if i == st:
                for y in range(n_labels):
                    v = eu[i, y]
                    if moved_u:
                        v *= _power(ex_u[y], m)
                    fa[r, y] = v
            else:
                for y in range(n_labels):
                    fa[r, y] = 0.0
                for yp in range(n_labels):
                    a = fa[r - 1, yp] if r > 0 else alpha[i - 1, yp]
                    base = yp * n_labels
                    if moved_b:
                        for y in range(n_labels):
                            fa[r, y] += a * eb[i, base + y] * _power(ex_b[base + y], m)
                    else:
                        for y in range(n_labels):
                            fa[r, y] += a * eb[i, base + y]
                for y in range(n_labels):
                    if moved_u:
                        fa[r, y] *= eu[i, y] * _power(ex_u[y], m)
                    else:
                        fa[r, y] *= eu[i, y]
                log_norm += cb[i]
                if moved_b:
                    log_norm += m * shift_b
            log_norm += cu[i]
            if moved_u:
                log_norm += m * shift_u
            for y in range(n_labels):
                ssum += fa[r, y]
            if not (ssum > 0.0 and ssum < np.inf):
                return np.inf  # the moved potentials leave the floating-point range: rejected
            for y in range(n_labels):
                fa[r, y] /= ssum
            log_norm += np.log(ssum)
        iend = st + tk
        close = 0.0
        for y in range(n_labels):
            close += fa[n_span - 1, y] * beta[iend, y]
        if not (close > 0.0 and close < np.inf):
            return np.inf
        total += log_norm + np.log(close) + lb[iend] + (la[st + t1 - 1] if t1 > 0 else 0.0)
        if need_grad:
            for y in range(n_labels):
                gb[n_span - 1, y] = beta[iend, y]
            for r in range(n_span - 2, -1, -1):
                i1 = st + t1 + r + 1
                m = mult[r + 1]
                for y in range(n_labels):
                    w = eu[i1, y] * gb[r + 1, y]
                    if has_u and m > 0:
                        w *= _power(ex_u[y], m)
                    work[y] = w
                ssum = 0.0
                for yp in range(n_labels):
                    base = yp * n_labels
                    acc = 0.0
                    if has_b and m > 0:
                        for y in range(n_labels):
                            acc += eb[i1, base + y] * _power(ex_b[base + y], m) * work[y]
                    else:
                        for y in range(n_labels):
                            acc += eb[i1, base + y] * work[y]
                    gb[r, yp] = acc
                    ssum += acc
                for yp in range(n_labels):
                    gb[r, yp] /= ssum
            for r in range(n_span):
                m = mult[r]
                if m == 0:
                    continue
                i = st + t1 + r
                if has_u:
                    ssum = 0.0
                    for y in range(n_labels):
                        work[y] = fa[r, y] * gb[r, y]
                        ssum += work[y]
                    for y in range(n_labels):
                        q = work[y] / ssum
                        grad_u[y] += m * q
                        hess_u[y] += m * m * q * (1.0 - q)
                if has_b and i > st:
                    ssum = 0.0
                    for yp in range(n_labels):
                        a = fa[r - 1, yp] if r > 0 else alpha[i - 1, yp]
                        base = yp * n_labels
                        for y in range(n_labels):
                            v = a * eb[i, base + y] * _power(ex_b[base + y], m) * eu[i, y] * gb[r, y]
                            if has_u:
                                v *= _power(ex_u[y], m)
                            marg[base + y] = v
                            ssum += v
                    for d in range(n_labels2):
                        q = marg[d] / ssum
                        grad_b[d] += m * q
                        hess_b[d] += m * m * q * (1.0 - q)
        k = kend
    return total


@numba.njit(cache=True)
def _ensure(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, eu, cu, eb, cb, alpha, la, beta, lb,
            alpha_valid, beta_valid, work):
    """Recompute the stale forward vectors before, and backward vectors from, each span of the block."""
    k = k0
    while k < k1:
        s = token_sentence[tokens[k]]
        st, stop = sentence_ptr[s], sentence_ptr[s + 1]
        kend = k
        while kend < k1 and token_sentence[tokens[kend]] == s:
            kend += 1
        t1 = tokens[k] - st
        tk = tokens[kend - 1] - st
        while alpha_valid[s] < t1:
            t = alpha_valid[s]
            _alpha_row(st + t, t == 0, n_labels, eu, cu, eb, cb, alpha, la)
            alpha_valid[s] = t + 1
        while beta_valid[s] > tk:
            t = beta_valid[s] - 1
            _beta_row(st + t, st + t == stop - 1, n_labels, eu, cu, eb, cb, beta, lb, work)
            beta_valid[s] = t
        k = kend


@numba.njit(cache=True)
def _exp_shifted(values, out):
    """``out = exp(values - max values)``; returns the maximum."""
    m = values[0]
    for j in range(1, len(values)):
        m = max(m, values[j])
    for j in range(len(values)):
        out[j] = np.exp(values[j] - m)
    return m


@numba.njit(cache=True)
def _cap_curvature(grad, hess):
    """Scale ``hess`` by ``max(1, max_j |g_j / h_j| / STEP_CAP)`` (module docstring, step 1)."""
    ratio = 1.0
    for j in range(len(grad)):
        ratio = max(ratio, abs(grad[j] / max(hess[j], HESSIAN_FLOOR)) / STEP_CAP)
    if ratio > 1.0:
        for j in range(len(hess)):
            hess[j] *= ratio


@numba.njit(cache=True)
def _newton(current, grad, hess, target, rho1, rho2):
    """Soft-threshold Newton targets ``target`` of the weights ``current``; returns
    ``(Delta part, any move)``."""
    delta = 0.0
    moved = False
    for j in range(len(current)):
        w = current[j]
        h = max(hess[j], HESSIAN_FLOOR)
        z = h * w - grad[j]
        new = (z - rho1 if z > rho1 else (z + rho1 if z < -rho1 else 0.0)) / (h + rho2)
        target[j] = new
        moved = moved or new != w
        d = new - w
        l1 = np.sign(w) * d if w * new > 0.0 else abs(new) - abs(w)  # no cancellation for small steps
        delta += grad[j] * d + rho1 * l1 + rho2 * d * (w + 0.5 * d)
    return delta, moved


@numba.njit(cache=True)
def _trial(theta, off, current, target, a, trial, move, ex, count, rho1, rho2):
    """``trial = current + a (target - current)`` (``target`` itself at ``a = 1``), its move from
    ``theta[off:]`` and the move's shifted exponentials; returns ``(penalty - count . move, shift)``."""
    total = 0.0
    for j in range(len(current)):
        w = target[j] if a == 1.0 else current[j] + a * (target[j] - current[j])
        trial[j] = w
        move[j] = w - theta[off + j]
        total += rho1 * abs(w) + 0.5 * rho2 * w * w - count[j] * move[j]
    return total, _exp_shifted(move, ex)


@numba.njit(cache=True)
def _slope(grad, count, trial, current, target, rho1, rho2):
    """Directional derivative of ``F`` along ``target - current`` at ``trial`` (expectations
    ``grad`` minus counts; the one-sided derivative of ``|w|`` at ``w = 0``)."""
    total = 0.0
    for j in range(len(trial)):
        w, d = trial[j], target[j] - current[j]
        total += (grad[j] - count[j] + rho2 * w) * d + rho1 * (np.sign(w) * d if w != 0.0 else abs(d))
    return total



@numba.njit(cache=True, inline="always")
def _rescale(row, factors) -> float:
    """``row *= factors``, then divided by its largest entry ``m`` (cached exponentials stay in
    [0, 1]); returns ``log m``, what the row's log-scale constant gains."""
    m = 0.0
    for j in range(row.size):
        row[j] *= factors[j]
        m = max(m, row[j])
    for j in range(row.size):
        row[j] /= m
    return np.log(m)

@numba.njit(cache=True)
def bcd_sweep(theta, blocks, n_labels, sentence_ptr, token_sentence, y, block_ptr, tokens, uni_offset, bi_offset,
              eu, cu, eb, cb, alpha, la, beta, lb, alpha_valid, beta_valid, rho1, rho2, inner):
    """One pass over ``blocks`` (observation ids) with the caches of the module docstring; returns
    the total decrease of ``F``."""
    n_labels2 = n_labels * n_labels
    longest = 1
    for s in range(len(sentence_ptr) - 1):
        longest = max(longest, sentence_ptr[s + 1] - sentence_ptr[s])
    fa = np.empty((longest, n_labels))
    gb = np.empty((longest, n_labels))
    mult = np.zeros(longest, dtype=np.int64)
    work = np.empty(n_labels)
    marg = np.empty(n_labels2)
    grad_u, hess_u = np.zeros(n_labels), np.zeros(n_labels)
    grad_b, hess_b = np.zeros(n_labels2), np.zeros(n_labels2)
    count_u, count_b = np.zeros(n_labels), np.zeros(n_labels2)
    cur_u, cur_b = np.zeros(n_labels), np.zeros(n_labels2)  # the block's weights at its current point
    new_u, new_b = np.zeros(n_labels), np.zeros(n_labels2)  # Newton targets
    trial_u, trial_b = np.zeros(n_labels), np.zeros(n_labels2)
    move_u, move_b = np.zeros(n_labels), np.zeros(n_labels2)  # trial minus theta (the cached point)
    ex_u, ex_b = np.ones(n_labels), np.ones(n_labels2)
    decrease = 0.0
    for o in blocks:
        uoff, boff = uni_offset[o], bi_offset[o]
        has_u, has_b = uoff >= 0, boff >= 0
        k0, k1 = block_ptr[o], block_ptr[o + 1]
        if k1 == k0:
            continue
        count_u[:] = 0.0
        count_b[:] = 0.0
        for k in range(k0, k1):
            i = tokens[k]
            count_u[y[i]] += 1.0
            if i > sentence_ptr[token_sentence[i]]:
                count_b[y[i - 1] * n_labels + y[i]] += 1.0
        _ensure(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, eu, cu, eb, cb, alpha, la, beta, lb,
                alpha_valid, beta_valid, work)
        grad_u[:] = 0.0
        hess_u[:] = 0.0
        grad_b[:] = 0.0
        hess_b[:] = 0.0
        ex_u[:] = 1.0
        ex_b[:] = 1.0
        f_cur = _block_eval(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, eu, cu, eb, cb, alpha, la,
                            beta, lb, has_u, has_b, ex_u, 0.0, ex_b, 0.0, True, grad_u, hess_u, grad_b, hess_b, fa,
                            gb, mult, work, marg)
        if has_u:
            for j in range(n_labels):
                cur_u[j] = theta[uoff + j]
                f_cur += rho1 * abs(cur_u[j]) + 0.5 * rho2 * cur_u[j] * cur_u[j]
        if has_b:
            for j in range(n_labels2):
                cur_b[j] = theta[boff + j]
                f_cur += rho1 * abs(cur_b[j]) + 0.5 * rho2 * cur_b[j] * cur_b[j]
        f_start = f_cur
        any_step = False
        for step in range(inner):
            delta = 0.0
            moved = False
            if has_u:
                grad_u -= count_u  # the loss gradient: expectations minus counts
                _cap_curvature(grad_u, hess_u)
                du, mu = _newton(cur_u, grad_u, hess_u, new_u, rho1, rho2)
                delta += du
                moved = moved or mu
            if has_b:
                grad_b -= count_b
                _cap_curvature(grad_b, hess_b)
                db, mb = _newton(cur_b, grad_b, hess_b, new_b, rho1, rho2)
                delta += db
                moved = moved or mb
            if not moved or not delta < 0.0:
                break
            a = 1.0
            accepted = False
            for _h in range(MAX_HALVINGS):
                f_new, shift_u, shift_b = 0.0, 0.0, 0.0
                if has_u:
                    part, shift_u = _trial(theta, uoff, cur_u, new_u, a, trial_u, move_u, ex_u, count_u, rho1, rho2)
                    f_new += part
                if has_b:
                    part, shift_b = _trial(theta, boff, cur_b, new_b, a, trial_b, move_b, ex_b, count_b, rho1, rho2)
                    f_new += part
                # the gradient at the trial serves the next Newton step, or the slope test below
                need_grad = step + 1 < inner
                grad_u[:] = 0.0
                hess_u[:] = 0.0
                grad_b[:] = 0.0
                hess_b[:] = 0.0
                log_z = _block_eval(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, eu, cu, eb, cb, alpha,
                                    la, beta, lb, has_u, has_b, ex_u, shift_u, ex_b, shift_b, need_grad, grad_u,
                                    hess_u, grad_b, hess_b, fa, gb, mult, work, marg)
                f_new += log_z
                accepted = f_new <= f_cur + SIGMA * a * delta
                if not accepted and f_new < np.inf and not need_grad:
                    _block_eval(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, eu, cu, eb, cb, alpha, la,
                                beta, lb, has_u, has_b, ex_u, shift_u, ex_b, shift_b, True, grad_u, hess_u, grad_b,
                                hess_b, fa, gb, mult, work, marg)
                if not accepted and f_new < np.inf:
                    slope = 0.0
                    if has_u:
                        slope += _slope(grad_u, count_u, trial_u, cur_u, new_u, rho1, rho2)
                    if has_b:
                        slope += _slope(grad_b, count_b, trial_b, cur_b, new_b, rho1, rho2)
                    accepted = slope <= SIGMA * delta
                if accepted:
                    break
                a *= 0.5
            if not accepted:
                break
            largest = 0.0
            if has_u:
                for j in range(n_labels):
                    largest = max(largest, abs(trial_u[j] - cur_u[j]))
                    cur_u[j] = trial_u[j]
            if has_b:
                for j in range(n_labels2):
                    largest = max(largest, abs(trial_b[j] - cur_b[j]))
                    cur_b[j] = trial_b[j]
            f_cur = f_new
            any_step = True
            if largest < INNER_STEP:
                break
        if not any_step:
            continue
        decrease += f_start - f_cur
        # commit: weights, cached exponentials, and the stale forward / backward vectors
        shift_u, shift_b = 0.0, 0.0
        if has_u:
            for j in range(n_labels):
                move_u[j] = cur_u[j] - theta[uoff + j]
                theta[uoff + j] = cur_u[j]
            shift_u = _exp_shifted(move_u, ex_u)
        if has_b:
            for j in range(n_labels2):
                move_b[j] = cur_b[j] - theta[boff + j]
                theta[boff + j] = cur_b[j]
            shift_b = _exp_shifted(move_b, ex_b)
        for k in range(k0, k1):
            i = tokens[k]
            s = token_sentence[i]
            st = sentence_ptr[s]
            if has_u:
                cu[i] += shift_u + _rescale(eu[i], ex_u)
            if has_b and i > st:
                cb[i] += shift_b + _rescale(eb[i], ex_b)
            alpha_valid[s] = min(alpha_valid[s], i - st)
            beta_valid[s] = max(beta_valid[s], i - st)
    return decrease


@numba.njit(cache=True)
def block_violation(theta, grad, uni_offset, bi_offset, n_labels, rho1):
    """Per block: 1 if it has a non-zero weight or a zero weight with ``|g_k| > rho1``."""
    n_obs = len(uni_offset)
    out = np.zeros(n_obs, dtype=np.bool_)
    for o in range(n_obs):
        for off, width in ((uni_offset[o], n_labels), (bi_offset[o], n_labels * n_labels)):
            if off < 0:
                continue
            for k in range(off, off + width):
                if theta[k] != 0.0 or abs(grad[k]) > rho1:
                    out[o] = True
                    break
    return out


def block_index(data):
    """``(block_ptr, tokens, token_sentence)``: the tokens where each observation fires (CSR by
    observation, tokens in order; a token listed twice when the observation fires twice there) and
    each token's sentence."""
    n = data.n_tokens
    kind2_only = np.zeros(data.n_observations, dtype=bool)
    kind2_only[data.bi_obs] = True
    kind2_only[data.uni_obs] = False
    uni_tok = np.repeat(np.arange(n), np.diff(data.uni_ptr))
    bi_tok = np.repeat(np.arange(n), np.diff(data.bi_ptr))
    keep = kind2_only[data.bi_obs]
    obs = np.concatenate([data.uni_obs, data.bi_obs[keep]])
    tok = np.concatenate([uni_tok, bi_tok[keep]])
    order = np.lexsort((tok, obs))
    block_ptr = np.zeros(data.n_observations + 1, dtype=np.int64)
    np.add.at(block_ptr, obs + 1, 1)
    token_sentence = np.repeat(np.arange(data.n_sentences), np.diff(data.sentence_ptr)).astype(np.int64)
    return np.cumsum(block_ptr), tok[order].astype(np.int64), token_sentence


def observation_offsets(data):
    """``(uni_offset, bi_offset)`` per observation id (``-1`` when the block has no such part)."""
    uni = np.full(data.n_observations, -1, dtype=np.int64)
    bi = np.full(data.n_observations, -1, dtype=np.int64)
    uni[data.uni_obs] = data.uni_off
    bi[data.bi_obs] = data.bi_off
    return uni, bi


def solve_bcd(data, rho1, rho2, theta=None, max_iter=200, tol=1e-6, limits=None, sparse=SPARSE_DEFAULT,
              scale=None, inner=INNER_STEPS, chunk=4096, stop_eps=None, stop_window=5):
    """Minimise ``F`` by blockwise coordinate descent; returns a :class:`~solvers.proximal.crf_problem.CRFFit`.

    ``scale`` (default ``rho1_max = ||grad l(0)||_inf``) sets the KKT tolerance ``tol * scale``;
    ``limits`` the budget (a :class:`solvers.limits.Limits`, started here if not yet;
    None: no time limit), checked every ``chunk`` blocks; ``inner``: Newton
    steps per block and sweep; ``sparse``: the forward-backward of the exact-gradient passes;
    ``stop_eps`` (None: off), ``stop_window``: also stop (``"small_decrease"``) when ``F`` fell by
    less than ``stop_eps`` relatively over the last ``stop_window`` sweeps
    (``crf_problem.small_decrease``, Wapiti's rule).
    """
    rho1, rho2 = check_problem(data, rho1, rho2)
    check_stop(stop_eps, stop_window)
    if int(inner) < 1:
        raise ValueError(f"inner (Newton steps per block) must be >= 1, got {inner}")
    clock = time.perf_counter()
    limits = None if limits is None else limits.started()
    theta = start_point(data, theta)
    block_ptr, tokens, token_sentence = block_index(data)
    uni_offset, bi_offset = observation_offsets(data)
    n, n_labels = data.n_tokens, data.n_labels
    unary, pair = np.empty((n, n_labels)), np.empty((n, n_labels * n_labels))
    eu, eb = np.empty_like(unary), np.empty_like(pair)
    cu, cb, la, lb = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    alpha, beta = np.empty_like(unary), np.empty_like(unary)
    lengths = np.diff(data.sentence_ptr).astype(np.int64)
    loss, grad = full_gradient(theta, data, sparse)
    if scale is None:
        scale = rho1_max(data, sparse)
    history, status, n_iter = [], "max_iter", 0
    while True:
        violation = kkt_max(theta, grad, rho1, rho2)
        history.append((time.perf_counter() - clock, objective_value(loss, theta, rho1, rho2), violation))
        stop = stop_status(history, tol * max(scale, 1e-300), stop_eps, stop_window, n_iter, max_iter, limits)
        if stop is not None:
            status = stop
            break
        work = np.flatnonzero(block_violation(theta, grad, uni_offset, bi_offset, n_labels, rho1))
        fill_potentials(theta, n_labels, data.uni_ptr, data.uni_off, data.bi_ptr, data.bi_off, unary, pair)
        refresh_cache(unary, pair, eu, cu, eb, cb)
        alpha_valid, beta_valid = np.zeros_like(lengths), lengths.copy()
        for begin in range(0, len(work), chunk):
            bcd_sweep(theta, work[begin:begin + chunk], n_labels, data.sentence_ptr, token_sentence, data.y,
                      block_ptr, tokens, uni_offset, bi_offset, eu, cu, eb, cb, alpha, la, beta, lb, alpha_valid,
                      beta_valid, rho1, rho2, int(inner))
            if limits is not None and limits.expired():
                break
        n_iter += 1
        loss, grad = full_gradient(theta, data, sparse)
    return CRFFit(theta=theta, objective=objective_value(loss, theta, rho1, rho2), loss=loss, kkt=violation,
                  n_iter=n_iter, status=status, seconds=time.perf_counter() - clock, history=tuple(history),
                  rho1=rho1, rho2=rho2, solver="bcd")
