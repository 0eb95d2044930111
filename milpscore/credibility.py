"""Credibility, sparsity, integrity and magnitude of a linear model's weights.

* EYE paper (Wang et al., KDD 2018), section 4.1: average precision (AP) between ``|theta|`` and
  the known-factor mask ``r``; symmetric KL divergence per group of correlated features
  between normalised ``|theta_g|`` and normalised ``r_g`` (for a group with no known factor,
  the smallest symKL to a one-hot vector: such a group should be sparse); sparsity as in
  Table 3 (share of weights that are near zero: ``|theta_j| <= 0.01 max_k |theta_k|``, the
  rule of the authors' code, ``lib/utility.py``).
* Facets paper (Belahcene et al., ACML 2020), section 2: *integrity* is the proportion of
  coefficients that are integers (multiples of the grid unit), *magnitude* a norm bound of the
  weights (here ``max_j |w_j|`` by default).

All functions take 1-D weight vectors of shape (d,) and return floats (or a (G,) array).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.metrics import average_precision_score


def _vector(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of shape (d,), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _mask(r, d: int) -> np.ndarray:
    r = _vector(r, "r")
    if r.size != d:
        raise ValueError(f"r has {r.size} entries but the model has {d} weights; give one per feature")
    if np.any(r < 0) or np.any(r > 1):
        raise ValueError("r must have entries in [0, 1] (1 = known factor)")
    return r


def average_precision(coef, r) -> float:
    """AP of ranking the features by ``|coef|`` against the known factors ``r`` (EYE 4.1, Table 3).

    The fraction of known factors among the top-k features by ``|coef|``, averaged over the
    ranks of the known factors (``sklearn.metrics.average_precision_score(r, |coef|)``, as in
    the authors' code). ``r`` must be binary here.
    """
    coef = _vector(coef, "coef")
    r = _mask(r, coef.size)
    if not np.all(np.isin(r, (0.0, 1.0))):
        raise ValueError("average_precision needs a binary r (known / unknown); threshold fractional r first")
    if not r.any():
        raise ValueError("average_precision is undefined when r has no known factor")
    return float(average_precision_score(r.astype(int), np.abs(coef)))


def _normalise(p: np.ndarray) -> np.ndarray:
    total = p.sum()
    return p / total if total > 0 else np.full(p.size, 1.0 / p.size)


def sym_kl(p, q, eps: float = 1e-6) -> float:
    """``1/2 (KL(p' || q') + KL(q' || p'))`` of the normalised non-negative vectors ``p``, ``q``.

    Both are normalised to sum 1 (an all-zero vector counts as uniform), smoothed by ``eps``
    and renormalised so that a zero facing a non-zero gives a large finite value (the paper
    does not state its smoothing; ``eps`` is reported with every table).
    """
    p, q = np.abs(_vector(p, "p")), np.abs(_vector(q, "q"))
    if p.size != q.size or p.size == 0:
        raise ValueError(f"p and q must be non-empty and of equal length, got {p.size} and {q.size}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    p = _normalise(_normalise(p) + eps)
    q = _normalise(_normalise(q) + eps)
    return float(0.5 * (np.sum(p * np.log(p / q)) + np.sum(q * np.log(q / p))))


def group_sym_kl(coef, r, groups: Sequence[Sequence[int]] | np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """symKL of each group of correlated features (EYE section 4.1), shape (G,).

    ``groups`` is a list of index arrays, or a (d,) array of group labels. For a group with a
    known factor: ``symKL(|theta_g|', r_g')``; with none: ``min_k symKL(e_k, |theta_g|')`` over
    the one-hot vectors ``e_k`` (all the weight on one feature).
    """
    coef = _vector(coef, "coef")
    r = _mask(r, coef.size)
    if isinstance(groups, np.ndarray) and groups.ndim == 1 and groups.size == coef.size \
            and not np.issubdtype(groups.dtype, np.object_):
        labels = groups
        groups = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    out = []
    for idx in groups:
        idx = np.asarray(idx, dtype=int)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= coef.size:
            raise ValueError(f"group indices must be non-empty and within 0..{coef.size - 1}")
        theta, rg = np.abs(coef[idx]), r[idx]
        if rg.sum() > 0:
            out.append(sym_kl(theta, rg, eps))
        else:
            out.append(min(sym_kl(np.eye(idx.size)[k], theta, eps) for k in range(idx.size)))
    return np.array(out)


def sparsity(coef, threshold: float = 0.01) -> float:
    """Share of near-zero weights, ``|coef_j| <= threshold * max_k |coef_k|`` (EYE Table 3)."""
    a = np.abs(_vector(coef, "coef"))
    if a.size == 0:
        return 0.0
    return float(np.mean(a <= threshold * a.max()))


def gini(coef) -> float:
    """Gini coefficient of ``|coef|`` (Hurley & Rickard 2009), the sparsity measure the EYE paper
    uses to pick the sparsest model (section 4.1): 0 for equal magnitudes, ``1 - 1/d`` for one
    non-zero. ``G = 1 - 2 sum_k (a_(k) / ||a||_1) (d - k + 1/2) / d`` with ``a`` sorted ascending."""
    a = np.sort(np.abs(_vector(coef, "coef")))
    if a.size == 0 or a.sum() == 0:
        return 0.0
    d = a.size
    k = np.arange(1, d + 1)
    return float(1.0 - 2.0 * np.sum(a / a.sum() * (d - k + 0.5) / d))


def integrity(coef, unit: float = 1.0, tol: float = 1e-6) -> float:
    """Share of coefficients on the grid ``unit * Z`` (within ``tol`` units; Facets paper, section 2)."""
    if not unit > 0:
        raise ValueError(f"unit must be > 0, got {unit}")
    w = _vector(coef, "coef") / unit
    if w.size == 0:
        return 1.0
    return float(np.mean(np.abs(w - np.round(w)) <= tol))


def magnitude(coef, ord: float = np.inf) -> float:
    """Norm of the weights (``ord`` as in ``numpy.linalg.norm``; default ``max_j |w_j|``)."""
    w = _vector(coef, "coef")
    return float(np.linalg.norm(w, ord)) if w.size else 0.0


def credibility_report(coef, r=None, groups=None, *, eps: float = 1e-6) -> dict[str, float]:
    """All metrics in one dict: ``ap`` (binary ``r``), ``sum_sym_kl`` (with ``groups``),
    ``sparsity``, ``integrity``, ``magnitude``, ``n_nonzero``."""
    coef = _vector(coef, "coef")
    out = {"sparsity": sparsity(coef), "integrity": integrity(coef), "magnitude": magnitude(coef),
           "n_nonzero": int(np.count_nonzero(coef))}
    if r is not None:
        r = _mask(r, coef.size)
        if np.all(np.isin(r, (0.0, 1.0))) and r.any():
            out["ap"] = average_precision(coef, r)
        if groups is not None:
            out["sum_sym_kl"] = float(group_sym_kl(coef, r, groups, eps).sum())
    return out
