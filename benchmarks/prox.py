"""Benchmark: proximal operators against the memory floor of the same pass, interleaved rounds.

Run: ``python benchmarks/prox.py [--quick] [--rounds 7]``. BLAS/OpenMP capped to one thread;
every ratio compares medians of interleaved rounds (:mod:`benchmarks.timing`) measured in the
same run, and the table prints the min-max of each case.

* Elementwise proxes on 1e7 float64 into a preallocated output. A prox that reads one array and
  writes one is compared with ``np.abs(x, out=y)`` (two memory streams); weighted L1 reads the
  weights too, so its floor is a three-stream pass, ``np.multiply(x, w, out=y)``. Also shown: the
  public ``prox(v, step, out=y)`` (adds a validation pass) and the best pure-numpy forms.
* Weighted 1-D TV (Condat's direct algorithm, compiled) on 1e6 and 1e7, three regimes each
  (blocks of 100 plus noise, edge weights U(0.1, 1); white noise with lam 0.01: very short
  segments; a random walk with lam 1): ratio to the abs pass and to prox-tv's C routine
  ``tautString_TV1_Weighted`` (what its Python ``tv1w_1d`` calls after its checks and allocation),
  called through cffi on prox-tv's compiled library with a preallocated output, in the peers'
  environment (:mod:`benchmarks.peers`); the worker's clock wraps that one C call (the same work
  as ours: no checks, no allocation), in the same interleaved rounds; the two solutions are
  compared. Binarsity on 1e6 coefficients in blocks of 10: one compiled call vs one call per block.
* OWL/SLOPE prox at p = 1e6, the public ``OWL.prox(v, t)`` (validation and output allocation
  included): ratio to ``np.argsort(np.abs(v))``, one sort of the magnitudes.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from formulations.penalties import (OWL, L1, Binarsity, ElasticNet, Facets, StronglyConvexFacets,  # noqa: E402
                                    WeightedL1, kernels)
from timing import environment, interleaved  # noqa: E402


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


def rows_against(timings, reference: str, floor_name: str) -> list[tuple]:
    ref = timings[reference]
    return [(name, floor_name, t.median, t.spread(), t.ratio(ref)) for name, t in timings.items() if name != reference]


def elementwise(n: int, rounds: int, rng) -> list[tuple]:
    v = rng.normal(scale=3.0, size=n)
    w = rng.uniform(0.0, 1.0, size=n) * 0.5
    out = np.empty_like(v)
    l1, enet, wl1, facets, scf = L1(0.5), ElasticNet(1.0, 0.5), WeightedL1(w), Facets(1.0), StronglyConvexFacets(1.0, 1.0, 0.01)
    two = {f"np.abs(x, out=y), n={n:.0e}": lambda: np.abs(v, out=out),
           "soft-threshold (kernel, out=)": lambda: kernels.soft_threshold(v, 0.5, out),
           "elastic net (kernel, out=)": lambda: kernels.shrink_threshold(v, 0.5, 1 / 1.5, out),
           "Facets eq. 12 (kernel, out=)": lambda: kernels.facets_prox(v, 1.0, 0.4, out),
           "SCF eq. 15 (kernel, out=)": lambda: kernels.scf_prox(v, 1.0, 0.4, 0.01, out),
           "L1.prox(v, t, out=y) (public, validates v)": lambda: l1.prox(v, 1.0, out=out),
           "Facets.prox(v, t, out=y) (public, validates v)": lambda: facets.prox(v, 0.4, out=out),
           "L1.prox (allocates 80 MB)": lambda: l1.prox(v, 1.0),
           "ElasticNet.prox (allocates)": lambda: enet.prox(v, 1.0),
           "StronglyConvexFacets.prox (allocates)": lambda: scf.prox(v, 0.4),
           "numpy soft-threshold (clip + subtract)": lambda: numpy_soft_threshold(v, 0.5, out),
           "numpy Facets (floor, maximum, copysign)": lambda: numpy_facets(v, 0.4, out)}
    three = {f"np.multiply(x, w, out=y), n={n:.0e}": lambda: np.multiply(v, w, out=out),
             "weighted L1 (kernel, out=)": lambda: kernels.weighted_soft_threshold(v, w, 1.0, out),
             "WeightedL1.prox (allocates)": lambda: wl1.prox(v, 1.0)}
    rows = rows_against(interleaved(two, rounds), next(iter(two)), "abs pass (2 streams)")
    rows += rows_against(interleaved(three, rounds), next(iter(three)), "multiply pass (3 streams)")
    return rows


#: signals of the TV rows: (name, y, edge weights) for a length m and a generator
SIGNALS = {
    "blocks of 100 + noise 0.5, lam U(0.1, 1)": lambda m, rng: (
        np.repeat(rng.normal(size=m // 100), 100) + rng.normal(scale=0.5, size=m), rng.uniform(0.1, 1.0, size=m - 1)),
    "white noise, lam 0.01 (short segments)": lambda m, rng: (rng.normal(size=m), np.full(m - 1, 0.01)),
    "random walk, lam 1": lambda m, rng: (np.cumsum(rng.normal(size=m)), np.full(m - 1, 1.0)),
}


def total_variation(m: int, rounds: int, rng, signal: str) -> list[tuple]:
    from peers import Peer

    y, lam = SIGNALS[signal](m, rng)
    res, floor = np.empty_like(y), np.empty_like(y)
    ours = f"weighted TV Condat (compiled), n={m:.0e}"
    cases = {f"np.abs(y, out=r), n={m:.0e}": lambda: np.abs(y, out=floor),
             ours: lambda: kernels.tv_prox(y, lam, 1.0, res)}
    peer = Peer.start()
    if peer is not None and not peer.has("prox-tv"):
        peer.close()
        peer = None
    if peer is not None:  # prox-tv in the peers' environment, timed there, same rounds
        peer.load(y=y, weights=lam, out=np.empty_like(y))
        cases[f"prox-tv C taut string, n={m:.0e}"] = lambda: peer.call("proxtv_tv1w")
    timings = interleaved(cases, rounds)
    rows = [(f"  signal: {signal}", "", np.nan, "", np.nan)]
    rows += rows_against(timings, next(iter(cases)), "abs pass (2 streams)")
    if peer is not None:
        theirs = timings[f"prox-tv C taut string, n={m:.0e}"]
        agree = float(np.max(np.abs(theirs.value - kernels.tv_prox(y, lam, 1.0, np.empty_like(y)))))
        peer.close()
        rows.append((f"weighted TV ours vs prox-tv C, n={m:.0e} (max diff {agree:.0e})", "prox-tv C",
                     timings[ours].median, timings[ours].spread(), timings[ours].ratio(theirs)))
    else:
        rows.append((f"prox-tv not set up (python benchmarks/peers.py setup): no C reference at n={m:.0e}", "-",
                     np.nan, "-", np.nan))
    return rows


def structured(m: int, rounds: int, rng) -> list[tuple]:
    sizes = np.full(m // 10, 10)
    bina = Binarsity(sizes, rng.uniform(0.1, 1.0, size=m - m // 10))
    y = rng.normal(size=m)
    starts, w_edges = bina.starts, bina.weights

    def per_block():
        out_b = np.empty_like(y)
        for j in range(sizes.size):
            a, b = starts[j], starts[j + 1]
            kernels.tv_prox(y[a:b], w_edges[a - j:b - j - 1], 1.0, out_b[a:b])
            out_b[a:b] -= out_b[a:b].mean()
        return out_b

    assert np.allclose(per_block(), bina.prox(y, 1.0))
    rows = rows_against(interleaved({"binarsity per-block Python loop": per_block,
                                     f"binarsity, {sizes.size} blocks of 10 (one compiled call)":
                                         lambda: bina.prox(y, 1.0)}, rounds),
                        "binarsity per-block Python loop", "per-block Python loop")
    v = rng.normal(size=m)
    owl = OWL(np.sort(rng.uniform(0, 1, size=m))[::-1])
    rows += rows_against(interleaved({"np.argsort(|v|)": lambda: np.argsort(np.abs(v)),
                                      f"OWL/SLOPE prox, p={m:.0e} (public, allocates)": lambda: owl.prox(v, 0.1)},
                                     rounds),
                         "np.argsort(|v|)", "np.argsort(|v|)")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller sizes (smoke run)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    rng = np.random.default_rng(0)
    with threadpool_limits(1):
        print(environment(), "| numba kernels are serial; medians of", args.rounds, "interleaved rounds")
        rows = elementwise(10_000_000 // scale, args.rounds, rng)
        for m in (1_000_000 // scale, 10_000_000 // scale):
            for signal in SIGNALS:
                rows += total_variation(m, args.rounds, rng, signal)
        rows += structured(1_000_000 // scale, args.rounds, rng)
    print(f"{'operation':58s} {'ratio to':26s} {'median s':>9s} {'min-max s':>17s} {'ratio':>7s}")
    for label, against, t, spread, ratio in rows:
        if label.startswith("  signal"):
            print(label)
            continue
        print(f"{label:58s} {against:26s} {t:9.4f} {spread:>17s} {ratio:7.2f}")


if __name__ == "__main__":
    main()
