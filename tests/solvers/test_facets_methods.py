"""Extra methods of the Facets catalog entries: proximal path + rounding, and the rounded-relaxation start."""
import pickle

import numpy as np
import pytest

from formulations.facets import Facets
from solvers.catalog import CATALOG, entry_for
from solvers.heuristics.facets import heuristic, prox_rounding
from solvers.limits import Limits
from solvers.pipeline import run, solve_relaxed, violation
from tests.formulations.test_facets_program import tiny


@pytest.mark.parametrize("loss", ["logistic", "least_squares"])
def test_prox_rounding_gives_a_grid_model_no_better_than_the_exact_optimum(loss):
    X, y = tiny(2, n=60)
    inst = Facets(loss, lam=0.02, grid_unit=0.5, bound=3).instance(X, y)
    model, message = prox_rounding(inst, None, Limits(time_limit=30).started(), 0)
    assert model is not None and "FISTA" in message
    assert violation(inst, model) <= 1e-9
    assert np.allclose(model.coef / 0.5, np.round(model.coef / 0.5))
    exact = run(inst, "exact", limits=Limits(time_limit=30, mip_rel_gap=1e-7))
    assert inst.objective(model) >= exact.objective - 1e-9
    fit = run(inst, "prox_rounding", limits=Limits(time_limit=30))  # through the catalog, from the relaxation
    assert fit.model is not None and fit.bound <= exact.objective + 1e-7


def test_prox_rounding_refuses_the_hinge_and_weighted_rows():
    X, y = tiny(2)
    assert prox_rounding(Facets("hinge").instance(X, y), None, Limits(time_limit=10).started(), 0) == (
        None, "prox_rounding needs a smooth loss (logistic or least_squares); use 'rounding' for the hinge")
    model, message = prox_rounding(Facets("logistic").instance(X, y, np.linspace(1, 2, y.size)), None, Limits(time_limit=10).started(), 0)
    assert model is None and "sample_weight" in message


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_heuristic_is_a_feasible_start(loss):
    X, y = tiny(3, n=40)
    inst = Facets(loss, lam=0.02, grid_unit=0.5, bound=3).instance(X, y)
    limits = Limits(time_limit=30).started()
    relaxed = lambda: solve_relaxed(inst, limits=limits)  # noqa: E731 (what the pipeline passes)
    model = heuristic(inst, limits, 0, relaxed)
    assert model is not None and violation(inst, model) <= 1e-9
    assert heuristic(inst, Limits(time_limit=1e-9).started(), 0, relaxed) is None  # expired clock: no work


def test_catalog_entries_and_pickling():
    assert entry_for(Facets("hinge")).name == "facets"
    assert entry_for(Facets("logistic", lam=0.5)).name == "facets_logistic"
    spec = CATALOG["facets_logistic"].spec_class(**CATALOG["facets_logistic"].defaults)
    assert spec.loss == "logistic" and entry_for(spec) is CATALOG["facets_logistic"]
    X, y = tiny(0)
    inst = spec.instance(X, y)
    inst.exact()
    again = pickle.loads(pickle.dumps(inst))
    assert again.exact().n_variables == inst.exact().n_variables
