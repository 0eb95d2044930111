"""Benchmark: conic backends on logistic + L1, + EYE and + Facets (n=5000, d=50), interleaved rounds.

Run: ``python benchmarks/conic.py [--n 5000] [--d 50] [--rounds 5]`` (about 8 minutes). Cases:

* ``ecos``            -- our program (2n exponential cones on the scores ``z = Xw + b``, one SOC for
  EYE, one LP epigraph row per facet for Facets on the box ``|w_j| <= 6 mu = 3``) built and passed to
  ``ecos.solve`` directly (``solvers.backends.ecos.solve_ecos``): build + solve, the reference;
* ``clarabel``        -- the same program through cvxpy to Clarabel (``solvers.backends.cvxpy.solve_clarabel``);
* ``cvxpy+ECOS``      -- the model written idiomatically in cvxpy (``cp.logistic``, ``cp.norm1``;
  EYE from its definition, Facets as ``lam sum_k sum pos(|w| / mu - k)`` over the same six
  pieces and box) and solved by ECOS: canonicalisation + solve, what a cvxpy user runs;
* ``cvxpy+Clarabel``  -- the same idiomatic model solved by Clarabel;
* ``fista``           -- FISTA with the penalty's prox (``solvers.proximal.gradient``, tol 1e-9), no program.

Medians (and min-max) of interleaved rounds (:mod:`benchmarks.timing`), BLAS capped to one thread;
ratios against ``ecos`` and against ``cvxpy+ECOS`` in the same run; ``rel. diff`` is the
objective difference to ``ecos`` (every objective recomputed from the model by the instance);
``solver s`` and ``iters`` are the solver's own clock and iteration count of the last round (the
rest of ``median s`` is our build, or cvxpy's canonicalisation).

Both ECOS cases solve programs of the same size (ours: 15101 variables, 5000 equality rows
``z = Xw + b`` and 2n exponential cones; cvxpy's: 15101 variables, 5100 linear rows and 2n cones
with ``Xw + b`` inside them, 285,000 non-zeros each) in 25-32 interior-point iterations, so the
ratio is ECOS's time per iteration on each structure plus cvxpy's canonicalisation (about 0.6 s
on an idle machine), and it moves with the load: cvxpy+ECOS slows down more than direct ECOS on a
busy machine. Measured with this script: 0.41 / 0.38 / 0.49 (L1 / EYE / Facets) at load average
7 (docs/benchmarks.md), 0.54-0.62 in an independent run on a quieter machine. The 0.33 / 0.38 /
0.41 once in docs/benchmarks.md came from a log of an earlier run at load average 2.6 that
``report.py --logs`` assembled into the page and stamped with the commit of the day of assembly
(53a6cfb), so neither its code nor its conditions could be traced; ``--logs`` is gone (every
section is now a run with its own commit and load line).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from formulations.base import Model  # noqa: E402
from formulations.coefficients import CoefficientSet  # noqa: E402
from formulations.losses import Logistic  # noqa: E402
from formulations.penalized import PenalizedProgram  # noqa: E402
from formulations.penalties import EYE, L1, Facets  # noqa: E402
from solvers.backends.cvxpy import solve_clarabel  # noqa: E402
from solvers.backends.ecos import solve_ecos  # noqa: E402
from solvers.proximal.gradient import fista  # noqa: E402
from timing import environment, interleaved  # noqa: E402


def make_data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    theta = np.zeros(d)
    theta[: d // 5] = rng.normal(size=d // 5)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ theta))), 1.0, -1.0)
    r = np.zeros(d)
    r[: d // 10] = 1.0
    r[d // 5: d // 5 + d // 10] = 1.0  # half the known factors are irrelevant
    return X, y, r


#: Facets grid unit and number of pieces (box |w_j| <= pieces * mu) of the Facets case
FACETS_MU, FACETS_PIECES = 0.5, 6


def idiomatic(X, y, penalty: str, r, lam: float):
    """The problem as a cvxpy user writes it (atoms, not our matrices)."""
    import cvxpy as cp

    theta, b = cp.Variable(X.shape[1]), cp.Variable()
    loss = cp.sum(cp.logistic(cp.multiply(-y, X @ theta + b))) / y.size
    constraints = []
    if penalty == "L1":
        reg = cp.norm1(theta)
    elif penalty == "Facets":
        reg = sum(cp.sum(cp.pos(cp.abs(theta) / FACETS_MU - k)) for k in range(FACETS_PIECES))
        constraints = [cp.abs(theta) <= FACETS_PIECES * FACETS_MU]
    else:
        l1 = cp.norm1(cp.multiply(1 - r, theta))
        reg = l1 + cp.norm2(cp.hstack([l1, cp.norm2(cp.multiply(r, theta))]))
    return cp.Problem(cp.Minimize(loss + lam * reg), constraints), theta, b


def run(n: int, d: int, rounds: int) -> pd.DataFrame:
    X, y, r = make_data(n, d)
    lam = 0.01
    rows = []
    box = CoefficientSet.uniform(X.shape[1], FACETS_PIECES * FACETS_MU, integer=False)
    for label, name, spec in (("logistic + L1", "L1", PenalizedProgram(L1(lam))),
                              ("logistic + EYE", "EYE", PenalizedProgram(EYE(r, lam))),
                              ("logistic + Facets", "Facets",
                               PenalizedProgram(Facets(lam, mu=FACETS_MU), coefficients=box))):
        instance, penalty = spec.instance(X, y), spec.penalty

        def ours(solver):
            def call():
                inst = spec.instance(X, y)  # the build is part of the time
                result = solver(inst.relaxed())
                return inst.decode(result.x), result.status.value, result.solve_time, result.iterations
            return call

        def cvx(solver):
            def call():
                problem, theta, b = idiomatic(X, y, name, r, lam)
                problem.solve(solver=solver)
                stats = problem.solver_stats
                return (Model(np.asarray(theta.value), float(b.value)), problem.status, stats.solve_time,
                        stats.num_iters)
            return call

        def prox():
            result = fista(Logistic(X, y), penalty, tol=1e-9, max_iter=200_000)
            return Model(result.x, float(result.raw["intercept"])), result.status.value, np.nan, result.iterations

        cases = {"ecos": ours(solve_ecos), "clarabel": ours(solve_clarabel), "cvxpy+ECOS": cvx("ECOS"),
                 "cvxpy+Clarabel": cvx("CLARABEL"), "fista": prox}
        timings = interleaved(cases, rounds)
        ref_obj = instance.objective(timings["ecos"].value[0])
        for method, t in timings.items():
            model, status, solver_s, iterations = t.value
            objective = instance.objective(model)
            rows.append({"problem": label, "method": method, "status": status, "median s": t.median,
                         "min-max s": t.spread(), "solver s": solver_s, "iters": iterations, "objective": objective,
                         "rel. diff": abs(objective - ref_obj) / abs(ref_obj),
                         "x ecos": t.ratio(timings["ecos"]), "x cvxpy+ECOS": t.ratio(timings["cvxpy+ECOS"])})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with threadpool_limits(1):
        print(environment(), f"| n={args.n}, d={args.d}, lam=0.01, medians of {args.rounds} interleaved rounds")
        table = run(args.n, args.d, args.rounds)
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
