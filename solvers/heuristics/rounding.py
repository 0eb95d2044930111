"""Randomized rounding of a convex-rounding LP solution (Chevaleyre, Koriche & Zucker 2013, Figure 1 step 2).

Given the LP optimum ``w_hat in [0,1]^d`` of :class:`formulations.rounding.ConvexRounding`,
randomized rounding draws ``c_i ~ Bernoulli(w_hat_i)`` independently, so ``E[c] = w_hat``, and

* Proposition 1: ``E[L(c; S)] <= L(c*; S) + m X_1 / (2 margin)`` with ``X_1 = max_t ||x_t||_1``
  and ``c*`` the binary optimum. The proof (eqs. (1)-(7)) bounds ``E[L(c)] - L(w_hat)``, and
  ``L(w_hat) <= L(c*)``, so the computable form ``L(w_hat) + m X_1 / (2 margin)`` is reported;
  the intermediate eq. (4), ``L(w_hat) + (1/margin) sum_t sqrt(sum_i x_ti^2 w_i (1 - w_i))``, is
  tighter and reported too. With sample weights ``s_t`` every sum over ``t`` is weighted.
* Proposition 2 (sparse variant): ``E[||c||_1] = sum_i w_hat_i``, which is ``k`` when the budget
  ``||w||_1 <= k`` binds.

Only the fractional coordinates of ``w_hat`` are random: at an LP vertex there are at most as
many as rows, so every draw's scores are ``X_fixed c_fixed + X_F c_F`` with a small ``X_F``.

:func:`randomized_rounding_method` is the catalog method ``"randomized_rounding"``: the best of
``spec.n_draws`` draws from the relaxed fit's weights, inside the class and the budget.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from formulations.base import Model
from formulations.rounding import INTEGRAL_TOL, ConvexRoundingInstance, cumulative_hinge_loss, ternary_from_binary
from formulations.validation import check_training_set
from solvers.limits import Limits


@dataclass
class RoundingOutcome:
    """Randomized rounding: the best draw and the distribution over all draws.

    Attributes
    ----------
    weights : (d,) the best draw ``c in {0,1}^d`` (lowest ``L``; among the draws within
        ``max_l1`` when a budget was given and at least one draw meets it).
    loss : ``L(weights; S)``.
    losses : (n_draws,) ``L`` of every draw; l1_norms : (n_draws,) ``||c||_1`` of every draw.
    error_rates : (n_draws,) weighted training error of every draw (a sample counts as correct
        when ``sign(<c, x_t> + b) == y_t`` with a zero score predicting -1, the estimators' rule).
    relaxed_loss : ``L(w_hat; S)``.
    expected_l1 : ``sum_i w_hat_i = E||c||_1`` (Proposition 2).
    bound_prop1 : ``L(w_hat) + sum_t s_t X_1 / (2 margin)`` >= ``E[L(c)]`` (Proposition 1).
    bound_variance : ``L(w_hat) + (1/margin) sum_t s_t sqrt(Var <c, x_t>)`` (eq. (4)).
    n_fractional : number of coordinates of ``w_hat`` strictly inside (0, 1).
    within_budget : (n_draws,) bool, draw meets ``max_l1`` (all True without a budget).
    best_within_budget : whether ``weights`` meets the budget.
    seed : the seed used; best : index of the best draw.
    draws : (n_draws, d) bool draws when ``keep_draws`` was set, else None. When the budget ran
        out, only the draws made so far are kept (``losses.size < n_draws``).
    """

    weights: np.ndarray
    loss: float
    losses: np.ndarray
    l1_norms: np.ndarray
    error_rates: np.ndarray
    relaxed_loss: float
    expected_l1: float
    bound_prop1: float
    bound_variance: float
    n_fractional: int
    within_budget: np.ndarray
    best_within_budget: bool
    seed: int | None
    best: int
    draws: np.ndarray | None = None

    @property
    def mean_loss(self) -> float:
        """Empirical ``E[L(c)]`` over the draws."""
        return float(self.losses.mean())

    @property
    def std_loss(self) -> float:
        return float(self.losses.std(ddof=1)) if self.losses.size > 1 else 0.0

    def summary(self) -> dict[str, float]:
        """Flat dict for tables: best, mean, quantiles of the losses and both bounds."""
        q = np.quantile(self.losses, [0.1, 0.5, 0.9])
        return {"relaxed_loss": self.relaxed_loss, "best_loss": self.loss, "mean_loss": self.mean_loss,
                "std_loss": self.std_loss, "q10_loss": q[0], "median_loss": q[1], "q90_loss": q[2],
                "bound_prop1": self.bound_prop1, "bound_variance": self.bound_variance,
                "mean_error": float(self.error_rates.mean()), "best_error": float(self.error_rates[self.best]),
                "expected_l1": self.expected_l1, "mean_l1": float(self.l1_norms.mean()),
                "n_fractional": self.n_fractional, "n_draws": int(self.losses.size),
                "best_within_budget": self.best_within_budget}


def _check_margin(margin: float) -> None:
    if not (np.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0 (the hinge margin), got {margin!r}")


def _check_weights(w_hat: np.ndarray, d: int) -> np.ndarray:
    w = np.asarray(w_hat, dtype=float)
    if w.shape != (d,):
        raise ValueError(f"w_hat has shape {w.shape}; the design matrix has {d} columns")
    if not np.isfinite(w).all() or (w < -1e-6).any() or (w > 1 + 1e-6).any():
        raise ValueError("w_hat must lie in [0, 1]^d (the convex-rounding LP solution); for ternary "
                         "weights pass the doubled weights and the doubled design")
    return np.clip(w, 0.0, 1.0)


def rounding_bounds(w_hat: np.ndarray, X, y: np.ndarray, *, margin: float, intercept: float = 0.0,
                    sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """Upper bounds on ``E[L(c)]`` for ``c ~ Bernoulli(w_hat)``: Proposition 1 and its eq. (4).

    Returns ``{"relaxed_loss": L(w_hat), "bound_prop1": L(w_hat) + sum_t s_t X_1 / (2 margin),
    "bound_variance": L(w_hat) + (1/margin) sum_t s_t sqrt(sum_i x_ti^2 w_i (1 - w_i))}``.
    """
    X, y, s = check_training_set(X, y, sample_weight)
    _check_margin(margin)
    w = _check_weights(w_hat, X.shape[1])
    relaxed = cumulative_hinge_loss(w, X, y, margin=margin, intercept=intercept, sample_weight=s)
    if sp.issparse(X):
        row_l1 = np.asarray(abs(X).sum(axis=1)).ravel()
        variance = np.asarray(X.multiply(X) @ (w * (1 - w))).ravel()
    else:
        row_l1 = np.abs(X).sum(axis=1)
        variance = (X * X) @ (w * (1 - w))
    x1 = float(row_l1.max())
    return {"relaxed_loss": relaxed,
            "bound_prop1": relaxed + float(s.sum()) * x1 / (2.0 * margin),
            "bound_variance": relaxed + float(s @ np.sqrt(variance)) / margin}


def randomized_rounding(w_hat: np.ndarray, X, y: np.ndarray, *, margin: float, intercept: float = 0.0,
                        sample_weight: np.ndarray | None = None, n_draws: int = 100, seed: int | None = None,
                        max_l1: float | None = None, keep_draws: bool = False,
                        limits: Limits | None = None) -> RoundingOutcome:
    """Randomized rounding of Figure 1 step (2): ``n_draws`` independent ``c ~ Bernoulli(w_hat)``.

    Parameters
    ----------
    w_hat : (d,) LP solution in ``[0,1]^d`` (for ternary weights: the doubled weights).
    X : (m, d) design the weights act on (for ternary weights: the doubled features), dense or
        sparse; y : (m,) labels in {-1,+1}; margin : hinge margin; intercept : ``b = -r``.
    n_draws : number of draws (>= 1); seed : seed of ``numpy.random.default_rng``.
    max_l1 : sparsity budget ``k``; the best draw is taken among draws with ``||c||_1 <= k``
        when there is one (Bernoulli draws meet it only on average, Proposition 2).
    keep_draws : keep the (n_draws, d) boolean draws in the outcome (memory ``n_draws * d``).
    limits : stop drawing (after at least one chunk of draws) when it has expired.
    """
    X, y, s = check_training_set(X, y, sample_weight)
    _check_margin(margin)
    if not isinstance(n_draws, (int, np.integer)) or n_draws < 1:
        raise ValueError(f"n_draws must be an integer >= 1, got {n_draws!r}")
    w = _check_weights(w_hat, X.shape[1])
    rng = np.random.default_rng(seed)
    fractional = np.flatnonzero((w > INTEGRAL_TOL) & (w < 1 - INTEGRAL_TOL))
    fixed = (w >= 1 - INTEGRAL_TOL).astype(float)
    base_score = np.asarray(X @ fixed).ravel() + float(intercept)
    X_frac = sp.csr_matrix(X[:, fractional]) if sp.issparse(X) else X[:, fractional]
    p = w[fractional]
    chunk = max(1, int(4e6 // max(1, X.shape[0] + fractional.size)))
    losses, l1, errors = np.empty(n_draws), np.empty(n_draws), np.empty(n_draws)
    kept = np.zeros((n_draws, fractional.size), bool) if keep_draws else None
    best, best_key, best_draw, done = -1, (True, np.inf), None, 0
    for start in range(0, n_draws, chunk):
        if start > 0 and limits is not None and limits.expired():
            break
        draws = rng.random((min(chunk, n_draws - start), fractional.size)) < p  # (chunk, |F|)
        scores = base_score[None, :] + np.asarray(X_frac @ draws.T.astype(float)).T  # (chunk, m)
        block = slice(start, start + draws.shape[0])
        losses[block] = (np.maximum(0.0, margin - y[None, :] * scores) / margin) @ s
        errors[block] = ((scores > 0) != (y[None, :] > 0)) @ s / s.sum()
        l1[block] = fixed.sum() + draws.sum(axis=1)
        if kept is not None:
            kept[block] = draws
        over = l1[block] > max_l1 + 1e-9 if max_l1 is not None else np.zeros(draws.shape[0], bool)
        i = int(np.lexsort((losses[block], over))[0])  # within budget first, then lowest loss
        if (bool(over[i]), losses[block][i]) < best_key:
            best, best_key, best_draw = start + i, (bool(over[i]), losses[block][i]), draws[i].copy()
        done = start + draws.shape[0]
    losses, l1, errors = losses[:done], l1[:done], errors[:done]
    within = np.ones(done, bool) if max_l1 is None else l1 <= max_l1 + 1e-9
    c = fixed.copy()
    c[fractional] = best_draw
    full = None
    if kept is not None:
        full = np.repeat(fixed[None, :] > 0, done, axis=0)
        full[:, fractional] = kept[:done]
    bounds = rounding_bounds(w, X, y, margin=margin, intercept=intercept, sample_weight=s)
    return RoundingOutcome(weights=c, loss=float(losses[best]), losses=losses, l1_norms=l1, error_rates=errors,
                           relaxed_loss=bounds["relaxed_loss"], expected_l1=float(w.sum()),
                           bound_prop1=bounds["bound_prop1"], bound_variance=bounds["bound_variance"],
                           n_fractional=int(fractional.size), within_budget=within,
                           best_within_budget=bool(within[best]), seed=seed, best=best, draws=full)


# ------------------------------------------------------------------------- catalog method
LP_SOLVERS = ("ipm", "simplex", "choose", "pdlp")


def lp_options(lp_solver: str = "ipm") -> dict:
    """Backend options of the convex-rounding LP for :func:`solvers.pipeline.run` (HiGHS ``solver``).

    ``"ipm"`` runs crossover, so the LP solution is a vertex (few fractional weights, as rounding
    wants). Only for LPs: with ``solver`` set, HiGHS ignores integrality.
    """
    if lp_solver not in LP_SOLVERS:
        raise ValueError(f"lp_solver must be one of {LP_SOLVERS}, got {lp_solver!r}")
    return {"options": {"solver": lp_solver, **({"run_crossover": "on"} if lp_solver == "ipm" else {})}}


def relaxed_weights(instance: ConvexRoundingInstance, model: Model) -> np.ndarray:
    """The program's weights of a relaxed model: ``extras["weights"]`` when decoded, else the split of ``coef``."""
    w = model.extras.get("weights") if model.extras else None
    if w is None or np.shape(w) != (instance.info["n_weights"],):
        w = instance.program_weights(model)
    return np.clip(np.asarray(w, dtype=float), 0.0, 1.0)


def randomized_rounding_method(instance: ConvexRoundingInstance, source, limits: Limits,
                               seed: int) -> tuple[Model | None, str]:
    """Catalog method ``"randomized_rounding"``: best of ``spec.n_draws`` draws from the relaxed fit.

    Draws are scored with the LP's intercept; the best draw within the budget is then given its
    best intercept (:meth:`ConvexRoundingInstance.round`, which keeps it in the class). When no
    draw meets the budget, the deterministic rounding of the LP model is returned. The message
    reports the Proposition 1 bound on ``E[L(c)]``; ``extras["rounding"]`` holds the summary.
    """
    if source is None or source.model is None:
        return None, "no relaxed model to round" + (f" ({source.status.value}: {source.message})" if source else "")
    spec = instance.spec
    w_hat = relaxed_weights(instance, source.model)
    out = randomized_rounding(w_hat, instance.design(), instance.y, margin=spec.margin,
                              intercept=source.model.intercept, sample_weight=instance.weights,
                              n_draws=int(spec.n_draws), seed=seed, max_l1=spec.max_size, limits=limits)
    extras = {"rounding": out.summary(), "relaxed_coef": source.model.coef,
              "n_binary_weights": int(np.sum((w_hat <= INTEGRAL_TOL) | (w_hat >= 1 - INTEGRAL_TOL)))}
    message = (f"best of {out.losses.size} randomized roundings ({out.n_fractional} fractional weights): "
               f"L = {out.loss:.6g} at the LP intercept, mean {out.mean_loss:.6g}; Proposition 1: "
               f"E[L] <= {out.bound_prop1:.6g} (eq. (4): {out.bound_variance:.6g}); E||c'||_1 = {out.expected_l1:.6g}")
    if out.best_within_budget:
        coef = ternary_from_binary(out.weights) if spec.weights == "ternary" else out.weights
        model = instance.round(Model(coef, source.model.intercept))
    else:
        model = instance.round(source.model)
        message += f"; no draw met max_size={spec.max_size}: returned the deterministic rounding"
    return replace(model, extras=extras), message
