"""ConvexRoundingClassifier and LocalSearchClassifier: {-1,0,+1} (or {0,1}) weights by hinge loss.

Presets of :class:`~milpscore.estimators.base.IntegerLinearClassifier` over the formulation
:class:`formulations.rounding.ConvexRounding` (Chevaleyre, Koriche & Zucker 2013): convex
rounding (Figure 1, sparse variant of section 3.2) and supermodular local search (Figure 6) with
random-restart hill climbing for ternary weights (section 4). Weights become score-card points
``-1 / 0 / +1``; the intercept is ``-r`` (the threshold of ``sgn(<c, x> - r)``), learned by default.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from sklearn.utils import check_random_state

from formulations.base import Instance
from formulations.rounding import ConvexRounding
from milpscore.estimators.base import IntegerLinearClassifier
from solvers.limits import Limits
from solvers.pipeline import Fit
from solvers.heuristics.rounding import lp_options

ROUNDINGS = {"randomized": "randomized_rounding", "deterministic": "rounding", "exact": "exact"}


def _seed(random_state) -> int:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool) and random_state >= 0:
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class _RoundingPreset(IntegerLinearClassifier):
    """What both presets share: seeds, fit_info_ from the method's model."""

    # defaults of the base's solver settings for presets without these parameters (local search)
    verbose = False
    mip_rel_gap = 1e-6
    threads = 1

    def _limits(self) -> Limits:
        return Limits(time_limit=self.time_limit, mip_rel_gap=self.mip_rel_gap, threads=self.threads,
                      seed=_seed(self.random_state))

    def _keep(self, instance: Instance, fit: Fit) -> None:
        super()._keep(instance, fit)
        extras = fit.model.extras if fit.model is not None else {}
        self.fit_info_.update({k: v for k, v in extras.items() if k != "weights"})


class ConvexRoundingClassifier(_RoundingPreset):
    """Convex rounding (Figure 1) / sparse convex rounding (section 3.2) of the hinge-loss LP.

    Solves the LP ``min L(w; S)`` over ``[0,1]^d`` (``sum w <= k`` with ``max_size``) with HiGHS,
    then rounds: ``"randomized"`` keeps the best of ``n_draws`` Bernoulli draws within the budget
    (pipeline method ``"randomized_rounding"``), ``"deterministic"`` rounds at 1/2 (``"rounding"``),
    ``"exact"`` solves the ILP (``"exact"``, started from the local search).

    Parameters
    ----------
    margin : float, hinge margin (score units). Small margins: fractional LP weights, rounding
        hurts; large margins: most LP weights already binary (Figures 3 and 7).
    weights : "ternary" (points in {-1,0,+1}, by the doubling of section 2) or "binary".
    threshold : float or None, ``r`` (intercept ``-r``); None (default) learns the intercept.
    max_size : float or None, budget ``k`` on the number of non-zero weights.
    rounding : "randomized", "deterministic" or "exact".
    n_draws : int, number of randomized-rounding draws.
    random_state : seed of the rounding draws, the local search's restarts and the solver (default
        0: every fit of the same data gives the same model; None draws a new seed per fit).
    lp_solver : HiGHS ``solver`` of the LP: "ipm" (interior point with crossover, a vertex; the
        faster one in docs/benchmarks.md), "simplex", "choose" or "pdlp". Not used by
        ``rounding="exact"``.
    time_limit : float or None, wall-clock seconds of the whole fit; mip_rel_gap, threads, verbose.
    constraints : operational constraints by column name (:mod:`formulations.constraints`) on the
        weights; the exact ILP (``rounding="exact"``) carries them, a rounding that breaks one is
        refused with the violation.

    Attributes
    ----------
    coef_, intercept_, fit_ (status "feasible" with the LP value as ``bound_`` for roundings, or
    the certified ILP), result_, status_, objective_, bound_, gap_, scorecard_, fit_info_
    (randomized: ``rounding`` summary with the Proposition 1 bounds, ``relaxed_coef``,
    ``n_binary_weights``; always ``n_weights``, ``n_rows_kept``, times, message).
    """

    _card_title = "Convex-rounding score card"

    def __init__(self, margin: float = 1.0, weights: str = "ternary", threshold: float | None = None,
                 max_size: float | None = None, rounding: str = "randomized", n_draws: int = 100,
                 random_state=0, lp_solver: str = "ipm", time_limit: float | None = 60.0,
                 mip_rel_gap: float = 1e-6, threads: int = 1, verbose: bool = False, constraints: Sequence = (),
                 pos_label: Any = None):
        self.constraints = constraints
        self.margin = margin
        self.weights = weights
        self.threshold = threshold
        self.max_size = max_size
        self.rounding = rounding
        self.n_draws = n_draws
        self.random_state = random_state
        self.lp_solver = lp_solver
        self.time_limit = time_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.verbose = verbose
        self.pos_label = pos_label

    def _method(self) -> tuple[str, str | None, dict]:
        if self.rounding not in ROUNDINGS:
            raise ValueError(f"rounding must be one of {tuple(ROUNDINGS)}, got {self.rounding!r}")
        options = lp_options(self.lp_solver)
        # HiGHS ignores integrality when "solver" is set: the ILP gets no LP options
        return ROUNDINGS[self.rounding], "highs", ({} if self.rounding == "exact" else options)

    def _formulation(self, y: np.ndarray, names: list[str]) -> ConvexRounding:
        return ConvexRounding(margin=self.margin, weights=self.weights, threshold=self.threshold,
                              max_size=self.max_size,
                              n_draws=self.n_draws, constraints=tuple(self.constraints or ()), feature_names=tuple(names))


class LocalSearchClassifier(_RoundingPreset):
    """Local search for hinge-loss {0,1} weights (Figure 6) or {-1,0,+1} weights (hill climbing).

    ``weights="binary"`` runs the supermodular local search of Figure 6 from ``c = 0`` (class
    ``C_r[0,1]``; supermodular for non-negative features, Proposition 3). ``weights="ternary"``
    runs random-restart hill climbing over ``{-1,0,+1}^n`` (section 4): one run from 0 and
    ``n_restarts`` runs from random starts with ``start_nonzeros`` non-zeros. With a learned
    intercept (``threshold=None``, default) searches alternate with the exact best intercept,
    starting from the LP's intercept (pipeline method ``"local_search"``; the LP value is the
    reported bound).

    Parameters
    ----------
    margin : float, hinge margin; threshold : float or None, fixed ``r`` (intercept ``-r``) or learned.
    max_size : float or None, at most ``floor(max_size)`` non-zero weights (moves beyond are skipped).
    weights : "ternary" or "binary"; n_restarts, start_nonzeros : hill-climbing restarts.
    epsilon : Figure 6's eps (a move is taken while it improves f by the factor ``1 - eps/d^2``).
    max_moves : cap on accepted moves per run (None: ``10 d``).
    random_state : seed of the restarts (default 0: every fit of the same data gives the same
        model; None draws a new seed per fit).
    time_limit : float or None, wall-clock seconds of the whole fit (LP and searches).

    Attributes
    ----------
    coef_, intercept_, fit_ (status "feasible", objective ``L``, the LP value as bound), fit_info_
    (``restart_losses``, ``n_moves``, ``n_passes``, ``converged``, ``rounds``), scorecard_.
    """

    _card_title = "Local-search score card"

    def __init__(self, margin: float = 1.0, weights: str = "ternary", threshold: float | None = None,
                 max_size: float | None = None, n_restarts: int = 10, start_nonzeros: int = 10,
                 epsilon: float = 1.0, max_moves: int | None = None, random_state=0,
                 time_limit: float | None = 60.0, pos_label: Any = None):
        self.margin = margin
        self.weights = weights
        self.threshold = threshold
        self.max_size = max_size
        self.n_restarts = n_restarts
        self.start_nonzeros = start_nonzeros
        self.epsilon = epsilon
        self.max_moves = max_moves
        self.random_state = random_state
        self.time_limit = time_limit
        self.pos_label = pos_label

    def _method(self) -> tuple[str, str | None, dict]:
        return "local_search", "highs", lp_options("ipm")

    def _formulation(self, y: np.ndarray, names: list[str]) -> ConvexRounding:
        return ConvexRounding(margin=self.margin, weights=self.weights, threshold=self.threshold,
                              max_size=self.max_size,
                              n_restarts=self.n_restarts, start_nonzeros=self.start_nonzeros, epsilon=self.epsilon,
                              max_moves=self.max_moves)
