"""FacetsClassifier: the three solvers against brute force, against each other, on real data."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from formulations.base import Model
from formulations.facets import Facets
from milpscore.estimators.facets import FacetsClassifier
from tests.formulations.test_facets_program import brute_force, tiny


def as_01(y):
    return (y > 0).astype(int)


@pytest.mark.parametrize("loss,eps", [("hinge", 0.0), ("hinge", 0.2), ("logistic", 0.0), ("logistic", 0.1)])
def test_exact_fit_is_the_brute_force_optimum(loss, eps):
    X, y = tiny(3, n=30)
    clf = FacetsClassifier(solver="highs-exact", loss=loss, lam=0.03, grid_unit=0.5, eps=eps, bound=2,
                           mip_rel_gap=1e-7, relaxed=True)
    clf.fit(X, as_01(y))
    spec = Facets(loss, lam=0.03, grid_unit=0.5, eps=eps, bound=2)
    best, _, _ = brute_force(spec, X, y)
    objective = clf.fit_info_["objective"]
    assert objective == pytest.approx(spec.instance(X, y).objective(Model(clf.coef_, clf.intercept_)), rel=1e-12)
    assert best <= objective + 1e-12
    assert objective - best <= max(clf.gap_, 1e-7) * objective + 1e-9
    assert clf.status_ == "optimal"
    assert clf.fit_info_["integrity"] == 1.0
    assert np.allclose(clf.scorecard_.table["points"], np.round(clf.scorecard_.table["points"]))
    # the relaxed (ECOS) solve is a lower bound
    assert clf.relaxed_fit_.result.objective <= objective + 1e-7


@pytest.mark.parametrize("loss,eps", [("logistic", 0.0), ("least_squares", 0.01)])
def test_prox_and_ecos_estimators_agree(loss, eps):
    X, y = tiny(4, n=150, d=3)
    kwargs = dict(loss=loss, lam=0.02, grid_unit=0.5, eps=eps, bound=6)
    prox = FacetsClassifier(solver="prox", tol=1e-10, max_iter=100000, **kwargs).fit(X, as_01(y))
    ecos = FacetsClassifier(solver="ecos", **kwargs).fit(X, as_01(y))
    assert prox.fit_info_["inside_box"]
    assert prox.fit_info_["objective"] == pytest.approx(ecos.fit_info_["objective"], rel=1e-5)
    assert np.allclose(prox.coef_, ecos.coef_, atol=1e-3)
    exact = FacetsClassifier(solver="highs-exact", **kwargs).fit(X, as_01(y))
    assert ecos.fit_info_["objective"] <= exact.fit_info_["objective"] + 1e-7


def test_prox_stopped_by_max_iter_is_not_silent():
    X, y = tiny(4, n=150, d=3)
    clf = FacetsClassifier(solver="prox", loss="logistic", lam=0.02, grid_unit=0.5, tol=1e-12, max_iter=3)
    with pytest.warns(ConvergenceWarning, match="before convergence"):
        clf.fit(X, as_01(y))
    assert clf.status_ == "feasible"


def test_predictions_follow_the_score_card():
    X, y = tiny(5, n=60)
    clf = FacetsClassifier(solver="highs-exact", loss="hinge", lam=0.02, grid_unit=0.25, bound=4).fit(X, as_01(y))
    card = clf.scorecard_
    points = dict(zip(card.table["variable"], card.table["points"]))
    total = sum(points.get(f"x{j}", 0.0) * X[:, j] for j in range(X.shape[1])) + card.intercept
    assert np.array_equal(clf.predict(X), (total > 0).astype(int))
    assert np.array_equal(clf.predict(X), (clf.decision_function(X) > 0).astype(int))
    assert "Facets" in str(card)
    assert clf.score(X, as_01(y)) > 0.7


def test_real_data_breast_cancer(shared_data):
    df = pd.read_csv(shared_data / "breastcancer_data.csv")
    X, y = df.iloc[:, 1:].to_numpy(float), df.iloc[:, 0].to_numpy()
    exact = FacetsClassifier(solver="highs-exact", loss="hinge", lam=0.01, grid_unit=0.5, bound=4,
                             time_limit=30).fit(X, y)
    prox = FacetsClassifier(solver="prox", loss="logistic", lam=0.01, grid_unit=0.5, bound=4).fit(X, y)
    assert exact.score(X, y) > 0.95 and prox.score(X, y) > 0.95
    assert exact.fit_info_["integrity"] == 1.0
    assert exact.status_ in ("optimal", "feasible")


@pytest.mark.parametrize("kwargs,match", [
    ({"solver": "gurobi"}, "solver must be one of"),
    ({"solver": "prox", "loss": "hinge"}, "smooth loss"),
    ({"grid_unit": -1.0}, "grid_unit must be"),
])
def test_bad_parameters_raise_at_fit(kwargs, match):
    X, y = tiny(0)
    clf = FacetsClassifier(**kwargs)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, as_01(y))


def test_prox_rejects_sample_weight_and_clone_keeps_params():
    X, y = tiny(0)
    clf = FacetsClassifier(solver="prox", lam=0.5, grid_unit=0.3)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(X, as_01(y), sample_weight=np.linspace(0.5, 1.5, y.size))
    assert clone(clf).get_params() == clf.get_params()


@pytest.mark.parametrize("seed,grid_unit,bound", [(13, 0.25, 3), (2, 0.5, 2), (7, 1.0, 2)])
def test_a_tight_gap_certifies_the_brute_force_optimum(seed, grid_unit, bound):
    """At mip_rel_gap 1e-9 HiGHS's bound must be as accurate as the gap (seed 13: with HiGHS's
    default tolerances its bound fell 7e-7 short of the true optimum, and the fit read feasible)."""
    X, y = tiny(seed, n=24)
    spec = Facets("hinge", lam=0.02, grid_unit=grid_unit, bound=bound)
    clf = FacetsClassifier(solver="highs-exact", loss="hinge", lam=0.02, grid_unit=grid_unit, bound=bound,
                           mip_rel_gap=1e-9).fit(X, as_01(y))
    best, _, _ = brute_force(spec, X, y)
    assert clf.fit_info_["objective"] == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert clf.status_ == "optimal", clf.fit_info_["message"]
