"""One share rule (solvers.limits.phase_seconds) for Limits.share and Clock.part, and a heuristic's
relaxed solve within the call's limits (memory, threads, seed), not a budget restarted from seconds."""
from __future__ import annotations

import pytest

from formulations.facets import Facets
from solvers import pipeline
from solvers.limits import Clock, Limits, phase_seconds
from tests.formulations.test_facets_program import tiny


def test_phase_seconds_takes_its_fraction_with_a_floor_and_never_more_than_is_left():
    assert phase_seconds(0.5, 10.0) == 5.0
    assert phase_seconds(0.1, 0.2) == Clock.MIN_PHASE
    assert phase_seconds(0.5, 0.01) == 0.01
    assert phase_seconds(0.5, 0.0) == 0.0


def test_limits_share_and_clock_part_give_the_same_phase():
    limits = Limits(time_limit=10.0).started()
    share, part = limits.share(0.3), limits.clock().part(0.3)
    assert share.time_limit == pytest.approx(3.0, abs=0.05)
    assert part.time_limit == pytest.approx(share.time_limit, abs=0.05)
    assert part.deadline == pytest.approx(share.deadline, abs=0.05)


def test_the_facets_heuristic_solves_its_relaxation_within_the_call_limits(monkeypatch):
    seen = []
    real = pipeline.solve_relaxed

    def recording(instance, backend=None, *, limits=None, **kwargs):
        seen.append(limits)
        return real(instance, backend, limits=limits, **kwargs)

    monkeypatch.setattr(pipeline, "solve_relaxed", recording)
    X, y = tiny(3, n=40)
    call = Limits(time_limit=30, memory=300 * 2**20, threads=1, seed=7).started()
    fit = pipeline.solve_exact(Facets("hinge", lam=0.02, grid_unit=0.5, bound=3).instance(X, y), limits=call)
    assert fit.model is not None and seen
    assert all(s.memory == call.memory and s.seed == 7 and s.threads == 1 for s in seen)
    assert all(s.deadline <= call.deadline for s in seen)
