"""Constrained score cards: the route (support enumeration under rules on supports) against the program
alone: a printed table, not a timed test.

Each table is binarised into ``x >= t`` indicators and fitted with the rules a clinic asks for: one
threshold per variable (``one_threshold_per_variable``), points increasing along the thresholds of the
first ``--monotone`` variables (``Monotone``), and at most one of the first three variables (``AtMost``).
All three are rules on supports (:mod:`formulations.support_rules`), so the route's support enumeration
(RiskSLIM's ``supports``, SLIM's ``bayes_supports``) lists only the supports that obey them. The
reference is what carried these rules before: the same instance by the program alone, which keeps them
as rows (RiskSLIM: SCIP's lazy-cut tree; SLIM: HiGHS on the MILP), each from the same heuristic start.
Both sides are whole ``solve_exact`` calls within ``--limit`` seconds, gap 1e-4 (RiskSLIM) and 1e-6
(SLIM), one thread; where both prove, their objectives must agree (checked: a mismatch aborts).

Tables: the breast-cancer data of scikit-learn (its ten "mean" measurements, as
``notebooks/06_operational_constraints.ipynb``, and all thirty), cut at 3 quantile thresholds, 70 %
training split; and the first training fold of ``certify_all.py``'s look-alikes (``--wide``): wide ones,
their variables read back from the nested columns (:func:`solvers.exact.nested_columns.nested_chains`), and
few-valued integer ones, each column a variable (points per unit; SLIM's route takes them by its orthant
search, :mod:`solvers.exact.monotone_supports`, RiskSLIM's by its support enumeration).

    OPENBLAS_NUM_THREADS=1 python benchmarks/constrained.py
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from certify_all import first_fold  # noqa: E402
from formulations.coefficients import CoefficientSet  # noqa: E402
from formulations.constraints import AtMost, Monotone, one_per_group, threshold_groups  # noqa: E402
from formulations.riskslim import RiskSLIM  # noqa: E402
from formulations.slim import SLIM  # noqa: E402
from milpscore.data.binarize import ThresholdBinarizer  # noqa: E402
from solvers.exact.nested_columns import nested_chains  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.pipeline import solve_exact  # noqa: E402
from timing import compile_kernels, environment  # noqa: E402

#: the program alone, per formulation (what carried operational constraints before the rules)
REFERENCE = {"RiskSLIM": "scip", "SLIM": "highs"}
GAP = {"RiskSLIM": 1e-4, "SLIM": 1e-6}


def breast_cancer(prefix: str) -> tuple[pd.DataFrame, np.ndarray, str]:
    raw = load_breast_cancer(as_frame=True)
    data = raw.frame[[c for c in raw.feature_names if c.startswith(prefix)]]
    y = np.where(raw.target == 0, 1.0, -1.0)  # malignant
    X_train, _, y_train, _ = train_test_split(data, y, test_size=0.3, random_state=0, stratify=y)
    B = ThresholdBinarizer(max_cuts=3).fit_transform(X_train)
    return B, y_train, f"breast cancer '{prefix or 'all'}' features, 70 % split"


def look_alike(name: str) -> tuple[pd.DataFrame, np.ndarray, str]:
    """The first training fold of ``name``: a wide look-alike's columns named ``"v<g> >= <k>"`` by their
    chains of nested thresholds, an integer look-alike's ``"c<j>"`` (a variable each)."""
    X, y, about = first_fold(name)
    if name.startswith("int"):
        return pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]), y, about
    names = [f"x{j}" for j in range(X.shape[1])]
    for g, chain in enumerate(nested_chains(X, np.arange(X.shape[1]))):
        for k, j in enumerate(chain):  # (most ones first: the lowest threshold)
            names[j] = f"v{g} >= {k}"
    return pd.DataFrame(X, columns=names), y, about


def variables(B: pd.DataFrame) -> dict[str, list[str]]:
    """The columns of each variable: its thresholds on a binarised table, else the column alone."""
    return threshold_groups(B.columns) or {c: [c] for c in B.columns}


def rules(B: pd.DataFrame, monotone: int) -> tuple:
    groups = list(variables(B).values())
    first = [c for cols in groups[:3] for c in cols]
    return tuple(Monotone(cols, "increasing") for cols in groups[:monotone]) + (AtMost(first, 1),)


def spec(family: str, names: list[str], constraints: tuple, groups: dict):
    every, points = constraints + one_per_group(groups), CoefficientSet.uniform(names, 5)
    if family == "RiskSLIM":
        return RiskSLIM(coefficients=points, c0=1e-6, max_size=5, constraints=every)
    return SLIM(coefficients=points, c0=1e-4, max_size=5, constraints=every)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--monotone", type=int, default=2)
    ap.add_argument("--wide", default="wide120s0,int590",
                    help="comma-separated look-alikes of certify_all.py, wide or integer ('' for none)")
    args = ap.parse_args()
    print(environment(), f"| max_size 5, points -5..5, {args.limit:g} s per solve, one thread")
    print(compile_kernels(), flush=True)
    tables = [breast_cancer("mean "), breast_cancer("")] + [look_alike(n) for n in args.wide.split(",") if n]
    rows = []
    for B, y, about in tables:
        groups = variables(B)
        constraints = rules(B, args.monotone)
        print(f"{about}: {B.shape[0]} x {B.shape[1]}, {len(groups)} variables", flush=True)
        for family in ("RiskSLIM", "SLIM"):
            inst = spec(family, list(B.columns), constraints, groups).instance(B.to_numpy(float), y)
            found = {}
            for side, backend in (("route", None), ("program alone", REFERENCE[family])):
                started = time.perf_counter()
                fit = solve_exact(inst, backend, limits=Limits(time_limit=args.limit, mip_rel_gap=GAP[family]))
                seconds = time.perf_counter() - started
                assert inst.constraint_violation(fit.model) <= 1e-9, (family, side, fit.message)
                found[side] = fit
                rows.append({"table": f"{B.shape[0]}x{B.shape[1]}", "formulation": family, "solved by": side,
                             "status": fit.status.value, "objective": round(fit.objective, 6),
                             "gap": float(f"{fit.gap:.3g}"), "seconds": round(seconds, 1)})
                print("  ", rows[-1], flush=True)
            a, b = found["route"], found["program alone"]
            if a.status.value == b.status.value == "optimal":
                assert abs(a.objective - b.objective) <= GAP[family] * max(abs(a.objective), 1e-9) + 1e-9, \
                    (about, family, a.objective, b.objective)
    table = pd.DataFrame(rows)
    print()
    print(table.to_string(index=False))
    print("Every model obeys its constraints (checked); where both sides prove, the optima agree (checked).")


if __name__ == "__main__":
    main()
