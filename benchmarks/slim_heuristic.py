"""SLIM incumbents: beam search with exact integer moves vs greedy coordinate search (printed table).

Per data set (the default card data; ``../shared/data`` breastcancer and mammo with their integer
features; adult, spambase, mushroom binarised and subsampled to 2000 rows as in ``reproduce.py``)
and per ``C0`` (0.01 and 0.001, points -5..5, margin 1), on the training rows of the first of
10 stratified folds: the SLIM objective, model size, test accuracy on the held-out fold and
seconds of

* ``coordinate``: the previous heuristic, the better of greedy integer coordinate searches from
  the rounded logistic start and from the zero model (``solvers.heuristics.slim.coordinate_heuristic``);
* ``beam``: ``solvers.heuristics.slim_search.search`` from the rounded logistic start (descent with swaps,
  then 0-1- and hinge-guided beam searches), without a clock;
* ``beam 2.5 s``: the same with a 2.5 s clock (the share of a 5 s fit the pipeline gives it);
* ``heuristic 2.5 s``: the catalog's SLIM start (``solvers.heuristics.slim.heuristic``) with that
  clock: the beam above, then on 0/1 features the Bayes-error beam over supports of at most 5
  features, each of its best solved exactly (``solvers.heuristics.support_beam``).

The lower objective wins; the ratio column is beam / coordinate objective. Single runs (the
searches are deterministic).

    OPENBLAS_NUM_THREADS=1 python benchmarks/slim_heuristic.py
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from formulations.slim import SLIM  # noqa: E402
from slim_certify import load  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.heuristics.slim import coordinate_heuristic, heuristic, rounded_logistic_start  # noqa: E402
from solvers.heuristics.slim_search import search  # noqa: E402
from timing import compile_kernels, environment  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="default,breastcancer,mammo,adult,spambase,mushroom")
    ap.add_argument("--c0", default="0.01,0.001")
    args = ap.parse_args()
    print(environment(), "| points -5..5, margin 1, first of 10 stratified folds, single runs")
    print(compile_kernels(), flush=True)
    rows = []
    for name in args.sets.split(","):
        X, y = load(name)
        tr, te = next(StratifiedKFold(10, shuffle=True, random_state=0).split(X, y))
        for c0 in map(float, args.c0.split(",")):
            inst = SLIM(coef_bound=5, c0=c0).instance(X[tr], y[tr])
            methods = {"coordinate": lambda: coordinate_heuristic(inst, rounded_logistic_start(inst)),
                       "beam": lambda: search(inst, [rounded_logistic_start(inst)]),
                       "beam 2.5 s": lambda: (lambda limits: search(inst, [rounded_logistic_start(inst, limits=limits)],
                                                                    limits))(Limits(time_limit=2.5).started()),
                       "heuristic 2.5 s": lambda: heuristic(inst, Limits(time_limit=2.5).started())}
            found = {}
            for method, run in methods.items():
                t = time.perf_counter()
                model = run()
                seconds = time.perf_counter() - t
                found[method] = inst.objective(model)
                test = float(np.mean(np.where(X[te] @ model.coef + model.intercept > 0, 1.0, -1.0) == y[te]))
                rows.append({"data": name, "C0": c0, "method": method, "objective": round(found[method], 5),
                             "vs coordinate": round(found[method] / found["coordinate"], 3),
                             "size": int(np.count_nonzero(model.coef)), "test accuracy": round(test, 3),
                             "seconds": round(seconds, 2)})
                print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
