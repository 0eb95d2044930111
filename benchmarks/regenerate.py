"""Regenerate ``docs/benchmarks.md`` and ``docs/papers.md`` with one command, from a clean clone.

Run: ``python benchmarks/regenerate.py`` (several hours on 2 cores: every run of
:data:`benchmarks.report.RUNS`, peers set up in their own environments first, then
``benchmarks/papers.py``). ``--runs`` limits the benchmark runs as ``report.py --runs`` does;
``--no-papers`` skips the papers' tables.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="*", default=None, help="benchmark runs (default: all of report.py's)")
    ap.add_argument("--no-papers", action="store_true", help="do not rewrite docs/papers.md")
    args = ap.parse_args()
    report = [sys.executable, str(HERE / "report.py")] + (["--runs", *args.runs] if args.runs else [])
    code = subprocess.run(report, check=False).returncode
    if code == 0 and not args.no_papers:
        code = subprocess.run([sys.executable, str(HERE / "papers.py")], check=False).returncode
    return code


if __name__ == "__main__":
    sys.exit(main())
