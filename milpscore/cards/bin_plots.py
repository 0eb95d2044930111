"""Figures of points tables over bins: one small panel per variable, the card's points per range.

:func:`plot_bin_points` draws, for every variable a fitted binned model uses
(:class:`~milpscore.estimators.binarsity.BinarsityLogisticClassifier`,
:class:`~milpscore.estimators.fused.FusedScoreClassifier`: anything with ``integer_ranges_`` or
``ranges_`` and ``used_features_``), one bar per merged range of bins with the points a patient in
that range scores — the card, drawn as a clinician reads it (Alaya et al., "Binarsity", figures of
the fitted weights per bin).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from milpscore.cards.card_text import literal


def plot_bin_points(model: Any, *, variables: Sequence[str] | None = None, columns: int = 3,
                    integer: bool = True, panel_size: tuple[float, float] = (3.2, 2.4)) -> Any:
    """Bars of points per range, one panel per variable; returns the Figure.

    Parameters
    ----------
    model : a fitted binned model (``integer_ranges_`` / ``ranges_``, ``used_features_``).
    variables : the variables to draw, in order (default: the ones the model uses whose points in
        the table drawn are not all equal — the card's rows).
    columns : panels per row.
    integer : the integer card's points (``integer_ranges_``) or, when False, the continuous
        model's (``ranges_``, log-odds per bin).
    """
    import matplotlib.pyplot as plt

    table = getattr(model, "integer_ranges_" if integer else "ranges_", None)
    if not isinstance(table, pd.DataFrame):
        raise ValueError("model must be a fitted binned model (integer_ranges_ / ranges_); call fit(X, y) first")
    varies = table.groupby("variable", sort=False)["points"].nunique() > 1
    names = list(variables) if variables is not None else [v for v in model.used_features_ if varies.get(v, False)]
    unknown = [v for v in names if v not in set(table["variable"])]
    if unknown:
        raise ValueError(f"variables {unknown[:5]} are not columns of the model; its columns are "
                         f"{list(dict.fromkeys(table['variable']))[:10]}")
    if not names:
        raise ValueError("the model uses no variable: there is nothing to draw")
    columns = max(1, min(int(columns), len(names)))
    rows = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(panel_size[0] * columns, panel_size[1] * rows),
                             squeeze=False, constrained_layout=True)
    unit = "points" if integer else "log-odds"
    for ax, name in zip(axes.ravel(), names):
        ranges = table[table["variable"] == name]
        points = ranges["points"].to_numpy(dtype=float)
        x = np.arange(len(points))
        ax.bar(x, points, color=np.where(points >= 0, "#b2182b", "#2166ac"), width=0.7)
        ax.axhline(0.0, color="0.3", linewidth=0.8)
        ax.set_xticks(x, [literal(c) for c in ranges["condition"]], rotation=35, ha="right", fontsize=8)
        ax.set_title(literal(name), fontsize=10)
        ax.set_ylabel(unit, fontsize=8)
        if integer:
            for xi, p in zip(x, points):
                ax.annotate(f"{p:+.0f}" if p else "0", (xi, p), ha="center", va="bottom" if p >= 0 else "top",
                            fontsize=8, xytext=(0, 2 if p >= 0 else -2), textcoords="offset points")
            ax.margins(y=0.2)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    return fig
