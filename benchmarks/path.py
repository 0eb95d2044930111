"""Benchmark: lasso and logistic-L1 regularisation paths against scikit-learn, skglm and celer.

Run: ``python benchmarks/path.py [--quick]``.

* Lasso path: 50 lambdas from lambda_max to 1e-3 lambda_max, n=10000, p=1000, correlated
  columns: AR(1) correlation 0.5^|i-j| (the usual benchmark design), and a harder
  equicorrelated design (every pair 0.5: one eigenvalue ~p/2, condition number ~1000, which
  slows any gradient method far more than coordinate descent). Reference: ``sklearn.linear_model.lasso_path`` with the Gram
  matrix (``precompute=True``, tol 1e-7, ``max_iter`` 100000, its convergence warnings counted,
  not silenced), timed in the same interleaved rounds. Ours: ``solvers.proximal.path.regularisation_path``
  on ``LeastSquares(gram=True)``: working-set coordinate descent on the Gram matrix
  (``solvers.proximal.gram_cd``; FISTA with adaptive restart takes over where it crawls, as on the
  equicorrelated design), stopping at relative duality gap 1e-6 (so every point is certified
  within 1e-6 relative objective). Both timings include forming X^T X and centring the data (sklearn's
  ``lasso_path`` fits no intercept: its user centres X and y first; ``LeastSquares`` does it itself).
* Facets / SCF (alpha, beta) grids on logistic loss, ISTA against FISTA (time, integrity).
* Logistic-L1 path: n=10000, p=500, 50 lambdas to 1e-2 lambda_max, no intercept, against skglm's
  ``ProxNewton`` called directly (and celer's ``LogisticRegression`` with ``--celer``), run
  in the peers' own environment (:mod:`benchmarks.peers`; X sent once, Fortran-ordered, timed
  inside their process, interleaved with ours). Timed on both sides: everything the call does; ours
  builds ``Logistic(X, y)`` from the raw arrays (label and finiteness checks, the Fortran copy)
  inside the timed region, skglm builds its solver, datafit and penalty objects inside its.
  Equal accuracy, decided by one check on both sides: every point's objective within 1e-6 (then
  1e-9) relative of a high-accuracy reference (our path certified to a 1e-13 duality gap and skglm
  at tol 1e-10, the lower of the two at each point); each method is timed at the loosest
  tolerance of a 1-2-5 ladder (1e-2 ... 1e-10) that passes (the calibration runs are untimed).

Every path solves each point with ``solvers.proximal.gradient.working_set_solve`` (proximal Newton for the
logistic loss, Gram coordinate descent for least squares, FISTA for Facets).
Accuracy: each method's largest relative excess over the best objective known at that point (an
untimed high-accuracy solve: sklearn at tol 1e-10 for the lasso, the yardstick above for the
logistic case; or either method), for *both* methods, so a reference
that stops early shows. BLAS is capped to one thread (threadpoolctl) for every timing; medians of
interleaved rounds (:mod:`benchmarks.timing`).
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from formulations.losses import LeastSquares, Logistic  # noqa: E402
from formulations.penalties import L1  # noqa: E402
from solvers.proximal.path import facets_path, regularisation_path  # noqa: E402
from timing import Timing, environment, interleaved  # noqa: E402


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


def _errors(objectives: np.ndarray, best: np.ndarray) -> float:
    """Largest relative excess of a path's objectives over the best known value at each point."""
    return float(np.max((objectives - best) / np.abs(best)))


def lasso_case(n: int, p: int, n_lambdas: int, design: str, rounds: int) -> dict:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import lasso_path

    rng = np.random.default_rng(0)
    X = correlated(n, p, 0.5, 1, design)
    w = np.zeros(p)
    w[rng.choice(p, 20, replace=False)] = rng.normal(size=20)
    y = X @ w + rng.normal(size=n)
    Xc, yc = X - X.mean(axis=0), y - y.mean()

    def ours():
        loss = LeastSquares(X, y, gram=True)  # forming X^T X is part of the time, as for sklearn
        return loss, regularisation_path(loss, L1, n_lambdas=n_lambdas, ratio=1e-3, tol=1e-6)

    loss, path = ours()
    lambdas = np.array([pt.lam for pt in path])
    objective = lambda coefs: np.array([loss.value(coefs[:, k]) + lam * np.abs(coefs[:, k]).sum()  # noqa: E731
                                        for k, lam in enumerate(lambdas)])
    caught = []

    def reference():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", ConvergenceWarning)  # centring is part of the user's call
            coefs = lasso_path(X - X.mean(axis=0), y - y.mean(), alphas=lambdas, precompute=True, tol=1e-7,
                               max_iter=100_000)[1]
        caught.append(sum(issubclass(x.category, ConvergenceWarning) for x in seen))
        return coefs

    t = interleaved({"ours": lambda: ours()[1], "reference": reference}, rounds)
    with warnings.catch_warnings():  # untimed high-accuracy solution: the yardstick for both
        warnings.simplefilter("ignore", ConvergenceWarning)
        high = objective(lasso_path(Xc, yc, alphas=lambdas, precompute=True, tol=1e-10, max_iter=100_000)[1])
    ours_obj = np.array([pt.objective for pt in t["ours"].value])
    ref_obj = objective(t["reference"].value)
    best = np.minimum.reduce([high, ours_obj, ref_obj])
    return dict(case=f"lasso path {design} n={n} p={p} ({n_lambdas} lambdas)",
                reference="sklearn lasso_path (Gram, tol 1e-7)", ref=t["reference"], ours=t["ours"],
                err_ours=_errors(ours_obj, best), err_ref=_errors(ref_obj, best),
                certified=max(pt.result.raw["criterion"] for pt in path),
                iters=sum(pt.result.iterations for pt in path),
                note=f"sklearn ConvergenceWarnings per run: {caught[-1]} (max_iter 100000)")


#: accuracies every path must reach at every point (relative excess over the best known objective)
ACCURACIES = (1e-6, 1e-9)
#: stopping tolerances tried, loosest first (three a decade, so that neither side is timed far tighter
#: than it needs); each method is timed at the loosest at which every point reaches the accuracy
TOLERANCES = tuple(float(f"{10 ** (-k / 3):.0e}") for k in range(6, 31))


def _calibrate(run, objectives, best: np.ndarray, accuracy: float) -> tuple[float, float]:
    """Loosest tolerance of :data:`TOLERANCES` at which ``run(tol)`` is within ``accuracy`` of
    ``best`` at every point (untimed runs); returns (tol, its error)."""
    err = np.inf
    for tol in TOLERANCES:
        err = _errors(objectives(run(tol)), best)
        if err <= accuracy:
            return tol, err
    return TOLERANCES[-1], err


def logistic_case(n: int, p: int, n_lambdas: int, rounds: int, with_celer: bool) -> list[dict]:
    """Logistic-L1 path against skglm's ProxNewton (and celer) in the peers' environment, at equal,
    verified accuracy, with everything a call does timed on both sides."""
    from peers import Peer

    rng = np.random.default_rng(2)
    X = correlated(n, p, 0.5, 3)
    w = np.zeros(p)
    w[rng.choice(p, 20, replace=False)] = rng.normal(size=20)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    reference_loss = Logistic(X, y, fit_intercept=False)
    lambdas = np.array([pt.lam for pt in regularisation_path(reference_loss, L1, n_lambdas=n_lambdas, ratio=1e-2,
                                                             tol=1e-4)])
    objective = lambda coefs: np.array([reference_loss.value(coefs[:, k]) + lam * np.abs(coefs[:, k]).sum()  # noqa: E731
                                        for k, lam in enumerate(lambdas)])

    def ours(tol):
        """What a user's call does: the loss built from the raw arrays (checks, Fortran copy) and the path."""
        return regularisation_path(Logistic(X, y, fit_intercept=False), L1, lambdas, tol=tol)

    coefs_of = lambda path: np.column_stack([pt.coef for pt in path])  # noqa: E731
    case = f"logistic-L1 path n={n} p={p} ({n_lambdas} lambdas)"
    peer = Peer.start()
    if peer is None:
        return [dict(case=case, reference="-", ref=Timing(np.nan, np.nan, np.nan, 0), ours=Timing(np.nan, np.nan, np.nan, 0),
                     err_ours=np.nan, err_ref=np.nan, certified=np.nan, iters=0,
                     note="no peers' environment: run `python benchmarks/peers.py setup` (skglm, celer)")]
    with peer:
        peer.load(X=X, y=y, lambdas=lambdas)
        names = ("skglm", "skglm_logistic_path"), ("celer", "celer_logistic_path")
        peers = {name: (lambda tol, f=f: peer.call(f, tol=tol).value) for name, f in names[:1 + with_celer]
                 if peer.has(name)}
        # the high-accuracy reference: our path certified to a 1e-13 relative duality gap and skglm at
        # tol 1e-10, the lower objective of the two at each point
        best = np.minimum.reduce([objective(coefs_of(ours(1e-13)))]
                                 + [objective(run(1e-10)) for run in peers.values()][:1])
        setup = interleaved({"setup": lambda: Logistic(X, y, fit_intercept=False)}, rounds)["setup"]
        rows = []
        for accuracy in ACCURACIES:
            tol_ours, _ = _calibrate(lambda tol: coefs_of(ours(tol)), objective, best, accuracy)
            cases = {"ours": lambda tol=tol_ours: ours(tol)}
            calibrated = {}
            for name, run in peers.items():
                calibrated[name] = _calibrate(run, objective, best, accuracy)
                cases[name] = lambda f=f"{name}_logistic_path", tol=calibrated[name][0]: peer.call(f, tol=tol)
            t = interleaved(cases, rounds)
            path = t["ours"].value
            err_ours = _errors(objective(coefs_of(path)), best)
            for name, (tol, err) in calibrated.items():
                rows.append(dict(case=f"{case}, within {accuracy:.0e}", reference=f"{name} at tol {tol:.0e}",
                                 ref=t[name], ours=t["ours"], err_ours=err_ours, err_ref=err,
                                 certified=max(pt.result.raw["criterion"] for pt in path),
                                 iters=sum(pt.result.iterations for pt in path),
                                 note=f"ours: Logistic(X, y) (its checks alone: median {setup.median:.3f} s) + "
                                      f"working-set prox-Newton path (its Fortran copy of X included) at certified gap {tol_ours:.0e}, the loosest "
                                      f"within {accuracy:.0e}; {name}: {PEER_CALLS[name]}; peers {peer.versions()}"))
    return rows


#: what the peers' timed calls do (benchmarks/peer_worker.py)
PEER_CALLS = {"skglm": "ProxNewton.solve per lambda, warm-started (solver, datafit and penalty objects built in "
                       "the timed call; X Fortran-ordered)",
              "celer": "LogisticRegression.fit per lambda, warm-started (its input checks included)"}


def facets_case(n: int, p: int, rounds: int) -> list[dict]:
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
        t = interleaved({accelerated: (lambda accelerated=accelerated: facets_path(
            loss, alphas, betas, eps=eps, tol=1e-6, max_iter=20000, accelerated=accelerated))
            for accelerated in (True, False)}, rounds)
        pf, pi = t[True].value, t[False].value
        name = "Facets" if eps is None else "SCF eps=0.01"
        rows.append(dict(case=f"{name} (alpha,beta) 8x3 grid, ISTA, n={n} p={p}", reference="same grid, FISTA",
                         ref=t[True], ours=t[False],
                         err_ours=float(np.max([(a.objective - b.objective) / abs(b.objective) for a, b in zip(pi, pf)])),
                         err_ref=float(np.max([(b.objective - a.objective) / abs(a.objective) for a, b in zip(pi, pf)])),
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
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", nargs="+", default=["lasso", "logistic", "facets"],
                        choices=["lasso", "logistic", "facets"])
    parser.add_argument("--celer", action="store_true", help="also celer (5x slower than skglm here; its runs "
                                                                 "take most of the time)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with threadpool_limits(1):
        print(environment(), f"| medians of {args.rounds} interleaved rounds")
        LeastSquares(np.ones((3, 2)), np.arange(3.0))  # warm-up: imports and numba kernels
        regularisation_path(LeastSquares(correlated(50, 5, 0.5, 9), np.arange(50.0), gram=True), L1, n_lambdas=3)
        rows = []
        if "lasso" in args.cases:
            rows += [lasso_case(10000 // scale, 1000 // scale, 50, design, args.rounds) for design in ("ar1", "equi")]
        if "logistic" in args.cases:
            rows += logistic_case(10000 // scale, 500 // scale, 50, args.rounds, args.celer)
        if "facets" in args.cases:
            rows += facets_case(5000 // scale, 50, args.rounds)
    print("error columns: largest relative excess over the best objective known at each point (a converged, "
          "untimed tol-1e-10 solve of the reference, or either method): both sides shown")
    print(f"{'case':60s} {'reference':36s} {'ref s':>8s} {'ours s':>8s} {'ratio':>6s} "
          f"{'ours err':>9s} {'ref err':>9s} {'certified gap':>13s} {'iters':>7s}")
    for r in rows:
        print(f"{r['case']:60s} {r['reference']:36s} {r['ref'].median:8.3f} {r['ours'].median:8.3f} "
              f"{r['ours'].ratio(r['ref']):6.2f} {r['err_ours']:9.1e} {r['err_ref']:9.1e} {r['certified']:13.1e} "
              f"{r['iters']:7d}")
        print(f"    min-max s: ref {r['ref'].spread()}, ours {r['ours'].spread()}"
              + (f"; {r['note']}" if "note" in r else ""))


if __name__ == "__main__":
    main()
