"""Model selection: GridSearchCV on every estimator, path_grid / Table 2, joblib and dask backends."""
import importlib

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

from milpscore.studies.selection import path_grid, regularisation_path, table2


@pytest.fixture(scope="module")
def mammo(shared_data):
    frame = pd.read_csv(shared_data / "mammo_data.csv").sample(160, random_state=0)
    return frame.iloc[:, 1:], frame.iloc[:, 0]


def _estimator(module, name, **params):
    try:
        cls = getattr(importlib.import_module(f"milpscore.estimators.{module}"), name)
    except (ImportError, AttributeError):
        pytest.skip(f"milpscore.estimators.{module}.{name} is not in the tree yet")
    return cls(**params)


GRIDS = [
    ("slim", "SLIMClassifier", {"time_limit": 5, "coef_bound": 3}, {"c0": [0.01, 0.05]}),
    ("facets", "FacetsClassifier", {"solver": "ecos", "loss": "hinge"}, {"lam": [0.01, 0.1], "grid_unit": [0.5, 1.0]}),
    ("eye", "EYEClassifier", {}, {"lam": [0.01, 0.1]}),
    ("fused", "FusedScoreClassifier", {"n_bins": 3, "time_limit": 5}, {"lam": [0.1, 1.0]}),
    ("rounding", "ConvexRoundingClassifier", {"random_state": 0, "time_limit": 5}, {"margin": [0.5, 1.0]}),
    ("rounding", "LocalSearchClassifier", {"random_state": 0}, {"margin": [0.5, 1.0]}),
]


@pytest.mark.parametrize("module,name,fixed,grid", GRIDS, ids=[g[1] for g in GRIDS])
def test_grid_search_cv_just_works(mammo, module, name, fixed, grid):
    X, y = mammo
    est = _estimator(module, name, **fixed)
    search = GridSearchCV(est, grid, cv=3).fit(X, y)
    n_points = int(np.prod([len(v) for v in grid.values()]))
    assert len(search.cv_results_["mean_test_score"]) == n_points
    assert set(search.best_params_) == set(grid)
    # the refitted best model is the estimator refitted on all rows with the best parameters
    refit = _estimator(module, name, **fixed, **search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.best_estimator_.coef_, refit.coef_, atol=1e-6)
    assert search.score(X, y) == pytest.approx(np.mean(refit.predict(X) == y.to_numpy()))


def test_path_grid_matches_cross_val_score_and_table2_adds_up(mammo):
    X, y = mammo
    from milpscore.estimators.facets import FacetsClassifier

    est = FacetsClassifier(solver="ecos", loss="hinge", bound=5)
    lambdas, units = [0.003, 0.03, 10.0], [0.5, 1.0]
    grid = path_grid(X, y, lambdas, units, estimator=est, cv=3, seed=1)
    assert len(grid) == 6
    counts = table2(grid).iloc[0]
    assert counts["grid points"] == 6
    assert counts["null"] + counts["integral"] + counts["fractional"] == counts["grid points"]
    assert 0 <= counts["optimal"] <= counts["integral"]
    # lambda = 10 costs more per unit of weight than any hinge loss can save: the null model
    assert grid.loc[grid["lam"] == 10.0, "null"].all()
    assert grid.loc[grid["null"], "size"].eq(0).all()
    # accuracy of one point = scikit-learn's cross_val_score of the same estimator on the same folds
    folds = StratifiedKFold(3, shuffle=True, random_state=1)
    y_pm1 = np.where(y.to_numpy() == 1, 1.0, -1.0)
    ref = cross_val_score(FacetsClassifier(solver="ecos", loss="hinge", bound=5, lam=0.03, grid_unit=0.5),
                          X.to_numpy(float), y_pm1, cv=folds.split(X, y_pm1))
    row = grid[(grid["lam"] == 0.03) & (grid["grid_unit"] == 0.5)].iloc[0]
    assert row["accuracy"] == pytest.approx(ref.mean())
    assert row["alpha"] == pytest.approx(0.06) and row["beta"] == pytest.approx(0.12)
    best = grid["accuracy"].max()
    assert (grid["optimal"] == (grid["fully_integral"] & (grid["accuracy"] >= best - 1e-9))).all()


def test_path_grid_parallel_equals_serial(mammo):
    X, y = mammo
    kw = dict(lambdas=[0.01, 0.1], grid_units=[1.0], cv=2, seed=0)
    serial = path_grid(X, y, n_jobs=1, **kw)
    parallel = path_grid(X, y, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(serial, parallel)


def test_path_grid_runs_on_a_dask_cluster(mammo):
    pytest.importorskip("dask")
    distributed = pytest.importorskip("dask.distributed")
    X, y = mammo
    kw = dict(lambdas=[0.01, 0.1], grid_units=[0.5, 1.0], cv=2, seed=0)
    local = path_grid(X, y, **kw)
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        with joblib.parallel_backend("dask"):
            on_dask = path_grid(X, y, n_jobs=-1, **kw)
        assert client.run(lambda: True)  # the cluster was up and answering
    pd.testing.assert_frame_equal(local, on_dask)


def test_regularisation_path_shrinks_to_zero(mammo):
    X, y = mammo
    path = regularisation_path(X, y, [0.001, 0.01, 1.0], grid_unit=0.5)
    assert list(path.columns) == list(X.columns)
    assert list(path.index) == [0.001, 0.01, 1.0]
    assert np.abs(path.loc[1.0]).max() < 1e-5
    assert np.abs(path.loc[0.001]).sum() > np.abs(path.loc[0.01]).sum() > 0


def test_regularisation_path_is_warm_started_and_agrees_with_cold_fits(mammo, monkeypatch):
    """Proximal estimators go through solvers.proximal.path (one warm-started path), same optimum as refits."""
    import solvers.proximal.path
    from milpscore.estimators.facets import FacetsClassifier

    X, y = mammo
    calls = []
    real = solvers.proximal.path.regularisation_path
    monkeypatch.setattr(solvers.proximal.path, "regularisation_path", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    lambdas = [0.002, 0.02, 0.2]
    est = FacetsClassifier(solver="prox", loss="logistic", bound=10, tol=1e-8)
    path = regularisation_path(X, y, lambdas, estimator=est, grid_unit=0.5)
    assert len(calls) == 1 and list(calls[0]) == lambdas
    # the Facets objective has flat pieces (several optimal models): compare objectives, not coefficients
    from formulations.base import Model
    from milpscore.data.validation import validate_xy
    from milpscore.studies.selection import _path

    Xa, y_pm1, names, _ = validate_xy(X, y)
    points = _path(est.set_params(grid_unit=0.5), np.array(lambdas), Xa, y_pm1, names)
    for lam, (coef, intercept, status) in zip(lambdas, points):
        np.testing.assert_array_equal(path.loc[lam].to_numpy(), coef)
        cold = FacetsClassifier(solver="prox", loss="logistic", bound=10, tol=1e-8, lam=lam, grid_unit=0.5).fit(X, y)
        assert status == "optimal"
        assert cold.instance_.objective(Model(coef, intercept)) == pytest.approx(cold.objective_, abs=1e-7)
    # an estimator that is not proximal is refitted point by point (no path call), to the same optimum
    n_calls = len(calls)
    refit = _path(FacetsClassifier(solver="ecos", loss="logistic", bound=10, grid_unit=0.5), np.array(lambdas), Xa,
                  y_pm1, names)
    assert len(calls) == n_calls
    for lam, (coef, intercept, _), (warm, b, _) in zip(lambdas, refit, points):
        inst = FacetsClassifier(solver="prox", loss="logistic", bound=10, lam=lam, grid_unit=0.5).fit(X, y).instance_
        assert inst.objective(Model(coef, intercept)) == pytest.approx(inst.objective(Model(warm, b)), abs=1e-6)


def test_bad_grid_arguments(mammo):
    X, y = mammo
    with pytest.raises(ValueError, match="grid_units"):
        path_grid(X, y, [0.1], [0.0])
    with pytest.raises(ValueError, match="lambdas"):
        path_grid(X, y, [], [1.0])
    with pytest.raises(ValueError, match="cv"):
        path_grid(X, y, [0.1], [1.0], cv=1)
    from milpscore.estimators.slim import SLIMClassifier

    with pytest.raises(ValueError, match="lam"):
        path_grid(X, y, [0.1], [1.0], estimator=SLIMClassifier())
    with pytest.raises(ValueError, match="path_grid"):
        table2(pd.DataFrame({"x": [1]}))
