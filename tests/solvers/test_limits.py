"""One share rule (solvers.limits.phase_seconds) for Limits.share, and a heuristic's
relaxed solve within the call's limits (memory, threads, seed), not a budget restarted from seconds."""
from __future__ import annotations

import pytest

from formulations.facets import Facets
from solvers import pipeline
from solvers.limits import MIN_PHASE, Limits, phase_seconds
from tests.formulations.test_facets_program import tiny


def test_phase_seconds_takes_its_fraction_with_a_floor_and_never_more_than_is_left():
    assert phase_seconds(0.5, 10.0) == 5.0
    assert phase_seconds(0.1, 0.2) == MIN_PHASE
    assert phase_seconds(0.5, 0.01) == 0.01
    assert phase_seconds(0.5, 0.0) == 0.0


def test_a_share_takes_its_fraction_of_the_time_left_and_keeps_the_rest_of_the_budget():
    limits = Limits(time_limit=10.0, memory=300 * 2**20, threads=2, seed=3, n_jobs=2, node_limit=7).started()
    share = limits.share(0.3)
    assert share.time_limit == pytest.approx(3.0, abs=0.05)
    assert share.seconds_left() == pytest.approx(3.0, abs=0.05) and share.deadline <= limits.deadline
    assert (share.memory, share.threads, share.seed, share.n_jobs, share.node_limit) == (300 * 2**20, 2, 3, 2, 7)
    whole = share.share(1.0)  # a share of a share never outlives it
    assert whole.deadline <= share.deadline + 1e-9


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
