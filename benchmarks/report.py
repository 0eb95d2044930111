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
sections whose command is no longer in :data:`RUNS` (appended by hand or by another version). Each
section is written into the page as soon as its run ends. ``benchmarks/regenerate.py`` drives these
runs and records which code each section ran on (reruns only the stale ones).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
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
    "constrained": ("constrained", ()),
    "slim_certify": ("slim_certify", ()),
    "slim_certify-large": ("slim_certify", ("--sets", "adult,spambase,mushroom")),
    "slim_certify-licence": ("slim_certify", ("--sets", "spambase,mushroom", "--rows", "1000")),
    "slim_certify-ablation": ("slim_certify", ("--backends", "route-noheuristic,highs-noheuristic,highs-noconflicts")),
    "slim_heuristic": ("slim_heuristic", ()),
    "engine_limits": ("engine_limits", ()),
    "parallel": ("parallel", ()),
    "parallel-40": ("parallel", ("--features", "40")),
    "parallel-box": ("parallel", ("--kind", "slim-box")),
    "parallel-orthants": ("parallel", ("--kind", "slim-orthants")),
    "crf": ("crf", ()),
    "certify_all": ("certify_all", ("--fold-limit", "60")),
    "certify_all-more": ("certify_all", ("--fold-limit", "60", "--sets", ",".join(f"gen{seed}" for seed in range(3, 13)),
                                         "--folds", "2")),
    "certify_all-wide": ("certify_all", ("--fold-limit", "60", "--folds", "2", "--sets",
                                         "wide120s0,wide240s0,wide480s0,int0,int1,int2")),
    "group_screen": ("group_screen", ("--sets", "wide120s0,wide240s0", "--column-limit", "120")),
    "certify_all-int": ("certify_all", ("--fold-limit", "60", "--folds", "2", "--estimators", "SLIM", "--sets",
                                        "int11,int12,int13,int14,int15,int16,int42,int105,int108,int117,int18")),
    "certify_all-int-hard": ("certify_all", ("--fold-limit", "60", "--folds", "2", "--estimators", "SLIM", "--sets",
                                             "int14,int590,int591,int592,int593")),
    "scale": ("scale", ()),
    "scale-1e7": ("scale", ("--sizes", "1e6,1e7", "--estimators", "riskslim")),
    "scale-1e6x100": ("scale", ("--sizes", "1e6", "--binary", "60", "--continuous", "10", "--estimators", "riskslim",
                                "--time-limit", "600")),
    "scale_relaxed": ("scale_relaxed", ("--sizes", "1e5", "1e6")),
    "scale_relaxed-wide": ("scale_relaxed", ("--wide", "1e4", "1e5", "--timeout", "900")),
    "riskslim_cplex": ("riskslim_cplex", ()),
    "first_run": ("first_run", ()),
}
HEADER = "## `"
#: runs whose scripts time peers from benchmarks/peers.py's environments
NEEDS_PEERS = ("prox", "path", "risk_scores", "risk_scores-auto", "risk_scores-auto-adult", "slim_certify-licence",
              "certify_all", "certify_all-more", "riskslim_cplex", "scale_relaxed", "scale_relaxed-wide")


def command(run: str) -> str:
    script, arguments = RUNS[run]
    return " ".join(["OPENBLAS_NUM_THREADS=1 python", f"benchmarks/{script}.py", *arguments])


def output(run: str) -> str:
    script, arguments = RUNS[run]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *arguments],
                          capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, cwd=ROOT)
    return done.stdout + (f"\n[exit code {done.returncode}]\n{done.stderr[-2000:]}" if done.returncode else "")


def sections(page: str, commands: dict[str, str] | None = None) -> dict[str, str]:
    """The page's sections keyed by run name (read back from their command lines, ``commands``: run name
    -> command, default :data:`RUNS`'); a section whose command is in no run is kept under its command line."""
    commands = commands if commands is not None else {run: command(run) for run in RUNS}
    found = {}
    for block in page.split("\n" + HEADER)[1:]:
        cmd = block.split("`", 1)[0]
        run = next((run for run, known in commands.items() if cmd == known), cmd)
        found[run] = HEADER + block.rstrip() + "\n"
    return found


def supersedes(current: str, cmd: str) -> bool:
    """True when a kept section's command ``cmd`` (in no run) is an older form of the run whose command is
    ``current``: the same script with the same first option (e.g. another ``--backends`` list)."""
    words, old = current.split(), cmd.split()
    script = next((w for w in words if w.endswith(".py")), None)
    if script is None or script not in old:
        return False
    arguments, rest = words[words.index(script) + 1:], old[old.index(script) + 1:]
    return (rest[:1] == arguments[:1]) if arguments else not rest


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


def render(cmd: str, stamp: str, text: str) -> str:
    """One section of the page: the command as its title, the provenance line, the output verbatim."""
    return "\n".join([f"{HEADER}{cmd}`", "", stamp, "", "```text", text.rstrip(), "```", ""])


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive ``fcntl.flock`` on ``<path>.lock`` (beside ``path``) while a file is read, changed and
    replaced, so passes run side by side (``xargs -P 2``, docs/regenerating.md) keep each other's changes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def write_page(out: Path, written: dict[str, str], commands: dict[str, str] | None = None) -> None:
    """:func:`_write_page` under :func:`locked`."""
    with locked(out):
        _write_page(out, written, commands)


def _write_page(out: Path, written: dict[str, str], commands: dict[str, str] | None = None) -> None:
    """Put the sections ``written`` (run name -> rendered section) into the page ``out`` as it is *now* (others
    may have written sections meanwhile). The page keeps its order (a small diff): a rewritten section stays
    where it was, or takes the place of an older form of its command, or goes after the last section that
    precedes it in ``commands`` (default :data:`RUNS`); the file is replaced atomically."""
    commands = commands if commands is not None else {run: command(run) for run in RUNS}
    names = list(commands)
    kept = sections(out.read_text(), commands) if out.exists() else {}
    order = list(kept)
    for run, text in written.items():
        older = [key for key in order if key not in commands and supersedes(commands[run], key)]
        if run not in order:
            if older:
                order[order.index(older[0])] = run
            else:
                before = [key for key in order if key in commands and names.index(key) < names.index(run)]
                order.insert(order.index(before[-1]) + 1 if before else 0, run)
        order = [key for key in order if key not in older]
        kept[run] = text
    lines = ["# Benchmarks: what the scripts printed", "",
             "Written by `python benchmarks/regenerate.py` (or `python benchmarks/report.py`). Each section is the "
             "standard output of one script, verbatim, under the commit and date of its run (the first line of each "
             "output states the load); the method (interleaved rounds, medians, peers in their own environments) is "
             "in each script's docstring and in `benchmarks/timing.py`. `python benchmarks/regenerate.py --status` "
             "lists the sections whose code changed since their run (`docs/benchmarks.state.json` records the "
             "hashes); `python benchmarks/regenerate.py <name>` reruns one.", ""]
    lines += [kept[key] for key in order]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines))
    tmp.replace(out)


def ensure_peers(runs: list[str]) -> None:
    """Set up the peers' environments (``benchmarks/peers.py setup``) when a run needs them and they are missing."""
    if any(run in NEEDS_PEERS for run in runs) and not (ROOT / "benchmarks" / ".peers" / "bin" / "python").exists() \
            and "MILPSCORE_PEERS" not in os.environ:
        print("setting up the peers' environments (benchmarks/peers.py setup) ...", flush=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers.py"), "setup"], check=True, cwd=ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    ensure_peers(args.runs)
    for run in args.runs:  # each section written as soon as its run ends
        print(f"running {command(run)} ...", flush=True)
        stamp = f"{provenance()}, run {datetime.date.today().isoformat()}."
        write_page(args.out, {run: render(command(run), stamp, output(run))})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
