"""One side of ``benchmarks/kernel_ab.py``: the group screen of one source tree on saved inputs.

    python benchmarks/kernel_ab_worker.py <tree> <inputs.npz>

Imports the solver from ``<tree>`` (a clone or worktree of some revision), screens every pair of
groups saved in ``<inputs.npz>`` through :class:`solvers.exact.blocked_pass.GroupBranch` (each call
to the end of its pair, members included), the first pair once untimed (the kernels compiled or
loaded), then all of them timed, at the support size saved with them, and prints one JSON line:
``seconds``, ``listed`` (group supports), ``members`` (column supports left) and ``digest`` (of the
members, sorted: equal digests, equal results).
"""
from __future__ import annotations

import hashlib
import json
import sys
import time

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402

from solvers.exact.blocked_pass import MAX_SURVIVORS, GroupBranch  # noqa: E402


def screen_all(branch: GroupBranch, bits: tuple, table: np.ndarray, pairs: np.ndarray, size: int,
               cutoff: float) -> tuple[int, np.ndarray]:
    """Group supports of ``size`` groups listed and the members left, over every pair of ``pairs``."""
    out = np.empty((MAX_SURVIVORS, size), np.int64)
    listed, members = 0, []
    for a, b in pairs.tolist():
        for count, rows, _ in branch.screen(bits, table, a, b, size, cutoff, out):
            listed += count
            members.append(rows)
    return listed, np.concatenate(members) if members else np.zeros((0, size), np.int64)


def main() -> None:
    saved = np.load(sys.argv[2])
    bits = (saved["bits_pos"], int(saved["n_pos"]), float(saved["unit_pos"]), saved["bits_neg"], int(saved["n_neg"]),
            float(saved["unit_neg"]))
    branch = GroupBranch(saved["start"], saved["columns"], saved["pairs"])
    table, pairs, size, cutoff = saved["table"], saved["pairs"], int(saved["size"]), float(saved["cutoff"])
    screen_all(branch, bits, table, pairs[:1], size, cutoff)
    began = time.perf_counter()
    listed, members = screen_all(branch, bits, table, pairs, size, cutoff)
    seconds = time.perf_counter() - began
    members = members[np.lexsort(members.T[::-1])] if members.size else members
    print(json.dumps({"seconds": seconds, "listed": listed, "members": int(members.shape[0]),
                      "digest": hashlib.sha1(np.ascontiguousarray(members).tobytes()).hexdigest()}))


if __name__ == "__main__":
    main()
