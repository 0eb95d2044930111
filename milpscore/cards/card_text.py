"""Numbers a reader can copy: the shortest decimal that keeps every training row's answer.

A threshold found on data (``hr_target_ratio >= 0.011173184357542``, a quantile that happens to
be a ratio of two counts) or a real-valued score threshold (``SCORE > -1.9985792706438614``) is
printed with far more digits than the rule needs. On the training rows only the *interval* the
number lies in matters:

* a feature threshold ``x >= c`` (``c`` a training value, :func:`formulations.bins.cut_points`)
  gives the same indicator on every training row for any ``c'`` in ``(lo, c]``, ``lo`` the
  largest training value below ``c`` (:func:`readable_cuts`);
* a score threshold ``SCORE > t`` gives the same prediction on every training row for any
  ``t'`` in ``[a, b)``, ``a`` the largest training score ``<= t`` and ``b`` the smallest ``> t``
  (:func:`readable_points` picks it on the rounded scores);
* real-valued points (EYE, continuous points tables) are rounded to the fewest significant
  digits with which the rounded card, with a threshold chosen as above, predicts every training
  row as the exact model does (:func:`readable_points`).

:func:`shortest_decimal` picks, in such an interval, the number with the fewest significant
digits (ties: the one nearest the original value). Membership is tested in floating point,
exactly as the model compares numbers, so the printed number is a faithful rule on the data.
"""
from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

import numpy as np

#: most significant digits tried before giving up and keeping the value as it is
MAX_DIGITS = 17


def _inside(c: float, lo: float, hi: float, closed: str) -> bool:
    if closed == "right":  # (lo, hi]
        return lo < c <= hi
    return lo <= c < hi  # [lo, hi)


def shortest_decimal(lo: float, hi: float, target: float, closed: str = "right") -> float:
    """The number with the fewest significant digits in ``(lo, hi]`` (``closed="right"``) or
    ``[lo, hi)`` (``closed="left"``); among equally short ones the nearest to ``target`` (a point
    of the interval: the value being replaced). ``lo`` may be ``-inf`` and ``hi`` ``+inf``.

    Returns ``target`` itself when no shorter number lies in the interval.
    """
    if closed not in ("left", "right"):
        raise ValueError(f"closed must be 'left' or 'right', got {closed!r}")
    target, lo, hi = float(target), float(lo), float(hi)
    if not np.isfinite(target) or not _inside(target, lo, hi, closed):
        raise ValueError(f"target {target!r} must be a finite number in the interval ({lo!r}, {hi!r})")
    if _inside(0.0, lo, hi, closed):
        return 0.0
    scale = max(abs(v) for v in (lo, hi, target) if np.isfinite(v))
    top = int(np.floor(np.log10(scale))) + 1
    with localcontext() as ctx:
        ctx.prec = 60
        exact = Decimal(target)
        for e in range(top, top - MAX_DIGITS - 1, -1):
            q = Decimal(1).scaleb(e)
            down = (exact / q).to_integral_value(ROUND_FLOOR) * q
            up = (exact / q).to_integral_value(ROUND_CEILING) * q
            for c in sorted({down, up}, key=lambda d: abs(d - exact)):
                if _inside(float(c), lo, hi, closed):
                    return float(c)
    return target


def readable_cuts(values: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Each threshold ``c`` of ``x >= c`` replaced by the shortest decimal in ``(lo, c]``, ``lo``
    the largest of ``values`` below ``c``: every row of ``values`` gets the same indicator.

    A cut with no value below it is kept. The result is increasing when ``cuts`` is (the
    intervals of distinct cuts do not overlap).
    """
    v = np.unique(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    cuts = np.asarray(cuts, dtype=float)
    below = np.searchsorted(v, cuts, side="left") - 1  # index of the largest value < c
    out = cuts.copy()
    for k in np.flatnonzero(below >= 0):  # a handful of cuts per column
        out[k] = shortest_decimal(v[below[k]], cuts[k], cuts[k], "right")
    return out


def literal(text: object) -> str:
    """``text`` as matplotlib prints it literally: each ``$`` escaped, so a name such as
    ``"price $ >= 5 and cost $ >= 3"`` is not typeset as mathtext (and ``"$\\frac{$"`` does not raise)."""
    return str(text).replace("$", "\\$")


def round_significant(x: np.ndarray, digits: int) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (each value on its own scale)."""
    x = np.asarray(x, dtype=float)
    return np.array([float(f"{v:.{digits}g}") for v in x.ravel()]).reshape(x.shape)


def readable_points(points: np.ndarray, threshold: float, X: np.ndarray, min_digits: int = 2, max_digits: int = 6
                    ) -> tuple[np.ndarray, float] | None:
    """Rounded points and a threshold that predict every row of ``X`` as the exact card does.

    The exact card predicts ``X @ points > threshold``. For ``d = min_digits .. max_digits``
    significant digits (from 2: one digit turns 1.67 into 2) the points are rounded (:func:`round_significant`); if the rounded scores of the rows
    predicted positive all exceed those of the rows predicted negative, the threshold is the
    shortest number between them (:func:`shortest_decimal`). Returns ``(points_d, threshold_d)``
    for the least such ``d``, or None when no ``d <= max_digits`` keeps every prediction.
    """
    points = np.asarray(points, dtype=float)
    X = np.asarray(X, dtype=float)
    positive = X @ points > threshold
    for d in range(min_digits, max_digits + 1):
        shown = round_significant(points, d)
        s = X @ shown
        a = float(s[~positive].max(initial=-np.inf))
        b = float(s[positive].min(initial=np.inf))
        if not a < b:
            continue
        t = float(threshold)
        lo = a if np.isfinite(a) else min(t, b) - 1.0  # no row predicted negative: any floor below
        hi = b if np.isfinite(b) else np.inf
        centre = min(max(t, lo), float(np.nextafter(hi, -np.inf)))
        return shown, shortest_decimal(lo, hi, centre, "left")
    return None
