"""Supermodular local search (Figure 6) and random-restart hill climbing for ternary weights.

Chevaleyre, Koriche & Zucker (2013), section 4.

The objective is Proposition 3's ``f(c) = sum_t s_t max[0, margin - y_t(<c, x_t> - r)]``, i.e.
``margin * L(c; S)``; losses are reported as ``L = f / margin`` so they compare with the LP / ILP
objectives of :class:`formulations.rounding.ConvexRounding`.

* Figure 6 (binary weights, class ``C_r[0,1]``): start at ``c = 0``; repeatedly take the best
  single flip ``c*`` (Hamming distance 1) and move while ``f(c*) < (1 - eps / d^2) f(c)``.
  ``f`` is supermodular for non-negative features (Proposition 3's proof needs
  ``<c, x_t>`` monotone in ``c``). Theorem 4 is printed as ``L(c) <= (1/3 - o(1)) L(c*)``, which
  cannot hold for a minimisation (ratio below 1); it is Vondrák's maximisation guarantee, so no
  approximation ratio is claimed here.
* Ternary weights (class ``C_0[-1,0,+1]``, section 4 end): the hinge is no longer supermodular;
  random-restart hill climbing runs the same local search over ``{-1,0,+1}^n`` (each move changes
  one coordinate to one of its two other values) from ``0`` and from random sparse starts, and
  keeps the best.

Incremental evaluation: the margins ``g_t = margin - y_t(<c, x_t> + b)`` are kept; the change of
``f`` for moving coordinate ``j`` by ``delta`` is
``sum_{t: x_tj != 0} s_t (max(0, g_t - y_t delta x_tj) - max(0, g_t))``, computed for every ``j``
at once from the CSC non-zeros: one pass costs ``O(nnz(X))`` (``O(m d)`` dense), and accepting a
move updates ``g`` in ``O(nnz(x_j))``, instead of the ``O(m d^2)`` of re-scoring each neighbour.

Catalog: :func:`local_search_method` (method ``"local_search"``) and :func:`heuristic` (the start
of the exact solve) run these searches on a :class:`~formulations.rounding.ConvexRoundingInstance`;
with a learned intercept they alternate a search at fixed intercept with the exact best intercept
(:func:`formulations.intercept.hinge_intercept`) until the loss stops decreasing.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from formulations.base import Model
from formulations.rounding import ConvexRoundingInstance
from formulations.validation import check_training_set
from solvers.limits import Limits


@dataclass
class LocalSearchOutcome:
    """Result of a local search (or the best of several restarts).

    Attributes
    ----------
    weights : (d,) weights found (binary in {0,1} or ternary in {-1,0,+1}).
    loss : ``L(weights; S) = f(weights) / margin``.
    trajectory : losses after each accepted move of the returned run (first entry: start).
    n_moves : accepted moves of the returned run; n_passes : neighbourhood evaluations, all runs.
    converged : True when the run stopped on Figure 6's rule (not on ``max_moves``).
    restart_losses : final loss of every run (one entry for a single search).
    """

    weights: np.ndarray
    loss: float
    trajectory: np.ndarray
    n_moves: int
    n_passes: int
    converged: bool
    restart_losses: np.ndarray = field(default_factory=lambda: np.zeros(0))


class _Margins:
    """Hinge margins ``g_t`` of the current weights with O(nnz) evaluation of all single moves."""

    def __init__(self, X, y: np.ndarray, s: np.ndarray, margin: float, intercept: float, c: np.ndarray):
        self.X = sp.csc_matrix(X, dtype=float)
        self.rows = self.X.indices
        self.cols = np.repeat(np.arange(self.X.shape[1]), np.diff(self.X.indptr))
        self.yx = self.X.data * y[self.rows]  # y_t x_tj per non-zero
        self.s_rows = s[self.rows]
        self.y, self.s, self.margin = y, s, margin
        self.reset(c, intercept)

    def reset(self, c: np.ndarray, intercept: float) -> "_Margins":
        """Margins of new weights ``c`` (one O(nnz) product)."""
        self.g = self.margin - self.y * (np.asarray(self.X @ c).ravel() + intercept)
        return self

    @property
    def f(self) -> float:
        return float(self.s @ np.maximum(0.0, self.g))

    def move_changes(self, delta: np.ndarray) -> np.ndarray:
        """``f(c + delta_j e_j) - f(c)`` for every ``j`` (shape (d,)), one pass over the non-zeros."""
        g = self.g[self.rows]
        change = np.maximum(0.0, g - delta[self.cols] * self.yx) - np.maximum(0.0, g)
        return np.bincount(self.cols, weights=self.s_rows * change, minlength=self.X.shape[1])

    def apply(self, j: int, delta: float) -> None:
        lo, hi = self.X.indptr[j], self.X.indptr[j + 1]
        self.g[self.rows[lo:hi]] -= delta * self.yx[lo:hi]


def _search(state: _Margins, c: np.ndarray, alternatives, epsilon: float, max_moves: int,
            max_l1: float | None = None, limits: Limits | None = None):
    """Figure 6 loop: best move among ``alternatives(c)`` while it improves by the factor ``eps/d^2``.

    With ``max_l1 = k`` moves that would take ``||c||_1`` above ``k`` are not considered. The
    loop also stops (not converged) when ``limits`` has expired; ``c`` is then the last accepted point.
    """
    d = c.size
    factor = 1.0 - epsilon / float(d) ** 2
    f = state.f
    trajectory, passes, converged = [f], 0, False
    while len(trajectory) <= max_moves:
        if limits is not None and limits.expired():
            break
        if f <= 0.0:
            converged = True
            break
        best_change, best_j, best_delta = np.inf, -1, 0.0
        full = max_l1 is not None and np.abs(c).sum() + 1 > max_l1 + 1e-9
        for delta in alternatives(c):
            change = state.move_changes(delta)
            passes += 1
            if full:
                change[np.abs(c + delta) > np.abs(c)] = np.inf
            j = int(np.argmin(change))
            if change[j] < best_change:
                best_change, best_j, best_delta = float(change[j]), j, float(delta[j])
        if not f + best_change < factor * f:
            converged = True
            break
        c[best_j] += best_delta
        state.apply(best_j, best_delta)
        f = state.f  # recomputed in O(m): no drift from accumulated changes
        trajectory.append(f)
    return c, np.asarray(trajectory), passes, converged


def _prepare(X, y, sample_weight, margin, epsilon, max_moves, max_l1):
    X, y, s = check_training_set(X, y, sample_weight)
    if max_l1 is not None and not (np.isfinite(max_l1) and max_l1 >= 0):
        raise ValueError(f"max_l1 must be None or a budget k >= 0 on the number of non-zero weights, got {max_l1!r}")
    if not (np.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0 (the hinge margin), got {margin!r}")
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be > 0 (Figure 6 accepts moves improving f by a factor eps/d^2), "
                         f"got {epsilon!r}")
    d = X.shape[1]
    max_moves = 10 * d if max_moves is None else int(max_moves)
    if max_moves < 0:
        raise ValueError(f"max_moves must be >= 0, got {max_moves}")
    return X, y, s, max_moves


def _start(start, d: int, allowed: tuple[float, ...], max_l1: float | None) -> np.ndarray:
    if start is None:
        return np.zeros(d)
    c = np.asarray(start, dtype=float).copy()
    if c.shape != (d,) or not np.isin(c, allowed).all():
        raise ValueError(f"start must be a vector of {d} values in {allowed}")
    if max_l1 is not None and np.abs(c).sum() > max_l1 + 1e-9:
        raise ValueError(f"start has {int(np.abs(c).sum())} non-zeros, more than max_l1={max_l1}")
    return c


def supermodular_local_search(X, y: np.ndarray, *, margin: float, intercept: float = 0.0,
                              sample_weight: np.ndarray | None = None, epsilon: float = 1.0,
                              start: np.ndarray | None = None, max_moves: int | None = None,
                              max_l1: float | None = None, limits: Limits | None = None) -> LocalSearchOutcome:
    """Supermodular local search of Figure 6 over binary weights ``c in {0,1}^d``.

    Parameters
    ----------
    X : (m, d) features (dense or sparse; non-negative for Proposition 3's supermodularity; the
        doubled features of section 2 run too, without that guarantee); y : (m,) in {-1,+1}.
    margin : hinge margin; intercept : ``b = -r`` (the fixed threshold ``r`` of ``C_r[0,1]``).
    epsilon : Figure 6's ``eps``: a move is taken while ``f(c*) < (1 - eps/d^2) f(c)``.
    start : initial binary vector (Figure 6: ``0``); max_moves : cap on accepted moves (10 d).
    max_l1 : sparsity budget ``k`` (section 3.2's class): moves beyond ``||c||_1 = k`` are skipped.
    limits : stop at the current point when it has expired.
    """
    X, y, s, max_moves = _prepare(X, y, sample_weight, margin, epsilon, max_moves, max_l1)
    c = _start(start, X.shape[1], (0.0, 1.0), max_l1)
    state = _Margins(X, y, s, margin, intercept, c)
    c, trajectory, passes, converged = _search(state, c, lambda c: (1.0 - 2.0 * c,), epsilon, max_moves, max_l1,
                                               limits)
    return LocalSearchOutcome(weights=c, loss=float(trajectory[-1] / margin), trajectory=trajectory / margin,
                              n_moves=trajectory.size - 1, n_passes=passes, converged=converged,
                              restart_losses=np.array([trajectory[-1] / margin]))


def _ternary_moves(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two moves of each coordinate to its other values in {-1,0,+1}: 0 -> +-1, +1 -> 0/-1, -1 -> 0/+1."""
    first = np.where(c == 0, 1.0, -c)  # to +1 from 0, to 0 from +-1
    second = np.where(c == 0, -1.0, -2.0 * c)  # to -1 from 0, to the opposite sign from +-1
    return first, second


def ternary_hill_climbing(X, y: np.ndarray, *, margin: float, intercept: float = 0.0,
                          sample_weight: np.ndarray | None = None, n_restarts: int = 10,
                          start_nonzeros: int = 10, epsilon: float = 1.0, max_moves: int | None = None,
                          max_l1: float | None = None, seed: int | None = None, start: np.ndarray | None = None,
                          limits: Limits | None = None) -> LocalSearchOutcome:
    """Random-restart hill climbing over ternary weights ``c in {-1,0,+1}^n`` (section 4).

    Run 0 starts at ``start`` (default ``c = 0``, Figure 6's initialisation); each of the
    ``n_restarts`` further runs starts from ``start_nonzeros`` random coordinates set to random
    signs. Each run is the local search of Figure 6 with the ternary neighbourhood (``2n`` moves
    per pass). Returns the best run; ``restart_losses`` holds every run's final ``L``.

    Parameters
    ----------
    X : (m, n) features, dense or sparse (not doubled); y : (m,) in {-1,+1}; margin : hinge margin;
    intercept : fixed ``b`` (``0`` for the class ``C_0[-1,0,+1]``); seed : numpy seed.
    max_l1 : sparsity budget ``k`` on ``||c||_1`` (random starts use at most ``floor(k)`` non-zeros).
    limits : no further restart, and no further move, once it has expired.
    """
    X, y, s, max_moves = _prepare(X, y, sample_weight, margin, epsilon, max_moves, max_l1)
    if not isinstance(n_restarts, (int, np.integer)) or n_restarts < 0:
        raise ValueError(f"n_restarts must be an integer >= 0, got {n_restarts!r}")
    if not isinstance(start_nonzeros, (int, np.integer)) or start_nonzeros < 1:
        raise ValueError(f"start_nonzeros must be an integer >= 1, got {start_nonzeros!r}")
    n = X.shape[1]
    first = _start(start, n, (-1.0, 0.0, 1.0), max_l1)
    rng = np.random.default_rng(seed)
    best, finals, total_passes = None, [], 0
    for run in range(n_restarts + 1):
        if run > 0 and limits is not None and limits.expired():
            break
        c = first.copy() if run == 0 else np.zeros(n)
        if run > 0:
            size = min(start_nonzeros, n, n if max_l1 is None else int(np.floor(max_l1 + 1e-9)))
            support = rng.choice(n, size=size, replace=False)
            c[support] = rng.choice((-1.0, 1.0), size=support.size)
        state = _Margins(X, y, s, margin, intercept, c) if run == 0 else state.reset(c, intercept)
        c, trajectory, passes, converged = _search(state, c, _ternary_moves, epsilon, max_moves, max_l1, limits)
        total_passes += passes
        finals.append(trajectory[-1] / margin)
        if best is None or finals[-1] < best[1][-1] / margin:
            best = (c.copy(), trajectory, converged)
    c, trajectory, converged = best
    return LocalSearchOutcome(weights=c, loss=float(trajectory[-1] / margin), trajectory=trajectory / margin,
                              n_moves=trajectory.size - 1, n_passes=total_passes, converged=converged,
                              restart_losses=np.asarray(finals))


# ------------------------------------------------------------------------- catalog functions
#: most search / best-intercept alternations with a learned intercept
MAX_ALTERNATIONS = 10


def _search_instance(instance: ConvexRoundingInstance, intercept: float, start: np.ndarray | None,
                     n_restarts: int, seed: int, limits: Limits) -> LocalSearchOutcome:
    """The class's local search at a fixed intercept: Figure 6 (binary) or hill climbing (ternary)."""
    spec = instance.spec
    common = dict(margin=spec.margin, intercept=intercept, sample_weight=instance.weights, epsilon=spec.epsilon,
                  max_moves=spec.max_moves, max_l1=spec.budget, start=start, limits=limits)
    if spec.weights == "binary":
        return supermodular_local_search(instance.X, instance.y, **common)
    return ternary_hill_climbing(instance.X, instance.y, n_restarts=n_restarts, start_nonzeros=int(spec.start_nonzeros),
                                 seed=seed, **common)


def search(instance: ConvexRoundingInstance, intercept: float, limits: Limits, seed: int,
           n_restarts: int | None = None) -> tuple[Model, str]:
    """Local search on an instance, alternating with the exact best intercept when it is learned.

    The first search runs at ``intercept`` (``-threshold`` when fixed) with ``spec.n_restarts``
    restarts; with a learned intercept, each further round sets the intercept to
    :meth:`ConvexRoundingInstance.best_intercept` of the current weights and searches again from
    them (no restarts), while the loss decreases. Every point visited lies in the class and the budget.
    """
    spec = instance.spec
    restarts = int(spec.n_restarts if n_restarts is None else n_restarts)
    if spec.threshold is not None:
        intercept = spec.fixed_intercept
    out = _search_instance(instance, intercept, None, restarts, seed, limits)
    extras = {"restart_losses": out.restart_losses, "n_moves": out.n_moves, "n_passes": out.n_passes,
              "converged": out.converged}
    model = instance.round(Model(out.weights, intercept))  # keeps the class; best intercept if learned
    value, rounds = instance.objective(model), 1
    while spec.threshold is None and rounds < MAX_ALTERNATIONS and not limits.expired():
        out = _search_instance(instance, model.intercept, model.coef, 0, seed, limits)
        candidate = instance.round(Model(out.weights, model.intercept))
        candidate_value = instance.objective(candidate)
        rounds += 1
        extras["n_moves"] += out.n_moves
        extras["n_passes"] += out.n_passes
        if not candidate_value < value - 1e-12:
            break
        model, value = candidate, candidate_value
    kind = "Figure 6 local search" if spec.weights == "binary" else f"ternary hill climbing ({restarts} restarts)"
    message = f"{kind}: L = {value:.6g}"
    if spec.threshold is None:
        message += f" after {rounds} search / best-intercept rounds"
    if limits.expired():
        message += " (stopped by the time limit)"
    return replace(model, extras={**extras, "rounds": rounds}), message


def local_search_method(instance: ConvexRoundingInstance, source, limits: Limits, seed: int) -> tuple[Model | None, str]:
    """Catalog method ``"local_search"``: :func:`search` from the relaxed fit's intercept (if any).

    Without a relaxed model the first intercept is the best one of the zero model.
    """
    if source is not None and source.model is not None and np.isfinite(source.model.intercept):
        intercept = float(source.model.intercept)
    else:
        intercept = instance.best_intercept(np.zeros(instance.n_features))
    return search(instance, intercept, limits, seed)


def heuristic(instance: ConvexRoundingInstance, limits: Limits, seed: int) -> Model | None:
    """Start of the exact solve: :func:`search` from the zero model (Figure 6's initialisation)."""
    model, _ = search(instance, instance.best_intercept(np.zeros(instance.n_features)), limits, seed)
    return model
