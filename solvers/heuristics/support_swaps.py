"""A RiskSLIM start improved by exact swaps of supports, on 0/1 features.

The swap search of :mod:`solvers.heuristics.riskslim` moves one feature of one model at a time, each
move polished; a model that needs two or three features changed at once stays out of its reach. Here
the moves are made on *supports*, and each support is solved exactly: the best integer model whose
support lies in ``S`` (points in the coefficient box, the intercept in its box, the L0 costs; Ustun &
Rudin 2019, eq. 1, restricted to ``S``) is found by the in-support branch and bound of the certified
solve (:meth:`solvers.exact.sparse_logistic.SparseLogistic.search`), which only looks for models
strictly better than the incumbent and so costs little on most supports.

From every support of the beam search's final beam (FasterRisk's supports: Liu et al. 2022,
Algorithm 1) and the start's own, ``S`` and each neighbour ``S - {i} + {j}`` are solved, ``j`` among the
:data:`CANDIDATES` features outside ``S`` of largest partial derivative at ``S``'s box-constrained
fit (and ``S + {j}`` while ``S`` is below ``max_size``), each against the incumbent as it improves;
the neighbour that gave the last improvement is searched next, until no neighbour improves or the
budget ends. Each support is solved once. So a model two swaps away from a beam support is reached
even when every single move from the start is worse; and without a time limit, no support searched
from, nor any of its neighbours, holds a better model than the one returned (with at most :data:`CANDIDATES` free
features outside it, every neighbour is tried).

Only on 0/1 features, where the in-support search merges the rows by their cells, with integer points; only models
obeying the operational constraints at least as well as the start are kept (the in-support search
leaves them out). It is a heuristic: the certificate comes from the exact solve.
"""
from __future__ import annotations

import math

import numpy as np

from formulations.base import Model
from formulations.riskslim import RiskSLIMInstance
from solvers.exact.sparse_logistic import SparseLogistic
from solvers.exact.support_search import Search
from solvers.limits import Limits

#: features tried in for each one of a support, those of largest partial derivative at its fit
CANDIDATES = 30


def support_swaps(instance: RiskSLIMInstance, model: Model, fits: list[tuple[np.ndarray, float]],
                  fit, limits: Limits | None = None) -> Model:
    """``model`` improved by exact swaps from the supports of ``fits`` (``(coef, intercept)`` box-constrained
    fits, e.g. the beam's) and its own (module docstring); ``fit(instance, support) -> (coef, intercept,
    loss)`` is the box-constrained fit of a support. ``model`` itself when the features are not all 0/1 or the
    points not all integers (the in-support search branches on integers)."""
    problem = SparseLogistic.from_instance(instance)
    if not problem.binary or not instance.coefficients.integer.all():
        return model
    limits = (Limits.untimed() if limits is None else limits).started()
    k = problem.max_size
    best, value = model, instance.objective(model)
    violation = instance.constraint_violation(model)
    queue = [(np.flatnonzero(c), c, b) for c, b in fits if np.count_nonzero(c) == k]
    own = np.union1d(np.flatnonzero(model.coef), np.flatnonzero(problem.forced)).astype(int)
    queue.append((own, *fit(instance, own)[:2]))
    seen: set[bytes] = set()
    while queue and not limits.expired():
        support, coef, intercept = queue.pop(0)
        improved = None
        for neighbour in _neighbours(instance, problem, support, coef, intercept, k):
            if limits.expired():
                break
            if neighbour.tobytes() in seen:
                continue
            seen.add(neighbour.tobytes())
            search = Search(problem.d, value, None, 0.0)
            problem.search(neighbour, -math.inf, search, limits)
            if search.model is None or search.incumbent >= value:
                continue
            found = Model(search.model[0].copy(), float(search.model[1]))
            if instance.constraint_violation(found) <= violation + 1e-9:
                best, value, improved = found, instance.objective(found), neighbour
        if improved is not None:
            queue.insert(0, (improved, *fit(instance, improved)[:2]))
    return best


def _neighbours(instance: RiskSLIMInstance, problem: SparseLogistic, support: np.ndarray, coef: np.ndarray,
                intercept: float, k: int) -> list[np.ndarray]:
    """``support`` itself, then the supports one swap (or, below ``k`` features, one addition) from it: the
    features in are the :data:`CANDIDATES` free ones outside it of largest partial derivative at
    ``(coef, intercept)``."""
    _, gradient, _ = instance.data.gradient(coef, intercept)
    outside = np.setdiff1d(problem.free, support)
    candidates = outside[np.argsort(-np.abs(gradient[outside]), kind="stable")][:CANDIDATES]
    leaving = [j for j in support if not problem.forced[j]]
    moves = [support] + ([np.append(support, j) for j in candidates] if support.size < k else [])
    moves += [np.append(np.setdiff1d(support, [i]), j) for i in leaving for j in candidates]
    return [np.sort(m).astype(int) for m in moves]
