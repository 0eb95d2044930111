"""The box search (solvers.exact.box_cover) with its root split into boxes searched by joblib
workers (``n_jobs``): the boxes cover every model once, and the search certifies the optimum that
enumeration finds (``tests/solvers/test_slim_solver.py``'s brute force) and that the serial search
finds, on local processes and on a ``dask.distributed`` ``LocalCluster``."""
import functools
import itertools
import time

import numpy as np
import pytest
from joblib import Parallel, parallel_backend

from formulations.slim import SLIM
from solvers.exact import box_cover as box_cover_module
from solvers.exact import support_workers
from solvers.exact.box_cover import box_cover, split_box
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits
from tests.solvers.test_parallel_supports import dask_client  # noqa: F401 (fixture)
from tests.solvers.test_slim_solver import _enumerate, _random_case


@pytest.mark.parametrize("seed", range(40))
def test_the_boxes_hold_every_model_once(seed):
    """Every integer point of the box with at most ``max_size`` features in use lies in exactly one
    of the boxes, and no point lies in two (enumerated)."""
    X, y, sw, cw, cs, spec = _random_case(seed)
    problem = ZeroOneProgram.from_instance(spec.instance(X, y, sw))
    lo, hi = np.ceil(problem.lo - 1e-9), np.floor(problem.hi + 1e-9)
    boxes = split_box(problem, lo, hi, 1 + seed % 30)
    for point in itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(lo, hi)]):
        point = np.array(point, float)
        holding = sum(bool(np.all((b_lo <= point) & (point <= b_hi))) for b_lo, b_hi in boxes)
        allowed = int(np.sum(problem.forced | (point != 0))) <= problem.max_size
        assert holding == 1 if allowed else holding <= 1, (point, holding, allowed)


def _many_valued(seed: int, n: int = 160, d: int = 6):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, (n, d)).astype(float)
    y = np.where(X[:, :3] @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 1.5, n) > 0, 1.0, -1.0)
    return ZeroOneProgram.from_instance(SLIM(coef_bound=3, c0=0.01, max_size=4).instance(X, y))


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_with_two_workers_the_search_certifies_the_enumerated_optimum(seed):
    X, y, sw, cw, cs, spec = _random_case(seed)
    inst = spec.instance(X, y, sw)
    _, best_total = _enumerate(X, y, sw, cw, cs, spec, inst)
    problem = ZeroOneProgram.from_instance(inst)
    found = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=2))
    assert found.finished
    assert found.objective == pytest.approx(best_total, abs=1e-9)
    assert problem.objective(np.arange(problem.d), found.coef, found.intercept) == pytest.approx(found.objective)
    assert found.objective - 1e-9 * max(abs(found.objective), 1e-10) - 1e-12 <= found.bound <= best_total + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_with_two_workers_the_search_equals_the_serial_one(seed):
    """Many-valued features (the box search's instances), from a start and without one."""
    problem = _many_valued(seed)
    serial = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9))
    start = (np.zeros(problem.d), problem.objective(np.arange(problem.d), np.zeros(problem.d), 0.0))
    for kwargs in ({}, {"start": (start[0], 0.0), "incumbent": start[1]}):
        parallel = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=2), **kwargs)
        assert serial.finished and parallel.finished
        assert parallel.objective == pytest.approx(serial.objective, abs=1e-9)
        assert problem.objective(np.arange(problem.d), parallel.coef, parallel.intercept) == \
            pytest.approx(parallel.objective)
        assert parallel.bound <= serial.objective + 1e-9


def test_on_a_dask_cluster_the_search_equals_the_serial_one(dask_client):  # noqa: F811
    problem = _many_valued(7)
    serial = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9))
    with parallel_backend("dask"):
        parallel = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=-1))
    assert serial.finished and parallel.finished
    assert parallel.objective == pytest.approx(serial.objective, abs=1e-9)
    assert parallel.bound <= serial.objective + 1e-9


def test_stopped_at_the_deadline_the_bound_stays_valid():
    """A deadline that ends the search while boxes are open or unsent: the bound is below the
    optimum (the serial search's certified one) and the model is a real one."""
    problem = _many_valued(11, n=600, d=9)
    serial = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9))
    assert serial.finished
    for seconds in (0.0, 0.3):  # a budget already spent, and one that ends mid-search
        found = box_cover(problem, Limits(1.0, mip_rel_gap=1e-9, n_jobs=2).ending_earlier(1.0 - seconds))
        assert found.bound <= serial.objective + 1e-9
        if found.coef is not None:
            assert found.objective >= serial.objective - 1e-9
            assert problem.objective(np.arange(problem.d), found.coef, found.intercept) == \
                pytest.approx(found.objective)


def test_the_search_starts_its_joblib_call_once_the_workers_start_up_call_has_ended(monkeypatch):
    """joblib's dask backend never collects the results of a call that starts just before another call
    on the same backend ends (:func:`solvers.exact.support_workers.workers_started`): with the workers'
    start-up call made slow, the search's own call starts only after it has ended, and certifies."""
    problem = _many_valued(0)
    monkeypatch.setattr(support_workers, "_load_kernels", functools.partial(time.sleep, 1.0))
    alive_at_start = []

    def recording(*args, **kwargs):
        alive_at_start.append(any(thread.is_alive() for thread in support_workers._warming))
        return Parallel(*args, **kwargs)

    monkeypatch.setattr(box_cover_module, "Parallel", recording)
    support_workers.start_workers(2)
    assert any(thread.is_alive() for thread in support_workers._warming)
    found = box_cover(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=2))
    assert alive_at_start == [False] and found.finished
