"""Unbiased randomized rounding onto the grid (Golovin et al. 2013) of the Facets relaxation.

Golovin, Sculley, McMahan & Young, "Large-scale learning with less RAM via randomization"
(ICML 2013; the text is not in ../shared/papers, so no section is cited): online gradient descent
stores each weight ``beta`` on a grid ``eps Z`` by *randomized rounding*, ``a = eps floor(beta /
eps)``, rounded up to ``a + eps`` with probability ``(beta - a) / eps`` and down to ``a`` otherwise. The rounding is unbiased, ``E[RandomRound(beta)]
= beta``, with variance ``(beta - a)(a + eps - beta) <= eps^2 / 4``; their regret bounds for
online gradient descent on the rounded weights rest on these two facts alone. The Facets paper
(Belahcene et al. 2020) compares with "our implementation of Golovin's approach" (its Table 1,
column *Golo.*, an integral model) without defining that implementation; here it is this
rounding applied once to the optimum of the convex Facets problem (eqs. 8-9, 14), on the Facets
grid ``eps = grid_unit``.

Rounding. With ``w = coef / grid_unit`` (grid steps) of the relaxed model and ``p_j = w_j -
floor(w_j)``, each draw is ``w^_j = floor(w_j) + B_j``, ``B_j ~ Bernoulli(p_j)`` independent, so
``E[w^] = w``, ``Var(w^_j) = p_j (1 - p_j)``, ``|w^_j - w_j| < 1``, and ``w^`` stays in the
integer box ``|w| <= bound`` of the exact program (the box's ends are integers). The intercept
is kept (it is continuous and unpenalised). On the convex-rounding LP (grid 1, box ``[0, 1]``)
the same rule is Chevaleyre et al.'s Figure 1 step 2, which :mod:`solvers.heuristics.rounding`
already implements; this module serves the Facets entries.

Guarantee (proved here from unbiasedness; the Facets analogue of Chevaleyre et al.'s
Proposition 1). Let ``F(w, b) = sum_i v_i loss_i(g x_i . w + b) + lam Omega(w)`` be the Facets
objective (``g`` the grid unit, ``v_i`` the merged row weights, ``Omega`` eq. 14) and
``sigma_i^2 = g^2 sum_j x_ij^2 p_j (1 - p_j)`` the variance of row ``i``'s score. Then

    E[F(w^, b)] <= F(w, b) + Delta,   Delta = sum_i v_i delta_i + lam eps / 2 sum_j p_j (1 - p_j)

* penalty: ``Omega = (1 - eps) Facets + eps (||w||_1 + ||w||^2 / 2)``. Facets (eq. 3) and
  ``|.|`` are linear on every segment ``[k, k + 1]`` and ``w^_j`` only takes that segment's two
  ends, so their expectation is exact; ``E[w^_j^2] = w_j^2 + p_j (1 - p_j)`` gives the rest
  (with equality: plain Facets, ``eps = 0``, has ``E[Omega(w^)] = Omega(w)``);
* hinge ``max(0, margin - y s)`` is 1-Lipschitz in the score: ``delta_i = E|s^_i - s_i| <= sigma_i``;
* logistic ``log(1 + e^{-y s})`` is 1-Lipschitz and ``1/4``-smooth:
  ``delta_i = min(sigma_i, sigma_i^2 / 8)`` (second-order Taylor with ``E[s^ - s] = 0``);
* least squares ``(y - s)^2 / 2``: ``delta_i = sigma_i^2 / 2`` with equality.

When ``(w, b)`` is the optimum of the relaxation, ``F(w, b)`` is below the exact (integer)
optimum, so ``E[F(w^, b)] <= OPT + Delta``: the gap of one draw is at most ``Delta`` on average.
The catalog method returns the best of :data:`N_DRAWS` draws, hence never above their mean.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from formulations.base import Model
from formulations.constraints import binding
from formulations.penalties.facets import SCF_SQUARE
from solvers.limits import Limits

#: draws of the catalog method (the best, by the true objective, is returned)
N_DRAWS = 100
#: draws scored between two looks at the clock
_CLOCK_EVERY = 10
#: a grid step within this of an integer is integral (no randomness)
_INTEGRAL_TOL = 1e-9


def random_round(w: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """``n_draws`` independent unbiased roundings of ``w`` onto the integers, shape ``(n_draws, d)``.

    ``floor(w_j) + 1[u < w_j - floor(w_j)]`` with ``u ~ U[0, 1)`` (Golovin et al. 2013's rounding
    with grid ``eps = 1``; for another grid pass ``w / eps`` and multiply back). Coordinates within
    1e-9 of an integer are that integer in every draw.
    """
    w = np.asarray(w, dtype=float)
    if w.ndim != 1 or not np.isfinite(w).all():
        raise ValueError(f"w must be a finite 1-D vector of grid steps, got shape {w.shape}")
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 1:
        raise ValueError(f"n_draws must be an integer >= 1, got {n_draws!r}")
    near = np.rint(w)
    w = np.where(np.abs(w - near) <= _INTEGRAL_TOL, near, w)
    low = np.floor(w)
    return low[None, :] + (rng.random((int(n_draws), w.size)) < (w - low)[None, :])


def rounding_variance(w: np.ndarray) -> np.ndarray:
    """``Var(w^_j) = p_j (1 - p_j)`` with ``p_j = w_j - floor(w_j)`` (0 on integral coordinates)."""
    w = np.asarray(w, dtype=float)
    near = np.rint(w)
    p = np.where(np.abs(w - near) <= _INTEGRAL_TOL, 0.0, w - np.floor(w))
    return p * (1.0 - p)


@dataclass(frozen=True)
class RoundingBound:
    """The guarantee of the module docstring at one relaxed model.

    Attributes
    ----------
    relaxed_objective : ``F(w, b)``, the Facets objective at the relaxed model.
    loss_excess, penalty_excess : the two parts of ``Delta`` (the penalty part is exact).
    bound : ``F(w, b) + Delta >= E[F(w^, b)]``.
    exact : True when ``bound`` is the expectation itself (least squares, or no fractional step).
    n_fractional : grid steps strictly between two integers (the random ones).
    """

    relaxed_objective: float
    loss_excess: float
    penalty_excess: float
    bound: float
    exact: bool
    n_fractional: int


def _check_facets(instance) -> None:
    spec = getattr(instance, "spec", None)
    if not all(hasattr(spec, name) for name in ("grid_unit", "bound", "loss", "lam", "eps")):
        raise TypeError(f"Golovin rounding needs a Facets instance (formulations.facets.Facets(...).instance(X, y)), "
                        f"got {type(instance).__name__}")


def expected_objective_bound(instance, model: Model) -> RoundingBound:
    """``F(w, b) + Delta``, the bound on ``E[F(w^, b)]`` of the module docstring, at ``model``."""
    _check_facets(instance)
    spec = instance.spec
    w = instance.grid_units(model.coef)
    var = rounding_variance(w)
    row_var = spec.grid_unit ** 2 * ((instance.X * instance.X) @ var)  # sigma_i^2
    if spec.loss == "hinge":
        per_row = np.sqrt(row_var)
    elif spec.loss == "logistic":
        per_row = np.minimum(np.sqrt(row_var), row_var / 8.0)
    else:
        per_row = row_var / 2.0
    loss_excess = float(instance.weights @ per_row)
    penalty_excess = float(spec.lam * spec.eps * SCF_SQUARE * var.sum())
    relaxed = float(instance.objective(model))
    n_frac = int(np.count_nonzero(var))
    return RoundingBound(relaxed, loss_excess, penalty_excess, relaxed + loss_excess + penalty_excess,
                         exact=spec.loss == "least_squares" or n_frac == 0, n_fractional=n_frac)


@dataclass(frozen=True)
class GridDraws:
    """Draws of :func:`round_to_grid` and their true objectives (relaxed intercept kept).

    Attributes
    ----------
    steps : (n, d) integer grid steps of every draw (``coef = grid_unit * steps``).
    objectives : (n,) Facets objective ``F(w^, b)`` of every draw.
    violations : (n,) largest operational-constraint violation of every draw (0 when obeyed).
    bound : the :class:`RoundingBound` at the relaxed model.
    """

    steps: np.ndarray
    objectives: np.ndarray
    violations: np.ndarray
    bound: RoundingBound

    @property
    def mean_objective(self) -> float:
        return float(self.objectives.mean())


def round_to_grid(instance, model: Model, n_draws: int = N_DRAWS, seed: int | None = None,
                  limits: Limits | None = None) -> GridDraws:
    """``n_draws`` unbiased roundings of ``model.coef / grid_unit``, each scored by the true objective.

    The intercept of ``model`` is kept. The budget is looked at every :data:`_CLOCK_EVERY` draws
    (at least that many are scored).
    """
    _check_facets(instance)
    spec = instance.spec
    steps = random_round(instance.grid_units(model.coef), n_draws, np.random.default_rng(seed))
    objectives = np.full(steps.shape[0], np.nan)
    done = 0
    for start in range(0, steps.shape[0], _CLOCK_EVERY):
        if start > 0 and limits is not None and limits.expired():
            break
        for k in range(start, min(start + _CLOCK_EVERY, steps.shape[0])):
            objectives[k] = instance.objective(Model(spec.grid_unit * steps[k], model.intercept))
        done = min(start + _CLOCK_EVERY, steps.shape[0])
    steps, objectives = steps[:done], objectives[:done]
    if instance.constraints is None:
        violations = np.zeros(done)
    else:
        violations = np.array([instance.constraints.violation(s, model.intercept) for s in steps])
    return GridDraws(steps, objectives, violations, expected_objective_bound(instance, model))


def golovin_rounding(instance, source, limits: Limits, seed: int) -> tuple[Model | None, str]:
    """Catalog method ``"golovin_rounding"``: best of :data:`N_DRAWS` unbiased roundings of the relaxation.

    ``source`` is the relaxed fit (solved here when None). Among the draws that obey the
    operational constraints, the one of lowest true objective is kept, then given its best
    intercept when that is lower still. ``extras["golovin"]`` holds the relaxed objective, the
    bound ``F(w, b) + Delta`` on one draw's expected objective, the draws' mean and best.
    """
    _check_facets(instance)
    if source is None or source.model is None:
        return None, "no relaxed model to round" + (f" ({source.status.value}: {source.message})" if source else "")
    relaxed = source.model
    U = instance.spec.bound
    if np.any(np.abs(instance.grid_units(relaxed.coef)) > U + 1e-9):  # the prox path does not keep the box
        relaxed = replace(relaxed, coef=np.clip(relaxed.coef, -U * instance.spec.grid_unit, U * instance.spec.grid_unit))
    draws = round_to_grid(instance, relaxed, N_DRAWS, seed, limits)
    obeys = draws.violations <= 1e-6
    if not obeys.any():
        return None, (f"none of {draws.objectives.size} roundings obeys the operational constraints "
                      f"(least violation {draws.violations.min():.3g})")
    best = int(np.flatnonzero(obeys)[np.argmin(draws.objectives[obeys])])
    coef = instance.spec.grid_unit * draws.steps[best]
    kept = Model(coef, relaxed.intercept, {"grid_unit": instance.spec.grid_unit})
    candidates = [kept] + ([instance.with_best_intercept(coef)] if not binding(instance.constraints) else [])
    model = min(candidates, key=instance.objective)
    b = draws.bound
    summary = {"relaxed_objective": b.relaxed_objective, "expected_bound": b.bound, "bound_is_exact": b.exact,
               "mean_objective": draws.mean_objective, "best_objective": float(instance.objective(model)),
               "n_draws": int(draws.objectives.size), "n_fractional": b.n_fractional}
    message = (f"best of {draws.objectives.size} unbiased roundings onto the grid ({b.n_fractional} fractional "
               f"steps): objective {summary['best_objective']:.6g}, draws' mean {draws.mean_objective:.6g}; "
               f"E[objective] {'=' if b.exact else '<='} {b.bound:.6g} (relaxation {b.relaxed_objective:.6g})")
    return replace(model, extras={**model.extras, "golovin": summary}), message
