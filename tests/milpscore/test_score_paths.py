"""Accuracy-size paths (slim_path, riskscore_path): each size's certified optimum equals brute-force
enumeration over the models of at most that size; objectives non-increasing; the sharing rules
of solvers.size_path (bounds downwards, models upwards, the L0 rule) and the counterexample to
the rule that is not used."""
import itertools

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from formulations.base import Model  # noqa: E402
from formulations.slim import SLIM  # noqa: E402
from milpscore.cards.path_plots import plot_size_path  # noqa: E402
from milpscore.studies.riskscore_path import riskscore_path  # noqa: E402
from solvers.size_path import SizeFit, share  # noqa: E402
from milpscore.studies.slim_path import slim_path  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.pipeline import Fit, solve_exact  # noqa: E402
from solvers.result import Status  # noqa: E402

POINTS = range(-2, 3)


def _coefs(d, k):
    return [np.array(c, float) for c in itertools.product(POINTS, repeat=d) if np.count_nonzero(c) <= k]


def brute_slim(X, ypm, k, c0, intercepts=range(-9, 10)):
    """Least error rate + c0 * size over points -2..2 with at most k non-zero, integer intercept."""
    best = np.inf
    for coef in _coefs(X.shape[1], k):
        s = X @ coef
        err = min(np.mean(ypm * (s + b) <= 0) for b in intercepts)
        best = min(best, err + c0 * np.count_nonzero(coef))
    return best


def brute_riskslim(X, ypm, k, c0, intercepts=np.arange(-15, 16)):
    """Least mean logistic loss + c0 * size over points -2..2 with at most k non-zero, integer intercept."""
    best = np.inf
    for coef in _coefs(X.shape[1], k):
        margins = ypm[:, None] * ((X @ coef)[:, None] + intercepts[None, :])
        loss = np.logaddexp(0.0, -margins).mean(axis=0).min()
        best = min(best, loss + c0 * np.count_nonzero(coef))
    return best


def _data(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = np.where(X @ rng.choice([-2.0, -1.0, 1.0, 2.0], d) + rng.normal(0, 1.0, n) > 0.5, 1, 0)
    return X, y


@pytest.mark.parametrize("seed,d", [(0, 3), (1, 4)])
def test_riskscore_path_each_size_is_the_enumerated_optimum(seed, d):
    X, y = _data(seed, 60, d)
    Xt, yt = _data(seed + 10, 40, d)
    path = riskscore_path(X, y, sizes=range(1, d + 1), coef_bound=2, c0=1e-3, X_test=Xt, y_test=yt, time_limit=None)
    t = path.table
    assert list(t["status"]) == ["optimal"] * d
    ypm = np.where(y == 1, 1.0, -1.0)
    for _, row in t.iterrows():
        assert row["objective"] == pytest.approx(brute_riskslim(X, ypm, row["max_size"], 1e-3), abs=1e-6)
        assert row["bound"] <= row["objective"] + 1e-9 and row["gap"] <= 1e-4
        assert row["size"] == len(row["points"]) <= row["max_size"]
        assert row["train_loss"] == pytest.approx(row["objective"] - 1e-3 * row["size"], abs=1e-9)
        assert 0.0 <= row["test_auc"] <= 1.0
    assert np.all(np.diff(t["objective"]) <= 1e-12)  # non-increasing in size
    assert set(path.cards) == set(range(1, d + 1))


def test_slim_path_each_size_is_the_enumerated_optimum():
    X, y = _data(3, 50, 4)
    path = slim_path(X, y, sizes=[1, 2, 3, 4], c0=1e-3, coef_bound=2, time_limit=None, mip_rel_gap=1e-9)
    ypm = np.where(y == 1, 1.0, -1.0)
    t = path.table
    assert list(t["status"]) == ["optimal"] * 4
    for _, row in t.iterrows():  # SLIM's L1 tie-breaker adds less than c0 / 2 in all
        assert row["objective"] == pytest.approx(brute_slim(X, ypm, row["max_size"], 1e-3), abs=5e-4)
    assert np.all(np.diff(t["objective"]) <= 1e-12)


def test_fewer_features_than_allowed_does_not_certify_larger_sizes():
    """The label is the AND of two balanced coins: the best 1-feature model is the empty one
    (size 0 < 1), yet 2 features classify every row."""
    X = np.array([[a, b] for a in (0, 1) for b in (0, 1)] * 10, float)
    y = (X[:, 0] * X[:, 1]).astype(int)
    path = slim_path(X, y, sizes=[1, 2], c0=1e-3, coef_bound=2, time_limit=None, mip_rel_gap=1e-9)
    one, two = path.table.iloc[0], path.table.iloc[1]
    assert one["status"] == two["status"] == "optimal"
    assert one["size"] == 0 and two["size"] == 2
    assert two["objective"] < one["objective"] - 0.2
    ypm = np.where(y == 1, 1.0, -1.0)
    assert one["objective"] == pytest.approx(brute_slim(X, ypm, 1, 1e-3), abs=5e-4)
    assert two["objective"] == pytest.approx(brute_slim(X, ypm, 2, 1e-3), abs=5e-4)


def test_a_larger_size_certifies_a_smaller_one_with_its_bound_and_model():
    """The proven optimum of size 2 uses one feature: it is also size 1's optimum. Size 1 is given a
    worse model and no bound; sharing hands it size 2's model and bound, certified."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, (40, 3)).astype(float)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[:3] *= -1  # a little noise: no second feature pays its cost
    spec = lambda k: SLIM(coef_bound=2, c0=1e-2, max_size=k).instance(X, y)  # noqa: E731
    two = solve_exact(spec(2), limits=Limits(time_limit=None, mip_rel_gap=1e-9))
    assert two.status == Status.OPTIMAL and np.count_nonzero(two.model.coef) == 1
    weak = Model(np.zeros(3), -1.0)
    one = Fit("heuristic", weak, Status.FEASIBLE, spec(1).objective(weak), float("nan"), float("inf"))
    shared = share([SizeFit(1, spec(1), one, "given"), SizeFit(2, spec(2), two, "solved")], 1e-9)
    assert shared[0].fit.status == Status.OPTIMAL
    assert shared[0].fit.objective == pytest.approx(two.objective)
    np.testing.assert_array_equal(shared[0].fit.model.coef, two.model.coef)
    assert "model of size 2" in shared[0].how and "bound of size 2" in shared[0].how
    assert shared[1].fit is two  # nothing to take from smaller sizes


def test_l0_rule_certifies_larger_sizes_without_solving_them():
    """A feature separates the classes: size 1's optimum costs c0 + the tie-breaker, under the
    2 * c0 any larger model pays, so sizes 2 and 3 take it without a solve."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (30, 3)).astype(float)
    y = X[:, 1].astype(int)
    path = slim_path(X, y, sizes=[1, 2, 3], c0=1e-2, coef_bound=2, time_limit=None, mip_rel_gap=1e-9)
    t = path.table
    assert list(t["status"]) == ["optimal"] * 3
    assert t["how"].iloc[0] == "solved" and all(h.startswith("L0 rule") for h in t["how"].iloc[1:])
    assert list(t["seconds"].iloc[1:]) == [0.0, 0.0]
    ypm = np.where(y == 1, 1.0, -1.0)
    for _, row in t.iterrows():
        assert row["objective"] == pytest.approx(brute_slim(X, ypm, row["max_size"], 1e-2), abs=5e-3)


def test_one_budget_and_the_figure(tmp_path):
    X, y = _data(6, 80, 4)
    path = riskscore_path(X, y, sizes=[1, 2], coef_bound=2, X_test=X, y_test=y, time_limit=20)
    assert path.table["seconds"].sum() <= 25
    ax = plot_size_path(path.table)
    ax.figure.savefig(tmp_path / "path.png")
    assert (tmp_path / "path.png").stat().st_size > 0


def test_sizes_must_increase():
    with pytest.raises(ValueError, match="increasing"):
        riskscore_path(np.eye(3), [0, 1, 1], sizes=[2, 1])
