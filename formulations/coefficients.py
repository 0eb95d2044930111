"""CoefficientSet: per-feature bounds, integrality, sign, L0 cost and must-include flags.

Shared by every builder (SLIM, Facets exact, fused, rounding). Bounds are in model units
(points per unit of feature). The intercept range, when not given, is computed from the
coefficient box and the data (:meth:`CoefficientSet.intercept_bounds`), not guessed.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class CoefficientSet:
    """Per-feature coefficient constraints ``lb_j <= lambda_j <= ub_j`` (integer if flagged).

    Attributes
    ----------
    lb, ub : (d,) float bounds (``lb <= 0 <= ub`` unless must-include forces a sign).
    integer : (d,) bool, coefficient restricted to integers.
    c0 : (d,) float, per-feature L0 cost multiplier (the builder's C0 times this).
    must_include : (d,) bool, feature forced into the model (L0 indicator fixed to 1).
    names : feature names.
    intercept_lb, intercept_ub : explicit intercept bounds, or None to compute from data.
    """

    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray
    c0: np.ndarray
    must_include: np.ndarray
    names: tuple[str, ...]
    intercept_lb: float | None = None
    intercept_ub: float | None = None

    def __post_init__(self) -> None:
        d = len(self.names)
        for field_name in ("lb", "ub", "integer", "c0", "must_include"):
            arr = getattr(self, field_name)
            if np.shape(arr) != (d,):
                raise ValueError(f"CoefficientSet.{field_name} has shape {np.shape(arr)}, expected ({d},)")
        bad = np.flatnonzero(np.asarray(self.lb) > np.asarray(self.ub))
        if bad.size:
            j = bad[0]
            raise ValueError(f"impossible bounds for feature {self.names[j]!r}: lower {self.lb[j]} > upper "
                             f"{self.ub[j]}; make lb <= ub")
        if np.any(~np.isfinite(self.lb)) or np.any(~np.isfinite(self.ub)):
            raise ValueError("coefficient bounds must be finite (big-M values are derived from them)")
        forced_zero = np.asarray(self.must_include) & (np.asarray(self.lb) == 0) & (np.asarray(self.ub) == 0)
        if forced_zero.any():
            j = np.flatnonzero(forced_zero)[0]
            raise ValueError(f"feature {self.names[j]!r} is must-include but its bounds are [0, 0]")
        if (self.intercept_lb is not None and self.intercept_ub is not None
                and self.intercept_lb > self.intercept_ub):
            raise ValueError(f"impossible intercept bounds: {self.intercept_lb} > {self.intercept_ub}")

    # ----------------------------------------------------------- constructors
    @classmethod
    def uniform(cls, names: int | Sequence[str], bound: float = 10, *, lower: float | None = None,
                integer: bool = True, c0: float = 1.0, sign: int | Sequence[int] = 0,
                must_include: Sequence[str] = ()) -> "CoefficientSet":
        """Same box ``[lower, bound]`` (lower defaults to ``-bound``) for every feature.

        ``sign`` is 0 (free), +1 (non-negative) or -1 (non-positive), per feature or shared.
        """
        if isinstance(names, (int, np.integer)):
            names = [f"x{j}" for j in range(int(names))]
        names = tuple(str(n) for n in names)
        d = len(names)
        if bound < 0:
            raise ValueError(f"bound must be >= 0, got {bound}")
        lo = -float(bound) if lower is None else float(lower)
        lb = np.full(d, lo)
        ub = np.full(d, float(bound))
        sign = np.broadcast_to(np.asarray(sign), (d,))
        if not np.isin(sign, (-1, 0, 1)).all():
            raise ValueError("sign must be -1, 0 or +1 for each feature")
        lb = np.where(sign > 0, np.maximum(lb, 0), lb)
        ub = np.where(sign < 0, np.minimum(ub, 0), ub)
        unknown = set(must_include) - set(names)
        if unknown:
            raise ValueError(f"must_include names unknown features {sorted(unknown)}; known: {list(names)}")
        mi = np.isin(np.array(names, dtype=object), list(must_include)) if must_include else np.zeros(d, bool)
        return cls(lb=lb, ub=ub, integer=np.full(d, bool(integer)), c0=np.full(d, float(c0)),
                   must_include=mi, names=names)

    def with_feature(self, name: str, *, lb: float | None = None, ub: float | None = None,
                     integer: bool | None = None, c0: float | None = None,
                     must_include: bool | None = None) -> "CoefficientSet":
        """Copy with one feature's constraints changed (by name)."""
        try:
            j = self.names.index(name)
        except ValueError:
            raise KeyError(f"unknown feature {name!r}; known: {list(self.names)}") from None
        arrays = {k: np.array(getattr(self, k)) for k in ("lb", "ub", "integer", "c0", "must_include")}
        for key, value in (("lb", lb), ("ub", ub), ("integer", integer), ("c0", c0),
                           ("must_include", must_include)):
            if value is not None:
                arrays[key][j] = value
        return replace(self, **arrays)

    def aligned(self, names: Sequence[str]) -> "CoefficientSet":
        """The same set with its features in the order of ``names`` (matched by name, not position).

        Raises ``ValueError`` naming the columns missing from the set and the set's features
        missing from ``names``.
        """
        names = tuple(str(n) for n in names)
        if names == self.names:
            return self
        missing, unknown = sorted(set(names) - set(self.names)), sorted(set(self.names) - set(names))
        if missing or unknown or len(names) != len(self.names):
            raise ValueError(f"the CoefficientSet does not match the columns of X: columns without an entry {missing}, "
                             f"entries without a column {unknown}; build it from the same column names")
        order = np.array([self.names.index(n) for n in names])
        arrays = {k: np.asarray(getattr(self, k))[order] for k in ("lb", "ub", "integer", "c0", "must_include")}
        return replace(self, names=names, **arrays)

    # ------------------------------------------------------------- properties
    @property
    def d(self) -> int:
        return len(self.names)

    @property
    def magnitude(self) -> np.ndarray:
        """``max(|lb_j|, |ub_j|)``: the L0 big-M of each coefficient."""
        return np.maximum(np.abs(self.lb), np.abs(self.ub))

    def score_range(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-row min and max of ``x_i . lambda`` over the coefficient box (vectorised)."""
        X = np.asarray(X, dtype=float)
        pos, neg = np.maximum(X, 0), np.minimum(X, 0)
        smax = pos @ self.ub + neg @ self.lb
        smin = pos @ self.lb + neg @ self.ub
        return smin, smax

    def intercept_bounds(self, X: np.ndarray, margin: float = 1.0,
                         score_range: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
        """Intercept range that loses no classifier.

        With scores ``s_i = x_i . lambda`` in ``[smin_i, smax_i]``, an intercept above
        ``margin - min_i smin_i`` already classifies every row positive (and one below
        ``-margin - max_i smax_i`` every row negative), so ``[-max smax - margin,
        -min smin + margin]`` contains an optimal intercept. Explicit bounds take precedence;
        integer-rounded outwards. ``score_range`` may pass a precomputed :meth:`score_range`.
        """
        smin, smax = self.score_range(X) if score_range is None else score_range
        lo = float(np.floor(-smax.max() - margin)) if smax.size else -margin
        hi = float(np.ceil(-smin.min() + margin)) if smin.size else margin
        if self.intercept_lb is not None:
            lo = float(self.intercept_lb)
        if self.intercept_ub is not None:
            hi = float(self.intercept_ub)
        return lo, hi
