"""Benchmark: convex-rounding LP, randomized rounding and local search in the metagenomic shape.

Run: ``python benchmarks/rounding.py [--sizes 10000 100000] [--samples 200]``. Data: ``m`` samples,
``n`` sparse count features (negative-binomial counts, density 5%), labels from a 20-sparse
ternary model with zero threshold and 10% flipped labels; ternary weights (``d = 2n`` doubled
LP columns). One table per run; ratios are against references measured in the same run:

* LP: build (sparse, vectorised) and HiGHS solve of the sparse convex-rounding LP
  (``||w||_1 <= k``) and of the plain LP (no budget; in p >> m it is separable, objective 0):
  interior point with crossover (``solver="ipm"``, the estimators' default) against HiGHS'
  default dual simplex.
* Randomized rounding (1000 draws, only fractional coordinates random) against re-scoring each
  draw with the full ``X' c`` product.
* Ternary hill climbing: one O(nnz) incremental pass against re-scoring each neighbour from
  scratch (timed on 200 neighbours and extrapolated to the ``2n`` of a pass).

BLAS is capped at one thread (threadpoolctl); HiGHS runs with one thread.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formulations.rounding import ConvexRounding, cumulative_hinge_loss, double_features  # noqa: E402
from solvers.highs import solve_highs  # noqa: E402
from solvers.local_search import _Margins, _ternary_moves, ternary_hill_climbing  # noqa: E402
from solvers.rounding import randomized_rounding  # noqa: E402


IPM = {"solver": "ipm"}  # interior point + crossover (a vertex, as rounding wants): the estimators' default


def metagenomic(m: int, n: int, *, density: float = 0.05, support: int = 20, noise: float = 0.1, seed: int = 0):
    """Sparse counts ``X`` (m, n) and labels ``y`` in {-1,+1} from a sparse ternary model."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.negative_binomial(2, 0.3, k) + 1.0)
    c = np.zeros(n)
    c[rng.choice(n, support, replace=False)] = rng.choice((-1.0, 1.0), support)
    score = X @ c + rng.normal(0, 0.5, m)
    y = np.where(score > 0, 1.0, -1.0)
    flip = rng.random(m) < noise
    y[flip] = -y[flip]
    return X, y


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run(m: int, n: int, *, gamma: float, k: float, draws: int, restarts: int, seed: int) -> dict:
    X, y = metagenomic(m, n, seed=seed)
    row = {"n": n, "m": m, "nnz": X.nnz, "d_lp": 2 * n}
    sparse_lp = ConvexRounding(gamma=gamma, weights="ternary", threshold=0.0, sparsity=k)
    program, row["lp_build_s"] = timed(lambda: sparse_lp.relaxed(X, y))
    lp = solve_highs(program, options=IPM)
    dual = solve_highs(program)
    assert abs(dual.objective - lp.objective) <= 1e-6 * max(1.0, abs(lp.objective))
    row.update(lp_status=lp.status.value, lp_objective=lp.objective, lp_solve_ipm_s=lp.solve_time,
               lp_solve_dual_s=dual.solve_time, lp_dual_vs_ipm=dual.solve_time / lp.solve_time)
    plain_program, row["plain_build_s"] = timed(lambda: ConvexRounding(gamma=gamma).relaxed(X, y))
    plain_ipm = solve_highs(plain_program, options=IPM)
    plain_dual = solve_highs(plain_program)
    row.update(plain_objective=plain_ipm.objective, plain_solve_ipm_s=plain_ipm.solve_time,
               plain_solve_dual_s=plain_dual.solve_time,
               plain_dual_vs_ipm=plain_dual.solve_time / plain_ipm.solve_time)

    w_hat = np.clip(program.block(lp.x, "w"), 0.0, 1.0)
    Xd = double_features(X)
    rounding, row["rounding_s"] = timed(lambda: randomized_rounding(w_hat, Xd, y, gamma=gamma, n_draws=draws,
                                                                     seed=seed, max_l1=k))
    row.update(n_fractional=rounding.n_fractional, rounded_best=rounding.loss, rounded_mean=rounding.mean_loss)
    rng = np.random.default_rng(seed)
    sample = [(rng.random(w_hat.size) < w_hat).astype(float) for _ in range(20)]
    _, naive = timed(lambda: [cumulative_hinge_loss(c, Xd, y, gamma=gamma) for c in sample])
    row["rounding_naive_s"] = naive / len(sample) * draws
    row["rounding_speedup"] = row["rounding_naive_s"] / row["rounding_s"]

    search, row["local_search_s"] = timed(lambda: ternary_hill_climbing(
        X, y, gamma=gamma, max_l1=k, n_restarts=restarts, start_nonzeros=5, seed=seed))
    row.update(ls_loss=search.loss, ls_passes=search.n_passes, ls_moves=search.n_moves)
    margins = _Margins(X, y, np.ones(m), gamma, 0.0, search.weights.copy())
    deltas = _ternary_moves(search.weights)
    _, row["pass_incremental_s"] = timed(lambda: [margins.move_changes(delta) for delta in deltas])
    Xc = X.tocsc()
    columns = rng.choice(n, 100, replace=False)

    def naive_pass():
        for j in columns:
            for delta in deltas:
                c = search.weights.copy()
                c[j] += delta[j]
                cumulative_hinge_loss(c, Xc, y, gamma=gamma)

    _, t_naive = timed(naive_pass)
    row["pass_naive_s"] = t_naive / (2 * columns.size) * (2 * n)
    row["pass_speedup"] = row["pass_naive_s"] / row["pass_incremental_s"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--gamma", type=float, default=20.0)
    parser.add_argument("--k", type=float, default=5.0, help="sparsity budget of the sparse LP and local search")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with threadpool_limits(1):
        print("BLAS threads capped to 1 with threadpoolctl.threadpool_limits(1); HiGHS threads: 1")
        rows = [run(args.samples, n, gamma=args.gamma, k=args.k, draws=args.draws, restarts=args.restarts,
                    seed=args.seed) for n in args.sizes]
    table = pd.DataFrame(rows).set_index("n")
    with pd.option_context("display.width", 200, "display.max_columns", 50, "display.float_format", "{:.4g}".format):
        print(table.T.to_string())
    for n, r in table.iterrows():
        for name, total in (("sparse", r["lp_build_s"] + r["lp_solve_ipm_s"]),
                            ("plain", r["plain_build_s"] + r["plain_solve_ipm_s"])):
            print(f"n={n}: {name} LP build + IPM solve {total:.1f} s (target < 60 s: "
                  f"{'met' if total < 60 else 'MISSED'})")


if __name__ == "__main__":
    main()
