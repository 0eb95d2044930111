"""The elastic-net linear-chain CRF criterion (Sokolovska, Lavergne, Cappé & Yvon 2010), numpy.

For a sentence ``x`` of ``T`` tokens and labels ``y``, the potential of the label pair
``(y', y)`` at token ``t`` is

    psi_t(y', y) = sum_{o in U(t)} mu[o, y] + [t > 0] sum_{o in B(t)} lambda[o, y', y]

(``U(t)``, ``B(t)``: the unigram / bigram observations of token ``t``, see ``templates``). The
negative log-likelihood (slide "CRF Criterion and its Gradient") is

    l(D; theta) = sum_i ( log Z(x_i) - sum_t psi_t(y_{t-1}, y_t) ),

its gradient the model expectation minus the empirical count of every feature (slide
"Computation of the Gradient"), and the diagonal Hessian approximation of the slides (slide
"Hessian Matrix and its Approximation") ``h_k = sum_i sum_t E f_k - (E f_k)^2``, exact when a
feature fires at most once per sentence. The objective is the elastic net (slide "Elastic Net")

    F(theta) = l(D; theta) + rho1 * ||theta||_1 + rho2 / 2 * ||theta||_2^2,

Wapiti's ``grd_gradient``. This module is the vectorised reference (log space, all sentences at
once padded to the longest one); the solvers in ``solvers/proximal/crf_*.py`` compute the same
quantities sentence by sentence.
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from formulations.crf.templates import Sequences


def _gather(theta: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """``theta[offsets[o] + j]`` for ``j < width`` (zeros where ``offsets[o] < 0``)."""
    index = np.where(offsets >= 0, offsets, 0)[:, None] + np.arange(width)
    return np.where(offsets[:, None] >= 0, theta[index], 0.0)


def _offsets(data: Sequences, kind: str) -> np.ndarray:
    """Parameter offset of each observation's block (``-1`` when absent)."""
    out = np.full(data.n_observations, -1, dtype=np.int64)
    ids, offs = (data.uni_obs, data.uni_off) if kind == "uni" else (data.bi_obs, data.bi_off)
    out[ids] = offs
    return out


def potentials(theta: np.ndarray, data: Sequences) -> tuple[np.ndarray, np.ndarray]:
    """Unigram ``(n_tokens, Y)`` and bigram ``(n_tokens, Y, Y)`` potentials of every token."""
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (data.n_params,):
        raise ValueError(f"theta: expected shape ({data.n_params},), got {theta.shape}")
    n_labels = data.n_labels
    uni, bi = data.matrices()
    unary = uni @ _gather(theta, _offsets(data, "uni"), n_labels)
    pair = bi @ _gather(theta, _offsets(data, "bi"), n_labels * n_labels)
    return unary, pair.reshape(-1, n_labels, n_labels)


def _padded(data: Sequences, values: np.ndarray, fill: float) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.diff(data.sentence_ptr)
    n_sent, longest = len(lengths), int(lengths.max(initial=0))
    mask = np.arange(longest)[None, :] < lengths[:, None]
    out = np.full((n_sent, longest) + values.shape[1:], fill)
    out[mask] = values
    return out, mask


def marginals(theta: np.ndarray, data: Sequences):
    """``(log_z, unary, pair)``: log partition per sentence, ``p(y_t = y)`` per token
    ``(n_tokens, Y)``, ``p(y_{t-1} = y', y_t = y)`` per token ``(n_tokens, Y, Y)`` (zero at t=0)."""
    unary_pot, pair_pot = potentials(theta, data)
    u, mask = _padded(data, unary_pot, 0.0)
    b, _ = _padded(data, pair_pot, 0.0)
    n_sent, longest, n_labels = u.shape
    log_alpha = np.zeros_like(u)
    log_beta = np.zeros_like(u)
    if longest:
        log_alpha[:, 0] = u[:, 0]
    for t in range(1, longest):
        step = logsumexp(log_alpha[:, t - 1, :, None] + b[:, t] + u[:, t, None, :], axis=1)
        log_alpha[:, t] = np.where(mask[:, t, None], step, log_alpha[:, t - 1])
    for t in range(longest - 2, -1, -1):
        step = logsumexp(b[:, t + 1] + u[:, t + 1, None, :] + log_beta[:, t + 1, None, :], axis=2)
        log_beta[:, t] = np.where(mask[:, t + 1, None], step, 0.0)
    log_z = logsumexp(log_alpha[:, -1], axis=1) if longest else np.zeros(n_sent)
    unary = np.exp(log_alpha + log_beta - log_z[:, None, None])[mask]
    pair = np.zeros((n_sent, longest, n_labels, n_labels))
    if longest > 1:
        pair[:, 1:] = np.exp(log_alpha[:, :-1, :, None] + b[:, 1:] + u[:, 1:, None, :]
                             + log_beta[:, 1:, None, :] - log_z[:, None, None, None])
    return log_z, unary, pair[mask]


def _gold(data: Sequences) -> tuple[np.ndarray, np.ndarray]:
    """One-hot gold labels per token and gold label pairs (zero on first tokens)."""
    if np.any(data.y < 0):
        raise ValueError("the criterion needs the labels of every token (y >= 0)")
    n_labels, n = data.n_labels, data.n_tokens
    unary = np.zeros((n, n_labels))
    unary[np.arange(n), data.y] = 1.0
    pair = np.zeros((n, n_labels, n_labels))
    later = np.ones(n, dtype=bool)
    later[data.sentence_ptr[:-1][np.diff(data.sentence_ptr) > 0]] = False
    t = np.flatnonzero(later)
    pair[t, data.y[t - 1], data.y[t]] = 1.0
    return unary, pair


def negative_log_likelihood(theta: np.ndarray, data: Sequences) -> float:
    """``l(D; theta)``, the sum over sentences of ``log Z - score(gold labels)``."""
    log_z, _, _ = marginals(theta, data)
    unary_pot, pair_pot = potentials(theta, data)
    gold_u, gold_b = _gold(data)
    return float(log_z.sum() - np.sum(unary_pot * gold_u) - np.sum(pair_pot * gold_b))


def _scatter(data: Sequences, unary: np.ndarray, pair: np.ndarray) -> np.ndarray:
    """Sum per-token quantities into the parameter vector (adjoint of :func:`potentials`)."""
    n_labels = data.n_labels
    uni, bi = data.matrices()
    out = np.zeros(data.n_params)
    per_obs_u = uni.T @ unary
    per_obs_b = bi.T @ pair.reshape(len(pair), -1)
    for offsets, block, width in ((_offsets(data, "uni"), per_obs_u, n_labels),
                                  (_offsets(data, "bi"), per_obs_b, n_labels * n_labels)):
        keep = offsets >= 0
        np.add.at(out, (offsets[keep][:, None] + np.arange(width)).ravel(), block[keep].ravel())
    return out


def gradient(theta: np.ndarray, data: Sequences) -> np.ndarray:
    """``d l / d theta_k``: model expectation minus empirical count of feature ``k``."""
    _, unary, pair = marginals(theta, data)
    gold_u, gold_b = _gold(data)
    return _scatter(data, unary - gold_u, pair - gold_b)


def diagonal_hessian(theta: np.ndarray, data: Sequences) -> np.ndarray:
    """The slides' approximation ``sum_i sum_t E f_k - (E f_k)^2`` of ``d^2 l / d theta_k^2``."""
    _, unary, pair = marginals(theta, data)
    return _scatter(data, unary * (1 - unary), pair * (1 - pair))


def objective(theta: np.ndarray, data: Sequences, rho1: float, rho2: float) -> float:
    """``l(D; theta) + rho1 ||theta||_1 + rho2 / 2 ||theta||^2``."""
    theta = np.asarray(theta, dtype=float)
    return negative_log_likelihood(theta, data) + rho1 * np.abs(theta).sum() + 0.5 * rho2 * theta @ theta


def kkt_violation(theta: np.ndarray, grad: np.ndarray, rho1: float, rho2: float) -> np.ndarray:
    """Distance of ``0`` to the subdifferential of ``F`` per coordinate, from ``grad = d l/d theta``:
    ``|g_k + rho2 theta_k + rho1 sign theta_k|`` where ``theta_k != 0``, ``(|g_k| - rho1)_+``
    where ``theta_k = 0``; all zero exactly at the minimiser."""
    smooth = grad + rho2 * theta
    return np.where(theta != 0, np.abs(smooth + rho1 * np.sign(theta)), np.maximum(np.abs(smooth) - rho1, 0.0))


def rho1_max(data: Sequences) -> float:
    """The least ``rho1`` at which ``theta = 0`` is optimal: ``max_k |d l / d theta_k (0)|``."""
    return float(np.abs(gradient(np.zeros(data.n_params), data)).max(initial=0.0))
