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
* Logistic-L1 path: n=10000, p=500, 50 lambdas to 1e-2 lambda_max. skglm (the issue's
  reference) is not installed here; the reference measured in the same run is scikit-learn's
  ``LogisticRegression(solver="liblinear")`` warm-started point by point (liblinear cannot
  warm-start: each point is a cold solve), tol 1e-8, no intercept.

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
from solvers.path import lambda_grid, lambda_max, regularisation_path  # noqa: E402


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
    print(f"{'case':49s} {'reference':28s} {'ref s':>8s} {'ours s':>8s} {'ratio':>7s} "
          f"{'obj vs ref':>11s} {'max certified gap':>18s} {'iterations':>10s}")
    for r in rows:
        print(f"{r['case']:49s} {r['reference']:28s} {r['ref']:8.3f} {r['ours']:8.3f} {r['ours'] / r['ref']:7.2f} "
              f"{r['acc']:11.2e} {r['certified']:18.2e} {r['iters']:10d}")


if __name__ == "__main__":
    main()
