"""Matplotlib figures for the exact-vs-relaxed workflow; every function returns its Axes.

* :func:`plot_path` — regularisation path, coefficients vs lambda (Facets paper, Figure 3 right),
  with the integer grid ``grid_unit * Z`` drawn when ``grid_unit`` is given;
* :func:`plot_grid_heatmap` — a :func:`milpscore.selection.path_grid` column (accuracy,
  integrity, ...) over (lambda, grid_unit) (Facets paper, Figure 3 left and centre);
* :func:`plot_score_histograms` — per-class histograms of a score card's total score
  (reuses :meth:`milpscore.scorecard.ScoreCard.plot`);
* :func:`plot_exact_vs_relaxed` — bars of objective and bound (and time) per method from a
  :func:`milpscore.compare.compare` table;
* :func:`plot_rounding_error` — rounding error vs the margin (convex-rounding paper, Figure 7): the
  loss of the rounded model minus the LP optimum, with the Proposition 1 bound when given.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd


def _axes(ax: Any, figsize: tuple[float, float] = (6.0, 4.0)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize)[1]


def plot_path(path: pd.DataFrame, *, grid_unit: float | None = None, ax: Any = None, legend: bool = True) -> Any:
    """Coefficients (columns of ``path``) against lambda (its index), log-scaled lambda axis.

    ``path`` is the output of :func:`milpscore.selection.regularisation_path`. Features that stay
    at zero along the whole path are omitted. With ``grid_unit``, dotted lines mark the multiples of
    the grid unit the Facets penalty attracts coefficients to.
    """
    if not isinstance(path, pd.DataFrame) or path.empty:
        raise ValueError("path must be a non-empty DataFrame (rows: lambda, columns: features); "
                         "use milpscore.selection.regularisation_path")
    ax = _axes(ax, (7.5, 4.5))
    lam = path.index.to_numpy(dtype=float)
    moving = [c for c in path.columns if np.abs(path[c].to_numpy(dtype=float)).max() > 1e-9]
    colours = _distinct_colours(len(moving))
    for c, colour in zip(moving, colours):
        ax.plot(lam, path[c].to_numpy(dtype=float), marker=".", color=colour, label=str(c))
    if grid_unit is not None:
        top = np.abs(path.to_numpy(dtype=float)).max()
        for k in range(-int(np.ceil(top / grid_unit)), int(np.ceil(top / grid_unit)) + 1):
            ax.axhline(k * grid_unit, color="0.8", linestyle=":", linewidth=0.8, zorder=0)
    if np.all(lam > 0):
        ax.set_xscale("log")
    ax.set_xlabel("lambda")
    ax.set_ylabel("coefficient")
    ax.set_title("regularisation path" + (f" (grid unit {grid_unit:g})" if grid_unit is not None else ""))
    if legend and moving:  # outside the data, one entry per line, colours that do not repeat
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  ncol=1 if len(moving) <= 16 else 2)
        ax.figure.tight_layout()
    return ax


def _distinct_colours(n: int) -> list:
    """``n`` colours that do not repeat (tab10, tab20, then a sampled continuous map)."""
    import matplotlib

    if n <= 10:
        return [matplotlib.colormaps["tab10"](k) for k in range(n)]
    if n <= 20:
        return [matplotlib.colormaps["tab20"](k) for k in range(n)]
    return [matplotlib.colormaps["turbo"](k / max(n - 1, 1)) for k in range(n)]


def _text_colour(rgba: tuple) -> str:
    """Black on light cells, white on dark ones (relative luminance, ITU-R BT.709)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 else "white"


def plot_grid_heatmap(grid: pd.DataFrame, value: str = "accuracy", *, ax: Any = None, cmap: str = "viridis",
                      annotate: bool = True) -> Any:
    """Heat map of ``grid[value]`` over lambda (columns) and the grid unit (rows), with a colour bar.

    ``grid`` is the output of :func:`milpscore.selection.path_grid` (columns ``lam``, ``grid_unit``).
    """
    missing = {"lam", "grid_unit", value} - set(grid.columns)
    if missing:
        raise ValueError(f"grid lacks columns {sorted(missing)}; pass the output of milpscore.selection.path_grid")
    table = grid.pivot_table(index="grid_unit", columns="lam", values=value, aggfunc="mean").astype(float)
    ax = _axes(ax)
    image = ax.imshow(table.to_numpy(), origin="lower", aspect="auto", cmap=cmap)
    ax.figure.colorbar(image, ax=ax, label=value)
    ax.set_xticks(range(table.shape[1]), [f"{v:.3g}" for v in table.columns], rotation=45)
    ax.set_yticks(range(table.shape[0]), [f"{v:.3g}" for v in table.index])
    ax.set_xlabel("lambda")
    ax.set_ylabel("grid unit")
    ax.set_title(f"{value} over (lambda, grid unit)")
    if annotate:
        for (i, j), v in np.ndenumerate(table.to_numpy()):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize="x-small",
                        color=_text_colour(image.cmap(image.norm(v))))
    ax.figure.tight_layout()
    return ax


def plot_score_histograms(model: Any, X: Any, y: Any, *, ax: Any = None) -> Any:
    """Per-class histograms of a fitted model's total score with the card's threshold.

    ``model`` is a fitted milpscore estimator (``scorecard_`` and ``decision_function``); the
    total score is ``decision_function(X) - intercept_`` in card units (``/ grid_unit`` for Facets),
    i.e. the points only, compared with the card's threshold ``-intercept``.
    """
    if not hasattr(model, "scorecard_"):
        raise ValueError("model must be a fitted milpscore estimator (no scorecard_); call fit(X, y) first")
    from milpscore.estimators.facets import FacetsClassifier

    card = model.scorecard_
    unit = float(model.grid_unit) if isinstance(model, FacetsClassifier) else 1.0  # Facets cards show coef / grid_unit
    scores = (np.asarray(model.decision_function(X), dtype=float) - model.intercept_) / unit
    return card.plot(scores=scores, y=np.asarray(y), ax=_axes(ax))


def plot_exact_vs_relaxed(table: pd.DataFrame, *, ax: Any = None, time_axis: bool = True) -> Any:
    """Objective and bound of each method, one panel per formulation (its own y axis and units).

    ``table`` is the output of :func:`milpscore.compare.compare`. Objectives of different
    formulations are in different units (a SLIM error rate, a hinge sum), so each formulation gets
    its panel; with ``time_axis`` each method's time (``total_time``, or build + solve) is written
    under its name. ``ax``: one Axes per formulation (default: a new figure). Returns the Axes
    (an array when there are several formulations).
    """
    missing = {"formulation", "method", "objective", "bound", "solve_time"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}; pass the output of milpscore.compare.compare")
    names = list(dict.fromkeys(table["formulation"]))
    if ax is None:
        import matplotlib.pyplot as plt

        widths = [max(2.5, 0.9 * int((table["formulation"] == f).sum()) + 1.0) for f in names]
        fig, axes = plt.subplots(1, len(names), figsize=(sum(widths) + 0.5, 4.2), squeeze=False,
                                 gridspec_kw={"width_ratios": widths})
        axes = axes[0]
    else:
        axes = np.atleast_1d(ax)
        if axes.size != len(names):
            raise ValueError(f"ax holds {axes.size} Axes but the table has {len(names)} formulations; pass one each")
    seconds = table["total_time"] if "total_time" in table else table["solve_time"] + table.get("build_time", 0.0)
    for axis, name in zip(axes, names):
        rows = table[table["formulation"] == name]
        x = np.arange(len(rows))
        width = 0.38
        axis.bar(x - width / 2, rows["objective"].to_numpy(dtype=float), width, label="objective", color="tab:blue")
        axis.bar(x + width / 2, rows["bound"].to_numpy(dtype=float), width, label="bound", color="tab:orange")
        labels = [str(m).replace("_", "\n") for m in rows["method"]]
        if time_axis:
            labels = [f"{m}\n{t:.2g} s" for m, t in zip(labels, seconds[rows.index].to_numpy(dtype=float))]
        axis.set_xticks(x, labels, fontsize="small")
        axis.set_title(name)
        axis.set_ylabel("objective (its own units)")
    handles, texts = axes[0].get_legend_handles_labels()
    figure = axes[0].figure
    figure.legend(handles, texts, loc="upper center", ncol=2, frameon=False)
    figure.tight_layout(rect=(0, 0, 1, 0.92))
    return axes[0] if len(axes) == 1 else axes


def plot_rounding_error(margins: Sequence[float], errors: Sequence[float] | np.ndarray, *,
                        bound: Sequence[float] | None = None, ax: Any = None, label: str = "rounding error",
                        yscale: str = "symlog") -> Any:
    """Rounding error against the hinge margin (convex-rounding paper, Figure 7; the paper's gamma).

    ``errors`` is either one value per margin or an array (n_margins, n_repeats) whose mean and
    spread (min-max band) are drawn; ``bound`` (one per margin) adds the Proposition 1 curve.
    ``yscale="symlog"`` (default) is logarithmic above the smallest positive value and linear
    through 0, so exact roundings (error 0) stay on the plot; ``"linear"`` or ``"log"`` as asked
    (``"log"`` refuses data with zeros, which it would hide).
    """
    g = np.asarray(margins, dtype=float)
    e = np.asarray(errors, dtype=float)
    if e.shape[0] != g.size:
        raise ValueError(f"errors has {e.shape[0]} rows but {g.size} margins were given; one row per margin")
    ax = _axes(ax)
    mean = e if e.ndim == 1 else e.mean(axis=1)
    ax.plot(g, mean, marker="o", label=label)
    if e.ndim == 2:
        ax.fill_between(g, e.min(axis=1), e.max(axis=1), alpha=0.25, label=f"{label} (min-max)")
    if bound is not None:
        ax.plot(g, np.asarray(bound, dtype=float), linestyle="--", color="k", label="Proposition 1 bound")
    values = np.concatenate([e.ravel()] + ([np.asarray(bound, dtype=float)] if bound is not None else []))
    if yscale == "symlog":
        positive = values[values > 0]
        floor = 10.0 ** np.floor(np.log10(positive.min())) if positive.size else 1.0
        ax.set_yscale("symlog", linthresh=floor, linscale=1.0)
        ax.set_ylim(bottom=-0.5 * floor)  # zeros drawn whole, just above the axis
    elif yscale == "log":
        if np.any(values <= 0):
            raise ValueError("yscale='log' would hide the errors <= 0 (exact roundings); use 'symlog' or 'linear'")
        ax.set_yscale("log")
    elif yscale != "linear":
        raise ValueError(f"yscale must be 'symlog', 'linear' or 'log', got {yscale!r}")
    ax.set_xlabel("margin")
    ax.set_ylabel("loss of rounded model - LP optimum")
    ax.set_title("rounding error vs margin")
    ax.legend()
    return ax
