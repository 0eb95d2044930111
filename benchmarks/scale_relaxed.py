"""The relaxed side at scale: binarsity and L1 logistic fits on a HIGGS-shaped one-hot CSR design.

Data (the shape of HIGGS in the binarsity slides): ``n`` rows, 24 continuous columns (standard
normal, float32), 8 of them driving a logistic label through non-linear effects; each column cut
into 10 quantile bins; the design is the ordered one-hot CSR matrix (n x 240, 24 ones per row,
int32 indices, float64 values: 10^7 rows hold 2.4e8 non-zeros, 2.9 GB).

Every fit runs in its own child process (a fresh interpreter that builds the data itself), which
reports the wall time and the CPU time (``time.process_time``; one BLAS thread, so one core: the
measure that survives a loaded machine) of the fit alone, its peak resident memory
(``ru_maxrss``: data plus fit) and its resident memory once the data are built. Methods on the same design:

* ``binarsity`` -- :func:`solvers.proximal.binarsity.binarsity_logistic_path`, one strength
  (``--strength``), FISTA until the certified relative duality gap is at most ``--accuracy``;
* ``binarsity_path`` -- the same with a warm-started path of 5 strengths ending there;
* ``estimator`` -- :class:`milpscore.estimators.BinarsityLogisticClassifier` end to end from the
  raw float32 table (binning, path of one strength, tables, card);
* ``l1_fista`` -- our FISTA on L1-penalised logistic regression, lambda = lambda_max / 20;
* ``saga`` -- scikit-learn ``LogisticRegression(l1, solver="saga", C = 1 / (n lambda))``;
* ``skglm`` -- skglm ``SparseLogisticRegression(alpha=lambda)`` (numba kernels compiled on a
  small problem first, not timed). skglm is never a dependency of milpscore: ``python
  benchmarks/peers.py setup`` installs it apart (``pip install --no-deps --target
  benchmarks/.peers-skglm``), which is where ``--peers`` looks by default.

Equal verified accuracy: the L1 problem is the peers' own, so every L1 solution (ours and the
peers') is certified the same way, by the relative duality gap at its own point (the dual
candidate built from its gradient, :func:`solvers.proximal.common.duality_gap`); each peer is run
with tolerances 1e-2, 1e-3, ... until its certified gap is at most ``--accuracy`` and the time
of that run is reported (``tol`` column); at the next ``n`` the sweep starts from the tolerance
that sufficed (``--saga-tol`` / ``--skglm-tol`` set the first one). The ``ratio`` column is the
CPU time over that of ``--reference`` (default ``binarsity``: the slides' estimator) for the same
``n`` in the same run; ``l1_fista`` vs ``saga`` / ``skglm`` is the same-problem comparison.

``--wide [p ...]`` runs the p >> n shape instead (200 samples x p sparse counts, 1% non-zero,
the metagenomic shape of the ternary-weights paper): L1 logistic by our working-set solver on the
CSR matrix, and the estimators ``FacetsClassifier(solver="prox")``, ``EYEClassifier(solver="prox")``
and ``ConvexRoundingClassifier`` on the sparse table (``densified``: the estimator densified it,
with its warning).

Run (one core each): ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=. python
benchmarks/scale_relaxed.py --sizes 1e5 1e6 1e7``; ``... --wide 1e5``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import SKGLM_TARGET  # noqa: E402
N_COLUMNS, N_BINS, N_INFORMATIVE = 24, 10, 8
PEER_TOLS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def _rss_gb() -> float:
    """Current resident memory of this process, GB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB on Linux


def higgs_shaped(n: int, seed: int = 0, raw: bool = False):
    """``(codes or raw table, y)``: 24 standard-normal float32 columns, 8 informative; ``codes``
    (n, 24) uint8 quantile bins (10 per column), or with ``raw`` the float32 table itself."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, N_COLUMNS), np.float32 if raw else np.uint8)
    score = np.zeros(n)
    for j in range(N_COLUMNS):
        x = rng.standard_normal(n, dtype=np.float32)
        if j < N_INFORMATIVE:
            score += (0.5 if j % 2 else -0.4) * np.tanh(x * (1 + j % 3)) + 0.3 * (x > 1)
        if raw:
            out[:, j] = x
        else:
            cuts = np.quantile(x, np.arange(1, N_BINS) / N_BINS)
            out[:, j] = np.searchsorted(cuts, x, side="right")
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-score)), 1.0, -1.0)
    return out, y


def metagenomic_shaped(n: int, p: int, density: float = 0.01, seed: int = 0):
    """``(X, y)``: ``n`` samples of ``p`` sparse counts (CSR, ``density`` non-zero, Poisson(3) + 1),
    the label driven by the first 5 columns: the p >> n shape of the ternary-weights paper."""
    rng = np.random.default_rng(seed)
    import scipy.sparse as sp

    X = sp.random(n, p, density=density, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.poisson(3, k) + 1.0)
    w = np.zeros(p)
    w[:5] = [1.0, -1.0, 0.8, -0.6, 0.5]
    y = np.where(X @ w + 0.3 * rng.standard_normal(n) > 0, 1, 0)
    return X, y


def wide_child(method: str, p: int) -> dict:
    """One p >> n fit (200 x p sparse counts) in this process; returns its measurements."""
    import warnings

    X, y = metagenomic_shaped(200, p)
    out: dict = {"method": method, "p": p, "nnz": int(X.nnz), "rss_data_gb": _rss_gb()}
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if method == "l1":
            from formulations.losses import Logistic
            from formulations.penalties import L1
            from solvers.proximal.gradient import working_set_solve
            from solvers.proximal.path import lambda_max

            loss = Logistic(X, np.where(y > 0, 1.0, -1.0))
            res = working_set_solve(loss, L1(lambda_max(loss, L1) / 5), tol=1e-6)
            coef, status, gap = res.x, res.status.value, res.gap
        else:
            from milpscore.estimators import ConvexRoundingClassifier, EYEClassifier, FacetsClassifier

            model = {"facets_prox": lambda: FacetsClassifier(solver="prox", lam=0.01),
                     "eye_prox": lambda: EYEClassifier(solver="prox", lam=0.02),
                     "rounding_lp": lambda: ConvexRoundingClassifier(random_state=0)}[method]().fit(X, y)
            coef, status, gap = model.coef_, getattr(model, "status_", ""), getattr(model, "gap_", math.nan)
    out.update(time=time.perf_counter() - start, cpu=time.process_time() - cpu, nonzeros=int(np.count_nonzero(coef)),
               status=str(status), gap=float(gap) if gap is not None else math.nan,
               densified=any("densified" in str(w.message) for w in caught), peak_gb=_peak_gb())
    return out


def _design(n: int):
    from milpscore.data.binning import onehot_matrix

    codes, y = higgs_shaped(n)
    X = onehot_matrix(codes, np.arange(N_COLUMNS) * N_BINS, N_COLUMNS * N_BINS)
    return X, y


def _certified_l1(loss, lam: float, coef: np.ndarray, intercept: float) -> tuple[float, float]:
    """Objective and certified relative duality gap of an L1-logistic solution (any solver's)."""
    from formulations.penalties import L1
    from solvers.proximal.common import duality_gap

    coef = np.asarray(coef, dtype=np.float64).ravel()
    state = loss.state(coef, intercept)
    value = loss.value_state(coef, intercept, state)
    grad, _ = loss.gradient_state(state)
    primal = value + lam * float(np.abs(coef).sum())
    _, gap = duality_gap(loss, L1(lam), coef, intercept, state, value, grad, primal)
    return primal, max(gap, 0.0) / abs(primal) if math.isfinite(gap) else math.inf


def child(method: str, n: int, strength: float, accuracy: float, tol: float, peers: str | None) -> dict:
    """One fit in this process; returns its measurements."""
    if peers:
        sys.path.append(peers)
    out: dict = {"method": method, "n": n}
    if method == "estimator":
        import pandas as pd

        from milpscore.estimators import BinarsityLogisticClassifier

        raw, y = higgs_shaped(n, raw=True)
        frame = pd.DataFrame(raw, columns=[f"x{j}" for j in range(N_COLUMNS)], copy=False)
        out["rss_data_gb"] = _rss_gb()
        start, cpu = time.perf_counter(), time.process_time()
        clf = BinarsityLogisticClassifier(n_bins=N_BINS, strength=strength, n_strengths=1, tol=accuracy).fit(frame, y)
        out.update(time=time.perf_counter() - start, cpu=time.process_time() - cpu, iterations=clf.n_iter_,
                   gap=clf.gap_, objective=clf.objective_, used=int(clf.support_.sum()), penalty="binarsity")
        out["peak_gb"] = _peak_gb()
        return out
    X, y = _design(n)
    out["rss_data_gb"] = _rss_gb()
    from formulations.losses import Logistic
    from formulations.penalties import L1
    from solvers.proximal.path import lambda_max

    if method in ("binarsity", "binarsity_path"):
        from solvers.proximal.binarsity import binarsity_logistic_path, block_support

        start, cpu = time.perf_counter(), time.process_time()
        points, _ = binarsity_logistic_path(X, y, [N_BINS] * N_COLUMNS, strength=strength,
                                            n_strengths=1 if method == "binarsity" else 5, tol=accuracy)
        last = points[-1]
        out.update(time=time.perf_counter() - start, cpu=time.process_time() - cpu,
                   iterations=sum(p.result.iterations for p in points), gap=last.result.gap,
                   objective=last.objective, penalty="binarsity",
                   used=int(block_support(last.coef, [N_BINS] * N_COLUMNS).sum()))
        out["peak_gb"] = _peak_gb()
        return out
    loss = Logistic(X, y)
    lam = lambda_max(loss, L1) / 20.0
    out["penalty"] = "l1"
    if method == "l1_fista":
        from solvers.proximal.gradient import proximal_gradient

        start, cpu = time.perf_counter(), time.process_time()
        res = proximal_gradient(loss, L1(lam), tol=accuracy, max_iter=100000)
        out.update(time=time.perf_counter() - start, cpu=time.process_time() - cpu, iterations=res.iterations)
        coef, intercept = res.x, res.raw["intercept"]
    elif method == "saga":
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(penalty="l1", C=1.0 / (n * lam), solver="saga", tol=tol, max_iter=100000)
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (ConvergenceWarning, FutureWarning, UserWarning))
            model.fit(X, y)
        out.update(time=time.perf_counter() - start, cpu=time.process_time() - cpu,
                   iterations=int(np.max(model.n_iter_)))
        coef, intercept = model.coef_.ravel(), float(model.intercept_[0])
    elif method == "skglm":
        try:
            from skglm import SparseLogisticRegression
        except ImportError:
            raise SystemExit(f"skglm is not in --peers {peers}: python benchmarks/peers.py setup installs it there")

        SparseLogisticRegression(alpha=lam, tol=tol).fit(X[:2000], y[:2000])  # compile numba kernels, untimed
        model = SparseLogisticRegression(alpha=lam, tol=tol, fit_intercept=True, max_iter=1000)
        start, cpu = time.perf_counter(), time.process_time()
        model.fit(X, y)
        out.update(time=time.perf_counter() - start, cpu=time.process_time() - cpu,
                   iterations=int(np.max(getattr(model, "n_iter_", -1))))
        coef, intercept = model.coef_.ravel(), float(np.ravel(model.intercept_)[0])
    else:
        raise ValueError(f"unknown method {method!r}")
    out["objective"], out["gap"] = _certified_l1(loss, lam, coef, intercept)
    out["used"] = int(np.count_nonzero(coef))
    out["peak_gb"] = _peak_gb()
    return out


def _run_child(args, method: str, n: int, tol: float) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", method, "--sizes", str(n), "--strength",
           str(args.strength), "--accuracy", str(args.accuracy), "--tol", str(tol)]
    if args.peers:
        cmd += ["--peers", args.peers]
    load = Path("/proc/loadavg").read_text().split()[:3]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=ROOT,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "error": f"timeout {args.timeout:g} s", "load": " ".join(load)}
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
        return {"method": method, "n": n, "error": tail[0][:100], "load": " ".join(load)}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["load"] = " ".join(load)
    result["tol"] = tol
    return result


def _wide_table(args) -> None:
    """p >> n: 200 x p sparse counts (1% non-zero) through L1, Facets prox, EYE prox, convex-rounding LP."""
    print(f"# p >> n: 200 rows x p sparse counts (1% non-zero); OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')} cpus={os.cpu_count()}")
    print(f"{'p':>8} {'method':<12} {'time s':>8} {'cpu s':>8} {'status':<9} {'gap':>9} {'nonzeros':>8} "
          f"{'densified':>9} {'data GB':>7} {'peak GB':>7}  load")
    for p in (int(v) for v in (args.wide or [1e5])):
        for method in ("l1", "facets_prox", "eye_prox", "rounding_lp"):
            load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", f"wide:{method}", "--sizes", str(p)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=ROOT,
                                      env=dict(os.environ, PYTHONPATH=str(ROOT)))
            except subprocess.TimeoutExpired:
                print(f"{p:>8} {method:<12} timeout {args.timeout:g} s  {load}", flush=True)
                continue
            if proc.returncode != 0:
                print(f"{p:>8} {method:<12} error: {(proc.stderr.strip().splitlines() or ['?'])[-1][:100]}  {load}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{p:>8} {method:<12} {r['time']:>8.2f} {r['cpu']:>8.2f} {r['status']:<9} {r['gap']:>9.2e} "
                  f"{r['nonzeros']:>8} {str(r['densified']):>9} {r['rss_data_gb']:>7.2f} {r['peak_gb']:>7.2f}  {load}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6, 1e7])
    parser.add_argument("--methods", nargs="+",
                        default=["binarsity", "binarsity_path", "estimator", "l1_fista", "saga", "skglm"])
    parser.add_argument("--strength", type=float, default=1.0)
    parser.add_argument("--accuracy", type=float, default=1e-6, help="certified relative duality gap")
    parser.add_argument("--tol", type=float, default=1e-4, help="(child) the peer's own tolerance")
    parser.add_argument("--peers", default=str(SKGLM_TARGET),
                        help="folder holding skglm (pip install --no-deps --target; default: peers.py setup's)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per child process")
    parser.add_argument("--max-path-n", type=float, default=1e6, help="largest n for binarsity_path and estimator")
    parser.add_argument("--reference", default="binarsity", help="method whose CPU time the ratios divide by")
    parser.add_argument("--saga-tol", type=float, default=None, choices=PEER_TOLS,
                        help="first tolerance of saga's sweep (default 1e-2)")
    parser.add_argument("--skglm-tol", type=float, default=None, choices=PEER_TOLS,
                        help="first tolerance of skglm's sweep (default 1e-2)")
    parser.add_argument("--wide", nargs="*", type=float, default=None,
                        help="instead: p >> n fits, 200 x p sparse counts, for each p given (default 1e5)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child and args.child.startswith("wide:"):
        print(json.dumps(wide_child(args.child[5:], int(args.sizes[0]))))
        return
    if args.child:
        print(json.dumps(child(args.child, int(args.sizes[0]), args.strength, args.accuracy, args.tol, args.peers)))
        return
    if args.wide:
        _wide_table(args)
        return
    print(f"# OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')} "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} cpus={os.cpu_count()} accuracy={args.accuracy:g} "
          f"strength={args.strength:g}")
    header = (f"{'n':>9} {'method':<15} {'penalty':<9} {'tol':>7} {'time s':>8} {'ratio':>6} {'iters':>6} "
              f"{'cert gap':>9} {'objective':>12} {'used':>5} {'data GB':>7} {'peak GB':>7} {'cpu s':>8}  load")
    print(header)
    first_tol = {method: tol for method, tol in (("saga", args.saga_tol), ("skglm", args.skglm_tol)) if tol}
    for n in (int(s) for s in args.sizes):
        rows = []
        for method in args.methods:
            if method in ("binarsity_path", "estimator") and n > args.max_path_n:
                continue
            if method in ("saga", "skglm"):
                row = None
                for tol in PEER_TOLS[PEER_TOLS.index(first_tol.get(method, PEER_TOLS[0])):]:
                    row = _run_child(args, method, n, tol)
                    if "error" in row or row["gap"] <= args.accuracy:
                        break
                if "error" not in row:
                    first_tol[method] = row["tol"]  # larger n: start the sweep where this one ended
            else:
                row = _run_child(args, method, n, args.tol)
                row["tol"] = args.accuracy
            rows.append(row)
            reference = next((r["cpu"] for r in rows if r["method"] == args.reference and "cpu" in r), None)
            if "error" in row:
                print(f"{n:>9} {method:<15} {'':<9} {'':>7} {'-':>8} {'':>6} {'':>6} {'':>9} {'':>12} {'':>5} "
                      f"{'':>7} {'':>7} {'':>8}  {row['load']}  ({row['error']})", flush=True)
                continue
            ratio = f"{row['cpu'] / reference:6.2f}" if reference else f"{'-':>6}"
            print(f"{n:>9} {method:<15} {row['penalty']:<9} {row['tol']:>7.0e} {row['time']:>8.2f} {ratio} "
                  f"{row['iterations']:>6} {row['gap']:>9.2e} {row['objective']:>12.9f} {row['used']:>5} "
                  f"{row['rss_data_gb']:>7.2f} {row['peak_gb']:>7.2f} {row['cpu']:>8.2f}  {row['load']}", flush=True)


if __name__ == "__main__":
    main()
