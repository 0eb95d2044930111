"""How long bounding a size's supports would take: the rate projection of the support enumerations.

There are ``C(d_free, K - |F|)`` supports of a size: their rate, measured on :data:`SAMPLES`
chunks of :data:`PROJECTION_CHUNK` supports spread over the listing (:func:`sampled_rate`, for
sizes of at least :data:`SAMPLED_PASS` supports) or on the first chunks of a small size (doubling
from :data:`FIRST_CHUNK`, in :mod:`solvers.exact.supports`), projects the whole pass. The
decision taken on the projection (give up when it is over a share of the time left) is in the
route's table, :data:`solvers.exact.route.ENUMERATION`.
"""
from __future__ import annotations

import math
import time

from solvers.exact import route
from solvers.exact.support_listing import Lister, sift
from solvers.limits import Limits

#: supports in a chunk from which its rate projects the whole pass (smaller chunks are dominated
#: by the fixed cost of a call and project only when they are slow)
PROJECTION_CHUNK = 1024
#: the first chunk of each size; chunks double up to CHUNK, each projecting the whole pass
FIRST_CHUNK = 16
#: evenly spaced places of a large size's listing at which :data:`PROJECTION_CHUNK` supports are
#: bounded to project its pass (consecutive supports share their first columns, so the rate of the
#: first chunks is not that of the rest); their work is not kept
SAMPLES = 16
#: sizes with at least this many supports are projected by the samples (they cost at most 1/64 of
#: the pass); smaller ones by their first chunks
SAMPLED_PASS = 64 * SAMPLES * PROJECTION_CHUNK


def sampled_rate(bound, lister: Lister, level: float, budget: float = math.inf) -> float:
    """Seconds per listed support of bounding ``lister``'s listing at prune ``level``, measured on
    :data:`PROJECTION_CHUNK` supports at each of :data:`SAMPLES` evenly spaced places (``lister``
    does not move; the supports bounded there are bounded again in their turn). A first probe of
    :data:`FIRST_CHUNK` supports, and each sample, may end the measure early: once it has taken
    ``ENUMERATION.decisive_share`` (:data:`solvers.exact.route.ENUMERATION`) of ``budget`` seconds
    and its rate projects the whole pass above
    ``budget`` (so slow supports cost a small probe, not the samples; a fast probe, whose time is
    mostly the call's overhead, decides nothing)."""
    took, listed = 0.0, 0
    for i, size in [(SAMPLES // 2, FIRST_CHUNK)] + [(i, PROJECTION_CHUNK) for i in range(SAMPLES)]:
        probe = lister.at(int((i + 0.5) * lister.total / SAMPLES))
        started, before = time.perf_counter(), probe.listed
        sift(bound, probe, size, level)
        took, listed = took + time.perf_counter() - started, listed + probe.listed - before
        if took >= route.ENUMERATION.decisive_share * budget and took / max(listed, 1) * lister.total > budget:
            break
    return took / max(listed, 1)


def too_long(lister: Lister, projected: float, limits: Limits) -> str:
    return (f"bounding the {lister.total} supports of {lister.r + lister.forced.size} features would take "
            f"about {projected:.0f} s, more than the {max(limits.seconds_left(), 0.0):.0f} s left")
