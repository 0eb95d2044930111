"""Figures of a binned card and of a certificate over time: drawn from the model's own numbers."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from milpscore.cards.bin_plots import plot_bin_points  # noqa: E402
from milpscore.cards.plots import plot_bound_trace  # noqa: E402
from milpscore.estimators.binarsity import BinarsityLogisticClassifier  # noqa: E402
from solvers.progress import Trace  # noqa: E402


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((1500, 4)), columns=["age", "bmi", "dose", "noise"])
    z = 1.2 * (X["age"] > 0.3) - 0.8 * (X["bmi"] < -0.5) + 0.6 * X["dose"] ** 2 - 0.5
    y = (rng.random(1500) < 1 / (1 + np.exp(-z))).astype(int)
    return BinarsityLogisticClassifier(n_bins=5, strength=1.0, n_strengths=3).fit(X, y)


def test_bin_points_panels_are_the_card(model):
    fig = plot_bin_points(model, columns=2)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == model.used_features_
    for ax, name in zip(panels, model.used_features_):
        expected = model.integer_ranges_.loc[model.integer_ranges_["variable"] == name, "points"].to_numpy(float)
        np.testing.assert_array_equal([bar.get_height() for bar in ax.patches], expected)
        assert [t.get_text() for t in ax.get_xticklabels()] == \
            list(model.integer_ranges_.loc[model.integer_ranges_["variable"] == name, "condition"])
    fig.savefig(__import__("io").BytesIO(), format="png")


def test_bin_points_continuous_and_errors(model):
    fig = plot_bin_points(model, variables=["age"], integer=False)
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    np.testing.assert_allclose(heights, model.ranges_.loc[model.ranges_["variable"] == "age", "points"])
    with pytest.raises(ValueError, match=r"variables \['weight'\] are not columns"):
        plot_bin_points(model, variables=["weight"])
    with pytest.raises(ValueError, match="fitted binned model"):
        plot_bin_points(object())


def test_bound_trace_draws_best_incumbent_and_best_bound():
    trace = Trace()
    for row in [(0.1, np.inf, -np.inf, np.inf), (0.5, 0.9, 0.2, 0.7), (1.0, 0.95, 0.1, 0.8), (2.0, 0.8, 0.5, 0.3)]:
        trace(*row)
    assert trace.rows[1] == (0.5, 0.9, 0.2)
    ax = plot_bound_trace(trace.rows, objective=0.8, bound=0.8)
    incumbent, bound = ax.get_lines()[:2]
    # running best: the incumbent never rises, the bound never falls; the fit's final values close it
    np.testing.assert_array_equal(incumbent.get_ydata()[1:], [0.9, 0.9, 0.8, 0.8])
    np.testing.assert_array_equal(bound.get_ydata()[1:], [0.2, 0.2, 0.5, 0.8])
    with pytest.raises(ValueError, match="no progress was recorded"):
        plot_bound_trace([])


def test_card_lists_exactly_the_columns_whose_integer_points_vary(model):
    varies = model.integer_ranges_.groupby("variable")["points"].nunique() > 1
    assert set(model.scorecard_.table["variable"]) == set(varies[varies].index)
    assert set(varies[varies].index) <= set(model.used_features_)
