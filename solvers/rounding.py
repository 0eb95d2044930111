"""Randomized and deterministic rounding of a convex-rounding LP solution (Figure 1, step 2).

Chevaleyre, Koriche & Zucker, ``papers/ternary-weights-convex-rounding.txt``, section 3.

Given the LP optimum ``w_hat in [0,1]^d`` of :class:`formulations.rounding.ConvexRounding`,
randomized rounding draws ``c_i ~ Bernoulli(w_hat_i)`` independently, so ``E[c] = w_hat``, and

* Proposition 1: ``E[L(c; S)] <= L(c*; S) + m X_1 / (2 gamma)`` with ``X_1 = max_t ||x_t||_1``
  and ``c*`` the binary optimum. The proof (eqs. (1)-(7)) bounds ``E[L(c)] - L(w_hat)``, and
  ``L(w_hat) <= L(c*)``, so the computable form ``L(w_hat) + m X_1 / (2 gamma)`` is reported;
  the intermediate eq. (4), ``L(w_hat) + (1/gamma) sum_t sqrt(sum_i x_ti^2 w_i (1 - w_i))``, is
  tighter and reported too. With sample weights ``s_t`` every sum over ``t`` is weighted.
* Proposition 2 (sparse variant): ``E[||c||_1] = sum_i w_hat_i``, which is ``k`` when the budget
  ``||w||_1 <= k`` binds.

Only the fractional coordinates of ``w_hat`` are random: at an LP vertex there are at most as
many as rows, so every draw's scores are ``X_fixed c_fixed + X_F c_F`` with a small ``X_F``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from formulations.rounding import check_training_set, cumulative_hinge_loss

_FRACTIONAL_TOL = 1e-9


@dataclass
class RoundingOutcome:
    """Randomized rounding: the best draw and the distribution over all draws.

    Attributes
    ----------
    weights : (d,) the best draw ``c in {0,1}^d`` (lowest ``L_gamma``; among the draws within
        ``max_l1`` when a budget was given and at least one draw meets it).
    loss : ``L_gamma(weights; S)``.
    losses : (n_draws,) ``L_gamma`` of every draw; l1_norms : (n_draws,) ``||c||_1`` of every draw.
    error_rates : (n_draws,) weighted training error of every draw (a sample counts as correct
        when ``sign(<c, x_t> + b) == y_t`` with a zero score predicting -1, the estimators' rule).
    relaxed_loss : ``L_gamma(w_hat; S)``.
    expected_l1 : ``sum_i w_hat_i = E||c||_1`` (Proposition 2).
    bound_prop1 : ``L(w_hat) + sum_t s_t X_1 / (2 gamma)`` >= ``E[L(c)]`` (Proposition 1).
    bound_variance : ``L(w_hat) + (1/gamma) sum_t s_t sqrt(Var <c, x_t>)`` (eq. (4)).
    n_fractional : number of coordinates of ``w_hat`` strictly inside (0, 1).
    within_budget : (n_draws,) bool, draw meets ``max_l1`` (all True without a budget).
    best_within_budget : whether ``weights`` meets the budget.
    seed : the seed used; best : index of the best draw.
    draws : (n_draws, d) bool draws when ``keep_draws`` was set, else None.
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
                "n_fractional": self.n_fractional, "n_draws": int(self.losses.size)}


def _check_gamma(gamma: float) -> None:
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a finite number > 0 (the hinge margin), got {gamma!r}")


def _check_weights(w_hat: np.ndarray, d: int) -> np.ndarray:
    w = np.asarray(w_hat, dtype=float)
    if w.shape != (d,):
        raise ValueError(f"w_hat has shape {w.shape}; the design matrix has {d} columns")
    if not np.isfinite(w).all() or (w < -1e-6).any() or (w > 1 + 1e-6).any():
        raise ValueError("w_hat must lie in [0, 1]^d (the convex-rounding LP solution); for ternary "
                         "weights pass the doubled weights and the doubled design")
    return np.clip(w, 0.0, 1.0)


def rounding_bounds(w_hat: np.ndarray, X, y: np.ndarray, *, gamma: float, intercept: float = 0.0,
                    sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """Upper bounds on ``E[L(c)]`` for ``c ~ Bernoulli(w_hat)``: Proposition 1 and its eq. (4).

    Returns ``{"relaxed_loss": L(w_hat), "bound_prop1": L(w_hat) + sum_t s_t X_1 / (2 gamma),
    "bound_variance": L(w_hat) + (1/gamma) sum_t s_t sqrt(sum_i x_ti^2 w_i (1 - w_i))}``.
    """
    X, y, s = check_training_set(X, y, sample_weight)
    _check_gamma(gamma)
    w = _check_weights(w_hat, X.shape[1])
    relaxed = cumulative_hinge_loss(w, X, y, gamma=gamma, intercept=intercept, sample_weight=s)
    if sp.issparse(X):
        row_l1 = np.asarray(abs(X).sum(axis=1)).ravel()
        variance = np.asarray(X.multiply(X) @ (w * (1 - w))).ravel()
    else:
        row_l1 = np.abs(X).sum(axis=1)
        variance = (X * X) @ (w * (1 - w))
    x1 = float(row_l1.max())
    return {"relaxed_loss": relaxed,
            "bound_prop1": relaxed + float(s.sum()) * x1 / (2.0 * gamma),
            "bound_variance": relaxed + float(s @ np.sqrt(variance)) / gamma}


def randomized_rounding(w_hat: np.ndarray, X, y: np.ndarray, *, gamma: float, intercept: float = 0.0,
                        sample_weight: np.ndarray | None = None, n_draws: int = 100, seed: int | None = None,
                        max_l1: float | None = None, keep_draws: bool = False) -> RoundingOutcome:
    """Randomized rounding of Figure 1 step (2): ``n_draws`` independent ``c ~ Bernoulli(w_hat)``.

    Parameters
    ----------
    w_hat : (d,) LP solution in ``[0,1]^d`` (for ternary weights: the doubled weights).
    X : (m, d) design the weights act on (for ternary weights: the doubled features), dense or
        sparse; y : (m,) labels in {-1,+1}; gamma : hinge margin; intercept : ``b = -r``.
    n_draws : number of draws (>= 1); seed : seed of ``numpy.random.default_rng``.
    max_l1 : sparsity budget ``k``; the best draw is taken among draws with ``||c||_1 <= k``
        when there is one (Bernoulli draws meet it only on average, Proposition 2).
    keep_draws : keep the (n_draws, d) boolean draws in the outcome (memory ``n_draws * d``).
    """
    X, y, s = check_training_set(X, y, sample_weight)
    _check_gamma(gamma)
    if not isinstance(n_draws, (int, np.integer)) or n_draws < 1:
        raise ValueError(f"n_draws must be an integer >= 1, got {n_draws!r}")
    d = X.shape[1]
    w = _check_weights(w_hat, d)
    rng = np.random.default_rng(seed)
    fractional = np.flatnonzero((w > _FRACTIONAL_TOL) & (w < 1 - _FRACTIONAL_TOL))
    fixed = (w >= 1 - _FRACTIONAL_TOL).astype(float)
    base_score = np.asarray(X @ fixed).ravel() + float(intercept)
    X_frac = sp.csr_matrix(X[:, fractional]) if sp.issparse(X) else X[:, fractional]
    p = w[fractional]
    chunk = max(1, int(4e6 // max(1, X.shape[0] + fractional.size)))
    losses = np.empty(n_draws)
    l1 = np.empty(n_draws)
    errors = np.empty(n_draws)
    kept = np.zeros((n_draws, fractional.size), bool) if keep_draws else None
    best, best_key, best_draw = -1, (True, np.inf), None
    for start in range(0, n_draws, chunk):
        draws = rng.random((min(chunk, n_draws - start), fractional.size)) < p  # (chunk, |F|)
        scores = base_score[None, :] + np.asarray(X_frac @ draws.T.astype(float)).T  # (chunk, m)
        block = slice(start, start + draws.shape[0])
        losses[block] = (np.maximum(0.0, gamma - y[None, :] * scores) / gamma) @ s
        errors[block] = ((scores > 0) != (y[None, :] > 0)) @ s / s.sum()
        l1[block] = fixed.sum() + draws.sum(axis=1)
        if kept is not None:
            kept[block] = draws
        over = l1[block] > max_l1 + 1e-9 if max_l1 is not None else np.zeros(draws.shape[0], bool)
        i = int(np.lexsort((losses[block], over))[0])  # within budget first, then lowest loss
        if (bool(over[i]), losses[block][i]) < best_key:
            best, best_key, best_draw = start + i, (bool(over[i]), losses[block][i]), draws[i].copy()
    within = np.ones(n_draws, bool) if max_l1 is None else l1 <= max_l1 + 1e-9
    c = fixed.copy()
    c[fractional] = best_draw
    full = None
    if kept is not None:
        full = np.repeat(fixed[None, :] > 0, n_draws, axis=0)
        full[:, fractional] = kept
    bounds = rounding_bounds(w, X, y, gamma=gamma, intercept=intercept, sample_weight=s)
    return RoundingOutcome(weights=c, loss=float(losses[best]), losses=losses, l1_norms=l1, error_rates=errors,
                           relaxed_loss=bounds["relaxed_loss"], expected_l1=float(w.sum()),
                           bound_prop1=bounds["bound_prop1"], bound_variance=bounds["bound_variance"],
                           n_fractional=int(fractional.size), within_budget=within,
                           best_within_budget=bool(within[best]), seed=seed, best=best, draws=full)


def deterministic_rounding(w_hat: np.ndarray, *, cutoff: float = 0.5, max_l1: float | None = None) -> np.ndarray:
    """Deterministic rounding ``c_i = 1[w_hat_i >= cutoff]``, keeping the ``floor(k)`` largest under a budget.

    Returns (d,) float weights in {0,1} with ``||c||_1 <= max_l1`` when a budget is given (ties
    broken by index).
    """
    w = np.asarray(w_hat, dtype=float)
    if w.ndim != 1:
        raise ValueError(f"w_hat must be a 1-D vector, got shape {w.shape}")
    if not 0.0 < cutoff <= 1.0:
        raise ValueError(f"cutoff must lie in (0, 1], got {cutoff}")
    c = (w >= cutoff).astype(float)
    if max_l1 is not None and c.sum() > max_l1:
        keep = int(np.floor(max_l1 + 1e-9))
        order = np.argsort(-w, kind="stable")[:keep]
        c = np.zeros_like(w)
        c[order] = 1.0
    return c
