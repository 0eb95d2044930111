"""The margin study of the convex-rounding paper: LP, rounding, ILP and local search over a margin grid.

Chevaleyre, Koriche & Zucker (2013), sections 3-5. For one data set and each hinge margin
(``gamma`` in the paper) the table reports what Figures 3, 7 and 8 plot, every step run by the
solve pipeline (:mod:`solvers.pipeline`) on one :class:`formulations.rounding.ConvexRounding`
instance per margin:

* the LP of Figure 1 (objective, time) and how many of its ``d`` weights are already in {0,1}
  (Figure 3: most are at large margins);
* training error of the LP model and of the randomized rounding (Figure 7: rounding hurts at small
  margins), with the best and mean draw and the Proposition 1 bound, and of the deterministic
  rounding at 1/2;
* the ILP optimum with its certified bound and gap (time-limited, started from the rounding);
* the local search's loss and error (Figure 8): supermodular local search for binary weights,
  random-restart hill climbing for ternary weights.

Losses are the cumulative ``L`` of section 2; errors are weighted training error rates (a zero
score predicts the negative class, as the estimators do).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from formulations.base import Model
from formulations.rounding import INTEGRAL_TOL, ConvexRounding, ConvexRoundingInstance
from milpscore.data.validation import encode_labels, validate_xy
from solvers.limits import Limits
from solvers.pipeline import solve_exact, solve_method, solve_relaxed, solve_rounded
from solvers.heuristics.rounding import lp_options, relaxed_weights

DEFAULT_MARGINS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


def training_error(instance: ConvexRoundingInstance, model: Model) -> float:
    """Weighted training error of ``sign(x . coef + b)`` (a zero score predicts -1)."""
    scores = model.scores(instance.X)
    return float(((scores > 0) != (instance.y > 0)) @ instance.weights / instance.weights.sum())


def gamma_study(X: Any, y: Any, margins: Sequence[float] = DEFAULT_MARGINS, *, weights: str = "ternary",
                threshold: float | None = 0.0, max_size: float | None = None, n_draws: int = 200, seed: int = 0,
                ilp: bool = True, ilp_time_limit: float = 10.0, local_search: bool = True, n_restarts: int = 5,
                lp_solver: str = "ipm", sample_weight: np.ndarray | None = None) -> pd.DataFrame:
    """Convex rounding vs exact ILP vs local search over a grid of margins, one row per margin.

    Parameters
    ----------
    X : (m, n) features (array, DataFrame or scipy.sparse); y : (m,) two-class labels (any two
        values; mapped to -1/+1 as the estimators do).
    margins : hinge margins to study (> 0).
    weights, threshold, max_size : the concept class (see :class:`formulations.rounding.ConvexRounding`;
        the paper's classes fix the threshold, 0 by default; None learns the intercept).
    n_draws, seed : randomized rounding. ilp, ilp_time_limit : solve the ILP (wall-clock seconds
        per margin). local_search, n_restarts : run the local search (restarts for ternary weights).
    lp_solver : HiGHS ``solver`` of the LPs ("ipm" with crossover by default, as the estimator).

    Returns
    -------
    DataFrame with columns ``margin``, ``n_weights``, ``lp_objective``, ``lp_time``,
    ``n_binary_weights``, ``frac_binary`` (Figure 3), ``n_fractional``, ``error_relaxed``,
    ``error_rounded_best``, ``error_rounded_mean``, ``error_deterministic`` (Figure 7),
    ``rounded_loss_best``, ``rounded_loss_mean``, ``bound_prop1``, ``bound_variance``,
    ``rounding_time``, ``ilp_objective``, ``ilp_bound``, ``ilp_gap``, ``ilp_status``,
    ``ilp_error``, ``ilp_time``, ``local_search_loss``, ``local_search_error`` (Figure 8),
    ``local_search_time``.
    """
    if sp.issparse(X):
        Xa, (y_pm1, _) = X, encode_labels(y)
    else:
        Xa, y_pm1, _, _ = validate_xy(X, y)
    margins = np.asarray(margins, dtype=float).ravel()
    if margins.size == 0 or not np.all(np.isfinite(margins) & (margins > 0)):
        raise ValueError(f"margins must be a non-empty sequence of numbers > 0, got {list(margins)}")
    options = lp_options(lp_solver)
    free = Limits.untimed(seed=seed)
    rows = []
    for margin in margins:
        spec = ConvexRounding(margin=float(margin), weights=weights, threshold=threshold, max_size=max_size,
                              n_draws=n_draws, n_restarts=n_restarts)
        inst = spec.instance(Xa, y_pm1, sample_weight)
        relaxed = solve_relaxed(inst, "highs", limits=free, options=options)
        if relaxed.model is None:
            raise RuntimeError(f"the convex-rounding LP at margin {margin:g} was not solved "
                               f"({relaxed.status.value}: {relaxed.message})")
        w_hat = relaxed_weights(inst, relaxed.model)
        rounded = solve_method(inst, "randomized_rounding", source=relaxed, limits=free)
        draws = rounded.model.extras["rounding"]
        n_binary = int(np.sum((w_hat <= INTEGRAL_TOL) | (w_hat >= 1 - INTEGRAL_TOL)))
        row = {"margin": float(margin), "n_weights": w_hat.size, "lp_objective": relaxed.result.objective,
               "lp_time": relaxed.times["total"], "n_binary_weights": n_binary, "frac_binary": n_binary / w_hat.size,
               "n_fractional": draws["n_fractional"], "error_relaxed": training_error(inst, relaxed.model),
               "error_rounded_best": training_error(inst, rounded.model), "error_rounded_mean": draws["mean_error"],
               "error_deterministic": training_error(inst, solve_rounded(inst, relaxed).model),
               "rounded_loss_best": rounded.objective, "rounded_loss_mean": draws["mean_loss"],
               "bound_prop1": draws["bound_prop1"], "bound_variance": draws["bound_variance"],
               "rounding_time": rounded.times["total"]}
        if ilp:
            exact = solve_exact(inst, "highs", start=rounded, heuristic=False,
                                limits=Limits(time_limit=ilp_time_limit, seed=seed))
            row.update(ilp_objective=exact.objective, ilp_bound=exact.bound, ilp_gap=exact.gap,
                       ilp_status=exact.status.value, ilp_time=exact.times["total"],
                       ilp_error=training_error(inst, exact.model) if exact.model is not None else float("nan"))
        if local_search:
            ls = solve_method(inst, "local_search", source=relaxed, limits=free)
            row.update(local_search_loss=ls.objective, local_search_error=training_error(inst, ls.model),
                       local_search_time=ls.times["total"])
        rows.append(row)
    return pd.DataFrame(rows)
