"""Plots render to a file (Agg backend) and contain the expected artists."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from milpscore.cards import plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _save(ax, tmp_path, name):
    path = tmp_path / f"{name}.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 1000


def test_path_plot_has_one_line_per_moving_feature(tmp_path):
    path = pd.DataFrame({"a": [2.0, 1.0, 0.0], "b": [-1.0, -0.5, 0.0], "never": [0.0, 0.0, 0.0]},
                        index=pd.Index([0.01, 0.1, 1.0], name="lam"))
    ax = plots.plot_path(path, grid_unit=0.5)
    data_lines = [ln for ln in ax.get_lines() if ln.get_label() in {"a", "b", "never"}]
    assert sorted(ln.get_label() for ln in data_lines) == ["a", "b"]
    np.testing.assert_allclose(data_lines[0].get_ydata(), path["a"])
    assert ax.get_xscale() == "log"
    grid_lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert len(grid_lines) == 7  # multiples of 0.5 over the data, [-1, 2]: no empty half-plot below -1
    assert -1.5 < ax.get_ylim()[0] and ax.get_ylim()[1] < 2.5
    _save(ax, tmp_path, "path")
    # twelve moving features: twelve distinct colours, legend outside the data area
    wide = pd.DataFrame({f"x{k}": np.linspace(k + 1, 0, 5) for k in range(12)}, index=np.geomspace(1e-3, 1, 5))
    ax = plots.plot_path(wide)
    colours = {tuple(ln.get_color()) for ln in ax.get_lines()}
    assert len(colours) == 12
    styles = {(tuple(ln.get_color()), ln.get_linestyle()) for ln in ax.get_lines()}
    assert {style for _, style in styles} == {"-", "--"}  # the two light tab20 partners are dashed
    box = ax.get_legend().get_window_extent(ax.figure.canvas.get_renderer())
    assert box.x0 >= ax.get_window_extent().x1 - 1  # the legend does not cover the lines
    with pytest.raises(ValueError, match="regularisation_path"):
        plots.plot_path(pd.DataFrame())


def test_heatmap_shows_the_grid_values(tmp_path):
    grid = pd.DataFrame({"lam": [0.1, 1.0, 0.1, 1.0], "grid_unit": [0.5, 0.5, 1.0, 1.0],
                         "integrity": [0.2, 0.4, 0.6, 0.8]})
    ax = plots.plot_grid_heatmap(grid, "integrity")
    images = [a for a in ax.get_children() if isinstance(a, AxesImage)]
    assert len(images) == 1
    np.testing.assert_allclose(images[0].get_array(), [[0.2, 0.4], [0.6, 0.8]])  # rows grid unit, columns lambda
    assert len(ax.texts) == 4 and len(ax.figure.axes) == 2  # annotations and colour bar
    # readable numbers: dark text on the light (yellow) end of viridis, white on the dark end
    colours = {t.get_text(): t.get_color() for t in ax.texts}
    assert colours["0.80"] == "black" and colours["0.20"] == "white"
    _save(ax, tmp_path, "heatmap")
    with pytest.raises(ValueError, match="path_grid"):
        plots.plot_grid_heatmap(grid, "accuracy")


def test_score_histograms_of_a_score_card(tmp_path):
    from milpscore.estimators.slim import SLIMClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 3)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] > 0.5, "sick", "well")
    model = SLIMClassifier(coef_bound=3, c0=0.01, time_limit=10).fit(X, y)
    ax = plots.plot_score_histograms(model, X, y)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    total = sum(b.get_height() for b in bars)
    assert total == 60  # every sample in one bar of its class
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {"sick", "well", "threshold"}
    threshold = [ln for ln in ax.get_lines() if ln.get_label() == "threshold"][0]
    assert threshold.get_xdata()[0] == pytest.approx(model.scorecard_.threshold)
    _save(ax, tmp_path, "hist")


def test_exact_vs_relaxed_bars_from_a_compare_table(tmp_path):
    table = pd.DataFrame({"formulation": ["slim", "slim"], "method": ["exact", "relaxed"],
                          "objective": [0.3, 0.1], "bound": [0.25, 0.1], "solve_time": [1.0, 0.1],
                          "build_time": [0.01, 0.01]})
    ax = plots.plot_exact_vs_relaxed(table)
    heights = [r.get_height() for r in ax.patches]
    assert heights == pytest.approx([0.3, 0.1, 0.25, 0.1])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["exact\n1 s", "relaxed\n0.11 s"]
    _save(ax, tmp_path, "bars")
    # objectives in different units get their own panels and y axes (a 0.05 bar next to 97 would vanish)
    two = pd.concat([table, table.assign(formulation="facets", objective=[97.0, 90.0], bound=[95.0, 90.0],
                                         total_time=[1.5, 0.2])], ignore_index=True)
    two["total_time"] = two["total_time"].fillna(0.5)
    axes = plots.plot_exact_vs_relaxed(two)
    assert [a.get_title() for a in axes] == ["slim", "facets"]
    assert axes[0].get_ylim()[1] < 1.0 < 90.0 < axes[1].get_ylim()[1]
    assert [t.get_text() for t in axes[1].get_xticklabels()] == ["exact\n1.5 s", "relaxed\n0.2 s"]
    _save(axes[0], tmp_path, "bars2")


def test_rounding_error_with_band_and_bound(tmp_path):
    margins = [0.5, 1.0, 2.0]
    errors = np.array([[1.0, 2.0], [0.5, 1.5], [0.2, 0.4]])
    ax = plots.plot_rounding_error(margins, errors, bound=[10, 5, 2.5])
    assert len(ax.get_lines()) == 2
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [1.5, 1.0, 0.3])
    assert any(isinstance(c, PolyCollection) for c in ax.collections)
    _save(ax, tmp_path, "rounding")
    with pytest.raises(ValueError, match="one row per margin"):
        plots.plot_rounding_error([1.0], errors)
    # exact roundings (error 0) stay visible: symlog is linear through 0; 'log' would hide them and refuses
    zeros = np.array([[0.0, 0.0], [0.5, 1.5], [0.2, 0.4]])
    ax = plots.plot_rounding_error(margins, zeros)
    assert ax.get_yscale() == "symlog" and ax.get_ylim()[0] <= 0.0
    with pytest.raises(ValueError, match="hide"):
        plots.plot_rounding_error(margins, zeros, yscale="log")


def _relative_luminance(colour) -> float:
    """WCAG 2 relative luminance of a matplotlib colour."""
    from matplotlib.colors import to_rgb

    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("cmap", ["viridis", "magma", "Greys", "coolwarm"])
def test_heatmap_text_contrasts_with_its_cell(cmap):
    values = np.linspace(0.0, 1.0, 12)
    grid = pd.DataFrame({"lam": np.tile([0.1, 1.0, 10.0], 4), "grid_unit": np.repeat([0.25, 0.5, 1.0, 2.0], 3),
                         "integrity": values})
    ax = plots.plot_grid_heatmap(grid, "integrity", cmap=cmap)
    image = [a for a in ax.get_children() if isinstance(a, AxesImage)][0]
    assert len(ax.texts) == 12
    for text in ax.texts:
        cell = image.cmap(image.norm(float(text.get_text())))
        bright, dark = sorted([_relative_luminance(cell), _relative_luminance(text.get_color())], reverse=True)
        assert (bright + 0.05) / (dark + 0.05) >= 3.0, (cmap, text.get_text(), text.get_color())


def test_rounding_error_zeros_are_drawn_whole():
    margins = [0.5, 1.0, 2.0, 4.0]
    errors = np.array([[40.0, 60.0], [5.0, 15.0], [0.0, 0.0], [0.0, 0.0]])
    ax = plots.plot_rounding_error(margins, errors, bound=[1e4, 5e3, 2.5e3, 1.2e3])
    ax.figure.canvas.draw()
    mean = ax.get_lines()[0]
    points = ax.transData.transform(np.column_stack([mean.get_xdata(), mean.get_ydata()]))
    box = ax.get_window_extent()
    radius = mean.get_markersize() / 2 * ax.figure.dpi / 72
    inside = (points[:, 1] - radius >= box.y0 - 0.5) & (points[:, 1] + radius <= box.y1 + 0.5)
    assert inside.all()  # no marker cut by the axes, the two zeros included
    assert points[2, 1] - box.y0 >= radius  # zero sits clearly above the bottom, not on it


def _boxes_overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_exact_vs_relaxed_labels_missing_values_and_does_not_overlap():
    table = pd.DataFrame({
        "formulation": ["slim"] * 4 + ["facets"] * 5,
        "method": ["exact", "relaxed", "rounding", "heuristic", "exact", "relaxed", "rounding", "heuristic",
                   "prox_rounding"],
        "status": ["feasible", "optimal", "feasible", "feasible", "optimal", "optimal", "feasible", "feasible",
                   "no_solution_found"],
        "objective": [0.038, 0.0004, 0.076, 0.043, 97.0, 95.0, 97.0, 97.0, np.nan],
        "bound": [0.003, 0.0004, 0.0004, np.nan, 97.0, 95.0, 95.0, np.nan, 95.0],
        "solve_time": [5.0, 0.06, 0.07, 2.4, 0.2, 0.07, 0.08, 0.05, 0.08]})
    axes = plots.plot_exact_vs_relaxed(table)
    assert len(axes) == 2 and [a.get_title() for a in axes] == ["slim", "facets"]
    figure = axes[0].figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    labels = [t.get_text() for t in axes[1].get_xticklabels()]
    assert labels[-1] == "prox\nrounding\n(no model)\n0.08 s" and labels[0] == "exact\n0.2 s"
    # tiny values are written on their bars; missing ones are said to be missing, not drawn as 0
    slim_texts = [t.get_text() for t in axes[0].texts]
    assert "0.0004" in slim_texts and "n/a" in slim_texts
    assert [t.get_text() for t in axes[1].texts].count("n/a") == 2
    for axis in axes:
        ticks = [t.get_window_extent(renderer) for t in axis.get_xticklabels()]
        assert not any(_boxes_overlap(a, b) for k, a in enumerate(ticks) for b in ticks[k + 1:])
        values = [t.get_window_extent(renderer) for t in axis.texts]
        assert all(box.y1 <= axis.get_window_extent(renderer).y1 + 1 for box in values)  # labels inside the panel
    legend = figure.legends[0].get_window_extent(renderer)
    assert not any(_boxes_overlap(legend, a.get_window_extent(renderer)) for a in axes)


def test_path_and_comparison_name_their_data_and_count_the_features():
    path = pd.DataFrame({"a": [2.0, 1.0, 0.0], "b": [-1.0, -0.5, 0.0], "never": [0.0, 0.0, 0.0]},
                        index=pd.Index([0.01, 0.1, 1.0], name="lam"))
    ax = plots.plot_path(path, data="first 3 of 60 features")
    assert "first 3 of 60 features" in ax.get_title() and "2 of 3 features drawn; 1 stay at 0" in ax.get_title()
    assert "all 2 features drawn" in plots.plot_path(path[["a", "b"]]).get_title()
    table = pd.DataFrame({"formulation": ["slim", "slim"], "method": ["exact", "relaxed"], "objective": [0.3, 0.1],
                          "bound": [0.25, 0.1], "solve_time": [1.0, 0.1]})
    ax = plots.plot_exact_vs_relaxed(table, data="breast cancer, 569 rows, 60 features; 5 s a method")
    figure = ax.figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    title = figure._suptitle
    assert title.get_text() == "breast cancer, 569 rows, 60 features; 5 s a method"
    boxes = [title.get_window_extent(renderer), figure.legends[0].get_window_extent(renderer),
             ax.get_window_extent(renderer)]
    assert not any(_boxes_overlap(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:])
    assert boxes[0].y1 <= figure.bbox.y1 + 1  # the data's name inside the figure


def test_names_with_dollars_print_literally_in_every_plot(tmp_path):
    from milpscore.cards.scorecard import ScoreCard

    names = ["price $ >= 5 and cost $ >= 3", "$\\frac{$"]  # mathtext would swallow the first, raise on the second
    path = pd.DataFrame({names[0]: [1.0, 0.5, 0.0], names[1]: [-1.0, 0.0, 0.0]}, index=[0.01, 0.1, 1.0])
    ax = plots.plot_path(path, data="costs in $, prices in $")
    _save(ax, tmp_path, "dollar_path")
    rendered = [t.get_text() for t in ax.get_legend().get_texts()]
    assert rendered == ["price \\$ >= 5 and cost \\$ >= 3", "\\$\\frac{\\$"]  # escaped: drawn as '$'
    card = ScoreCard.from_coefficients(np.array([2.0, -1.0]), -1.0, names, positive_label="$", negative_label="$$")
    _save(card.plot(), tmp_path, "dollar_bars")
    _save(card.plot(scores=np.array([0.0, 1.0, 2.0, 2.0]), y=np.array(["$", "$$", "$", "$"])), tmp_path, "dollar_hist")
