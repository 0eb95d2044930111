"""One share rule (solvers.limits.phase_seconds) for Limits.share, and a heuristic's
relaxed solve within the call's limits (memory, threads, seed), not a budget restarted from seconds."""
from __future__ import annotations

import math
import os
import pickle
import time

import numpy as np
import pytest
from joblib import Parallel, delayed

from formulations.facets import Facets
from solvers import pipeline
from solvers.limits import LEAST_SHARE, MIN_MEMORY, MIN_PHASE, Limits, phase_seconds
from tests.formulations.test_facets_program import tiny


def test_phase_seconds_takes_its_fraction_with_a_floor_and_never_more_than_is_left():
    assert phase_seconds(0.5, 10.0) == 5.0
    assert phase_seconds(0.1, 0.2) == MIN_PHASE
    assert phase_seconds(0.5, 0.01) == 0.01
    assert phase_seconds(0.5, 0.0) == 0.0
    # a phase's least seconds: taken over its fraction, never past LEAST_SHARE of what is left
    assert phase_seconds(0.2, 10.0, 5.0) == 5.0
    assert phase_seconds(0.2, 3.0, 5.0) == 3.0 * LEAST_SHARE
    assert phase_seconds(0.2, 6.0, 5.0) == 6.0 * LEAST_SHARE
    assert phase_seconds(0.8, 6.0, 5.0) == 0.8 * 6.0  # (its fraction is not capped)
    assert phase_seconds(0.2, 0.06, 5.0) == MIN_PHASE
    assert phase_seconds(0.2, 0.01, 5.0) == 0.01
    assert phase_seconds(0.2, 100.0, 5.0) == 20.0
    assert phase_seconds(0.1, 0.2, 0.0) == MIN_PHASE


def test_a_share_takes_its_fraction_of_the_time_left_and_keeps_the_rest_of_the_budget():
    limits = Limits(time_limit=10.0, memory=300 * 2**20, threads=2, seed=3, n_jobs=2, node_limit=7).started()
    share = limits.share(0.3)
    assert share.time_limit == pytest.approx(3.0, abs=0.05)
    assert share.seconds_left() == pytest.approx(3.0, abs=0.05) and share.deadline <= limits.deadline
    assert (share.memory, share.threads, share.seed, share.n_jobs, share.node_limit) == (300 * 2**20, 2, 3, 2, 7)
    whole = share.share(1.0)  # a share of a share never outlives it
    assert whole.deadline <= share.deadline + 1e-9
    assert limits.share(0.2, 5.0).seconds_left() == pytest.approx(5.0, abs=0.05)  # (its least seconds)
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


def test_a_capped_phase_ends_at_its_cap_or_the_deadline_and_an_untimed_budget_has_no_end():
    limits = Limits(time_limit=10.0, memory=300 * 2**20, node_limit=7).started()
    capped = limits.capped(2.0)
    assert capped.seconds_left() == pytest.approx(2.0, abs=0.05) and capped.node_limit == 7
    assert limits.capped(60.0).deadline == limits.deadline  # never past the call's deadline
    free = Limits.untimed(node_limit=5).started()
    assert free.time_limit is None and free.deadline is None and free.node_limit == 5
    assert free.capped(1.0) == free and free.seconds_left() == math.inf and not free.expired()


def _left(limits: Limits) -> tuple[float, int]:
    return limits.seconds_left(), os.getpid()


def test_a_budget_sent_to_a_worker_process_keeps_its_deadline():
    """A started budget pickled to a joblib worker (another process, its own ``perf_counter``) has
    there the seconds it had here, less the time in transit; an untimed one stays untimed."""
    limits = Limits(time_limit=30.0).started()
    before = limits.seconds_left()
    (left, pid), = Parallel(n_jobs=2)(delayed(_left)(limits) for _ in range(1))
    after = limits.seconds_left()
    assert pid != os.getpid()
    assert after - 0.05 <= left <= before + 0.05
    assert pickle.loads(pickle.dumps(limits)).seconds_left() == pytest.approx(limits.seconds_left(), abs=0.05)
    untimed = pickle.loads(pickle.dumps(Limits.untimed(seed=3).started()))
    assert untimed.deadline is None and untimed.is_started and untimed.seed == 3


# ---------------------------------------------------------------- the exact engine within its budget
#: the budget of each limited step here (seconds)
LIMIT = 1.0
#: seconds a step may end past its budget: its last look at the clock comes one unit of work (a
#: kernel call, a HiGHS round, a node) before it, plus the noise of a shared machine
GRACE = 0.75


@pytest.fixture(scope="module")
def wide():
    """One generated table: 3,000 rows of 60 0/1 features (SLIM and RiskSLIM with max_size 5, where
    no step finishes in a second), and 800 rows of 10 features valued -3..3 for the box search; the
    starts are the heuristics'."""
    from formulations.riskslim import RiskSLIM
    from formulations.slim import SLIM
    from solvers.catalog import CATALOG

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (3000, 60)).astype(float)
    y = np.where(X[:, :6] @ rng.normal(0, 1, 6) + rng.normal(0, 1.5, 3000) > 0, 1.0, -1.0)
    Xi = rng.integers(-3, 4, (800, 10)).astype(float)
    yi = np.where(Xi @ rng.normal(0, 1, 10) + rng.normal(0, 2, 800) > 0, 1.0, -1.0)
    cases = {"slim": SLIM(c0=1e-3, coef_bound=5, max_size=5).instance(X, y),
             "riskslim": RiskSLIM(c0=1e-3, coef_bound=5, max_size=5).instance(X, y),
             "box": SLIM(c0=1e-3, coef_bound=10, max_size=8).instance(Xi, yi)}
    starts = {}
    for name, inst in cases.items():
        model = CATALOG["riskslim" if name == "riskslim" else "slim"].heuristic_function(
            inst, Limits(time_limit=1.0).started(), 0)
        starts[name] = {"start": (model.coef, model.intercept), "incumbent": inst.objective(model)}
    return cases, starts


def _steps():
    from solvers.exact.blocked_supports import solve_blocked
    from solvers.exact.box_cover import box_cover
    from solvers.exact.floor import riskslim_floor
    from solvers.exact.sign_cover import SignCoverProblem, sign_cover
    from solvers.exact.zero_one_supports import zero_one
    from solvers.exact.sparse_logistic import SparseLogistic
    from solvers.exact.support_bayes_floor import least_bayes_error
    from solvers.exact.supports import enumerate_supports

    def bound(found):  # (bound, objective of its model or the start's)
        return found.bound, found.objective

    return {
        "bayes_supports": lambda c, s, limits: bound(enumerate_supports(zero_one(c["slim"]), limits, **s["slim"])),
        "supports": lambda c, s, limits: bound(enumerate_supports(SparseLogistic.from_instance(c["riskslim"]), limits,
                                                                  **s["riskslim"])),
        "blocked_slim": lambda c, s, limits: bound(solve_blocked(zero_one(c["slim"]), limits, **s["slim"])),
        "blocked_riskslim": lambda c, s, limits: bound(solve_blocked(SparseLogistic.from_instance(c["riskslim"]),
                                                                     limits, **s["riskslim"])),
        "support_floor": lambda c, s, limits: (least_bayes_error(c["slim"].X, c["slim"].y, c["slim"].weights,
                                                                 np.arange(60), 5, limits)[0],
                                               s["slim"]["incumbent"]),
        "sign_cover_lp": lambda c, s, limits: (sign_cover(SignCoverProblem.from_zero_one(zero_one(c["slim"])),
                                                          limits).bound, s["slim"]["incumbent"]),
        "box_search": lambda c, s, limits: (box_cover(zero_one(c["box"]), limits, **s["box"]).bound,
                                            s["box"]["incumbent"]),
        "riskslim_floor": lambda c, s, limits: (riskslim_floor(c["riskslim"], limits)[0], s["riskslim"]["incumbent"]),
    }


@pytest.mark.parametrize("spent", [False, True], ids=["one_second", "spent"])
@pytest.mark.parametrize("step", sorted(_steps()))
def test_a_limited_exact_step_ends_within_its_budget_with_a_valid_bound(wide, step, spent):
    """Every function of the exact engine asks the budget it is given: with one second (each runs
    for seconds without a limit) or a budget already spent, it returns within the budget and a
    small grace, with a bound no larger than its incumbent's objective (the SLIM steps' bounds
    exclude the L1 tie-breaker: they bound the objective from below; the supports' saturated-loss
    and Bayes-error screens and the floors are lower bounds of every model)."""
    cases, starts = wide
    limits = Limits(time_limit=LIMIT)
    limits = limits.ending_earlier(LIMIT) if spent else limits.started()
    t0 = time.perf_counter()
    bound, objective = _steps()[step](cases, starts, limits)
    wall = time.perf_counter() - t0
    assert wall <= (0 if spent else LIMIT) + GRACE, f"{step}: {wall:.2f} s"
    assert bound <= objective + 1e-9
