"""SLIM starts on 0/1 features: a beam over supports ranked by Bayes error, the best solved exactly.

The integer-move beam of :mod:`solvers.heuristics.slim_search` grows a model one point at a time. On
0/1 features with few positives no single feature puts any row on the positive side at less cost
than the constant model (every one-feature model that flags a pattern flags more negatives than
positives), so its guides are flat and it keeps the constant model, while a conjunction of three
or four thresholds beats it. The Bayes error of a support ``S``

.. math::

    E(S) = \\sum_{p} \\min(W_+(p), W_-(p))

(Ustun & Rudin 2016; the patterns ``p`` of values the rows take on ``S``,
:mod:`solvers.exact.bayes_error`) is not flat there: it falls as soon as ``S`` splits a pattern
where positives gather, and ``B(S) = E(S) + C_0 |S|`` bounds the objective of every model on ``S``
from below (:meth:`solvers.exact.zero_one_supports.ZeroOneProgram.bounder`). :func:`bayes_beam`
grows supports from the empty one, one free feature at a time: of each size it keeps the
:data:`WIDTH` supports of least ``B(S)``, and solves SLIM restricted to the :data:`EXACT` best of
them (the MILP on at most ``2^|S|`` merged rows, :meth:`ZeroOneProgram.search`), skipping those whose
bound already reaches the incumbent. The sizes stop at ``max_size`` (at most :data:`LARGEST`) or at
the deadline. It is FasterRisk's sparse beam search (Liu et al. 2022, Alg. 2) with the Bayes error as
the guide and an exact fit per support.
"""
from __future__ import annotations

import numpy as np

from formulations.base import Model
from formulations.constraints import binding
from formulations.slim import SLIMInstance
from solvers.exact.blocked_pass import screen_words
from solvers.exact.support_search import Search
from solvers.exact.zero_one_supports import ZeroOneProgram, zero_one
from solvers.limits import Limits

#: modules whose numba kernels the beam runs (:mod:`solvers.compiled`)
KERNELS = ("solvers.exact.bayes_error",)
#: supports of each size kept to grow the next
WIDTH = 50
#: supports of each size solved exactly (the least bounds first)
EXACT = 10
#: largest support grown, whatever ``max_size`` (a support's MILP has up to ``2^size`` merged rows;
#: of up to 1,024 they took a whole minute: ``docs/benchmarks-history.md``, stop 55)
LARGEST = 5


def applies(instance: SLIMInstance) -> str | None:
    """Why :func:`bayes_beam` cannot run on ``instance`` (None: it can)."""
    problem = zero_one(instance)
    if binding(instance.constraints):
        return "operational constraints (the restricted MILPs leave them out)"
    reason = problem.bayes_reason()
    if reason is not None:
        return reason
    if problem.forced.any():
        return "some features are forced"
    if problem.free.size == 0:
        return "no free features"
    return None


def beam_memory(problem: ZeroOneProgram) -> float:
    """Bytes the beam allocates at most: the rows' bit sets per (feature, value)
    (:func:`solvers.exact.bayes_error.value_bits`: a code, a one-hot and a padded byte per row copy and
    column, with each row repeated by its weight over its label's unit)."""
    return 16.0 * problem.d * (64.0 * screen_words(problem.y, problem.weights) + problem.X.shape[0])


def _grown(beam: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Every support of one more free feature than a row of ``beam`` (rows ascending, each once)."""
    rows = np.repeat(beam, free.size, axis=0)
    added = np.tile(free, beam.shape[0])[:, None]
    keep = ~np.any(rows == added, axis=1)
    grown = np.sort(np.hstack([rows, added])[keep], axis=1)
    return np.unique(grown, axis=0)


def bayes_beam(instance: SLIMInstance, incumbent: float, limits: Limits | None = None) -> Model | None:
    """The best model of the beam (module docstring) whose objective is below ``incumbent``, or
    None (none found, the beam does not apply, or it would allocate more than ``limits.memory``)."""
    problem = zero_one(instance)
    limits = (limits or Limits.untimed()).started()
    if applies(instance) is not None or beam_memory(problem) > limits.memory:
        return None
    free = problem.free
    bound = problem.bounder()
    search = Search(problem.d, incumbent, None, limits.mip_rel_gap)
    beam = np.zeros((1, 0), np.int64)
    for _ in range(min(problem.max_size, LARGEST, free.size)):
        if limits.expired():
            break
        supports = _grown(beam, free)
        bounds = bound(supports, np.inf)
        order = np.argsort(bounds, kind="stable")
        for s in order[:EXACT]:
            if limits.expired() or bounds[s] >= search.prune_level():
                break
            problem.search(supports[s], float(bounds[s]), search, limits)
        beam = supports[order[:WIDTH]]
    if search.model is None:
        return None
    return Model(*search.model)
