"""The formulation contract (formulations.base), checked on every formulation's tiny cases.

Each ``contract_cases_<area>.py`` beside this file exposes ``CASES = [(id, make_instance), ...]``.
For every instance: both programs start with the same ``coef`` / ``intercept`` blocks; the exact
optimum decoded, rounded and lifted reproduces its objective with zero violations; ``objective``
equals the program's objective at the lifted point; the relaxation's optimum lies below the exact
optimum; ``round`` returns a model inside the exact program.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from formulations.base import Instance, Model
from solvers.catalog import entry_for
from solvers.limits import Limits
from solvers.pipeline import solve_exact, solve_relaxed

_CASES = []
for path in sorted(Path(__file__).parent.glob("contract_cases_*.py")):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _CASES.extend(module.CASES)


@pytest.fixture(params=_CASES, ids=[case[0] for case in _CASES])
def instance(request):
    return request.param[1]()


def test_instance_meets_the_protocol(instance):
    assert isinstance(instance, Instance)
    entry_for(instance.spec)  # every formulation has its catalog line
    exact, relaxed = instance.exact(), instance.relaxed()
    for name in ("coef", "intercept"):
        assert exact.blocks[name] == relaxed.blocks[name]
    assert list(exact.blocks)[:2] == ["coef", "intercept"]


def test_lift_decode_round_trip_on_the_exact_optimum(instance):
    entry = entry_for(instance.spec)
    if entry.exact_backend is None:
        pytest.skip("no exact program (convex formulation)")
    fit = solve_exact(instance, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    assert fit.model is not None
    program = instance.exact()
    x = instance.lift(fit.model)
    assert program.is_feasible(x, tol=1e-6)
    assert program.objective(x) == pytest.approx(instance.objective(fit.model), rel=1e-9, abs=1e-9)
    back = instance.decode(x)
    np.testing.assert_allclose(back.coef, fit.model.coef, atol=1e-12)
    assert back.intercept == pytest.approx(fit.model.intercept, abs=1e-12)
    assert instance.objective(back) == pytest.approx(fit.objective, rel=1e-9, abs=1e-9)


def test_objective_is_the_program_objective_at_the_lift(instance):
    program = instance.exact()
    rng = np.random.default_rng(0)
    for _ in range(3):
        d = program.blocks["coef"].stop - program.blocks["coef"].start
        raw = instance.decode(np.clip(rng.normal(size=program.n_variables) * 2, program.col_lb, program.col_ub))
        model = instance.round(Model(raw.coef, raw.intercept))
        assert model.coef.shape[0] >= 1 and d >= 1
        x = instance.lift(model)
        assert program.is_feasible(x, tol=1e-6), program.violations(x)
        assert program.objective(x) == pytest.approx(instance.objective(model), rel=1e-9, abs=1e-9)


def test_relaxation_bounds_the_exact_optimum(instance):
    entry = entry_for(instance.spec)
    relaxed = solve_relaxed(instance, limits=Limits(time_limit=30))
    assert relaxed.result.status.value == "optimal"
    if entry.exact_backend is None:
        return
    exact = solve_exact(instance, limits=Limits(time_limit=30, mip_rel_gap=1e-9))
    assert relaxed.result.objective <= exact.objective + 1e-7
    assert exact.bound <= exact.objective + 1e-9
