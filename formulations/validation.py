"""The one input validator of the formulation builders (array level; :mod:`milpscore.data.validation` handles
DataFrames, label mapping and column names before data reach a builder).

:func:`check_training_set` accepts a dense array or a scipy.sparse matrix, labels in ``{-1, +1}``
(or real targets for least squares) and sample weights, and refuses what would make a solver's
answer meaningless: NaN / inf, empty or 1-D data, and values so large that the solvers' absolute
tolerances (about 1e-9 of primal feasibility) can no longer resolve a unit of score.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

#: largest absolute feature value accepted: beyond it a score of integer points times the
#: feature exceeds 1e9 and the solvers' 1e-9 feasibility tolerance exceeds one unit of margin
MAX_ABS_VALUE = 1e6


def check_training_set(X: Any, y: Any, sample_weight: Any = None, *, labels: str = "binary",
                       name: str = "X") -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, np.ndarray]:
    """Validate and convert ``(X, y, sample_weight)`` for a builder.

    Parameters
    ----------
    X : (n, d) numeric array or scipy.sparse matrix (kept sparse as CSR).
    y : (n,) labels in ``{-1, +1}`` (``labels="binary"``) or finite reals (``labels="real"``).
    sample_weight : (n,) finite non-negative weights with a positive sum, or None (ones).

    Returns
    -------
    ``(X, y, s)``: float ndarray or CSR matrix, float labels, float weights.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float)
        values = X.data
    else:
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a numeric array or a scipy.sparse matrix; encode text columns first") from None
        values = X
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D matrix (n samples, d features), got shape {X.shape}")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or inf; impute or drop those entries first")
    largest = max(abs(float(values.max())), abs(float(values.min()))) if values.size else 0.0  # no |X| copy
    if largest > MAX_ABS_VALUE:
        raise ValueError(f"{name} has values up to {largest:.3g}; beyond {MAX_ABS_VALUE:g} the solvers' "
                         "tolerances cannot resolve one point of score: rescale the columns (e.g. to thousands) "
                         "or binarise them")
    y = np.asarray(y, dtype=float).reshape(-1)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y has {y.shape[0]} labels but {name} has {X.shape[0]} rows; pass one label per row")
    if labels == "binary":
        if not np.isin(y, (-1.0, 1.0)).all():
            raise ValueError("y must hold labels in {-1, +1}; map 0/1 or text labels with milpscore.data.validation.encode_labels")
    elif not np.isfinite(y).all() or np.abs(y).max() > MAX_ABS_VALUE:
        raise ValueError(f"y must be finite with |y| <= {MAX_ABS_VALUE:g}; rescale the target")
    if sample_weight is None:
        s = np.ones(X.shape[0])
    else:
        s = np.asarray(sample_weight, dtype=float).reshape(-1)
        if s.shape != y.shape or not np.isfinite(s).all() or (s < 0).any() or not s.sum() > 0:
            raise ValueError(f"sample_weight must be {y.shape[0]} finite non-negative numbers with a positive sum")
    return X, y, s


def check_number(name: str, value: Any, *, minimum: float = 0.0, strict: bool = True, integer: bool = False,
                 allow_none: bool = False) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a finite number above ``minimum``.

    ``strict``: ``value > minimum`` (else ``>=``); ``integer``: a whole number; ``allow_none``:
    None passes (an optional limit).
    """
    if value is None and allow_none:
        return
    ok = isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_)) and math.isfinite(value)
    ok = ok and (value > minimum if strict else value >= minimum) and (not integer or int(value) == value)
    if not ok:
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{name} must be {kind} {'>' if strict else '>='} {minimum:g}, got {value!r}")
