"""The margin study of the convex-rounding paper: LP, rounding, ILP and local search over a gamma grid.

Chevaleyre, Koriche & Zucker, ``papers/ternary-weights-convex-rounding.txt``, sections 3-5. For
one data set and each margin ``gamma`` the table reports what Figures 3, 7 and 8 plot:

* the LP of Figure 1 (objective, time) and how many of its ``d`` weights are already in {0,1}
  (Figure 3: most are at large gamma);
* training error of the LP weights ``w_hat`` and of the randomized rounding ``c`` (Figure 7:
  rounding hurts at small gamma), with the best and mean draw and the Proposition 1 bound;
* the ILP optimum with HiGHS' bound and gap (time-limited);
* the local search's loss and error (Figure 8): supermodular local search for binary weights,
  random-restart hill climbing for ternary weights.

Losses are the cumulative ``L_gamma`` of section 2; errors are training error rates (a zero score
predicts the negative class, as the estimators do).
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from formulations.rounding import ConvexRounding, check_training_set, ternary_from_binary
from milpscore.data import encode_labels, validate_xy
from solvers.highs import solve_highs
from solvers.local_search import supermodular_local_search, ternary_hill_climbing
from solvers.rounding import deterministic_rounding, randomized_rounding

DEFAULT_GAMMAS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


def _error(coef: np.ndarray, X, y: np.ndarray, intercept: float, s: np.ndarray) -> float:
    score = np.asarray(X @ coef).ravel() + intercept
    return float(((score > 0) != (y > 0)) @ s / s.sum())


def gamma_study(X: Any, y: Any, gammas: Sequence[float] = DEFAULT_GAMMAS, *, weights: str = "ternary",
                threshold: float = 0.0, sparsity: float | None = None, n_draws: int = 200, seed: int = 0,
                ilp: bool = True, ilp_time_limit: float = 10.0, local_search: bool = True, n_restarts: int = 5,
                lp_solver: str = "ipm", sample_weight: np.ndarray | None = None) -> pd.DataFrame:
    """Convex rounding vs exact ILP vs local search over a grid of margins, one row per gamma.

    Parameters
    ----------
    X : (m, n) features (array, DataFrame or scipy.sparse); y : (m,) two-class labels (any two
        values; mapped to -1/+1 as the estimators do).
    gammas : margins to study (> 0).
    weights, threshold, sparsity : the concept class (see :class:`formulations.rounding.ConvexRounding`;
        the threshold is fixed so that the local search solves the same problem).
    n_draws, seed : randomized rounding. ilp, ilp_time_limit : solve the ILP with HiGHS (seconds
        per gamma). local_search, n_restarts : run the local search (restarts for ternary weights).
    lp_solver : HiGHS ``solver`` option for the LPs ("ipm" with crossover by default, as the estimator).

    Returns
    -------
    DataFrame with columns ``gamma``, ``n_weights``, ``lp_objective``, ``lp_time``,
    ``n_binary_weights``, ``frac_binary`` (Figure 3), ``n_fractional``, ``error_relaxed``,
    ``error_rounded_best``, ``error_rounded_mean``, ``error_deterministic`` (Figure 7),
    ``rounded_loss_best``, ``rounded_loss_mean``, ``bound_prop1``, ``bound_variance``,
    ``rounding_time``, ``ilp_objective``, ``ilp_bound``, ``ilp_gap``, ``ilp_status``,
    ``ilp_error``, ``ilp_time``, ``local_search_loss``, ``local_search_error`` (Figure 8),
    ``local_search_time``.
    """
    if sp.issparse(X):
        y_pm1, _ = encode_labels(y)
        Xa = X
    else:
        Xa, y_pm1, _, _ = validate_xy(X, y)
    Xa, y_pm1, s = check_training_set(Xa, y_pm1, sample_weight)
    gammas = np.asarray(gammas, dtype=float).ravel()
    if gammas.size == 0 or not np.all(np.isfinite(gammas) & (gammas > 0)):
        raise ValueError(f"gammas must be a non-empty sequence of margins > 0, got {list(gammas)}")
    if threshold is None:
        raise ValueError("gamma_study needs a fixed threshold (the local search has no intercept variable)")
    rows = []
    for gamma in gammas:
        builder = ConvexRounding(gamma=float(gamma), weights=weights, threshold=threshold, sparsity=sparsity)
        design, intercept = builder.design(Xa), -float(threshold)
        decode = ternary_from_binary if weights == "ternary" else (lambda c: c)
        program = builder.relaxed(Xa, y_pm1, s)
        lp = solve_highs(program, options={"solver": lp_solver})
        w_hat = np.clip(program.block(lp.x, "w"), 0.0, 1.0)
        t0 = time.perf_counter()
        rounded = randomized_rounding(w_hat, design, y_pm1, gamma=float(gamma), intercept=intercept, sample_weight=s,
                                      n_draws=n_draws, seed=seed, max_l1=sparsity)
        rounding_time = time.perf_counter() - t0
        row = {"gamma": float(gamma), "n_weights": w_hat.size, "lp_objective": lp.objective,
               "lp_time": lp.build_time + lp.solve_time,
               "n_binary_weights": int(np.sum((w_hat <= 1e-9) | (w_hat >= 1 - 1e-9))),
               "n_fractional": rounded.n_fractional,
               "error_relaxed": _error(w_hat, design, y_pm1, intercept, s),
               "error_rounded_best": float(rounded.error_rates[rounded.best]),
               "error_rounded_mean": float(rounded.error_rates.mean()),
               "error_deterministic": _error(deterministic_rounding(w_hat, max_l1=sparsity), design, y_pm1,
                                             intercept, s),
               "rounded_loss_best": rounded.loss, "rounded_loss_mean": rounded.mean_loss,
               "bound_prop1": rounded.bound_prop1, "bound_variance": rounded.bound_variance,
               "rounding_time": rounding_time}
        row["frac_binary"] = row["n_binary_weights"] / row["n_weights"]
        if ilp:
            exact = builder.exact(Xa, y_pm1, s)
            start = builder.lift(decode(rounded.weights), Xa, y_pm1) if rounded.best_within_budget else None
            res = solve_highs(exact, time_limit=ilp_time_limit, warm_start=start)
            row.update(ilp_objective=res.objective, ilp_bound=res.bound, ilp_gap=res.gap, ilp_status=res.status.value,
                       ilp_time=res.build_time + res.solve_time,
                       ilp_error=_error(exact.block(res.x, "w"), design, y_pm1, intercept, s)
                       if res.has_solution else float("nan"))
        if local_search:
            t0 = time.perf_counter()
            if weights == "ternary":
                ls = ternary_hill_climbing(Xa, y_pm1, gamma=float(gamma), intercept=intercept, sample_weight=s,
                                           n_restarts=n_restarts, max_l1=sparsity, seed=seed)
            else:
                ls = supermodular_local_search(Xa, y_pm1, gamma=float(gamma), intercept=intercept, sample_weight=s,
                                               max_l1=sparsity)
            row.update(local_search_loss=ls.loss, local_search_error=_error(ls.weights, Xa, y_pm1, intercept, s),
                       local_search_time=time.perf_counter() - t0)
        rows.append(row)
    return pd.DataFrame(rows)
