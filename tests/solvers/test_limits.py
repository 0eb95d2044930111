"""One share rule (solvers.limits.phase_seconds) for Limits.share, and a heuristic's
relaxed solve within the call's limits (memory, threads, seed), not a budget restarted from seconds."""
from __future__ import annotations

import time

import numpy as np
import pytest

from formulations.facets import Facets
from solvers import pipeline
from solvers.limits import MIN_MEMORY, MIN_PHASE, Limits, phase_seconds
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


def test_the_proximal_relaxation_stops_at_the_deadline_and_says_so():
    """``solve_relaxed(backend="prox")`` honours the budget: with a deadline already passed it stops
    after one iteration (status feasible, "time limit" in the message, the point no better than
    the converged one); without a limit it converges to the certified optimum."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 20))
    y = np.where(X[:, :3] @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=400) > 0, 1.0, -1.0)
    inst = Facets("logistic", lam=0.01, grid_unit=0.5, bound=3).instance(X, y)
    free = pipeline.solve_relaxed(inst, "prox", limits=Limits(time_limit=None), options={"tol": 1e-10})
    assert free.status.value == "optimal", free.message
    spent = Limits(time_limit=1e-3).started()
    time.sleep(0.01)
    stopped = pipeline.solve_relaxed(inst, "prox", limits=spent, options={"tol": 1e-10})
    assert stopped.status.value == "feasible" and "time limit" in stopped.message
    assert stopped.result.iterations == 1
    assert stopped.result.objective >= free.result.objective - 1e-9


def test_the_proximal_relaxation_checks_its_design_against_the_memory_budget():
    """A design of 3,000 x 800 floats (18 MiB) is over a 16 MiB budget: the path is not run and the
    fit says why (memory_limit), before anything is allocated; within a large budget it runs."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 800))
    y = np.where(X[:, 0] + rng.normal(size=3000) > 0, 1.0, -1.0)
    inst = Facets("logistic", lam=0.01, grid_unit=0.5, bound=3).instance(X, y)
    small = pipeline.solve_relaxed(inst, "prox", limits=Limits(time_limit=None, memory=MIN_MEMORY))
    assert small.model is None and small.status.value == "no_solution_found"
    assert "memory_limit" in small.message and "MiB" in small.message
    assert pipeline._prox_memory(inst) > MIN_MEMORY
    big = pipeline.solve_relaxed(inst, "prox", limits=Limits(time_limit=None, memory=2**30),
                                 options={"max_iter": 5})
    assert big.model is not None
