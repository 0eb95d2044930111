"""Benchmark: proximal operators against one numpy pass (and plain-loop references).

Run: ``python benchmarks/prox.py [--quick]``. BLAS/OpenMP capped to one thread (threadpoolctl).

* Elementwise proxes (soft-threshold, weighted L1, elastic net, Facets eq. 12, SCF eq. 15) on
  1e7 float64 into a preallocated output (the compiled kernels the penalties call, and the public
  ``prox(v, step, out=y)`` which adds a validation pass), as a ratio to one ``np.abs(x, out=y)``
  pass measured in the same run. Weighted L1 reads a second array (the weights): three memory
  streams against two, so ~1.3-1.5x is its floor. Also shown: ``prox`` without ``out`` (allocates
  and first-touches 80 MB) and the best pure-numpy forms (soft-threshold by clip + subtract, Facets
  by floor/maximum), for comparison. Target: <= 1.2x.
* Weighted 1-D TV (Condat's direct algorithm, compiled) on 1e6 and 1e7: ratio to one abs pass,
  and to the same algorithm run as a plain Python loop (``kernels.tv_prox.py_func``, timed at
  1e5 and scaled linearly: the algorithm is O(n)). ``prox-tv`` is used as a further reference
  only if importable (it is not installed here). Binarsity on 1e6 coefficients in blocks of 10:
  one compiled call vs one Python call per block.
* OWL/SLOPE prox at p = 1e6: ratio to ``np.argsort(np.abs(v))``. Target: <= 2.5x.

Times are the best of ``--repeats`` runs (wall clock, seconds).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

from formulations.penalties import (OWL, L1, Binarsity, ElasticNet, Facets, StronglyConvexFacets,  # noqa: E402
                                    WeightedL1, kernels)


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up (compilation is cached, first call still loads it)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def numpy_soft_threshold(v, t, out):
    np.clip(v, -t, t, out=out)
    np.subtract(v, out, out=out)
    return out


def numpy_facets(v, mu, out):
    a = np.abs(v)
    q = np.floor(a / (mu + 1.0))
    np.subtract(a, mu * (q + 1.0), out=out)
    np.maximum(out, q, out=out)
    return np.copysign(out, v, out=out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller sizes (smoke run)")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    rng = np.random.default_rng(0)
    rows = []
    with threadpool_limits(1):
        print("threads:", {d["internal_api"]: d["num_threads"] for d in threadpool_info()},
              "(threadpoolctl.threadpool_limits(1)); numba kernels are serial (no parallel=True)")
        n = 10_000_000 // scale
        v = rng.normal(scale=3.0, size=n)
        out = np.empty_like(v)
        weights = rng.uniform(0.0, 1.0, size=n) * 0.5
        l1, enet, wl1 = L1(0.5), ElasticNet(1.0, 0.5), WeightedL1(weights)
        facets, scf = Facets(1.0), StronglyConvexFacets(1.0, 1.0, 0.01)
        ref = best_time(lambda: np.abs(v, out=out), args.repeats)
        rows.append((f"np.abs(x, out=y), n={n:.0e}", "reference", ref, 1.0))
        cases = [
            ("soft-threshold (kernel, out=)", lambda: kernels.soft_threshold(v, 0.5, out)),
            ("weighted L1 (kernel, out=)", lambda: kernels.weighted_soft_threshold(v, weights, 1.0, out)),
            ("elastic net (kernel, out=)", lambda: kernels.shrink_threshold(v, 0.5, 1 / 1.5, out)),
            ("Facets eq. 12 (kernel, out=)", lambda: kernels.facets_prox(v, 1.0, 0.4, out)),
            ("SCF eq. 15 (kernel, out=)", lambda: kernels.scf_prox(v, 1.0, 0.4, 0.01, out)),
            ("L1(0.5).prox(v, t, out=y) (public API, validates v)", lambda: l1.prox(v, 1.0, out=out)),
            ("Facets(1).prox(v, t, out=y) (public API, validates v)", lambda: facets.prox(v, 0.4, out=out)),
            ("L1(0.5).prox (allocates)", lambda: l1.prox(v, 1.0)),
            ("ElasticNet.prox (allocates)", lambda: enet.prox(v, 1.0)),
            ("WeightedL1.prox (allocates)", lambda: wl1.prox(v, 1.0)),
            ("Facets(1).prox (allocates)", lambda: facets.prox(v, 0.4)),
            ("StronglyConvexFacets.prox (allocates)", lambda: scf.prox(v, 0.4)),
            ("numpy soft-threshold (clip + subtract)", lambda: numpy_soft_threshold(v, 0.5, out)),
            ("numpy Facets (floor, maximum, copysign)", lambda: numpy_facets(v, 0.4, out)),
        ]
        for label, fn in cases:
            t = best_time(fn, args.repeats)
            rows.append((label, "abs pass", t, t / ref))

        for m in (1_000_000 // scale, 10_000_000 // scale):
            y = np.repeat(rng.normal(size=m // 100), 100) + rng.normal(scale=0.5, size=m)
            lam = rng.uniform(0.1, 1.0, size=m - 1)
            res = np.empty_like(y)
            abs_ref = best_time(lambda: np.abs(y, out=res), args.repeats)
            t_tv = best_time(lambda: kernels.tv_prox(y, lam, 1.0, res), args.repeats)
            rows.append((f"weighted TV Condat, n={m:.0e}", "abs pass", t_tv, t_tv / abs_ref))
            if m == 1_000_000 // scale:
                small = 100_000 // scale
                t0 = time.perf_counter()
                kernels.tv_prox.py_func(y[:small], lam[:small - 1], 1.0, np.empty(small))
                t_py = (time.perf_counter() - t0) * (m / small)
                rows.append((f"weighted TV plain Python loop, n={m:.0e} (scaled from {small:.0e})", "Condat compiled",
                             t_py, t_py / t_tv))
                try:
                    import prox_tv  # type: ignore
                    t_ptv = best_time(lambda: prox_tv.tv1w_1d(y, lam), args.repeats)
                    rows.append((f"weighted TV, ours vs prox-tv, n={m:.0e}", "prox-tv", t_tv, t_tv / t_ptv))
                except ImportError:
                    rows.append(("prox-tv not installed: no C reference", "-", float("nan"), float("nan")))

        m = 1_000_000 // scale
        sizes = np.full(m // 10, 10)
        bina = Binarsity(sizes, rng.uniform(0.1, 1.0, size=m - m // 10))
        y = rng.normal(size=m)
        t_b = best_time(lambda: bina.prox(y, 1.0), args.repeats)
        starts = bina.starts
        w_edges = bina.weights

        def per_block():
            out_b = np.empty_like(y)
            for j in range(sizes.size):
                a, b = starts[j], starts[j + 1]
                kernels.tv_prox(y[a:b], w_edges[a - j:b - j - 1], 1.0, out_b[a:b])
                out_b[a:b] -= out_b[a:b].mean()
            return out_b

        assert np.allclose(per_block(), bina.prox(y, 1.0))
        t_pb = best_time(per_block, max(1, args.repeats // 2))
        rows.append((f"binarsity, {sizes.size} blocks of 10 (one compiled call)", "per-block Python loop", t_b, t_b / t_pb))

        p = 1_000_000 // scale
        v = rng.normal(size=p)
        owl = OWL(np.sort(rng.uniform(0, 1, size=p))[::-1])
        t_sort = best_time(lambda: np.argsort(np.abs(v)), args.repeats)
        t_owl = best_time(lambda: owl.prox(v, 0.1), args.repeats)
        rows.append((f"OWL/SLOPE prox, p={p:.0e}", "np.argsort(|v|)", t_owl, t_owl / t_sort))

    print(f"{'operation':66s} {'ratio to':24s} {'seconds':>10s} {'ratio':>7s}")
    for label, against, t, ratio in rows:
        print(f"{label:66s} {against:24s} {t:10.4f} {ratio:7.2f}")


if __name__ == "__main__":
    main()
