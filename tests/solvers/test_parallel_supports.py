"""Support enumeration with its chunks bounded by joblib workers (``n_jobs``) equals the serial run.

On random instances with more supports than the first chunks bound in the calling process (so the
workers bound most of them), ``n_jobs=2`` gives the serial model, objective, bound, status, step
records' bounds, and the same supports bounded and searched (same nodes), for RiskSLIM (0/1 and
few-valued features, the pipeline from its heuristic's incumbent) and SLIM (0/1 features, Bayes
bounds, sizes pruned with the incumbent found at the smaller ones); the same on a
``dask.distributed`` ``LocalCluster`` of two processes inside ``joblib.parallel_backend("dask")``.
The reference is the serial run, itself checked against brute force and SCIP in
``test_supports.py`` and ``test_slim_solver.py``. The workers load the kernels from numba's cache
(no compilation), and the route's memory estimate counts one kernel per process.
"""
import math
import re

import numpy as np
import pytest
from joblib import Parallel, delayed, parallel_backend

from formulations.coefficients import CoefficientSet
from formulations.riskslim import RiskSLIM
from formulations.slim import SLIM
from milpscore.estimators import RiskScoreClassifier
from solvers.exact import riskslim_route, slim_route
from solvers.exact.support_listing import CHUNK
from solvers.exact.support_rate import FIRST_CHUNK
from solvers.exact.supports import enumerate_supports
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits
from solvers.pipeline import solve_exact

#: supports bounded in the calling process before the workers take over (chunks 16 .. CHUNK / 2)
RAMP = 2 * (CHUNK // 2) - FIRST_CHUNK


def _data(seed: int, n: int, d: int, values: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, values, (n, d)).astype(float)
    w = np.zeros(d)
    w[:4] = rng.choice([-2.0, -1.0, 1.0, 2.0], 4)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X @ w - w.sum() / 2))), 1, -1)
    return X, y


def _counts(message: str) -> list[str]:
    """The counts of an enumeration's message (supports bounded and searched, nodes), not its seconds."""
    return re.sub(r"in [0-9.]+ s", "", message).split()


def _same_fit(serial, parallel) -> None:
    assert parallel.status == serial.status
    assert parallel.objective == serial.objective
    assert parallel.bound == serial.bound
    np.testing.assert_array_equal(parallel.model.coef, serial.model.coef)
    assert parallel.model.intercept == serial.model.intercept
    assert [(r.step, r.ran, r.bound, r.objective) for r in parallel.steps] == \
        [(r.step, r.ran, r.bound, r.objective) for r in serial.steps]
    assert [_counts(r.message) for r in parallel.steps if r.step == "supports"] == \
        [_counts(r.message) for r in serial.steps if r.step == "supports"]


def _same_enumeration(serial, parallel) -> None:
    assert (parallel.objective, parallel.bound, parallel.finished, parallel.nodes) == \
        (serial.objective, serial.bound, serial.finished, serial.nodes)
    np.testing.assert_array_equal(parallel.model[0], serial.model[0])
    assert parallel.model[1] == serial.model[1]
    assert _counts(parallel.message) == _counts(serial.message)


def _riskslim(seed: int):
    X, y = _data(seed, 400, 26, values=2 if seed % 2 == 0 else 3)
    return RiskSLIM(coef_bound=3, c0=0.005 * (seed % 3), max_size=4).instance(X, y)


def _slim(seed: int):
    d = 26
    X, y = _data(seed, 300, d)
    rng = np.random.default_rng(seed)
    cs = CoefficientSet(lb=-np.full(d, 3.0), ub=np.full(d, 3.0), integer=np.ones(d, bool), must_include=np.zeros(d, bool),
                        c0=rng.choice([1.0, 1.5], d) if seed % 2 else np.ones(d), names=[f"x{j}" for j in range(d)])
    return SLIM(coefficients=cs, c0=0.002, max_size=4).instance(X, y)


@pytest.mark.parametrize("seed", range(3))
def test_riskslim_route_with_two_workers_equals_the_serial_route(seed):
    instance = _riskslim(seed)
    assert math.comb(instance.X.shape[1], 4) > RAMP + 2 * CHUNK  # most supports go to the workers
    serial = solve_exact(instance, limits=Limits(time_limit=None, mip_rel_gap=1e-6))
    parallel = solve_exact(instance, limits=Limits(time_limit=None, mip_rel_gap=1e-6, n_jobs=2))
    assert serial.steps[1].step == "supports" and serial.steps[1].ran
    _same_fit(serial, parallel)


@pytest.mark.parametrize("seed", range(2))
def test_slim_enumeration_with_two_workers_equals_the_serial_one(seed):
    problem = ZeroOneProgram.from_instance(_slim(seed))
    serial = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9))
    parallel = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=2))
    assert serial.finished and math.comb(problem.d, 4) > RAMP + 2 * CHUNK
    _same_enumeration(serial, parallel)


def test_the_estimator_passes_n_jobs():
    X, y = _data(7, 400, 26)
    kw = dict(coef_bound=3, max_size=4, time_limit=None)
    serial = RiskScoreClassifier(**kw).fit(X, y)
    parallel = RiskScoreClassifier(n_jobs=2, **kw).fit(X, y)
    assert parallel._limits().n_jobs == 2
    np.testing.assert_array_equal(parallel.coef_, serial.coef_)
    assert (parallel.intercept_, parallel.status_, parallel.fit_.bound) == \
        (serial.intercept_, serial.status_, serial.fit_.bound)


def test_workers_load_the_kernels_from_the_cache():
    problem = ZeroOneProgram.from_instance(_slim(0))
    enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=2))

    def cache_use() -> tuple[int, int]:  # in a worker (pickled by value: the worker imports no test module)
        from solvers.exact import bayes_error, box_logistic, support_listing

        stats = [k.stats for k in (box_logistic.binary_support_bounds, box_logistic.support_bounds,
                                   bayes_error.bayes_errors, support_listing._next_combinations)]
        return sum(sum(s.cache_misses.values()) for s in stats), sum(sum(s.cache_hits.values()) for s in stats)

    use = Parallel(n_jobs=2)(delayed(cache_use)() for _ in range(4))  # the same (reused) workers
    assert sum(misses for misses, _ in use) == 0
    assert sum(hits for _, hits in use) > 0


def test_memory_estimate_counts_a_kernel_per_process():
    rs, sl = _riskslim(0), _slim(0)
    one, two = Limits(), Limits(n_jobs=2)
    assert riskslim_route._supports_memory(rs, two) == 3 * riskslim_route._supports_memory(rs, one)
    assert slim_route._bayes_memory(sl, two) > 2.5 * slim_route._bayes_memory(sl, one) - 600.0 * sl.X.shape[0]


def test_n_jobs_is_checked():
    with pytest.raises(ValueError, match="n_jobs"):
        Limits(n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs"):
        Limits(n_jobs=1.5)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is not installed "
                                                                 "(pip install 'milpscore[dask]')")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        yield client


def test_on_a_dask_cluster_the_enumeration_equals_the_serial_one(dask_client):
    instance = _riskslim(0)
    problem = ZeroOneProgram.from_instance(_slim(1))
    serial_fit = solve_exact(instance, limits=Limits(time_limit=None, mip_rel_gap=1e-6))
    serial_slim = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9))
    with parallel_backend("dask"):
        dask_fit = solve_exact(instance, limits=Limits(time_limit=None, mip_rel_gap=1e-6, n_jobs=-1))
        dask_slim = enumerate_supports(problem, Limits.untimed(mip_rel_gap=1e-9, n_jobs=-1))
    _same_fit(serial_fit, dask_fit)
    _same_enumeration(serial_slim, dask_slim)
    assert sum(dask_client.run(lambda: 1).values()) == 2  # the cluster's two workers were there
