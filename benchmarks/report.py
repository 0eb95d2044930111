"""Write ``docs/benchmarks.md``: the printed output of the benchmark scripts, verbatim.

Run: ``python benchmarks/report.py [--scripts prox build ...] [--logs DIR]``. Each script runs in
its own process (``OPENBLAS_NUM_THREADS=1``), one after the other, and its standard output goes
into the page as it was printed, under the command that produced it, with the commit and date;
nothing is retyped, so the docs quote only what the scripts print. ``--logs DIR`` takes the
outputs from ``DIR/<script>.log`` files written by earlier runs of the same commit instead.
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: scripts timed by the shared method, in the order of the page
SCRIPTS = ("prox", "build", "path", "conic", "rounding", "facets", "fused")


def output(script: str, logs: Path | None) -> str:
    if logs is not None:
        return (logs / f"{script}.log").read_text()
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py")], capture_output=True,
                         text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, cwd=ROOT)
    return run.stdout + (f"\n[exit code {run.returncode}]\n{run.stderr[-2000:]}" if run.returncode else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", nargs="+", default=list(SCRIPTS), choices=SCRIPTS)
    parser.add_argument("--logs", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    source = (f"assembled from the logs in `{args.logs}` of runs of the code at commit `{commit.strip()}`"
              if args.logs is not None else f"run at commit `{commit.strip()}`")
    lines = ["# Benchmarks: what the scripts printed", "",
             f"Written by `python benchmarks/report.py` on {datetime.date.today().isoformat()}, {source}. "
             "Each section is the standard output of one script, verbatim; the method (interleaved "
             "rounds, medians, peers in their own environments) is in each script's docstring and in "
             "`benchmarks/timing.py`. Peers need `python benchmarks/peers.py setup` first.", ""]
    for script in args.scripts:
        print(f"running {script}.py ...", flush=True)
        lines += [f"## `OPENBLAS_NUM_THREADS=1 python benchmarks/{script}.py`", "", "```text",
                  output(script, args.logs).rstrip(), "```", ""]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
