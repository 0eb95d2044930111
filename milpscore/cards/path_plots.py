"""Matplotlib figure of an accuracy-size path (:func:`milpscore.studies.riskscore_path.riskscore_path`,
:func:`milpscore.studies.slim_path.slim_path`); returns its Axes.

:func:`plot_size_path` draws the training loss (left axis) and the test AUC (right axis, when the
table has it) against the maximum number of features. Sizes proven optimal (status ``optimal``)
are filled markers; sizes stopped at the time limit are hollow, their gap in the legend.
"""
from __future__ import annotations

from typing import Any

import pandas as pd


def plot_size_path(table: pd.DataFrame, *, loss: str | None = None, ax: Any = None, title: str | None = None) -> Any:
    """Training loss and test AUC against ``max_size``; certified sizes filled, unproven hollow.

    ``table`` is a path's table (columns ``max_size``, ``status``, ``gap``, a training-loss column
    and optionally ``test_auc``). ``loss`` names the training-loss column (default ``train_loss``,
    else ``train_error``).
    """
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.subplots(figsize=(6.0, 4.0))[1]
    loss = loss or ("train_loss" if "train_loss" in table else "train_error")
    missing = [c for c in ("max_size", "status", "gap", loss) if c not in table]
    if missing:
        raise ValueError(f"table lacks columns {missing}; pass the .table of a riskscore_path or slim_path result")
    sizes = table["max_size"].to_numpy()
    proven = (table["status"] == "optimal").to_numpy()
    handles = []

    def series(axis, values, colour, marker, label):
        line, = axis.plot(sizes, values, color=colour, label=label)
        handles.append(line)
        if proven.any():
            handles.append(axis.scatter(sizes[proven], values[proven], color=colour, marker=marker, zorder=3,
                                        label=f"{label}: proven optimal"))
        if (~proven).any():
            gaps = ", ".join(f"{g:.2g}" for g in table["gap"].to_numpy()[~proven])
            handles.append(axis.scatter(sizes[~proven], values[~proven], facecolors="white", edgecolors=colour,
                                        marker=marker, zorder=3, label=f"{label}: not proven (gap {gaps})"))

    series(ax, table[loss].to_numpy(float), "tab:blue", "o", f"training {loss.replace('train_', '')}")
    ax.set_xlabel("maximum number of features (max_size)")
    ax.set_ylabel(f"training {loss.replace('train_', '')}", color="tab:blue")
    ax.set_xticks(sizes)
    ax.grid(alpha=0.3)
    if "test_auc" in table and table["test_auc"].notna().any():
        right = ax.twinx()
        series(right, table["test_auc"].to_numpy(float), "tab:orange", "s", "test AUC")
        right.set_ylabel("test AUC", color="tab:orange")
    ax.legend(handles=handles, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
              frameon=False)
    ax.set_title(title or "Accuracy-size path (filled: certified optimal)")
    return ax
