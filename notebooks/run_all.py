"""Execute every notebook of ``notebooks/`` in place, with its figures saved inline as PNG.

Run from a clone: ``python notebooks/run_all.py [01 03 ...]`` (names or number prefixes; default:
all). Each notebook runs in a fresh ``python3`` Jupyter kernel whose working directory is
``notebooks/`` (as when a reader opens it there) and whose ``PYTHONPATH`` starts with the clone's
root, so it imports this working tree's ``milpscore``, ``formulations`` and ``solvers`` rather
than an installed copy. ``MPLBACKEND`` is set to matplotlib's inline backend in the kernel: with
``MPLBACKEND=Agg`` inherited from the environment every figure is drawn off-screen and none is
saved in the outputs. BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1``).

First it compiles the exact engine's numba kernels for this tree (``python -m solvers.warmup`` run
from the clone's root, so it fills the cache this tree's kernels read): otherwise the first exact
fit of a fresh clone spends part of its time limit compiling, and the saved outputs would show the
gaps of a cold start rather than what the code does.

Notebooks that read ``../shared/data`` (beside the clone) when it exists look in the folder named by
``MILPSCORE_SHARED`` first (a git worktree whose parent has no ``shared``: ``MILPSCORE_SHARED=/path/to/shared``).

The executed outputs are written back into the ``.ipynb`` files (commit them); the script prints
one line per notebook: its wall time, the number of PNG figures saved and the number of error
outputs. A notebook that raises stops there, is still written (with its error output, so the
traceback can be read) and the script exits with status 1.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INLINE = "module://matplotlib_inline.backend_inline"
TIMEOUT = 600  # seconds a cell may take before the run stops with an error


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: this clone first on ``PYTHONPATH``, the inline backend, one BLAS thread."""
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["MPLBACKEND"] = INLINE
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def count_outputs(nb) -> tuple[int, int]:
    """``(PNG figures, error outputs)`` among the notebook's code cells."""
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    return (sum("image/png" in o.get("data", {}) for o in outputs),
            sum(o.get("output_type") == "error" for o in outputs))


def execute(path: Path) -> tuple[float, int, int]:
    """Run one notebook in place; returns ``(wall seconds, PNG figures, error outputs)``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    try:
        client.execute(env=kernel_environment())
    except CellExecutionError:
        pass  # the error output is in the cell; counted below
    seconds = time.perf_counter() - start
    nbformat.write(nb, path)
    return (seconds, *count_outputs(nb))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebooks to run, by file name or number prefix (default: all)")
    args = parser.parse_args(argv)
    paths = sorted(HERE.glob("*.ipynb"))
    if args.names:
        chosen = [p for p in paths if any(p.name.startswith(name) or p.stem == name for name in args.names)]
        unknown = [n for n in args.names if not any(p.name.startswith(n) or p.stem == n for p in paths)]
        if unknown:
            parser.error(f"no notebook named {unknown}: choose among {[p.stem for p in paths]}")
        paths = chosen
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "solvers.warmup"], cwd=ROOT, env=kernel_environment(), check=True)
    print(f"kernels compiled or loaded from the cache (python -m solvers.warmup): {time.perf_counter() - start:.0f} s",
          flush=True)
    failed = 0
    for path in paths:
        seconds, figures, errors = execute(path)
        print(f"{path.name}: {seconds:.0f} s, {figures} PNG figures, {errors} error outputs", flush=True)
        failed += errors > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
