"""Write ``docs/benchmarks.md``: the printed output of the benchmark scripts, verbatim.

Run: ``python benchmarks/report.py [--runs prox build ...] [--logs DIR]``. Each run is one script
with its arguments (:data:`RUNS`), in its own process (``OPENBLAS_NUM_THREADS=1``), one after the
other; its standard output goes into the page as it was printed, under the command that produced
it and the commit and date of the run; nothing is retyped, so the docs quote only what the scripts
print. Sections of runs not asked for are kept as they are (with their own commit and date).
``--logs DIR`` takes the outputs from ``DIR/<run>.log`` files written by earlier runs instead.
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: run name -> (script, arguments), in the order of the page
RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "prox": ("prox", ()), "build": ("build", ()), "path": ("path", ()), "conic": ("conic", ()),
    "rounding": ("rounding", ()), "facets": ("facets", ()), "fused": ("fused", ()),
    "risk_scores": ("risk_scores", ("--fasterrisk",)),
    "risk_scores-auto": ("risk_scores", ("--sets", "breastcancer,mammo,issue37,adult,spambase", "--multiplier", "auto",
                                         "--fold-limit", "20", "--fasterrisk")),
    "risk_scores-auto-adult": ("risk_scores", ("--sets", "adult", "--multiplier", "auto", "--fold-limit", "60",
                                               "--fasterrisk")),
    "riskslim_ablation": ("riskslim_ablation", ()),
    "riskslim_ablation-mammo": ("riskslim_ablation", ("--data", "mammo")),
    "slim_certify": ("slim_certify", ()),
    "slim_certify-large": ("slim_certify", ("--sets", "adult,spambase,mushroom")),
    "slim_certify-licence": ("slim_certify", ("--sets", "spambase,mushroom", "--rows", "1000")),
    "slim_certify-ablation": ("slim_certify", ("--backends", "route-noheuristic,highs-noheuristic,highs-noconflicts")),
    "slim_heuristic": ("slim_heuristic", ()),
}
HEADER = "## `"


def command(run: str) -> str:
    script, arguments = RUNS[run]
    return " ".join(["OPENBLAS_NUM_THREADS=1 python", f"benchmarks/{script}.py", *arguments])


def output(run: str, logs: Path | None) -> str:
    if logs is not None:
        return (logs / f"{run}.log").read_text()
    script, arguments = RUNS[run]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *arguments],
                          capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, cwd=ROOT)
    return done.stdout + (f"\n[exit code {done.returncode}]\n{done.stderr[-2000:]}" if done.returncode else "")


def sections(page: str) -> dict[str, str]:
    """The page's sections by run name (read back from their command lines)."""
    found = {}
    for block in page.split("\n" + HEADER)[1:]:
        cmd = block.split("`", 1)[0]
        for run in RUNS:
            if cmd == command(run):
                found[run] = HEADER + block.rstrip() + "\n"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--logs", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    kept = sections(args.out.read_text()) if args.out.exists() else {}
    for run in args.runs:
        print(f"running {command(run)} ...", flush=True)
        text = output(run, args.logs).rstrip()
        kept[run] = "\n".join([f"{HEADER}{command(run)}`", "",
                               f"Code at commit `{commit}`, {datetime.date.today().isoformat()}.", "",
                               "```text", text, "```", ""])
    lines = ["# Benchmarks: what the scripts printed", "",
             "Written by `python benchmarks/report.py`. Each section is the standard output of one script, "
             "verbatim, under the commit and date of its run; the method (interleaved rounds, medians, peers in "
             "their own environments) is in each script's docstring and in `benchmarks/timing.py`. Peers need "
             "`python benchmarks/peers.py setup` first.", ""]
    lines += [kept[run] for run in RUNS if run in kept]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
