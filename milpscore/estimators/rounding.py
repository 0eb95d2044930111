"""ConvexRoundingClassifier and LocalSearchClassifier: {-1,0,+1} (or {0,1}) weights by hinge loss.

Chevaleyre, Koriche & Zucker, ``papers/ternary-weights-convex-rounding.txt``: convex rounding
(Figure 1, sparse variant of section 3.2) and supermodular local search (Figure 6) with
random-restart hill climbing for ternary weights (section 4). Weights become score-card points
``-1 / 0 / +1``; the intercept is ``-r`` (the threshold of ``sgn(<c, x> - r)``).
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.utils import check_random_state

from formulations.rounding import ConvexRounding, cumulative_hinge_loss, ternary_from_binary
from milpscore.estimators.base import FitOutcome, IntegerLinearClassifier
from solvers.highs import solve_highs
from solvers.local_search import supermodular_local_search, ternary_hill_climbing
from solvers.result import Result, Status, relative_gap
from solvers.rounding import deterministic_rounding, randomized_rounding

ROUNDINGS = ("randomized", "deterministic", "exact")
LP_SOLVERS = ("ipm", "simplex", "choose", "pdlp")


def _seed(random_state) -> int:
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _heuristic_result(builder: ConvexRounding, coef: np.ndarray, intercept: float, X, y, s, *, bound: float,
                      seconds: float, backend: str) -> Result:
    """A feasible integer model found without a proof: objective L_gamma, bound from the LP if known."""
    objective = cumulative_hinge_loss(coef, X, y, gamma=builder.gamma, intercept=intercept, sample_weight=s)
    return Result(status=Status.FEASIBLE, x=builder.lift(coef, X, y, intercept=intercept), objective=objective,
                  bound=bound, gap=relative_gap(objective, bound) if np.isfinite(bound) else float("nan"),
                  solve_time=seconds, backend=backend, message="heuristic solution (no optimality proof)")


class ConvexRoundingClassifier(IntegerLinearClassifier):
    """Convex rounding (Figure 1) / sparse convex rounding (section 3.2) of the hinge-loss LP.

    Solves the LP ``min L_gamma(w; S)`` over ``[0,1]^d`` (``||w||_1 <= k`` when ``sparsity`` is
    set) with HiGHS, then rounds: ``"randomized"`` keeps the best of ``n_draws`` Bernoulli draws
    (within the budget when sparse), ``"deterministic"`` rounds at 1/2, ``"exact"`` solves the ILP
    itself (warm-started from the deterministic rounding).

    Parameters
    ----------
    gamma : float, hinge margin (score units). Small gamma: fractional LP weights, rounding hurts;
        large gamma: most LP weights already binary (paper, Figures 3 and 7).
    weights : "ternary" (points in {-1,0,+1}, through the doubling of section 2) or "binary".
    threshold : float or None, ``r`` (intercept ``-r``); None learns the intercept in the LP.
    sparsity : float or None, budget ``k`` on the number of non-zero (doubled) weights.
    rounding : "randomized", "deterministic" or "exact".
    n_draws : int, number of randomized-rounding draws; random_state : seed.
    lp_solver : HiGHS ``solver`` option for the LP: "ipm" (interior point with crossover, so the
        LP solution is a vertex; measured 9 s against 74 s for the dual simplex on the plain LP with
        m = 200, n = 1e5, benchmarks/rounding.py), "simplex", "choose" or "pdlp".
    time_limit : float or None, seconds for each HiGHS solve; mip_rel_gap, threads, verbose :
        HiGHS options.

    Attributes
    ----------
    coef_, intercept_, result_ (the rounded model: status "feasible" with the LP value as bound,
    or the ILP result), relaxed_result_ (the LP), fit_info_ (``relaxed_coef``, ``n_binary_weights``,
    ``n_weights``, ``rounding`` summary with the Proposition 1 bounds), scorecard_.
    """

    _card_title = "Convex-rounding score card"

    def __init__(self, gamma: float = 1.0, weights: str = "ternary", threshold: float | None = 0.0,
                 sparsity: float | None = None, rounding: str = "randomized", n_draws: int = 100,
                 random_state=None, lp_solver: str = "ipm", time_limit: float | None = 60.0,
                 mip_rel_gap: float = 1e-6, threads: int = 1, verbose: bool = False):
        self.gamma = gamma
        self.weights = weights
        self.threshold = threshold
        self.sparsity = sparsity
        self.rounding = rounding
        self.n_draws = n_draws
        self.random_state = random_state
        self.lp_solver = lp_solver
        self.time_limit = time_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.verbose = verbose

    def _fit_coefficients(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitOutcome:
        if self.rounding not in ROUNDINGS:
            raise ValueError(f"rounding must be one of {ROUNDINGS}, got {self.rounding!r}")
        builder = ConvexRounding(gamma=self.gamma, weights=self.weights, threshold=self.threshold,
                                 sparsity=self.sparsity)
        options = dict(time_limit=self.time_limit, threads=self.threads, verbose=self.verbose)
        if self.lp_solver not in LP_SOLVERS:
            raise ValueError(f"lp_solver must be one of {LP_SOLVERS}, got {self.lp_solver!r}")
        program = builder.relaxed(X, y, sample_weight)
        lp = solve_highs(program, options={"solver": self.lp_solver}, **options)
        if not lp.has_solution:
            raise RuntimeError(f"the convex-rounding LP was not solved (status {lp.status.value}: {lp.message}); "
                               "raise time_limit")
        w_hat = np.clip(program.block(lp.x, "w"), 0.0, 1.0)
        relaxed_coef, intercept = builder.decode(lp.x, program)
        tol = 1e-9
        extras = {"relaxed_coef": relaxed_coef, "n_weights": int(w_hat.size),
                  "n_binary_weights": int(np.sum((w_hat <= tol) | (w_hat >= 1 - tol)))}
        fallback = deterministic_rounding(w_hat, max_l1=self.sparsity)
        if self.rounding == "exact":
            exact = builder.exact(X, y, sample_weight)
            start = builder.lift(self._decode_binary(builder, fallback), X, y, intercept=intercept)
            result = solve_highs(exact, warm_start=start, mip_rel_gap=self.mip_rel_gap, **options)
            if not result.has_solution:
                raise RuntimeError(f"the convex-rounding ILP found no solution (status {result.status.value}); "
                                   "raise time_limit or use rounding='randomized'")
            coef, intercept = builder.decode(result.x, exact)
            coef = np.round(coef)
        else:
            seed = _seed(self.random_state)
            c = fallback
            if self.rounding == "randomized":
                outcome = randomized_rounding(w_hat, builder.design(X), y, gamma=builder.gamma, intercept=intercept,
                                              sample_weight=sample_weight, n_draws=self.n_draws, seed=seed,
                                              max_l1=self.sparsity)
                extras["rounding"] = outcome.summary()
                extras["best_within_budget"] = outcome.best_within_budget
                if outcome.best_within_budget:
                    c = outcome.weights
            coef = self._decode_binary(builder, c)
            result = _heuristic_result(builder, coef, intercept, X, y, sample_weight, bound=lp.objective,
                                       seconds=lp.solve_time, backend=f"highs+{self.rounding}-rounding")
        return FitOutcome(coef, intercept, result, lp, extras)

    @staticmethod
    def _decode_binary(builder: ConvexRounding, c: np.ndarray) -> np.ndarray:
        return ternary_from_binary(c) if builder.weights == "ternary" else np.asarray(c, dtype=float)


class LocalSearchClassifier(IntegerLinearClassifier):
    """Local search for hinge-loss {0,1} weights (Figure 6) or {-1,0,+1} weights (hill climbing).

    ``weights="binary"`` runs the supermodular local search of Figure 6 once from ``c = 0``
    (class ``C_r[0,1]``; supermodular when the features are non-negative, Proposition 3).
    ``weights="ternary"`` runs random-restart hill climbing over ``{-1,0,+1}^n`` (section 4):
    one run from 0 and ``n_restarts`` runs from random starts with ``start_nonzeros`` non-zeros.

    Parameters
    ----------
    gamma : float, hinge margin; threshold : float, fixed ``r`` (intercept ``-r``).
    sparsity : float or None, at most ``k`` non-zero weights (moves beyond it are skipped).
    weights : "ternary" or "binary"; n_restarts, start_nonzeros : hill-climbing restarts.
    epsilon : Figure 6's eps (a move is taken while it improves f by the factor ``1 - eps/d^2``).
    max_moves : cap on accepted moves per run (None: ``10 d``); random_state : seed.

    Attributes
    ----------
    coef_, intercept_, result_ (status "feasible", objective ``L_gamma``, no bound), fit_info_
    (``restart_losses``, ``n_moves``, ``n_passes``, ``converged``), scorecard_.
    """

    _card_title = "Local-search score card"

    def __init__(self, gamma: float = 1.0, weights: str = "ternary", threshold: float = 0.0,
                 sparsity: float | None = None, n_restarts: int = 10, start_nonzeros: int = 10,
                 epsilon: float = 1.0, max_moves: int | None = None, random_state=None):
        self.gamma = gamma
        self.weights = weights
        self.threshold = threshold
        self.sparsity = sparsity
        self.n_restarts = n_restarts
        self.start_nonzeros = start_nonzeros
        self.epsilon = epsilon
        self.max_moves = max_moves
        self.random_state = random_state

    def _fit_coefficients(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitOutcome:
        if self.threshold is None:
            raise ValueError("LocalSearchClassifier needs a fixed threshold (a number, 0 for the ternary class "
                             "C_0); to learn the intercept use ConvexRoundingClassifier(threshold=None)")
        builder = ConvexRounding(gamma=self.gamma, weights=self.weights, threshold=self.threshold,
                                 sparsity=self.sparsity)
        intercept = -float(self.threshold)
        common = dict(gamma=builder.gamma, intercept=intercept, sample_weight=sample_weight, epsilon=self.epsilon,
                      max_moves=self.max_moves, max_l1=self.sparsity)
        t0 = time.perf_counter()
        if builder.weights == "binary":
            outcome = supermodular_local_search(X, y, **common)
        else:
            outcome = ternary_hill_climbing(X, y, n_restarts=self.n_restarts, start_nonzeros=self.start_nonzeros,
                                            seed=_seed(self.random_state), **common)
        seconds = time.perf_counter() - t0
        result = _heuristic_result(builder, outcome.weights, intercept, X, y, sample_weight, bound=float("nan"),
                                   seconds=seconds, backend=f"local-search-{builder.weights}")
        extras = {"restart_losses": outcome.restart_losses, "n_moves": outcome.n_moves,
                  "n_passes": outcome.n_passes, "converged": outcome.converged}
        return FitOutcome(outcome.weights, intercept, result, None, extras)
