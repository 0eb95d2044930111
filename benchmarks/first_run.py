"""A newcomer's first run, reproduced: README's main job in a fresh virtual environment.

Run: ``python benchmarks/first_run.py [--runs 2] [--keep]``.

Steps, each timed as a whole command: a clean clone of this checkout's HEAD (``git clone``), a new
virtual environment (``python -m venv``), ``pip install .`` from the clone's root (the registry's
packages, pip's own cache allowed), then ``milpscore fit`` run ``--runs`` times from the clone's
root with an empty numba cache before the first. Each fit row gives its wall time, the status and
gap the card's details line prints, and whether the kernel compilation line appeared on stderr.
The machine's load is printed with the table (other processes slow every row alike).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(command: list[str], cwd: Path, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="milpscore fit runs after the install")
    parser.add_argument("--keep", action="store_true", help="keep the clone and environment (their folder is printed)")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="milpscore-first-run-"))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    rows = []
    try:
        clone = home / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        seconds, done = _timed([sys.executable, "-m", "venv", str(home / "venv")], clone, env)
        rows.append(("python -m venv", seconds, "exit %d" % done.returncode, ""))
        bin_dir = home / "venv" / "bin"
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        seconds, done = _timed([str(bin_dir / "pip"), "install", "-q", "."], clone, env)
        rows.append(("pip install .", seconds, "exit %d" % done.returncode, ""))
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        for k in range(args.runs):
            seconds, done = _timed([str(bin_dir / "milpscore"), "fit"], clone, env)
            found = re.search(r"status=(\w+) objective=\S+ bound=\S+ gap=(\S+)", done.stdout)
            certificate = f"status={found.group(1)} gap={found.group(2)}" if found else f"exit {done.returncode}"
            compiled = "compiled kernels" if "compiling the" in done.stderr else ""
            rows.append((f"milpscore fit (run {k + 1})", seconds, certificate, compiled))
    finally:
        if args.keep:
            print(f"kept: {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)
    load = os.getloadavg()
    print(f"commit {commit}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores; "
          f"Python {sys.version.split()[0]}")
    print(f"{'command (cwd = the clone root)':32} {'wall s':>8}  {'result':28} note")
    for name, seconds, result, note in rows:
        print(f"{name:32} {seconds:8.1f}  {result:28} {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
