"""Local search (Figure 6) and ternary hill climbing against enumeration and brute-force neighbourhoods."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from formulations.base import Model
from formulations.intercept import hinge_intercept
from formulations.rounding import ConvexRounding, cumulative_hinge_loss
from solvers.limits import Limits
from solvers.heuristics.local_search import heuristic, search, supermodular_local_search, ternary_hill_climbing
from solvers.pipeline import run, solve_exact


def _data(m=30, n=6, seed=0, labels=None):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (m, n)).astype(float)
    if labels is None:
        y = np.where(X @ rng.choice([-1.0, 1.0], n) + rng.normal(0, 1.0, m) > 0, 1.0, -1.0)
    else:
        y = np.full(m, float(labels))
    return X, y


def _f(c, X, y, margin, intercept=0.0):
    """Proposition 3's f(c) = margin * L_margin(c), from scratch."""
    return margin * cumulative_hinge_loss(c, X, y, margin=margin, intercept=intercept)


def _enumerate(X, y, margin, values, intercept=0.0):
    C = np.array(list(itertools.product(values, repeat=X.shape[1])), dtype=float)
    return (np.maximum(0.0, margin - y * (C @ X.T + intercept)) / margin).sum(axis=1).min()


def test_hinge_is_supermodular_on_nonnegative_features():
    """Proposition 3, checked on every pair of the lattice {0,1}^5."""
    X, y = _data(m=12, n=5, seed=1)
    C = [np.array(c, float) for c in itertools.product((0, 1), repeat=5)]
    f = {tuple(c): _f(c, X, y, 1.5, intercept=-2.0) for c in C}
    for a, b in itertools.product(C, C):
        join, meet = np.maximum(a, b), np.minimum(a, b)
        assert f[tuple(join)] + f[tuple(meet)] >= f[tuple(a)] + f[tuple(b)] - 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_figure6_never_increases_f_and_stops_at_a_local_optimum(seed):
    X, y = _data(seed=seed)
    margin, intercept, eps = 2.0, -3.0, 1.0
    out = supermodular_local_search(X, y, margin=margin, intercept=intercept, epsilon=eps)
    assert np.all(np.diff(out.trajectory) < 0)
    assert out.trajectory[0] == pytest.approx(_f(np.zeros(6), X, y, margin, intercept) / margin)
    assert out.loss == pytest.approx(cumulative_hinge_loss(out.weights, X, y, margin=margin, intercept=intercept))
    assert out.converged and set(np.unique(out.weights)) <= {0.0, 1.0}
    f = _f(out.weights, X, y, margin, intercept)
    for j in range(6):  # Figure 6's stopping rule, by brute-force re-scoring of every neighbour
        flipped = out.weights.copy()
        flipped[j] = 1 - flipped[j]
        assert _f(flipped, X, y, margin, intercept) >= (1 - eps / 36) * f - 1e-9
    assert out.loss >= _enumerate(X, y, margin, (0, 1), intercept) - 1e-9


@pytest.mark.parametrize("label, seed", [(1, 0), (1, 1), (-1, 2)])
def test_figure6_is_exact_on_monotone_instances(label, seed):
    """All labels equal and x >= 0: f is monotone, and the local search reaches the enumerated optimum."""
    X, y = _data(m=15, n=7, seed=seed, labels=label)
    margin, intercept = 3.0, -8.0
    out = supermodular_local_search(X, y, margin=margin, intercept=intercept)
    assert out.loss == pytest.approx(_enumerate(X, y, margin, (0, 1), intercept), abs=1e-9)


def test_sparse_and_dense_give_the_same_search():
    X, y = _data(m=50, n=20, seed=4)
    a = supermodular_local_search(X, y, margin=1.0, intercept=-4.0)
    b = supermodular_local_search(sp.csr_matrix(X), y, margin=1.0, intercept=-4.0)
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_allclose(a.trajectory, b.trajectory)


def test_max_moves_and_start():
    X, y = _data(seed=5)
    out = supermodular_local_search(X, y, margin=1.0, intercept=-2.0, max_moves=1)
    assert out.n_moves <= 1
    start = np.ones(6)
    out = supermodular_local_search(X, y, margin=1.0, intercept=-2.0, start=start)
    assert out.trajectory[0] == pytest.approx(cumulative_hinge_loss(start, X, y, margin=1.0, intercept=-2.0))
    np.testing.assert_array_equal(start, np.ones(6))  # the caller's start is not modified


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ternary_hill_climbing(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 5))
    y = np.where(X @ rng.integers(-1, 2, 5) + rng.normal(0, 0.5, 25) > 0, 1.0, -1.0)
    margin = 1.0
    out = ternary_hill_climbing(X, y, margin=margin, n_restarts=4, start_nonzeros=3, seed=seed)
    assert set(np.unique(out.weights)) <= {-1.0, 0.0, 1.0}
    assert out.restart_losses.shape == (5,)
    assert out.loss == pytest.approx(out.restart_losses.min())
    assert out.loss == pytest.approx(cumulative_hinge_loss(out.weights, X, y, margin=margin))
    assert np.all(np.diff(out.trajectory) < 0)
    assert out.loss <= cumulative_hinge_loss(np.zeros(5), X, y, margin=margin)
    assert out.loss >= _enumerate(X, y, margin, (-1, 0, 1)) - 1e-9
    f = _f(out.weights, X, y, margin)
    for j in range(5):  # no move to another value of one coordinate improves by the factor
        for v in {-1.0, 0.0, 1.0} - {out.weights[j]}:
            moved = out.weights.copy()
            moved[j] = v
            assert _f(moved, X, y, margin) >= (1 - 1.0 / 25) * f - 1e-9
    again = ternary_hill_climbing(X, y, margin=margin, n_restarts=4, start_nonzeros=3, seed=seed)
    np.testing.assert_array_equal(out.restart_losses, again.restart_losses)


def test_bad_inputs_are_rejected():
    X, y = _data()
    with pytest.raises(ValueError, match="margin"):
        supermodular_local_search(X, y, margin=0.0)
    with pytest.raises(ValueError, match="start"):
        ternary_hill_climbing(X, y, margin=1.0, start=np.full(6, 0.5))
    with pytest.raises(ValueError, match="epsilon"):
        supermodular_local_search(X, y, margin=1.0, epsilon=0.0)
    with pytest.raises(ValueError, match="start"):
        supermodular_local_search(X, y, margin=1.0, start=np.full(6, 2.0))
    with pytest.raises(ValueError, match="n_restarts"):
        ternary_hill_climbing(X, y, margin=1.0, n_restarts=-1)
    with pytest.raises(ValueError, match="start_nonzeros"):
        ternary_hill_climbing(X, y, margin=1.0, start_nonzeros=0)


@pytest.mark.parametrize("ternary", [False, True])
def test_sparsity_budget_is_respected(ternary):
    X, y = _data(m=30, n=6, seed=7)
    X = X - 1.5  # mixed signs, so that many weights help
    k = 1
    if ternary:
        out = ternary_hill_climbing(X, y, margin=1.0, max_l1=k, n_restarts=3, start_nonzeros=5, seed=0)
        values = (-1, 0, 1)
    else:
        out = supermodular_local_search(X, y, margin=1.0, intercept=-1.0, max_l1=k)
        values = (0, 1)
    intercept = 0.0 if ternary else -1.0
    assert np.abs(out.weights).sum() <= k
    C = np.array(list(itertools.product(values, repeat=6)), dtype=float)
    C = C[np.abs(C).sum(axis=1) <= k]
    best_k = (np.maximum(0.0, 1.0 - y * (C @ X.T + intercept))).sum(axis=1).min()
    assert out.loss >= best_k - 1e-9
    unconstrained = ternary_hill_climbing(X, y, margin=1.0, n_restarts=0) if ternary else \
        supermodular_local_search(X, y, margin=1.0, intercept=-1.0)
    assert np.abs(unconstrained.weights).sum() > k  # the budget is active on this instance


# ------------------------------------------------------------------------- catalog functions
def _ternary_enumeration(X, y, margin, k=None):
    """Best L over all ternary vectors with their best intercept (hinge_intercept)."""
    best = np.inf
    for c in itertools.product((-1.0, 0.0, 1.0), repeat=X.shape[1]):
        c = np.array(c)
        if k is None or np.abs(c).sum() <= k:
            b = hinge_intercept(X @ c, y, np.ones(y.size), margin)
            best = min(best, cumulative_hinge_loss(c, X, y, margin=margin, intercept=b))
    return best


@pytest.mark.parametrize("k", [None, 2])
def test_local_search_method_with_a_learned_intercept(k):
    X, y = _data(m=40, n=5, seed=8)
    X = X - 1.0
    inst = ConvexRounding(margin=1.0, threshold=None, max_size=k, n_restarts=3, start_nonzeros=2).instance(X, y)
    fit = run(inst, "local_search", limits=Limits(seed=1))
    model = fit.model
    assert fit.status.value == "feasible" and fit.violation == 0.0
    assert set(model.coef) <= {-1.0, 0.0, 1.0}
    assert k is None or np.count_nonzero(model.coef) <= k
    # the intercept is the best one for the weights found (the last alternation did not improve)
    assert inst.objective(model) == pytest.approx(inst.objective(Model(model.coef, inst.best_intercept(model.coef))))
    assert inst.objective(model) <= inst.objective(inst.round(Model(np.zeros(5), 0.0))) + 1e-12
    assert inst.objective(model) >= _ternary_enumeration(X, y, 1.0, k) - 1e-9
    assert fit.bound <= fit.objective + 1e-9  # the LP value
    assert model.extras["rounds"] >= 1 and model.extras["restart_losses"].shape == (4,)
    again = run(inst, "local_search", limits=Limits(seed=1))
    np.testing.assert_array_equal(again.model.coef, model.coef)


def test_local_search_method_binary_fixed_threshold_is_figure_6():
    X, y = _data(seed=3)
    inst = ConvexRounding(margin=2.0, weights="binary", threshold=3.0).instance(X, y)
    fit = run(inst, "local_search")
    direct = supermodular_local_search(X, y, margin=2.0, intercept=-3.0)
    np.testing.assert_array_equal(fit.model.coef, direct.weights)
    assert fit.model.intercept == -3.0 and fit.objective == pytest.approx(direct.loss)


def test_heuristic_starts_the_exact_solve_and_the_clock_is_respected():
    X, y = _data(m=30, n=4, seed=9)
    inst = ConvexRounding(margin=1.0, threshold=None).instance(X, y)
    start = heuristic(inst, Limits(time_limit=None).started(), 0)
    assert set(start.coef) <= {-1.0, 0.0, 1.0}
    exact = solve_exact(inst, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    assert exact.status.value == "optimal"
    assert exact.objective <= inst.objective(start) + 1e-9
    assert exact.objective == pytest.approx(_ternary_enumeration(X, y, 1.0), abs=1e-7)

    class Expired:
        def expired(self):
            return True

    model, message = search(inst, 0.0, Expired(), 0)  # stops at once, still inside the class
    assert set(model.coef) <= {-1.0, 0.0, 1.0} and "time limit" in message
