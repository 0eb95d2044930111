"""Linear encodings shared by the builders: hinge-loss epigraph and absolute-value epigraph.

Every encoder writes whole sparse row blocks into a :class:`~formulations.program.ProgramBuilder`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from formulations.program import ProgramBuilder


def add_hinge(builder: ProgramBuilder, X, y: np.ndarray, *, weights: str, intercept: str | None,
              margin: float = 1.0, sample_weight: np.ndarray | None = None,
              name: str = "hinge", scale: float = 1.0) -> slice:
    """Hinge-loss epigraph ``xi_i >= margin - y_i (x_i . w + b)``, ``xi_i >= 0``.

    Adds the block ``name`` of slack variables ``xi`` with objective cost
    ``scale * sample_weight_i`` (so the objective gains ``scale * sum_i s_i xi_i``) and one row
    per sample: ``xi_i + y_i x_i . w + y_i b >= margin``. ``X`` may be dense or sparse;
    ``weights`` / ``intercept`` name existing variable blocks (intercept None: no intercept).
    Returns the slice of ``xi``.
    """
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    xi = builder.add_variables(name, n, lb=0.0, cost=scale * s)
    yX = sp.diags(y) @ sp.csr_matrix(X, dtype=float)
    terms = {name: sp.identity(n, format="csr"), weights: yX}
    if intercept is not None:
        terms[intercept] = sp.csr_matrix(y[:, None])
    builder.add_rows(name + "_rows", terms, lb=margin)
    return xi


def add_abs(builder: ProgramBuilder, block: str, *, name: str, cost=0.0) -> slice:
    """Epigraph ``t_j >= |x_j|`` of a variable block: ``t - x >= 0`` and ``t + x >= 0``.

    Adds block ``name`` (``t >= 0``, objective ``cost * t``) and two row blocks.
    """
    d = builder.size(block)
    t = builder.add_variables(name, d, lb=0.0, cost=cost)
    eye = sp.identity(d, format="csr")
    builder.add_rows(name + "_pos", {name: eye, block: -eye}, lb=0.0)
    builder.add_rows(name + "_neg", {name: eye, block: eye}, lb=0.0)
    return t
