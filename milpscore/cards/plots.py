"""Matplotlib figures for the exact-vs-relaxed workflow; every function returns its Axes.

* :func:`plot_path` — regularisation path, coefficients vs lambda (Facets paper, Figure 3 right),
  with the integer grid ``grid_unit * Z`` drawn when ``grid_unit`` is given;
* :func:`plot_grid_heatmap` — a :func:`milpscore.studies.selection.path_grid` column (accuracy,
  integrity, ...) over (lambda, grid_unit) (Facets paper, Figure 3 left and centre);
* :func:`plot_score_histograms` — per-class histograms of a score card's total score
  (reuses :meth:`milpscore.cards.scorecard.ScoreCard.plot`);
* :func:`plot_exact_vs_relaxed` — bars of objective and bound (and time) per method from a
  :func:`milpscore.compare.compare` table;
* :func:`plot_bound_trace` — an exact fit's incumbent and proven lower bound over time (a
  :class:`solvers.progress.Trace`), the gap between them shaded;
* :func:`plot_rounding_error` — rounding error vs the margin (convex-rounding paper, Figure 7): the
  loss of the rounded model minus the LP optimum, with the Proposition 1 bound when given.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from milpscore.cards.card_text import literal


def _axes(ax: Any, figsize: tuple[float, float] = (6.0, 4.0)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize)[1]


def plot_path(path: pd.DataFrame, *, grid_unit: float | None = None, ax: Any = None, legend: bool = True,
              data: str | None = None) -> Any:
    """Coefficients (columns of ``path``) against lambda (its index), log-scaled lambda axis.

    ``path`` is the output of :func:`milpscore.studies.selection.regularisation_path`. Features that stay
    at zero along the whole path are omitted, and the title says how many are drawn of how many
    (``"8 of 12 features drawn; 4 stay at 0 all along"``); every drawn one gets its own colour and line style and
    one legend entry, outside the data. With ``grid_unit``, dotted lines mark the multiples of the
    grid unit the Facets penalty attracts coefficients to (over the range of the data only).
    ``data`` names the data in the title (e.g. ``"breast cancer, first 12 of 60 features"``).
    """
    if not isinstance(path, pd.DataFrame) or path.empty:
        raise ValueError("path must be a non-empty DataFrame (rows: lambda, columns: features); "
                         "use milpscore.studies.selection.regularisation_path")
    ax = _axes(ax, (7.5, 4.5))
    lam = path.index.to_numpy(dtype=float)
    moving = [c for c in path.columns if np.abs(path[c].to_numpy(dtype=float)).max() > 1e-9]
    for c, (colour, style) in zip(moving, _line_styles(len(moving))):
        ax.plot(lam, path[c].to_numpy(dtype=float), marker=".", color=colour, linestyle=style, label=literal(c))
    if grid_unit is not None:
        _grid_lines(ax, path.to_numpy(dtype=float), grid_unit)
    if np.all(lam > 0):
        ax.set_xscale("log")
    ax.set_xlabel("lambda")
    ax.set_ylabel("coefficient")
    still = path.shape[1] - len(moving)
    count = (f"{len(moving)} of {path.shape[1]} features drawn; {still} stay at 0 all along" if still
             else f"all {path.shape[1]} features drawn")
    ax.set_title("regularisation path" + (f" (grid unit {grid_unit:g})" if grid_unit is not None else "")
                 + (f"\n{literal(data)}" if data else "") + f"\n{count}", fontsize="medium")
    if legend and moving:  # outside the data, one entry per line
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  ncol=1 if len(moving) <= 16 else 2)
        ax.figure.tight_layout()
    return ax


#: most grid lines :func:`plot_path` draws; more would grey the whole plot
MAX_GRID_LINES = 60


def _grid_lines(ax: Any, values: np.ndarray, grid_unit: float) -> None:
    """Dotted lines at the multiples of ``grid_unit`` from just below the data to just above it (and 0)."""
    low = int(np.floor(min(np.nanmin(values), 0.0) / grid_unit))
    high = int(np.ceil(max(np.nanmax(values), 0.0) / grid_unit))
    if high - low + 1 > MAX_GRID_LINES:
        return
    for k in range(low, high + 1):
        ax.axhline(k * grid_unit, color="0.8", linestyle=":", linewidth=0.8, zorder=0)


def _line_styles(n: int) -> list[tuple[tuple, str]]:
    """``n`` (colour, line style) pairs, no colour repeated and neighbours easy to tell apart.

    Up to 10 lines: tab10, solid. Up to 20: then the light tab20 partners of the same ten hues,
    dashed, so a light line is told from its dark partner by its style too. More: colours sampled
    from turbo with line styles cycling over four.
    """
    import matplotlib

    if n <= 20:
        tab20 = matplotlib.colormaps["tab20"]
        return [(tab20(2 * k), "-") if k < 10 else (tab20(2 * (k - 10) + 1), "--") for k in range(n)]
    turbo = matplotlib.colormaps["turbo"]
    return [(turbo(k / (n - 1)), ("-", "--", ":", "-.")[k % 4]) for k in range(n)]


def _text_colour(rgba: tuple) -> str:
    """Black on light cells, white on dark ones (relative luminance, ITU-R BT.709)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 else "white"


def plot_grid_heatmap(grid: pd.DataFrame, value: str = "accuracy", *, ax: Any = None, cmap: str = "viridis",
                      annotate: bool = True) -> Any:
    """Heat map of ``grid[value]`` over lambda (columns) and the grid unit (rows), with a colour bar.

    ``grid`` is the output of :func:`milpscore.studies.selection.path_grid` (columns ``lam``, ``grid_unit``).
    """
    missing = {"lam", "grid_unit", value} - set(grid.columns)
    if missing:
        raise ValueError(f"grid lacks columns {sorted(missing)}; pass the output of milpscore.studies.selection.path_grid")
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
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize="small",
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


def plot_exact_vs_relaxed(table: pd.DataFrame, *, ax: Any = None, time_axis: bool = True,
                          data: str | None = None) -> Any:
    """Objective and bound of each method, one panel per formulation (its own y axis and units).

    ``table`` is the output of :func:`milpscore.compare.compare`. Objectives of different
    formulations are in different units (a SLIM error rate, a hinge sum), so each formulation gets
    its panel. Every bar carries its value (a value too small to see stays readable) and a missing
    one (no bound for a heuristic, no model) is written ``n/a`` on the axis. Under each method's
    name: its status when it is not ``optimal`` and, with ``time_axis``, its time (``total_time``,
    or build + solve). The legend sits above the panels, under ``data`` (the data's name, rows,
    features and budget, as a figure title) when given. ``ax``: one Axes per formulation
    (default: a new figure). Returns the Axes (an array when there are several formulations).
    """
    missing = {"formulation", "method", "objective", "bound", "solve_time"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}; pass the output of milpscore.compare.compare")
    names = list(dict.fromkeys(table["formulation"]))
    axes = _panels(ax, [int((table["formulation"] == f).sum()) for f in names])
    seconds = table["total_time"] if "total_time" in table else table["solve_time"] + table.get("build_time", 0.0)
    for axis, name in zip(axes, names):
        rows = table[table["formulation"] == name]
        _objective_bars(axis, rows)
        axis.set_xticks(np.arange(len(rows)), _method_labels(rows, seconds[rows.index] if time_axis else None),
                        fontsize="small")
        axis.set_title(literal(name))
        axis.set_ylabel("objective and lower bound\n(in the formulation's units)")
    handles, texts = axes[0].get_legend_handles_labels()
    figure = axes[0].figure
    top = 0.92
    if data:
        figure.suptitle(literal(data), y=0.995, fontsize="medium")
        top = 0.88
    figure.legend(handles, texts, loc="upper center", ncol=2, frameon=False,
                  bbox_to_anchor=(0.5, 0.93 if data else 1.0))
    figure.tight_layout(rect=(0, 0, 1, top))
    return axes[0] if len(axes) == 1 else axes


def _panels(ax: Any, n_methods: list[int]) -> np.ndarray:
    """The given Axes (one per formulation) or a new row of panels, each as wide as its methods need."""
    if ax is not None:
        axes = np.atleast_1d(ax)
        if axes.size != len(n_methods):
            raise ValueError(f"ax holds {axes.size} Axes but the table has {len(n_methods)} formulations; "
                             "pass one each")
        return axes
    import matplotlib.pyplot as plt

    widths = [max(2.5, 0.9 * n + 1.0) for n in n_methods]
    _, axes = plt.subplots(1, len(widths), figsize=(sum(widths) + 0.5, 4.4), squeeze=False,
                           gridspec_kw={"width_ratios": widths})
    return axes[0]


def _objective_bars(axis: Any, rows: pd.DataFrame, width: float = 0.38) -> None:
    """Objective and bound bars of one formulation's methods, each labelled with its value or ``n/a``."""
    x = np.arange(len(rows))
    for offset, column, colour in ((-width / 2, "objective", "tab:blue"), (width / 2, "bound", "tab:orange")):
        values = rows[column].to_numpy(dtype=float)
        bars = axis.bar(x + offset, np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0), width,
                        label=column, color=colour)
        axis.bar_label(bars, [f"{v:.3g}" if np.isfinite(v) else "n/a" for v in values], padding=2,
                       rotation=90, fontsize="x-small")
    axis.margins(y=0.22)  # room above the tallest bar for its label


def _method_labels(rows: pd.DataFrame, seconds: pd.Series | None) -> list[str]:
    """Tick labels: the method (one word a line), its status when not optimal, its time."""
    labels = []
    for k, (_, row) in enumerate(rows.iterrows()):
        lines = literal(row["method"]).split("_")
        status = str(row.get("status", "optimal"))
        if status != "optimal":
            lines.append(f"({_STATUS_NOTES.get(status, status.replace('_', ' '))})")
        if seconds is not None:
            lines.append(f"{float(seconds.iloc[k]):.2g} s")
        labels.append("\n".join(lines))
    return labels


#: short status notes under a method's name (the others: the status with spaces)
_STATUS_NOTES = {"no_solution_found": "no model", "infeasible_or_unbounded": "infeas./unbd."}


def plot_rounding_error(margins: Sequence[float], errors: Sequence[float] | np.ndarray, *,
                        bound: Sequence[float] | None = None, ax: Any = None, label: str = "rounding error",
                        yscale: str = "symlog") -> Any:
    """Rounding error against the hinge margin (convex-rounding paper, Figure 7; the paper's gamma).

    ``errors`` is either one value per margin or an array (n_margins, n_repeats) whose mean and
    spread (min-max band) are drawn; ``bound`` (one per margin) adds the Proposition 1 curve.
    ``yscale="symlog"`` (default) is logarithmic above the smallest positive value and linear
    through 0, so exact roundings (error 0) stay on the plot; ``"linear"`` or ``"log"`` as asked
    (``"log"`` refuses data with zeros, which it would hide). The legend sits right of the plot.
    """
    g = np.asarray(margins, dtype=float)
    e = np.asarray(errors, dtype=float)
    if e.shape[0] != g.size:
        raise ValueError(f"errors has {e.shape[0]} rows but {g.size} margins were given; one row per margin")
    ax = _axes(ax, (7.5, 4.0))
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
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the band
    ax.figure.tight_layout()
    return ax


def plot_bound_trace(rows: Sequence[tuple[float, float, float]], *, ax: Any = None, objective: float | None = None,
                     bound: float | None = None, title: str | None = None) -> Any:
    """Incumbent (best model found) and lower bound (proven for every model) against time.

    ``rows`` are ``(elapsed s, incumbent, bound)`` as a :class:`solvers.progress.Trace` records
    them (infinite values: none yet). ``objective`` / ``bound``: the fit's final values, drawn as
    the last point (the route's later steps may not report). The shaded band is the gap; the fit
    is proven optimal where the two lines meet."""
    data = np.array([r for r in rows], dtype=float).reshape(-1, 3)
    if objective is not None and bound is not None and data.size:
        data = np.vstack([data, [data[-1, 0], objective, bound]])
    if not data.size:
        raise ValueError("no progress was recorded: fit inside `with progress.reporting(trace)`")
    ax = _axes(ax)
    t = np.maximum(data[:, 0], 0.0)
    inc = np.minimum.accumulate(np.where(np.isfinite(data[:, 1]), data[:, 1], np.inf))
    low = np.maximum.accumulate(np.where(np.isfinite(data[:, 2]), data[:, 2], -np.inf))
    shown = np.isfinite(inc) & np.isfinite(low)
    ax.step(t, inc, where="post", color="#b2182b", label="incumbent (best model found)")
    ax.step(t, low, where="post", color="#2166ac", label="lower bound (proven)")
    ax.fill_between(t, low, inc, where=shown, step="post", color="0.85", label="gap")
    ax.set_xlim(0.0, float(t.max()) * 1.05)
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("objective")
    if title:
        ax.set_title(literal(title))
    ax.legend(loc="best", fontsize=8)
    return ax
