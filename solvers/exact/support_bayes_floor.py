"""SLIM's floor over supports: the least Bayes error of any ``max_size`` 0/1 features (a SLIM route step).

A SLIM model (Ustun & Rudin 2016) scores alike the rows that agree on its support ``T``, so its
weighted 0-1 error is at least the Bayes error of ``T``, ``E(T) = sum_p min(W_+(p), W_-(p))`` over the
patterns of values the rows take on ``T`` (:mod:`solvers.exact.zero_one_supports`). A support ``S``
holding ``T`` splits the patterns further, so ``E(T) >= E(S)``; every model uses at most ``K =
max_size`` features, lies in some support of exactly ``K`` of the features that may be non-zero, and
its objective (error plus non-negative L0 and L1 terms) is therefore at least

.. math::

    B_K = \\min_{|S| = K} E(S),

a floor that, unlike the Bayes error of all the columns (:func:`solvers.exact.floor.bayes_floor`, 0
on a wide table whose rows are all distinct), stays positive on wide tables. It is computed by
:func:`solvers.exact.blocked_entropy.screen_pair` in its Bayes mode with a shrinking cutoff (a
support stops at the first partial sum that reaches the least full sum found so far), one call per
pair of first columns; when the calls' rate projects more than the time given, the step stops with no
bound (a partial minimum bounds nothing).
"""
from __future__ import annotations

import math
import time

import numpy as np

from formulations.rows import is_binary
from solvers.exact.blocked_entropy import BAYES, CALL_SUPPORTS, FASTEST, screen_all
from solvers.exact.box_logistic import _popcount, copy_counts, label_bits
from solvers.limits import Limits

#: the pass goes on only while its projection stays within this share of the time left
PROJECTION_SHARE = 0.9
#: seconds of screening before the first projection
PROJECT_AFTER = 0.5
#: largest support size (a prefix has ``2^(size - 1)`` patterns)
MAX_SIZE = 10


def applies(X: np.ndarray, y: np.ndarray, weights: np.ndarray, free: np.ndarray, size: int) -> str | None:
    """Why the floor cannot be computed (None: it can)."""
    positive = y > 0
    if not is_binary(X) or not positive.any() or positive.all() or copy_counts(weights[positive]) is None or \
            copy_counts(weights[~positive]) is None:
        return "the features are not all 0/1, a label is absent, or a label's weights have no common unit"
    if not 2 <= size <= MAX_SIZE or free.size < size:
        return f"max_size is not between 2 and {MAX_SIZE} and at most the free features"
    return None


def least_bayes_error(X: np.ndarray, y: np.ndarray, weights: np.ndarray, free: np.ndarray, size: int,
                      limits: Limits, ceiling: float = math.inf) -> tuple[float, str]:
    """``min(B_K, ceiling)`` over the supports of ``size`` columns of ``free`` (module docstring; weight
    units), or ``-inf`` when the pass would not finish within the budget ``limits``; and a sentence."""
    t0 = time.perf_counter()
    limits = limits.started()
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(X, y > 0, weights)
    bits_pos, bits_neg = np.ascontiguousarray(bits_pos[free]), np.ascontiguousarray(bits_neg[free])
    n_pos, n_neg = (int(sum(_popcount(v) for v in valid)) for valid in (valid_pos, valid_neg))
    d = free.size
    pairs = np.array([(a, b) for b in range(1, d - size + 2) for a in range(b)], np.int64).reshape(-1, 2)
    pairs = pairs[np.random.default_rng(0).permutation(pairs.shape[0])]
    total, done, least = math.comb(d, size), 0, ceiling
    scratch = np.empty((1, size), np.int64)
    columns = np.arange(d, dtype=np.int64)
    if total * FASTEST > limits.seconds_left():
        return -math.inf, (f"stopped: the least Bayes error of the {total} supports of {size} features would take "
                           f"more than the {max(limits.seconds_left(), 0.0):.0f} s left, even at "
                           f"{FASTEST * 1e9:.0f} ns each")
    for a, b in pairs:
        for listed, _, pruned, kept in screen_all(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg, BAYES, columns,
                                                  int(a), int(b), size, least, scratch, True, CALL_SUPPORTS):
            done += listed
            least = min(least, kept, pruned)
            took = time.perf_counter() - t0
            if limits.expired():
                return -math.inf, f"stopped: {done} of {total} supports of {size} features by the deadline"
            if done < total and limits.deadline is not None and took >= PROJECT_AFTER:
                projected = took / done * (total - done)
                if projected > PROJECTION_SHARE * limits.seconds_left():
                    return -math.inf, (f"stopped: the least Bayes error of the {total} supports of {size} features "
                                       f"would take about {took / done * total:.0f} s, more than the "
                                       f"{max(limits.seconds_left(), 0.0):.0f} s left")
    return least, (f"least Bayes error of the {total} supports of {size} features: {least:.9g} "
                   f"({time.perf_counter() - t0:.2f} s)")
