"""Blockwise coordinate descent for the elastic-net CRF (Sokolovska, Lavergne, Cappé & Yvon 2010).

Minimises ``F(theta) = l(D; theta) + rho1 ||theta||_1 + rho2 / 2 ||theta||^2``
(``formulations/crf/criterion.py``). A *block* is every unigram ``mu[., x]`` and bigram
``lambda[., ., x]`` parameter of one observation ``x`` (slide "Block Approximation"). For a block:

1. forward-backward (dense, or the slides' sparse variant) on the sentences that contain ``x`` gives
   the block's gradient ``g_k`` and the diagonal Hessian approximation ``h_k = sum_t p (1 - p)``
   (slide "Hessian Matrix and its Approximation"), summed over the tokens where ``x`` fires;
2. the one-dimensional elastic-net Newton step of slide "Analytical Solution in One-Dimensional
   Case", ``theta_k+ = S(h_k theta_k - g_k, rho1) / (h_k + rho2)``, ``S`` the soft threshold, gives
   the direction ``d = theta+ - theta``;
3. a backtracking line search (Tseng & Yun 2009) takes the largest ``a in {1, 1/2, ...}`` with
   ``F(theta + a d) <= F(theta) + sigma a Delta``,
   ``Delta = g.d + rho1 (||theta + d||_1 - ||theta||_1) + rho2 / 2 (||theta + d||^2 - ||theta||^2) < 0``,
   evaluated exactly on the sentences containing ``x`` (the only ones whose likelihood changes),
   so every accepted step decreases ``F``; if none of 30 halvings is accepted the block is left.

Unlike Wapiti (which recomputes every potential of a sentence for each block), the potentials of
all tokens are cached and updated by ``a d`` on the tokens where ``x`` fires. Each outer iteration
sweeps a *working set*: the blocks with a non-zero weight or a violated optimality condition at
the last exact gradient (a block at zero whose every ``|g_k| <= rho1`` would not move); then the
exact gradient is recomputed by a full pass.

Stopping rule (KKT): stop when ``max_k kkt_k <= tol * rho1_max``, with
``kkt_k = |g_k + rho2 theta_k + rho1 sign(theta_k)|`` where ``theta_k != 0`` and
``(|g_k| - rho1)_+`` where ``theta_k = 0`` (``g`` the exact gradient of ``l``), i.e. the distance
of zero to the subdifferential of ``F``; ``rho1_max = ||grad l(0)||_inf`` makes ``tol`` scale-free.
"""
from __future__ import annotations

import time

import numba
import numpy as np

from solvers.proximal.crf_forward_backward import (backward, backward_sparse, fill_potentials, forward,
                                                   forward_sparse, gold_score, pair_marginal,
                                                   pair_marginal_sparse, workspace)
from solvers.proximal.crf_problem import (CRFFit, check_problem, full_gradient, kkt_max, objective_value, rho1_max,
                                          start_point)

SIGMA = 0.01
MAX_HALVINGS = 30
HESSIAN_FLOOR = 1e-8


@numba.njit(cache=True)
def _shift(n_labels, tokens, k0, k1, sentence_start, uoff, boff, step_u, step_b, a, unary, pair):
    """Add ``a * step`` to the cached potentials of the block's tokens ``tokens[k0:k1]``."""
    n_labels2 = n_labels * n_labels
    for k in range(k0, k1):
        i = tokens[k]
        if uoff >= 0:
            for y in range(n_labels):
                unary[i, y] += a * step_u[y]
        if boff >= 0 and i > sentence_start[i]:
            for d in range(n_labels2):
                pair[i, d] += a * step_b[d]


@numba.njit(cache=True)
def _block_loss(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, y, unary, pair, sparse, alpha, scale,
                expo, eunary, nz_ptr, nz_index, nz_value):
    """``sum_s log Z_s - gold_s`` over the distinct sentences of ``tokens[k0:k1]`` (forward only)."""
    total = 0.0
    k = k0
    while k < k1:
        s = token_sentence[tokens[k]]
        start, stop = sentence_ptr[s], sentence_ptr[s + 1]
        if sparse:
            log_z = forward_sparse(unary, pair, start, stop, n_labels, alpha, scale, eunary, nz_ptr, nz_index,
                                   nz_value)
        else:
            log_z = forward(unary, pair, start, stop, n_labels, alpha, scale, expo)
        total += log_z - gold_score(unary, pair, y, start, stop, n_labels)
        while k < k1 and token_sentence[tokens[k]] == s:
            k += 1
    return total


@numba.njit(cache=True)
def bcd_sweep(theta, blocks, n_labels, sentence_ptr, token_sentence, sentence_start, y, block_ptr, tokens,
              uni_offset, bi_offset, unary, pair, rho1, rho2, sparse):
    """One pass over ``blocks`` (observation ids); returns the total decrease of ``F``."""
    n_labels2 = n_labels * n_labels
    alpha, beta, scale, expo, eunary, nz_ptr, nz_index, nz_value, work, marg = workspace(sentence_ptr, n_labels)
    grad_u = np.empty(n_labels)
    hess_u = np.empty(n_labels)
    grad_b = np.empty(n_labels2)
    hess_b = np.empty(n_labels2)
    step_u = np.zeros(n_labels)
    step_b = np.zeros(n_labels2)
    decrease = 0.0
    for o in blocks:
        uoff, boff = uni_offset[o], bi_offset[o]
        k0, k1 = block_ptr[o], block_ptr[o + 1]
        if k1 == k0:
            continue
        grad_u[:] = 0.0
        hess_u[:] = 0.0
        grad_b[:] = 0.0
        hess_b[:] = 0.0
        loss_old = 0.0
        k = k0
        while k < k1:
            s = token_sentence[tokens[k]]
            start, stop = sentence_ptr[s], sentence_ptr[s + 1]
            if sparse:
                log_z = forward_sparse(unary, pair, start, stop, n_labels, alpha, scale, eunary, nz_ptr, nz_index,
                                       nz_value)
                backward_sparse(stop - start, n_labels, scale, eunary, nz_ptr, nz_index, nz_value, beta, work)
            else:
                log_z = forward(unary, pair, start, stop, n_labels, alpha, scale, expo)
                backward(stop - start, n_labels, scale, expo, beta)
            loss_old += log_z - gold_score(unary, pair, y, start, stop, n_labels)
            while k < k1 and token_sentence[tokens[k]] == s:
                i = tokens[k]
                t = i - start
                if uoff >= 0:
                    for yy in range(n_labels):
                        p = alpha[t, yy] * beta[t, yy]
                        grad_u[yy] += p
                        hess_u[yy] += p * (1.0 - p)
                    grad_u[y[i]] -= 1.0
                if boff >= 0 and t > 0:
                    if sparse:
                        pair_marginal_sparse(t, n_labels, alpha, beta, scale, eunary, nz_ptr, nz_index, nz_value,
                                             marg)
                    else:
                        pair_marginal(t, n_labels, alpha, beta, scale, expo, marg)
                    for d in range(n_labels2):
                        grad_b[d] += marg[d]
                        hess_b[d] += marg[d] * (1.0 - marg[d])
                    grad_b[y[i - 1] * n_labels + y[i]] -= 1.0
                k += 1
        # Newton direction with the soft threshold, and the model decrease Delta
        delta = 0.0
        moved = False
        pen_old = 0.0
        if uoff >= 0:
            for yy in range(n_labels):
                w = theta[uoff + yy]
                h = max(hess_u[yy], HESSIAN_FLOOR)
                z = h * w - grad_u[yy]
                new = (z - rho1 if z > rho1 else (z + rho1 if z < -rho1 else 0.0)) / (h + rho2)
                step_u[yy] = new - w
                moved = moved or new != w
                delta += grad_u[yy] * (new - w) + rho1 * (abs(new) - abs(w)) + 0.5 * rho2 * (new * new - w * w)
                pen_old += rho1 * abs(w) + 0.5 * rho2 * w * w
        if boff >= 0:
            for d in range(n_labels2):
                w = theta[boff + d]
                h = max(hess_b[d], HESSIAN_FLOOR)
                z = h * w - grad_b[d]
                new = (z - rho1 if z > rho1 else (z + rho1 if z < -rho1 else 0.0)) / (h + rho2)
                step_b[d] = new - w
                moved = moved or new != w
                delta += grad_b[d] * (new - w) + rho1 * (abs(new) - abs(w)) + 0.5 * rho2 * (new * new - w * w)
                pen_old += rho1 * abs(w) + 0.5 * rho2 * w * w
        if not moved or delta >= 0.0:
            continue
        f_old = loss_old + pen_old
        a, applied = 1.0, 0.0
        accepted = False
        for _ in range(MAX_HALVINGS):
            _shift(n_labels, tokens, k0, k1, sentence_start, uoff, boff, step_u, step_b, a - applied, unary, pair)
            applied = a
            pen_new = 0.0
            if uoff >= 0:
                for yy in range(n_labels):
                    w = theta[uoff + yy] + a * step_u[yy]
                    pen_new += rho1 * abs(w) + 0.5 * rho2 * w * w
            if boff >= 0:
                for d in range(n_labels2):
                    w = theta[boff + d] + a * step_b[d]
                    pen_new += rho1 * abs(w) + 0.5 * rho2 * w * w
            f_new = _block_loss(n_labels, tokens, k0, k1, token_sentence, sentence_ptr, y, unary, pair, sparse,
                                alpha, scale, expo, eunary, nz_ptr, nz_index, nz_value) + pen_new
            if f_new <= f_old + SIGMA * a * delta:
                accepted = True
                break
            a *= 0.5
        if not accepted:
            _shift(n_labels, tokens, k0, k1, sentence_start, uoff, boff, step_u, step_b, -applied, unary, pair)
            continue
        decrease += f_old - f_new
        if uoff >= 0:
            for yy in range(n_labels):
                theta[uoff + yy] += a * step_u[yy]
        if boff >= 0:
            for d in range(n_labels2):
                theta[boff + d] += a * step_b[d]
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
    """``(block_ptr, tokens, token_sentence, sentence_start)``: the tokens where each observation
    fires (CSR by observation, tokens in order), each token's sentence and its first token."""
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
    return (np.cumsum(block_ptr), tok[order].astype(np.int64), token_sentence,
            data.sentence_ptr[token_sentence].astype(np.int64))


def observation_offsets(data):
    """``(uni_offset, bi_offset)`` per observation id (``-1`` when the block has no such part)."""
    uni = np.full(data.n_observations, -1, dtype=np.int64)
    bi = np.full(data.n_observations, -1, dtype=np.int64)
    uni[data.uni_obs] = data.uni_off
    bi[data.bi_obs] = data.bi_off
    return uni, bi


def solve_bcd(data, rho1, rho2, theta=None, max_iter=200, tol=1e-6, time_limit=None, sparse=True, scale=None,
              chunk=4096):
    """Minimise ``F`` by blockwise coordinate descent; returns a :class:`~solvers.proximal.crf_problem.CRFFit`.

    ``scale`` (default ``rho1_max = ||grad l(0)||_inf``) sets the KKT tolerance ``tol * scale``;
    ``time_limit`` in seconds of wall time, checked every ``chunk`` blocks.
    """
    rho1, rho2 = check_problem(data, rho1, rho2)
    clock = time.perf_counter()
    theta = start_point(data, theta)
    block_ptr, tokens, token_sentence, sentence_start = block_index(data)
    uni_offset, bi_offset = observation_offsets(data)
    unary = np.empty((data.n_tokens, data.n_labels))
    pair = np.empty((data.n_tokens, data.n_labels * data.n_labels))
    loss, grad = full_gradient(theta, data, sparse)
    if scale is None:
        scale = rho1_max(data, sparse)
    history, status, n_iter = [], "max_iter", 0
    while True:
        violation = kkt_max(theta, grad, rho1, rho2)
        history.append((time.perf_counter() - clock, objective_value(loss, theta, rho1, rho2), violation))
        if violation <= tol * max(scale, 1e-300):
            status = "converged"
            break
        if n_iter >= max_iter:
            break
        if time_limit is not None and time.perf_counter() - clock >= time_limit:
            status = "time_limit"
            break
        work = np.flatnonzero(block_violation(theta, grad, uni_offset, bi_offset, data.n_labels, rho1))
        fill_potentials(theta, data.n_labels, data.uni_ptr, data.uni_off, data.bi_ptr, data.bi_off, unary, pair)
        for begin in range(0, len(work), chunk):
            bcd_sweep(theta, work[begin:begin + chunk], data.n_labels, data.sentence_ptr, token_sentence,
                      sentence_start, data.y, block_ptr, tokens, uni_offset, bi_offset, unary, pair, rho1, rho2,
                      sparse)
            if time_limit is not None and time.perf_counter() - clock >= time_limit:
                break
        n_iter += 1
        loss, grad = full_gradient(theta, data, sparse)
    return CRFFit(theta=theta, objective=objective_value(loss, theta, rho1, rho2), loss=loss, kkt=violation,
                  n_iter=n_iter, status=status, seconds=time.perf_counter() - clock, history=tuple(history),
                  rho1=rho1, rho2=rho2, solver="bcd")

