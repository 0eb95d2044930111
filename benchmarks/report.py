"""Write ``docs/benchmarks.md``: the printed output of the benchmark scripts, verbatim.

Run: ``python benchmarks/report.py [--runs prox path conic build ...]`` from a clone: it sets up the
peers' environments first when a run needs them and they are missing (``benchmarks/peers.py
setup``). Each run is one script with its arguments (:data:`RUNS`), in its own process
(``OPENBLAS_NUM_THREADS=1``), one after the other; its standard output goes into the page as it was
printed (its first line states the load), under the command that produced it, the commit it ran
at and the date, with the tracked files that differed from that commit when it ran (others'
uncommitted work in a shared tree). Nothing is retyped or assembled from old logs (an earlier
``--logs`` option stamped logs of older runs with the commit of the day they were assembled:
that is how docs/benchmarks.md once showed conic ratios no run of its stated commit gives).
Sections of runs not asked for are kept as they are, with their own commit and date, including
sections whose command is no longer in :data:`RUNS` (appended by hand or by another version).
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
    "engine_limits": ("engine_limits", ()),
    "parallel": ("parallel", ()),
    "parallel-40": ("parallel", ("--features", "40")),
    "parallel-box": ("parallel", ("--kind", "slim-box")),
    "crf": ("crf", ()),
    "certify_all": ("certify_all", ("--fold-limit", "60")),
    "certify_all-more": ("certify_all", ("--fold-limit", "60", "--sets", ",".join(f"gen{seed}" for seed in range(3, 13)),
                                         "--folds", "2")),
    "scale": ("scale", ()),
    "scale-1e7": ("scale", ("--sizes", "1e6,1e7", "--estimators", "riskslim")),
    "scale-1e6x100": ("scale", ("--sizes", "1e6", "--binary", "60", "--continuous", "10", "--estimators", "riskslim",
                                "--time-limit", "600")),
    "riskslim_cplex": ("riskslim_cplex", ()),
}
HEADER = "## `"
#: runs whose scripts time peers from benchmarks/peers.py's environments
NEEDS_PEERS = ("prox", "path", "risk_scores", "risk_scores-auto", "risk_scores-auto-adult", "slim_certify-licence",
              "certify_all", "certify_all-more", "riskslim_cplex")


def command(run: str) -> str:
    script, arguments = RUNS[run]
    return " ".join(["OPENBLAS_NUM_THREADS=1 python", f"benchmarks/{script}.py", *arguments])


def output(run: str) -> str:
    script, arguments = RUNS[run]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *arguments],
                          capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, cwd=ROOT)
    return done.stdout + (f"\n[exit code {done.returncode}]\n{done.stderr[-2000:]}" if done.returncode else "")


def sections(page: str) -> dict[str, str]:
    """The page's sections keyed by run name (read back from their command lines); a section whose
    command is in no run is kept under its command line."""
    found = {}
    for block in page.split("\n" + HEADER)[1:]:
        cmd = block.split("`", 1)[0]
        run = next((run for run in RUNS if cmd == command(run)), cmd)
        found[run] = HEADER + block.rstrip() + "\n"
    return found


def supersedes(run: str, cmd: str) -> bool:
    """True when a kept section's command ``cmd`` (in no run) is an older form of ``run``: the same
    script with the same first option (e.g. another ``--backends`` list)."""
    script, arguments = RUNS[run]
    words = cmd.split()
    if f"benchmarks/{script}.py" not in words:
        return False
    rest = words[words.index(f"benchmarks/{script}.py") + 1:]
    return (rest[:1] == list(arguments[:1])) if arguments else not rest


def provenance() -> str:
    """The commit, and the tracked files that differ from it now (a shared working tree)."""
    git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True, cwd=ROOT).stdout  # noqa: E731
    commit = git("rev-parse", "--short", "HEAD").strip()
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    code = [f for f in changed if f.endswith(".py")]
    if not code:
        return f"Code at commit `{commit}`"
    listed = ", ".join(f"`{f}`" for f in code[:12]) + (f" and {len(code) - 12} more" if len(code) > 12 else "")
    return f"Code at commit `{commit}` with uncommitted changes to {listed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    if any(run in NEEDS_PEERS for run in args.runs) and not (ROOT / "benchmarks" / ".peers" / "bin" / "python").exists() \
            and "MILPSCORE_PEERS" not in os.environ:
        print("setting up the peers' environments (benchmarks/peers.py setup) ...", flush=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers.py"), "setup"], check=True, cwd=ROOT)
    written = {}
    for run in args.runs:
        print(f"running {command(run)} ...", flush=True)
        stamp = f"{provenance()}, run {datetime.date.today().isoformat()}."
        text = output(run).rstrip()
        written[run] = "\n".join([f"{HEADER}{command(run)}`", "", stamp, "", "```text", text, "```", ""])
    # the page as it is now (others may have written sections during the runs), with ours replaced
    kept = sections(args.out.read_text()) if args.out.exists() else {}
    for run, text in written.items():
        kept[run] = text
        kept = {key: v for key, v in kept.items() if key in RUNS or not supersedes(run, key)}
    lines = ["# Benchmarks: what the scripts printed", "",
             "Written by `python benchmarks/report.py`. Each section is the standard output of one script, "
             "verbatim, under the commit and date of its run (the first line of each output states the load); "
             "the method (interleaved rounds, medians, peers in their own environments) is in each script's "
             "docstring and in `benchmarks/timing.py`. `python benchmarks/report.py --runs <name>` reruns one "
             "section (it sets up the peers' environments first when they are missing).", ""]
    lines += [kept[run] for run in RUNS if run in kept]
    lines += [text for run, text in kept.items() if run not in RUNS]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
