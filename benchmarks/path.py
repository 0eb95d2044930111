"""Benchmark: lasso and logistic-L1 regularisation paths, numpy FISTA against scikit-learn.

Run: ``python benchmarks/path.py [--quick]``.

* Lasso path: 50 lambdas from lambda_max to 1e-3 lambda_max, n=10000, p=1000, correlated
  columns: AR(1) correlation 0.5^|i-j| (the usual benchmark design), and a harder
  equicorrelated design (every pair 0.5: one eigenvalue ~p/2, condition number ~1000, which
  slows any gradient method far more than coordinate descent). Reference: ``sklearn.linear_model.lasso_path`` with the Gram
  matrix (``precompute=True``), timed in the same run. Ours: ``solvers.path.regularisation_path``
  on ``LeastSquares(gram=True)``, FISTA with adaptive restart, stopping at relative duality gap
  1e-6 (so every point is certified within 1e-6 relative objective). Both timings include
  forming X^T X.
* Facets / SCF (alpha, beta) grids on logistic loss, ISTA against FISTA (time, integrity).
* Logistic-L1 path: n=10000, p=500, 50 lambdas to 1e-2 lambda_max. skglm (the issue's
  reference) is not installed here; the reference measured in the same run is scikit-learn's
  ``LogisticRegression(solver="liblinear")`` warm-started point by point (liblinear cannot
  warm-start: each point is a cold solve), tol 1e-8, no intercept.

Every path solves each point with the working-set strategy of ``solvers.proximal.working_set_solve``.
Accuracy column: max over the path of (our objective - reference objective) / |reference|
(negative = ours lower). BLAS is capped to one thread (threadpoolctl) for every timing.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

from formulations.losses import LeastSquares, Logistic  # noqa: E402
from formulations.penalties import L1  # noqa: E402
from solvers.path import facets_path, regularisation_path  # noqa: E402


def correlated(n: int, p: int, rho: float, seed: int, design: str = "ar1") -> np.ndarray:
    """Gaussian design with AR(1) correlation ``rho^|i-j|`` or equicorrelation ``rho``."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    if design == "equi":
        return np.sqrt(1 - rho) * Z + np.sqrt(rho) * rng.normal(size=(n, 1))
    X = np.empty_like(Z)  # AR(1) recursion: x_j = rho x_{j-1} + sqrt(1 - rho^2) z_j
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho * rho) * Z[:, j]
    return X


def lasso_case(n: int, p: int, n_lambdas: int, design: str) -> dict:
    from sklearn.linear_model import lasso_path
    warnings.simplefilter("ignore")  # sklearn's own convergence warnings at tol=1e-7
    rng = np.random.default_rng(0)
    X = correlated(n, p, 0.5, 1, design)
    w = np.zeros(p)
    w[rng.choice(p, 20, replace=False)] = rng.normal(size=20)
    y = X @ w + rng.normal(size=n)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    t0 = time.perf_counter()
    loss = LeastSquares(X, y, gram=True)
    path = regularisation_path(loss, L1, n_lambdas=n_lambdas, ratio=1e-3, tol=1e-6)
    ours = time.perf_counter() - t0
    lambdas = np.array([pt.lam for pt in path])
    t0 = time.perf_counter()
    _, coefs, _ = lasso_path(Xc, yc, alphas=lambdas, precompute=True, tol=1e-7)
    ref = time.perf_counter() - t0
    ref_obj = np.array([loss.value(coefs[:, k]) + lam * np.abs(coefs[:, k]).sum() for k, lam in enumerate(lambdas)])
    ours_obj = np.array([pt.objective for pt in path])
    iters = sum(pt.result.iterations for pt in path)
    return dict(case=f"lasso path {design} n={n} p={p} ({n_lambdas} lambdas)", reference="sklearn lasso_path (Gram)",
                ref=ref, ours=ours, acc=float(np.max((ours_obj - ref_obj) / np.abs(ref_obj))),
                certified=max(pt.result.raw["criterion"] for pt in path), iters=iters)


def logistic_case(n: int, p: int, n_lambdas: int) -> dict:
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(2)
    X = correlated(n, p, 0.5, 3)
    w = np.zeros(p)
    w[rng.choice(p, 20, replace=False)] = rng.normal(size=20)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    t0 = time.perf_counter()
    loss = Logistic(X, y, fit_intercept=False)
    path = regularisation_path(loss, L1, n_lambdas=n_lambdas, ratio=1e-2, tol=1e-6)
    ours = time.perf_counter() - t0
    lambdas = np.array([pt.lam for pt in path])
    t0 = time.perf_counter()
    ref_obj = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lam in lambdas:
            sk = LogisticRegression(C=1.0 / (lam * n), l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                    tol=1e-8, max_iter=10000).fit(X, y)
            c = sk.coef_.ravel()
            ref_obj.append(loss.value(c) + lam * np.abs(c).sum())
    ref = time.perf_counter() - t0
    ours_obj = np.array([pt.objective for pt in path])
    iters = sum(pt.result.iterations for pt in path)
    return dict(case=f"logistic-L1 path n={n} p={p} ({n_lambdas} lambdas)", reference="liblinear, cold per point",
                ref=ref, ours=ours, acc=float(np.max((ours_obj - np.array(ref_obj)) / np.abs(ref_obj))),
                certified=max(pt.result.raw["criterion"] for pt in path), iters=iters)


def facets_case(n: int, p: int) -> list[dict]:
    """Facets and SCF paths over an (alpha, beta) grid with FISTA and with ISTA (section 5.4 of the
    Facets paper: acceleration may hurt integrity). Reference = the FISTA run of the same grid."""
    rng = np.random.default_rng(4)
    X = correlated(n, p, 0.3, 5)
    w = np.zeros(p)
    w[:10] = rng.integers(-3, 4, size=10)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    loss = Logistic(X, y)
    alphas, betas = np.geomspace(0.05, 0.002, 8), [0.002, 0.01, 0.05]
    rows = []
    for eps in (None, 0.01):
        runs = {}
        for accelerated in (True, False):
            t0 = time.perf_counter()
            pts = facets_path(loss, alphas, betas, eps=eps, tol=1e-6, max_iter=20000, accelerated=accelerated)
            runs[accelerated] = (time.perf_counter() - t0, pts)
        (tf, pf), (ti, pi) = runs[True], runs[False]
        name = "Facets" if eps is None else "SCF eps=0.01"
        rows.append(dict(case=f"{name} (alpha,beta) 8x3 grid, ISTA, n={n} p={p}", reference="same grid, FISTA",
                         ref=tf, ours=ti, acc=float(np.max([(a.objective - b.objective) / abs(b.objective)
                                                            for a, b in zip(pi, pf)])),
                         certified=max(pt.result.raw["criterion"] for pt in pi),
                         iters=sum(pt.result.iterations for pt in pi),
                         note=f"mean integrity ISTA {np.mean([pt.integrity for pt in pi]):.3f} vs FISTA "
                              f"{np.mean([pt.integrity for pt in pf]):.3f}; unconverged ISTA "
                              f"{sum(pt.result.status.value != 'optimal' for pt in pi)}, FISTA "
                              f"{sum(pt.result.status.value != 'optimal' for pt in pf)}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with threadpool_limits(1):
        blas = {d["internal_api"]: d["num_threads"] for d in threadpool_info()}
        print(f"BLAS threads: {blas} (capped with threadpoolctl.threadpool_limits(1))")
        LeastSquares(np.ones((3, 2)), np.arange(3.0))  # warm-up: imports and numba kernels
        regularisation_path(LeastSquares(correlated(50, 5, 0.5, 9), np.arange(50.0), gram=True), L1, n_lambdas=3)
        rows = [lasso_case(10000 // scale, 1000 // scale, 50, "ar1"), lasso_case(10000 // scale, 1000 // scale, 50, "equi"),
                logistic_case(10000 // scale, 500 // scale, 50)]
        rows += facets_case(5000 // scale, 50)
    print(f"{'case':49s} {'reference':28s} {'ref s':>8s} {'ours s':>8s} {'ratio':>7s} "
          f"{'obj vs ref':>11s} {'max certified gap':>18s} {'iterations':>10s}")
    for r in rows:
        print(f"{r['case']:49s} {r['reference']:28s} {r['ref']:8.3f} {r['ours']:8.3f} {r['ours'] / r['ref']:7.2f} "
              f"{r['acc']:11.2e} {r['certified']:18.2e} {r['iters']:10d}")
        if "note" in r:
            print(f"    {r['note']}")


if __name__ == "__main__":
    main()
