"""The blocked screen on supports of groups of nested columns against the screen on column supports (issue 41).

On the first training fold (``StratifiedKFold(5, shuffle=True, random_state=0)``) of each ``--sets``
table of ``benchmarks/certify_all.py`` (``max_size`` 5), at the heuristic's incumbent of SLIM (C0
1e-4, points -5..5; Bayes errors) and of RiskSLIM (C0 1e-6, multiplier 1; saturated losses):

1. the whole pass of the blocked screen over every support of 5 columns
   (:func:`solvers.exact.blocked_pass.screen_pairs` with :func:`solvers.exact.blocked_pass.all_pairs`),
   one thread: seconds, supports listed, survivors; with ``--column-limit`` seconds it stops there and
   its own rate projects the whole pass (``projected``);
2. the same pass listing supports of groups (:class:`solvers.exact.blocked_pass.GroupBranch`, chains of
   nested columns cut in runs of 2): seconds, group supports listed, survivors (the column supports
   whose own sums are below the cutoff), and whether they are the column pass's survivors (when it
   finished) -- the same verified result, so the ratio of seconds compares equal work.

    OPENBLAS_NUM_THREADS=1 python benchmarks/group_screen.py --sets wide120s0,wide120s1
    OPENBLAS_NUM_THREADS=1 python benchmarks/group_screen.py --sets wide240s0 --column-limit 120
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from certify_all import first_fold  # noqa: E402
from formulations.riskslim import RiskSLIM  # noqa: E402
from formulations.slim import SLIM  # noqa: E402
from solvers.catalog import CATALOG  # noqa: E402
from solvers.exact.blocked_entropy import BAYES, xlogx_table  # noqa: E402
from solvers.exact.blocked_pass import GroupBranch, all_pairs, plain_branch, screen_pairs  # noqa: E402
from solvers.exact.blocked_supports import _label  # noqa: E402
from solvers.exact.box_logistic import label_bits  # noqa: E402
from solvers.exact.zero_one_supports import zero_one  # noqa: E402
from solvers.exact.sparse_logistic import SparseLogistic  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.result import prune_level  # noqa: E402
from timing import compile_kernels, environment, load  # noqa: E402

SIZE = 5


def screened_at_the_incumbent(kind: str, X: np.ndarray, y: np.ndarray) -> tuple[tuple, float, float]:
    """What the blocked step of ``kind`` screens on table ``(X, y)``: its data ``(X, y, weights)`` (0/1
    columns), the cutoff it screens at (the heuristic's objective less the gap, in weight units for SLIM and
    loss units for RiskSLIM: module docstring) and the heuristic's objective."""
    spec = SLIM(c0=1e-4, coef_bound=5, max_size=SIZE) if kind == "SLIM" else RiskSLIM(coef_bound=5, c0=1e-6,
                                                                                        max_size=SIZE)
    inst = spec.instance(X, y)
    start = CATALOG[kind.lower()].heuristic_function(inst, Limits(time_limit=30).started(), 0)
    objective = inst.objective(start)
    level = prune_level(objective, 1e-4)
    if kind == "SLIM":
        problem = zero_one(inst)
        return (problem.X, problem.y, problem.weights), level - problem.offset, objective
    problem = SparseLogistic.from_instance(inst)
    cutoff = (level - problem.offset) / problem.loss_cost
    return (problem.data.X, problem.data.y, problem.data.weights), cutoff, objective


def label_sets(kind: str, X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> tuple[tuple, np.ndarray]:
    """The bit sets of both labels' rows as the blocked screen takes them, and the cell sums' table of
    ``kind`` (Bayes errors for SLIM, saturated losses for RiskSLIM)."""
    bits_pos, valid_pos, unit_pos, bits_neg, valid_neg, unit_neg = label_bits(X, y > 0, weights)
    free = np.arange(X.shape[1])
    bits_pos, n_pos = _label(bits_pos, valid_pos, free)
    bits_neg, n_neg = _label(bits_neg, valid_neg, free)
    table = BAYES if kind == "SLIM" else xlogx_table(n_pos, n_neg, unit_pos, unit_neg)
    return (bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg), table


def passes(kind: str, X, y, weights, cutoff: float, column_limit: float) -> None:
    """Both passes at ``cutoff`` (module docstring) and one line each."""
    bits, table = label_sets(kind, X, y, weights)
    total = math.comb(X.shape[1], SIZE)
    limits = Limits(time_limit=column_limit or None).started()
    t = time.perf_counter()
    columns = screen_pairs(bits, table, [all_pairs(X.shape[1], SIZE)], SIZE, cutoff, limits, 1)
    column_seconds = time.perf_counter() - t
    finished = columns.stopped is None
    whole = column_seconds if finished else column_seconds / max(columns.listed, 1) * total
    print(f"  {kind} columns: {columns.listed} of {total} supports in {column_seconds:.1f} s"
          + (f", {columns.survivors.shape[0]} survivors" if finished else
             f" ({columns.stopped}); projected {whole:.0f} s")
          + f" | load {load()}", flush=True)
    branch = plain_branch(X, SIZE)
    if not isinstance(branch, GroupBranch):
        print(f"  {kind} groups: not listed (no groups that pay on this table)")
        return
    t = time.perf_counter()
    groups = screen_pairs(bits, table, [branch], SIZE, cutoff, Limits.untimed().started(), 1)
    group_seconds = time.perf_counter() - t
    same = "" if not finished or groups.stopped else \
        f", the column pass's survivors: {'yes' if np.array_equal(groups.survivors, columns.survivors) else 'NO'}"
    print(f"  {kind} groups: {groups.listed} supports of {branch.start.size - 1} groups in {group_seconds:.1f} s, "
          + (f"{groups.survivors.shape[0]} survivors{same}" if groups.stopped is None else groups.stopped)
          + f"; column pass / group pass: {whole / group_seconds:.2f}{'' if finished else ' (projected)'}"
          + f" | load {load()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="wide120s0", help="comma-separated table names of benchmarks/certify_all.py")
    ap.add_argument("--column-limit", type=float, default=0.0,
                    help="seconds of the column pass before its rate projects the rest (0: the whole pass)")
    ap.add_argument("--kinds", default="SLIM,RiskSLIM", help="comma-separated of SLIM, RiskSLIM")
    args = ap.parse_args()
    print(environment(), f"| OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; "
          "max_size 5, first fold of 5, one thread; the machine is shared (load above)")
    print(compile_kernels(), flush=True)
    for name in [s for s in args.sets.split(",") if s]:
        X, y, said = first_fold(name)
        print(said, flush=True)
        for kind in args.kinds.split(","):
            data, cutoff, objective = screened_at_the_incumbent(kind, X, y)
            print(f"  {kind}: heuristic objective {objective:.7f}, cutoff {cutoff:.7g}", flush=True)
            passes(kind, *data, cutoff, args.column_limit)


if __name__ == "__main__":
    main()
