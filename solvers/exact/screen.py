"""Supports that survive the saturated-loss screen, kept from one RiskSLIM fit for the next fits of the same data.

The saturated loss of a support (the conditional entropy of the label given its values,
:func:`solvers.exact.box_logistic.saturated_loss`) bounds the loss of every model on it whatever
its coefficient box, intercept box or multiplier. A support enumeration of the RiskSLIM problem
(:mod:`solvers.exact.supports`) that bounded every support of its size at a prune level ``L``
therefore proves: every support it did not keep past the screen holds no model of objective below
``L``, for every multiplier. A later enumeration of the same rows, weights, costs and supports
whose own prune level is at most ``L`` (``RiskScoreClassifier(multiplier="auto")`` solves each
multiplier against the least objective known) lists only the survivors and counts ``L``
as the bound of the rest. The survivors are kept only when there are at most :data:`MAX_SUPPORTS`.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

#: most surviving supports kept (each a row of feature indices)
MAX_SUPPORTS = 1_000_000


class SupportScreen:
    """The survivors of one completed screen, shared by the fits of one ``fit`` call (module docstring)."""

    def __init__(self) -> None:
        self.level = -math.inf
        self.supports: np.ndarray | None = None
        self._key: tuple | None = None
        #: the listing the survivors are of (a :class:`solvers.exact.support_listing.Lister` or
        #: :class:`solvers.exact.blocked_supports.BlockedListing`), and the multiplier and whether the
        #: intercept box was the derived one in the fit that made it: a listing that rules in features by
        #: exclusion bounds is reused by a later fit whose own bounds they imply
        #: (:func:`solvers.exact.exclusion_listing.carries_over`), else only if it rules in the same ones itself
        self.listing = None
        self.source: tuple[float, bool] = (math.nan, False)

    @staticmethod
    def _key_of(problem, lister) -> tuple:
        """What the screen depends on: the rows, labels and weights (a BLAKE2 digest of their bytes,
        so no copy of the table is held), the costs, the supports listed (and the kind of listing: the
        enumeration's skips symmetric supports, the blocked step's lists all) and the objective's scale."""
        data, digest = problem.data, hashlib.blake2b(digest_size=32)
        for a in (data.X, data.y, data.weights):
            a = np.ascontiguousarray(a, dtype=float)
            digest.update(repr(a.shape).encode())
            digest.update(memoryview(a).cast("B"))
        return (digest.hexdigest(), problem.cost.tobytes(), problem.lo.tobytes(), problem.hi.tobytes(),
                bool(getattr(problem, "complements", False)), lister.forced.tobytes(), lister.free.tobytes(),
                int(lister.r), type(lister).__name__, getattr(lister, "branches", ()),
                float(problem.loss_cost), float(problem.offset))

    def store(self, problem, lister, level: float, supports: np.ndarray) -> None:
        """Keep the ``supports`` that passed the screen at ``level`` once every support of ``lister``
        (:class:`solvers.exact.support_listing.Lister`) of ``problem`` was bounded (a screen kept before at a
        higher level stays: it proves more)."""
        if supports.shape[0] <= MAX_SUPPORTS and self.level < level < math.inf:  # (at inf nothing was screened)
            self.level, self.supports, self._key = level, supports, self._key_of(problem, lister)
            self.listing = lister
            self.source = (float(problem.data.scale), bool(getattr(problem, "complements", False)))

    @property
    def ruled_in(self) -> tuple:
        """The sets of features the kept listing required (empty: none, or no listing kept)."""
        return tuple(getattr(self.listing, "ruled_in", ()))

    def survivors(self, problem, lister, level: float) -> np.ndarray | None:
        """The supports of ``lister`` to bound for ``problem`` at prune ``level`` (the others hold no
        model below :attr:`level`), or None when no kept screen covers them (other rows, costs, boxes
        or supports, or a level below ``level``)."""
        if self.supports is None or level > self.level or self._key != self._key_of(problem, lister):
            return None
        return self.supports
