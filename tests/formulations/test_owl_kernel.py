"""The OWL prox kernel (integer-key sort, exact repair, one stack pass of PAVA) against a plain reference.

Reference: sort |v| decreasingly with ``np.argsort``, subtract ``step * c``, project on the
monotone cone by the textbook pool-adjacent-violators (a Python list of blocks), clip at 0, undo
the sort, restore signs (Zeng & Figueiredo 2014, Algorithm 1). cvxpy checks it on small inputs
in ``test_penalties_prox.py``; here the inputs are the ones that exercise the kernel's own
paths: values equal in the truncated keys (the repair), near-ties beyond its budget (the exact
fallback), exact ties, zeros, sizes around the key's index width.
"""
from __future__ import annotations

import numpy as np
import pytest

from formulations.penalties import OWL, kernels


def reference_prox(v: np.ndarray, c: np.ndarray, step: float) -> np.ndarray:
    order = np.argsort(-np.abs(v), kind="stable")
    blocks: list[list[float]] = []  # [sum, count]
    for z in np.abs(v)[order] - step * c:
        blocks.append([z, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] <= blocks[-1][0] / blocks[-1][1]:
            s, k = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += k
    fitted = np.concatenate([np.full(int(k), max(s / k, 0.0)) for s, k in blocks]) if blocks else np.zeros(0)
    out = np.empty_like(v)
    out[order] = fitted
    return np.copysign(out, v)


def weights(rng, p: int) -> np.ndarray:
    return np.sort(rng.uniform(0.0, 1.0, p))[::-1]


@pytest.mark.parametrize("p", [1, 2, 3, 7, 64, 65, 1000, 4097])
def test_matches_reference_on_random_inputs(p):
    rng = np.random.default_rng(p)
    for scale in (0.1, 1.0, 10.0):
        v = rng.normal(scale=scale, size=p)
        c = weights(rng, p)
        np.testing.assert_allclose(OWL(c).prox(v, 0.7), reference_prox(v, c, 0.7), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["integers", "zeros", "keys_collide", "near_ties_fallback"])
def test_ties_and_the_two_sort_paths(kind):
    rng = np.random.default_rng(1)
    p = 3000
    if kind == "integers":  # exact ties: equal keys, nothing to repair
        v = rng.integers(-3, 4, p).astype(float)
    elif kind == "zeros":
        v = np.zeros(p)
        v[::7] = rng.normal(size=v[::7].size)
    elif kind == "keys_collide":  # distinct values equal in the truncated keys: a few repairs
        v = rng.normal(size=p)
        v[:40] = 1.0 + rng.uniform(0, 1e-12, 40) * rng.choice([-1, 1], 40)
    else:  # every value within 1e-13 of 1: more repairs than the budget, the exact argsort path
        v = 1.0 + rng.normal(scale=1e-13, size=p)
    c = weights(rng, p)
    for step in (0.01, 1.0, 100.0):
        np.testing.assert_allclose(OWL(c).prox(v, step), reference_prox(v, c, step), rtol=1e-12, atol=1e-12)


def test_kernel_reports_when_the_keys_need_too_many_repairs():
    rng = np.random.default_rng(2)
    p = 2000
    v = 1.0 + rng.normal(scale=1e-13, size=p)  # all keys equal: the order is by index, far from sorted
    bits = (p - 1).bit_length()
    keys = kernels.owl_sort_keys(v, bits, np.empty(p, dtype=np.uint64))
    keys.sort()
    out = np.full(p, -7.0)
    work = np.empty(p), np.empty(p), np.empty(p, dtype=np.int64)
    assert not kernels.owl_prox(v, keys, bits, weights(rng, p), 0.1, out, *work)
    assert np.all(out == -7.0)  # nothing written


def test_in_place_and_non_finite():
    rng = np.random.default_rng(3)
    v = rng.normal(size=500)
    c = weights(rng, 500)
    expected = reference_prox(v, c, 0.3)
    OWL(c).prox(v, 0.3, out=v)
    np.testing.assert_allclose(v, expected, rtol=1e-12, atol=1e-12)
    v[17] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        OWL(c).prox(v, 0.3)
