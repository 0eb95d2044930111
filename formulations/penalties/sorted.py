"""Ordered weighted L1 (OWL / SLOPE): a penalty on the sorted magnitudes.

:math:`\\Omega(w) = \\sum_{i=1}^p c_i |w|_{(i)}` with :math:`|w|_{(1)} \\ge \\dots \\ge |w|_{(p)}`
and weights :math:`c_1 \\ge c_2 \\ge \\dots \\ge c_p \\ge 0` (EYE paper, Table 1; Bogdan et al.'s
SLOPE, Zeng & Figueiredo's OWL). With :math:`c = (1, 0, \\dots, 0)` it is the :math:`\\ell_\\infty`
norm, with constant :math:`c` the lasso.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import kernels
from .base import Penalty, check_length, check_weights


@dataclass(frozen=True, eq=False)
class OWL(Penalty):
    """OWL / SLOPE penalty :math:`\\sum_i c_i |w|_{(i)}`, ``weights`` :math:`c` non-increasing, >= 0, shape (p,).

    Prox (Zeng & Figueiredo 2014, Bogdan et al. 2015): sort :math:`|v|` in decreasing order,
    subtract :math:`t c`, project on the monotone non-negative cone
    :math:`\\{x_1 \\ge \\dots \\ge x_p \\ge 0\\}` by pool-adjacent-violators, undo the sort and
    restore signs. O(p log p), dominated by the sort: one ``np.sort`` of integer keys (|v| truncated
    with the index in the low bits, ``kernels.owl_sort_keys``), then one compiled pass
    (``kernels.owl_prox``) that repairs the order exactly and runs the stack-based
    pool-adjacent-violators.
    """

    weights: np.ndarray = field(repr=False)
    _writes_out = True
    _checks_finite = True  # the compiled pass counts non-finite entries

    def __post_init__(self) -> None:
        c = check_weights(self.weights, "weights")
        if np.any(np.diff(c) > 0):
            raise ValueError("weights of OWL must be non-increasing (c_1 >= c_2 >= ... >= c_p >= 0); "
                             "sort them in decreasing order")
        object.__setattr__(self, "weights", c)

    def _value(self, w: np.ndarray) -> float:
        check_length(w, self.weights.size, "w", "weights")
        return float(self.weights @ np.sort(np.abs(w))[::-1])

    def _prox(self, v: np.ndarray, step: float, out: np.ndarray | None = None) -> np.ndarray:
        check_length(v, self.weights.size, "v", "weights")
        p = v.size
        out = np.empty(p) if out is None else out
        work = np.empty(p), np.empty(p), np.empty(p, dtype=np.int64)
        bits = max(1, (p - 1).bit_length())
        keys = kernels.owl_sort_keys(v, bits, np.empty(p, dtype=np.uint64))
        keys.sort()  # the one O(p log p) step: an integer sort of |v| truncated, with the indices
        if not kernels.owl_prox(v, keys, bits, self.weights, step, out, *work):
            exact = np.argsort(np.abs(v))[::-1].astype(np.uint64)  # many near-ties: sort the floats
            kernels.owl_prox(v, exact, 63, self.weights, step, out, *work)
        return out

    def zero_gauge(self, z: np.ndarray) -> float:
        """Dual norm :math:`\\max_k \\sum_{i \\le k} |z|_{(i)} / \\sum_{i \\le k} c_i` (inf when a prefix of c is 0)."""
        if z.size == 0:
            return 0.0
        num = np.cumsum(np.sort(np.abs(z))[::-1])
        den = np.cumsum(self.weights)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(num > 0, num / den, 0.0)
        return float(ratio.max())
