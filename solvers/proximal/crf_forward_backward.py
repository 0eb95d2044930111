"""Scaled forward-backward, its sparse variant, the CRF loss and gradient, and Viterbi (numba).

Notation of ``formulations/crf/criterion.py``: per token ``t`` unary potentials ``u_t(y)`` and
pair potentials ``b_t(y', y)`` (zero on a sentence's first token), stored as ``unary[n, Y]`` and
``pair[n, Y*Y]`` (``y' * Y + y``). The recursions are the slides' "Forward-Backward Recursions"
with scaling (Rabiner 1989): ``c_t = max_{y', y} u_t(y) + b_t(y', y)``,
``a_t(y) = sum_y' ah_{t-1}(y') exp(u_t(y) + b_t(y', y) - c_t)``, ``s_t = sum_y a_t(y)``,
``ah_t = a_t / s_t``, so ``log Z = sum_t (c_t + log s_t)`` and no quantity overflows however long
the sentence (a point whose potentials leave the floating-point range gets ``log Z = inf``, which
the line searches reject); backwards ``bh_{T-1} = 1``, ``bh_t(y') = sum_y exp(..)_{t+1}(y', y) bh_{t+1}(y) / s_{t+1}``.
Marginals: ``p(y_t = y) = ah_t(y) bh_t(y)``, ``p(y_{t-1} = y', y_t = y) = ah_{t-1}(y')
exp(u_t(y) + b_t(y', y) - c_t) bh_t(y) / s_t``.

The **sparse forward-backward** (slide "Sparse Forward-Backward") writes
``exp(u_t(y) + b_t(y', y)) = exp(u_t(y)) (1 + M_t(y', y))`` with ``M_t = exp(b_t) - 1``, non-zero
only where ``b_t(y', y) != 0``, so
``a_t(y) = exp(u_t(y)) (sum_y' ah_{t-1}(y') + sum_{y': M != 0} ah_{t-1}(y') M_t(y', y))``:
``Y + r_t`` multiplications and ``r_t`` exponentials instead of ``Y^2`` of each, where ``r_t`` is
the number of non-zero pair potentials (few when the bigram weights are sparse).
"""
from __future__ import annotations

import numba
import numpy as np

# Which forward-backward the full passes use (OWL-QN's and FISTA's iterations, BCD's exact-gradient
# passes): ``sparse=None`` (the default) chooses by the number of labels, the sparse variant from
# SPARSE_MIN_LABELS labels on. It trades ``Y^2`` exponentials per token for a test per pair
# potential and scattered updates: ``benchmarks/crf.py`` times both on the 3-label and the
# 17-label task, at theta = 0 and at the sparse optimum (docs/benchmarks.md), and it pays on the
# second only. BCD's block kernel (``crf_bcd``) needs neither, as it caches the exponentials.
SPARSE_DEFAULT = None
SPARSE_MIN_LABELS = 10


def use_sparse(data, sparse) -> bool:
    """The forward-backward of a full pass: ``sparse`` itself, or for None (the default) the
    sparse variant when the data have at least ``SPARSE_MIN_LABELS`` labels."""
    return data.n_labels >= SPARSE_MIN_LABELS if sparse is None else bool(sparse)


@numba.njit(cache=True)
def fill_potentials(theta, n_labels, uni_ptr, uni_off, bi_ptr, bi_off, unary, pair):
    """``unary[i, y] = sum_o theta[uoff_o + y]``, ``pair[i, d] = sum_o theta[boff_o + d]``."""
    n = len(uni_ptr) - 1
    yy = n_labels * n_labels
    for i in range(n):
        for y in range(n_labels):
            unary[i, y] = 0.0
        for d in range(yy):
            pair[i, d] = 0.0
        for k in range(uni_ptr[i], uni_ptr[i + 1]):
            off = uni_off[k]
            for y in range(n_labels):
                unary[i, y] += theta[off + y]
        for k in range(bi_ptr[i], bi_ptr[i + 1]):
            off = bi_off[k]
            for d in range(yy):
                pair[i, d] += theta[off + d]


@numba.njit(cache=True)
def forward(unary, pair, start, stop, n_labels, alpha, scale, expo):
    """Scaled forward pass over tokens ``start:stop`` (dense); returns ``log Z``.

    Fills ``alpha[t]`` (normalised), ``scale[t] = s_t`` and ``expo[t, d] = exp(u + b - c_t)``
    (rows are local: ``t = i - start``)."""
    n_labels2 = n_labels * n_labels
    log_z = 0.0
    c = unary[start, 0]
    for y in range(1, n_labels):
        c = max(c, unary[start, y])
    s = 0.0
    for y in range(n_labels):
        alpha[0, y] = np.exp(unary[start, y] - c)
        s += alpha[0, y]
    scale[0] = s
    for y in range(n_labels):
        alpha[0, y] /= s
    log_z += c + np.log(s)
    for i in range(start + 1, stop):
        t = i - start
        c = -np.inf
        for d in range(n_labels2):
            v = unary[i, d % n_labels] + pair[i, d]
            expo[t, d] = v
            c = max(c, v)
        for y in range(n_labels):
            alpha[t, y] = 0.0
        for yp in range(n_labels):
            a = alpha[t - 1, yp]
            base = yp * n_labels
            for y in range(n_labels):
                e = np.exp(expo[t, base + y] - c)
                expo[t, base + y] = e
                alpha[t, y] += a * e
        s = 0.0
        for y in range(n_labels):
            s += alpha[t, y]
        if not (s > 0.0 and s < np.inf):
            return np.inf  # potentials beyond the floating-point range: an infinite loss
        scale[t] = s
        for y in range(n_labels):
            alpha[t, y] /= s
        log_z += c + np.log(s)
    return log_z


@numba.njit(cache=True)
def forward_sparse(unary, pair, start, stop, n_labels, alpha, scale, eunary, nz_ptr, nz_index, nz_value):
    """The sparse forward pass of the slides; same outputs as :func:`forward` (``expo`` replaced
    by ``eunary[t, y] = exp(u_t(y) - max u_t)`` and the non-zero ``M_t`` entries in CSR form:
    ``nz_index[nz_ptr[t]:nz_ptr[t+1]]`` = ``y' * Y + y``, ``nz_value`` = ``exp(b) - 1``)."""
    n_labels2 = n_labels * n_labels
    log_z = 0.0
    nz_ptr[0] = 0
    nz_ptr[1] = 0
    c = unary[start, 0]
    for y in range(1, n_labels):
        c = max(c, unary[start, y])
    s = 0.0
    for y in range(n_labels):
        eunary[0, y] = np.exp(unary[start, y] - c)
        alpha[0, y] = eunary[0, y]
        s += alpha[0, y]
    scale[0] = s
    for y in range(n_labels):
        alpha[0, y] /= s
    log_z += c + np.log(s)
    count = 0
    for i in range(start + 1, stop):
        t = i - start
        c = unary[i, 0]
        for y in range(1, n_labels):
            c = max(c, unary[i, y])
        total = 0.0
        for yp in range(n_labels):
            total += alpha[t - 1, yp]
        for y in range(n_labels):
            alpha[t, y] = total
        for d in range(n_labels2):
            b = pair[i, d]
            if b != 0.0:
                m = np.expm1(b)
                nz_index[count] = d
                nz_value[count] = m
                count += 1
                alpha[t, d % n_labels] += alpha[t - 1, d // n_labels] * m
        nz_ptr[t + 1] = count
        s = 0.0
        for y in range(n_labels):
            e = np.exp(unary[i, y] - c)
            eunary[t, y] = e
            alpha[t, y] *= e
            s += alpha[t, y]
        if not (s > 0.0 and s < np.inf):
            return np.inf  # potentials beyond the floating-point range: an infinite loss
        scale[t] = s
        for y in range(n_labels):
            alpha[t, y] /= s
        log_z += c + np.log(s)
    return log_z


@numba.njit(cache=True)
def backward(stop_minus_start, n_labels, scale, expo, beta):
    """Scaled backward pass matching :func:`forward` (dense)."""
    length = stop_minus_start
    for y in range(n_labels):
        beta[length - 1, y] = 1.0
    for t in range(length - 2, -1, -1):
        inv = 1.0 / scale[t + 1]
        for yp in range(n_labels):
            acc = 0.0
            base = yp * n_labels
            for y in range(n_labels):
                acc += expo[t + 1, base + y] * beta[t + 1, y]
            beta[t, yp] = acc * inv


@numba.njit(cache=True)
def backward_sparse(length, n_labels, scale, eunary, nz_ptr, nz_index, nz_value, beta, work):
    """Sparse backward pass matching :func:`forward_sparse`:
    ``bh_t(y') = (sum_y w(y) + sum_{y: M != 0} M(y', y) w(y)) / s_{t+1}``, ``w = exp(u) bh_{t+1}``."""
    for y in range(n_labels):
        beta[length - 1, y] = 1.0
    for t in range(length - 2, -1, -1):
        inv = 1.0 / scale[t + 1]
        total = 0.0
        for y in range(n_labels):
            work[y] = eunary[t + 1, y] * beta[t + 1, y]
            total += work[y]
        for yp in range(n_labels):
            beta[t, yp] = total
        for k in range(nz_ptr[t + 1], nz_ptr[t + 2]):
            d = nz_index[k]
            beta[t, d // n_labels] += nz_value[k] * work[d % n_labels]
        for yp in range(n_labels):
            beta[t, yp] *= inv


@numba.njit(cache=True)
def pair_marginal(t, n_labels, alpha, beta, scale, expo, out):
    """``out[y' * Y + y] = p(y_{t-1} = y', y_t = y)`` from a dense pass (local ``t >= 1``)."""
    inv = 1.0 / scale[t]
    for yp in range(n_labels):
        a = alpha[t - 1, yp] * inv
        base = yp * n_labels
        for y in range(n_labels):
            out[base + y] = a * expo[t, base + y] * beta[t, y]


@numba.njit(cache=True)
def pair_marginal_sparse(t, n_labels, alpha, beta, scale, eunary, nz_ptr, nz_index, nz_value, out):
    """``p(y_{t-1}, y_t)`` from a sparse pass: the ``M = 0`` product, corrected on the non-zeros."""
    inv = 1.0 / scale[t]
    for yp in range(n_labels):
        a = alpha[t - 1, yp] * inv
        base = yp * n_labels
        for y in range(n_labels):
            out[base + y] = a * eunary[t, y] * beta[t, y]
    for k in range(nz_ptr[t], nz_ptr[t + 1]):
        d = nz_index[k]
        out[d] += out[d] * nz_value[k]


@numba.njit(cache=True)
def gold_score(unary, pair, y, start, stop, n_labels):
    """``sum_t u_t(y_t) + b_t(y_{t-1}, y_t)`` of the gold labels of one sentence."""
    total = unary[start, y[start]]
    for i in range(start + 1, stop):
        total += unary[i, y[i]] + pair[i, y[i - 1] * n_labels + y[i]]
    return total


@numba.njit(cache=True)
def workspace(sentence_ptr, n_labels):
    """Scratch arrays of the recursions, sized for the longest sentence: ``alpha``, ``beta``,
    ``scale``, ``expo`` (pair potentials), ``eunary``, the sparse pair matrices' ``nz_ptr``,
    ``nz_index``, ``nz_value``, and two label-sized rows ``work`` and ``marg``."""
    n_labels2 = n_labels * n_labels
    longest = 1
    for s in range(len(sentence_ptr) - 1):
        longest = max(longest, sentence_ptr[s + 1] - sentence_ptr[s])
    return (np.empty((longest, n_labels)), np.empty((longest, n_labels)), np.empty(longest),
            np.empty((longest, n_labels2)), np.empty((longest, n_labels)), np.empty(longest + 1, dtype=np.int64),
            np.empty(longest * n_labels2, dtype=np.int64), np.empty(longest * n_labels2), np.empty(n_labels),
            np.empty(n_labels2))


@numba.njit(cache=True)
def nonzero_blocks(theta, offsets, width, out):
    """``out[o]``: does the block ``theta[offsets[o]:offsets[o] + width]`` hold a non-zero weight
    (False where ``offsets[o] < 0``)."""
    for o in range(len(offsets)):
        off = offsets[o]
        flag = False
        if off >= 0:
            for k in range(off, off + width):
                if theta[k] != 0.0:
                    flag = True
                    break
        out[o] = flag


@numba.njit(cache=True)
def fill_active_potentials(theta, n_labels, uni_ptr, uni_off, uni_obs, uni_active, bi_ptr, bi_off, bi_obs,
                           bi_active, unary, pair):
    """:func:`fill_potentials` skipping the blocks whose weights are all zero (``*_active[obs]``
    False): they add nothing, and at a sparse point they are most of the bigram blocks."""
    n = len(uni_ptr) - 1
    yy = n_labels * n_labels
    for i in range(n):
        for y in range(n_labels):
            unary[i, y] = 0.0
        for d in range(yy):
            pair[i, d] = 0.0
        for k in range(uni_ptr[i], uni_ptr[i + 1]):
            if not uni_active[uni_obs[k]]:
                continue
            off = uni_off[k]
            for y in range(n_labels):
                unary[i, y] += theta[off + y]
        for k in range(bi_ptr[i], bi_ptr[i + 1]):
            if not bi_active[bi_obs[k]]:
                continue
            off = bi_off[k]
            for d in range(yy):
                pair[i, d] += theta[off + d]


@numba.njit(cache=True)
def loss_gradient(theta, n_labels, sentence_ptr, y, uni_ptr, uni_off, bi_ptr, bi_off, unary, pair, grad,
                  sparse):
    """``l(D; theta)`` and, into ``grad`` (overwritten), its gradient; fills the potentials."""
    fill_potentials(theta, n_labels, uni_ptr, uni_off, bi_ptr, bi_off, unary, pair)
    return loss_gradient_from_potentials(n_labels, sentence_ptr, y, uni_ptr, uni_off, bi_ptr, bi_off, unary, pair,
                                         grad, sparse)


@numba.njit(cache=True)
def loss_gradient_from_potentials(n_labels, sentence_ptr, y, uni_ptr, uni_off, bi_ptr, bi_off, unary, pair, grad,
                                  sparse):
    """``l(D; theta)`` and its gradient (into ``grad``, overwritten) from filled potentials."""
    n_labels2 = n_labels * n_labels
    alpha, beta, scale, expo, eunary, nz_ptr, nz_index, nz_value, work, marg = workspace(sentence_ptr, n_labels)
    for k in range(len(grad)):
        grad[k] = 0.0
    loss = 0.0
    for s in range(len(sentence_ptr) - 1):
        start, stop = sentence_ptr[s], sentence_ptr[s + 1]
        if stop == start:
            continue
        if sparse:
            log_z = forward_sparse(unary, pair, start, stop, n_labels, alpha, scale, eunary, nz_ptr, nz_index,
                                   nz_value)
        else:
            log_z = forward(unary, pair, start, stop, n_labels, alpha, scale, expo)
        if log_z == np.inf:
            return np.inf  # callers reject such a point (line searches) before using the gradient
        if sparse:
            backward_sparse(stop - start, n_labels, scale, eunary, nz_ptr, nz_index, nz_value, beta, work)
        else:
            backward(stop - start, n_labels, scale, expo, beta)
        loss += log_z - gold_score(unary, pair, y, start, stop, n_labels)
        for i in range(start, stop):
            t = i - start
            for k in range(uni_ptr[i], uni_ptr[i + 1]):
                off = uni_off[k]
                for yy in range(n_labels):
                    grad[off + yy] += alpha[t, yy] * beta[t, yy]
                grad[off + y[i]] -= 1.0
            if bi_ptr[i + 1] > bi_ptr[i]:
                if sparse:
                    pair_marginal_sparse(t, n_labels, alpha, beta, scale, eunary, nz_ptr, nz_index, nz_value, marg)
                else:
                    pair_marginal(t, n_labels, alpha, beta, scale, expo, marg)
                gold = y[i - 1] * n_labels + y[i]
                for k in range(bi_ptr[i], bi_ptr[i + 1]):
                    off = bi_off[k]
                    for d in range(n_labels2):
                        grad[off + d] += marg[d]
                    grad[off + gold] -= 1.0
    return loss


@numba.njit(cache=True)
def token_marginals(unary, pair, sentence_ptr, n_labels, out):
    """``out[i, y] = p(y_i = y | x)`` for every token; returns the log partition per sentence."""
    n_labels2 = n_labels * n_labels
    longest = 1
    for s in range(len(sentence_ptr) - 1):
        longest = max(longest, sentence_ptr[s + 1] - sentence_ptr[s])
    alpha = np.empty((longest, n_labels))
    beta = np.empty((longest, n_labels))
    scale = np.empty(longest)
    expo = np.empty((longest, n_labels2))
    log_z = np.zeros(len(sentence_ptr) - 1)
    for s in range(len(sentence_ptr) - 1):
        start, stop = sentence_ptr[s], sentence_ptr[s + 1]
        if stop == start:
            continue
        log_z[s] = forward(unary, pair, start, stop, n_labels, alpha, scale, expo)
        if log_z[s] == np.inf:  # potentials beyond the floating-point range: no marginals
            for i in range(start, stop):
                for yy in range(n_labels):
                    out[i, yy] = np.nan
            continue
        backward(stop - start, n_labels, scale, expo, beta)
        for i in range(start, stop):
            for yy in range(n_labels):
                out[i, yy] = alpha[i - start, yy] * beta[i - start, yy]
    return log_z


@numba.njit(cache=True)
def viterbi(unary, pair, sentence_ptr, n_labels, out):
    """``out[i]``: the labels of the highest-scoring sequence of each sentence (max-sum; ties to
    the smallest label id)."""
    longest = 1
    for s in range(len(sentence_ptr) - 1):
        longest = max(longest, sentence_ptr[s + 1] - sentence_ptr[s])
    delta = np.empty((longest, n_labels))
    back = np.zeros((longest, n_labels), dtype=np.int64)
    for s in range(len(sentence_ptr) - 1):
        start, stop = sentence_ptr[s], sentence_ptr[s + 1]
        if stop == start:
            continue
        for y in range(n_labels):
            delta[0, y] = unary[start, y]
        for i in range(start + 1, stop):
            t = i - start
            for y in range(n_labels):
                best, arg = -np.inf, 0
                for yp in range(n_labels):
                    v = delta[t - 1, yp] + pair[i, yp * n_labels + y]
                    if v > best:
                        best, arg = v, yp
                delta[t, y] = best + unary[i, y]
                back[t, y] = arg
        last = stop - start - 1
        arg = 0
        for y in range(1, n_labels):
            if delta[last, y] > delta[last, arg]:
                arg = y
        out[stop - 1] = arg
        for t in range(last, 0, -1):
            arg = back[t, arg]
            out[start + t - 1] = arg


def potentials(theta, data):
    """Dense ``(unary[n, Y], pair[n, Y*Y])`` of :class:`formulations.crf.templates.Sequences`."""
    unary = np.empty((data.n_tokens, data.n_labels))
    pair = np.empty((data.n_tokens, data.n_labels * data.n_labels))
    fill_potentials(np.ascontiguousarray(theta, dtype=float), data.n_labels, data.uni_ptr, data.uni_off,
                    data.bi_ptr, data.bi_off, unary, pair)
    return unary, pair


class LossGradient:
    """``l(D; theta)`` and its gradient, evaluated repeatedly on one data set (an optimiser's
    iterations): the potential arrays (``n_tokens x Y^2``) are allocated once, and blocks whose
    weights are all zero are skipped when the potentials are filled (:func:`fill_active_potentials`)."""

    def __init__(self, data, sparse: bool | None = SPARSE_DEFAULT):
        if np.any(data.y < 0):
            raise ValueError("the loss needs the labels of every token (y >= 0)")
        self.data, self.sparse = data, use_sparse(data, sparse)
        n, n_labels = data.n_tokens, data.n_labels
        self.unary = np.empty((n, n_labels))
        self.pair = np.empty((n, n_labels * n_labels))
        self.uni_block = np.full(data.n_observations, -1, dtype=np.int64)
        self.bi_block = np.full(data.n_observations, -1, dtype=np.int64)
        self.uni_block[data.uni_obs] = data.uni_off
        self.bi_block[data.bi_obs] = data.bi_off
        self.uni_active = np.zeros(data.n_observations, dtype=np.bool_)
        self.bi_active = np.zeros(data.n_observations, dtype=np.bool_)

    def __call__(self, theta, grad=None):
        """``(loss, grad)``; ``grad`` (shape ``(n_params,)``, overwritten) is allocated when None."""
        d = self.data
        theta = np.ascontiguousarray(theta, dtype=float)
        if grad is None:
            grad = np.empty(d.n_params)
        nonzero_blocks(theta, self.uni_block, d.n_labels, self.uni_active)
        nonzero_blocks(theta, self.bi_block, d.n_labels * d.n_labels, self.bi_active)
        fill_active_potentials(theta, d.n_labels, d.uni_ptr, d.uni_off, d.uni_obs, self.uni_active, d.bi_ptr,
                               d.bi_off, d.bi_obs, self.bi_active, self.unary, self.pair)
        loss = loss_gradient_from_potentials(d.n_labels, d.sentence_ptr, d.y, d.uni_ptr, d.uni_off, d.bi_ptr,
                                             d.bi_off, self.unary, self.pair, grad, self.sparse)
        return float(loss), grad


def loss_and_gradient(theta, data, sparse: bool | None = SPARSE_DEFAULT):
    """``(l(D; theta), gradient)`` by one forward-backward pass per sentence (``sparse``:
    :func:`use_sparse`)."""
    if np.any(data.y < 0):
        raise ValueError("the loss needs the labels of every token (y >= 0)")
    sparse = use_sparse(data, sparse)
    unary = np.empty((data.n_tokens, data.n_labels))
    pair = np.empty((data.n_tokens, data.n_labels * data.n_labels))
    grad = np.empty(data.n_params)
    loss = loss_gradient(np.ascontiguousarray(theta, dtype=float), data.n_labels, data.sentence_ptr, data.y,
                         data.uni_ptr, data.uni_off, data.bi_ptr, data.bi_off, unary, pair, grad, sparse)
    return float(loss), grad


def decode(theta, data) -> np.ndarray:
    """Viterbi labels (ids) of every token."""
    unary, pair = potentials(theta, data)
    out = np.zeros(data.n_tokens, dtype=np.int64)
    viterbi(unary, pair, data.sentence_ptr, data.n_labels, out)
    return out


def marginals(theta, data) -> tuple[np.ndarray, np.ndarray]:
    """``(log Z per sentence, p(y_i = y) per token)``."""
    unary, pair = potentials(theta, data)
    out = np.zeros((data.n_tokens, data.n_labels))
    log_z = token_marginals(unary, pair, data.sentence_ptr, data.n_labels, out)
    return log_z, out
