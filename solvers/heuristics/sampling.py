"""Row samples for the heuristics on large tables: their searches cost a pass over the rows per
trial, and a start only has to be good enough to prune; the certificate comes from the exact
solve on every row.

:func:`stratified_rows` draws a class-stratified random sample of about ``rows`` rows (each class
keeps its share of the rows) and reweights each class to its total weight, so the weighted loss
or error of a model on the sample estimates its value on every row, in the same units.
"""
from __future__ import annotations

import numpy as np

#: merged rows above which the RiskSLIM and SLIM heuristics search a sample of this many
SEARCH_ROWS = 20_000


def stratified_rows(y: np.ndarray, weights: np.ndarray, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(chosen, w)``: sorted indices of a class-stratified random sample of about ``rows`` of the
    rows (labels ``y`` > 0 and <= 0), and their weights rescaled so that each class's total is its
    total on every row. Deterministic for a ``seed``."""
    rng = np.random.default_rng(seed)
    sides = [y > 0, ~(y > 0)]
    keep = []
    for side in sides:
        index = np.flatnonzero(side)
        if index.size:
            take = min(index.size, max(1, int(round(rows * index.size / y.size))))
            keep.append(rng.choice(index, take, replace=False))
    chosen = np.sort(np.concatenate(keep))
    w = weights[chosen].astype(float)
    for side in sides:
        part = side[chosen]
        if part.any():
            w[part] *= weights[side].sum() / max(w[part].sum(), 1e-300)
    return chosen, w
