"""The generated tables of the scale benchmarks: 0/1 columns and thresholds of normal variables, a
planted 5-column logistic card with non-integer weights (see ``benchmarks/scale.py``)."""
from __future__ import annotations

import numpy as np

WEIGHTS = (2.6, -1.7, 1.4, 0.8, -0.6)
#: rows generated at a time (no float temporaries of the whole table)
BLOCK = 10**6


def table(rows: int, binary: int, continuous: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: ``binary`` 0/1 columns of frequencies 0.3-0.7, then ``4 * continuous`` columns
    ``z >= q`` of standard normal variables at the quintiles ``q`` of N(0, 1); ``y`` in {-1, 1} drawn
    from the logistic of ``X[:, :5] . WEIGHTS - 1``."""
    rng = np.random.default_rng(seed)
    X = np.empty((rows, binary + 4 * continuous))
    frequency = rng.uniform(0.3, 0.7, binary)
    cuts = np.quantile(rng.standard_normal(10**6), [0.2, 0.4, 0.6, 0.8])
    for start in range(0, rows, BLOCK):
        block = X[start:start + BLOCK]
        block[:, :binary] = rng.random((block.shape[0], binary)) < frequency
        for v in range(continuous):
            z = rng.standard_normal(block.shape[0])
            for t, q in enumerate(cuts):
                block[:, binary + 4 * v + t] = z >= q
    planted = np.zeros(X.shape[1])
    planted[:5] = WEIGHTS
    y = np.where(rng.random(rows) < 1.0 / (1.0 + np.exp(-(X @ planted - 1.0))), 1, -1)
    return X, y
