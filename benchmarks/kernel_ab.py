"""The group screen's kernel of an earlier revision against this tree's, on the same inputs, in turn (issue 41).

A kernel change is timed against the revision before it. For each ``--sets`` table (its first
training fold, as in ``benchmarks/certify_all.py``) and each ``--kinds``, this tree builds the inputs
of the blocked step's pass over supports of groups of nested columns at the heuristic's incumbent
(``benchmarks/group_screen.py``: the bit sets, the cell sums' table, the cutoff, the groups) and
draws ``--pairs`` pairs of groups at random. Each side then screens every drawn pair through
:class:`solvers.exact.blocked_pass.GroupBranch` (members included) in its own process
(``benchmarks/kernel_ab_worker.py``): ``--base`` from a git worktree of that revision, made for the
run and removed after it (any revision from ``37b2d8a`` on, where ``GroupBranch`` came), and this
tree. The two alternate for ``--rounds`` rounds, each side first in every other round. The table
gives the least seconds of each side, since a shared machine only ever slows a run, and their
ratio. It also says whether both sides listed the same group supports and left the same members,
so the ratio compares equal work. A drawn sample stands for the whole pass in proportion: a pass
lists every pair. ``--base HEAD`` (the same kernel on both sides) shows how far the machine alone
moves the ratio.

    OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_ab.py --base HEAD~1 --sets wide240s101 --kinds RiskSLIM
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from certify_all import first_fold  # noqa: E402
from group_screen import label_sets, screened_at_the_incumbent  # noqa: E402
from solvers.exact.blocked_pass import all_pairs  # noqa: E402
from solvers.exact.group_screen import GROUP_COLUMNS, groups_of  # noqa: E402
from solvers.exact.nested_columns import nested_chains  # noqa: E402
from timing import environment  # noqa: E402

WORKER = Path(__file__).resolve().parent / "kernel_ab_worker.py"
SIZE = 5


def save_inputs(path: Path, kind: str, X: np.ndarray, y: np.ndarray, pairs: int, seed: int) -> str:
    """Save the inputs of ``kind``'s group pass on ``(X, y)`` with ``pairs`` pairs of groups drawn at
    random (module docstring) to ``path``; returns a line that says what they are."""
    data, cutoff, objective = screened_at_the_incumbent(kind, X, y)
    (bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg), table = label_sets(kind, *data)
    d = data[0].shape[1]
    start, columns = groups_of(nested_chains(data[0], np.arange(d)), d, GROUP_COLUMNS)
    groups = start.size - 1
    every = all_pairs(groups, SIZE).pairs  # (the pairs of first groups, as the group pass lists them)
    drawn = every[np.sort(np.random.default_rng(seed).choice(every.shape[0], min(pairs, every.shape[0]),
                                                             replace=False))]
    np.savez(path, bits_pos=bits_pos, n_pos=n_pos, unit_pos=unit_pos, bits_neg=bits_neg, n_neg=n_neg,
             unit_neg=unit_neg, table=table, start=start, columns=columns, pairs=drawn, cutoff=cutoff, size=SIZE)
    return (f"  {kind}: heuristic objective {objective:.7f}, cutoff {cutoff:.7g}; {groups} groups, "
            f"{drawn.shape[0]} of {every.shape[0]} pairs drawn")


def run_side(tree: Path, inputs: Path) -> dict:
    """One side's screen of the saved inputs (``benchmarks/kernel_ab_worker.py``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    done = subprocess.run([sys.executable, str(WORKER), str(tree), str(inputs)], capture_output=True, text=True,
                          env=env, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"the kernel of {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(base: Path, inputs: Path, rounds: int) -> str:
    """Both sides in turn for ``rounds`` rounds; one line: least seconds, their ratio, equal work."""
    runs: dict[str, list[dict]] = {"base": [], "this": []}
    trees = {"base": base, "this": ROOT}
    for round_ in range(rounds):
        for side in ("base", "this") if round_ % 2 == 0 else ("this", "base"):  # neither side always first
            runs[side].append(run_side(trees[side], inputs))
    least = {side: min(run["seconds"] for run in done) for side, done in runs.items()}
    first = {side: done[0] for side, done in runs.items()}
    same = all(first["base"][key] == first["this"][key] for key in ("listed", "members", "digest"))
    return (f"    base {least['base']:.3f} s, this tree {least['this']:.3f} s (least of {rounds}): "
            f"this / base {least['this'] / least['base']:.3f}; {first['this']['listed']} group supports, "
            f"{first['this']['members']} members; the same on both sides: {'yes' if same else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the git revision to compare with (a worktree of it is made)")
    ap.add_argument("--sets", default="wide240s101", help="comma-separated table names of benchmarks/certify_all.py")
    ap.add_argument("--kinds", default="RiskSLIM,SLIM", help="comma-separated of SLIM, RiskSLIM")
    ap.add_argument("--pairs", type=int, default=30, help="pairs of groups drawn per table")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of both sides in turn")
    ap.add_argument("--seed", type=int, default=1, help="seed of the pairs drawn")
    args = ap.parse_args()
    revision = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    print(environment(), f"| base {revision} against this tree; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; one thread", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(base), revision], cwd=ROOT, check=True)
        try:
            for name in [s for s in args.sets.split(",") if s]:
                X, y, said = first_fold(name)
                print(said, flush=True)
                for kind in args.kinds.split(","):
                    inputs = Path(scratch) / f"{name}-{kind}.npz"
                    print(save_inputs(inputs, kind, X, y, args.pairs, args.seed), flush=True)
                    print(compare(base, inputs, args.rounds), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
