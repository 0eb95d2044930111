"""Regenerate ``docs/benchmarks.md`` and ``docs/papers.md`` section by section, resumably.

Run from a clone: ``python benchmarks/regenerate.py`` reruns every *stale* section, in the page's
order, each written into its page as soon as it ends; ``python benchmarks/regenerate.py prox conic``
reruns the sections named (stale or not); ``--status`` lists every section, fresh or stale and why,
without running anything; ``--budget SECONDS`` starts no section whose last recorded run took longer
than the time left (sections never run are started). A pass can be interrupted (Ctrl-C) and resumed
in another session: what finished is in the pages and in the state file.

Sections: each run of :data:`benchmarks.report.RUNS` (one ``## `command``` section of
``docs/benchmarks.md``, its script's standard output verbatim) and ``papers`` (the whole of
``docs/papers.md``, written by ``benchmarks/papers.py``). The full pass takes several hours on 2
cores.

Staleness. ``docs/benchmarks.state.json`` (committed) records for each section the code it ran on:

* the *library digest*: the SHA-256 of the sorted lines ``<git blob hash> <path>`` of every file of
  ``formulations/``, ``solvers/`` and ``milpscore/`` (tracked or untracked, not ignored) as it was in
  the working tree; a git blob hash is ``sha1(b"blob <size>\\0" + content)``, what ``git hash-object``
  prints. The file lists of the digests in use are kept, so a stale section names the files changed;
* the blob hash of its own scripts: the section's script and, transitively, the modules of
  ``benchmarks/`` it imports (``import timing``, ``from peers import ...``) or runs by file name
  (a string constant ``"peer_worker.py"``);
* its command line, the commit, the date, the wall time and the exit code.

A section is fresh when all of these match the working tree and its last run exited with 0 and its
text is in the page; otherwise it is stale, with the reasons. Only the library files the section
can run count (:func:`library_closure`): the modules its scripts import, transitively, with their
packages' ``__init__`` files, every module named in a string constant (``"solvers.warmup"``), and
every library file that is not Python; a script that imports nothing of the library (it runs the
package by command, e.g. ``first_run.py``) depends on all of it. So a change to the exact engine
leaves the proximal sections fresh. A failed run is recorded (its output,
with the exit code and the end of stderr, goes into the page) and stays stale.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402

#: the library: a change of any file under these folders makes every section stale
LIBRARY = ("formulations", "solvers", "milpscore")
STATE = Path("docs") / "benchmarks.state.json"


@dataclass(frozen=True)
class Section:
    """One unit of regeneration: ``python <script> <arguments>`` run from the clone's root.

    ``page`` is the Markdown file it writes (relative to the root). With ``whole_page`` the script writes
    that page itself (``papers.py``); otherwise its standard output becomes the page's section titled by
    :attr:`command` (:func:`report.write_page`)."""

    name: str
    script: str
    arguments: tuple[str, ...] = ()
    page: str = "docs/benchmarks.md"
    whole_page: bool = False

    @property
    def command(self) -> str:
        return " ".join(["OPENBLAS_NUM_THREADS=1 python", self.script, *self.arguments])


def default_sections() -> list[Section]:
    """Every run of :data:`report.RUNS`, in the page's order, then the pages written whole by their scripts:
    ``papers`` and the further reproductions README links to."""
    runs = [Section(run, f"benchmarks/{script}.py", tuple(arguments)) for run, (script, arguments) in report.RUNS.items()]
    return runs + [Section("papers", "benchmarks/papers.py", (), "docs/papers.md", whole_page=True),
                   Section("results", "benchmarks/reproduce.py", (), "docs/results.md", whole_page=True),
                   Section("results-supervised", "benchmarks/reproduce.py", ("--thresholds", "supervised"),
                           "docs/results-supervised-thresholds.md", whole_page=True),
                   Section("eye-reproduction", "benchmarks/eye_synthetic.py", ("--runs", "5", "--auc-tol", "0.005"),
                           "docs/eye-reproduction.md", whole_page=True)]


# ------------------------------------------------------------------------------------------- hashing
def blob_hash(data: bytes) -> str:
    """The git blob hash of ``data`` (``git hash-object``): ``sha1(b"blob <len>\\0" + data)``, hex."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def library_manifest(root: Path, folders: tuple[str, ...] = LIBRARY) -> dict[str, str]:
    """``{path: blob hash}`` of the working tree's files under ``folders``: tracked and untracked files that git
    does not ignore (so no ``__pycache__``), deleted tracked files left out. ``root`` must be a git work tree."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *folders],
                            capture_output=True, cwd=root, check=True).stdout.decode()
    paths = sorted({p for p in listed.split("\0") if p and (root / p).is_file()})
    return {p: blob_hash((root / p).read_bytes()) for p in paths}


def digest(manifest: dict[str, str]) -> str:
    """One SHA-256 of a manifest: its lines ``<blob> <path>`` sorted by path."""
    lines = "".join(f"{manifest[p]} {p}\n" for p in sorted(manifest))
    return hashlib.sha256(lines.encode()).hexdigest()


def _local_references(path: Path, local: set[str]) -> set[str]:
    """The modules of ``local`` (names of sibling ``.py`` files) that ``path`` imports or names as ``"x.py"``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".py"):
            found.add(Path(node.value).stem)
    return found & local


def library_modules(root: Path, folders: tuple[str, ...] = LIBRARY) -> dict[str, str]:
    """``{dotted module name: path}`` of the library's Python files (a package is its ``__init__.py``)."""
    out = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = str(path.relative_to(root))
    return out


def _imported_names(path: Path, package: str | None = None) -> set[str]:
    """Dotted names ``path`` imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``; relative
    imports resolved against ``package``) and dotted string constants (``"solvers.warmup"``; of
    ``"solvers.exact.slim_route:ROUTE"`` the module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package is not None:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            found.add(node.value.split(":")[0])  # "a.b:attribute" names module a.b (a catalog's entry points)
    return found


def library_closure(root: Path, section: Section) -> set[str] | None:
    """The library files ``section`` can run (module docstring), or None for the whole library."""
    modules = library_modules(root)
    seeds = set()
    for script in script_files(root, section.script):
        seeds |= {name for name in _imported_names(root / script) if name in modules}
    if not seeds:
        return None
    closure, todo = set(), sorted(seeds)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for k in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ first
            parent = ".".join(parts[:k])
            if parent in modules and modules[parent] not in closure:
                closure.add(modules[parent])
                path = root / modules[parent]
                package = parent if path.name == "__init__.py" else ".".join(parent.split(".")[:-1])
                todo += sorted(n for n in _imported_names(path, package) if n in modules)
    others = {p for p in library_manifest(root) if not p.endswith(".py")}
    return closure | others


def script_files(root: Path, script: str) -> list[str]:
    """``script`` and, transitively, the files of its folder it imports or runs by name (sorted, relative)."""
    folder = (root / script).parent
    local = {p.stem for p in folder.glob("*.py")}
    seen, todo = set(), [Path(script).stem]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += sorted(_local_references(folder / f"{name}.py", local) - seen)
    relative = folder.relative_to(root)
    return sorted(str(relative / f"{name}.py") for name in seen)


def script_manifest(root: Path, section: Section) -> dict[str, str]:
    """``{path: blob hash}`` of the section's scripts (:func:`script_files`)."""
    return {p: blob_hash((root / p).read_bytes()) for p in script_files(root, section.script)}


# ---------------------------------------------------------------------------------------------- state
def load_state(path: Path) -> dict:
    """The state file's content (``{"sections": {...}, "libraries": {digest: manifest}}``), empty if absent."""
    state = json.loads(path.read_text()) if path.exists() else {}
    state.setdefault("sections", {})
    state.setdefault("libraries", {})
    return state


def save_state(path: Path, state: dict) -> None:
    """Write the state atomically, keeping only the library manifests some section still refers to."""
    used = {record["library"] for record in state["sections"].values()}
    state = {"sections": dict(sorted(state["sections"].items())),
             "libraries": {key: value for key, value in sorted(state["libraries"].items()) if key in used}}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)


def _changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The paths that differ between two manifests, each with ``changed``, ``new`` or ``removed``."""
    out = [f"{p} changed" for p in sorted(old.keys() & new.keys()) if old[p] != new[p]]
    out += [f"{p} new" for p in sorted(new.keys() - old.keys())]
    return out + [f"{p} removed" for p in sorted(old.keys() - new.keys())]


def _listed(items: list[str], most: int = 4) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def _section_text(root: Path, section: Section) -> str | None:
    """The section's text in its page (the whole page for a ``whole_page`` section), or None."""
    page = root / section.page
    if not page.exists():
        return None
    text = page.read_text()
    if section.whole_page:
        return text
    title = f"{report.HEADER}{section.command}`"
    return text.split(title, 1)[1].split("\n" + report.HEADER, 1)[0] if title in text else None


def page_record(root: Path, section: Section) -> tuple[dict | None, dict[str, str] | None, str]:
    """A record rebuilt from the commit stamped in the page for a section run outside this script
    (``report.py``, ``papers.py``): ``(record, library manifest at that commit, note)``; ``(None, None, note)``
    when the page names no commit, a commit this clone lacks, or uncommitted changes (code unknown)."""
    text = _section_text(root, section)
    if text is None:
        return None, None, f"not in {section.page}"
    found = re.search(r"(?:Code at commit `|at commit )([0-9a-f]{7,40})`?([^\n]*)", text)
    if found is None:
        return None, None, "its page names no commit"
    commit, rest = found.group(1), found.group(2)
    if "uncommitted" in rest.split(",")[0]:
        return None, None, f"its page says commit {commit} with uncommitted changes: code unknown"
    if subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=root, capture_output=True).returncode:
        return None, None, f"its page names commit {commit}, not in this clone"
    listed = _git(root, "ls-tree", "-r", commit, "--", *LIBRARY)
    library = {line.split("\t", 1)[1]: line.split()[2] for line in listed.splitlines() if line.split()[1] == "blob"}
    scripts = {}
    for path in script_files(root, section.script):
        blob = _git(root, "rev-parse", "--verify", "--quiet", f"{commit}:{path}")
        if blob:
            scripts[path] = blob
    record = {"command": section.command, "library": digest(library), "scripts": scripts, "commit": commit, "exit": 0}
    return record, library, f"no record; its page says commit {commit}"


def staleness(root: Path, section: Section, state: dict, library: dict[str, str]) -> list[str]:
    """Why ``section`` must be rerun on the working tree whose library manifest is ``library``: an empty list
    when it is fresh (same library digest, same script hashes, same command, exit code 0, text in its page).

    A section with no record in ``state`` is judged from the commit its page names (:func:`page_record`)."""
    record = state["sections"].get(section.name)
    old = state["libraries"].get(record.get("library")) if record else None
    note = None
    if record is None:
        record, old, note = page_record(root, section)
        if record is None:
            return [f"never run by regenerate.py ({note})"]
    reasons = []
    if record.get("command") != section.command:
        reasons.append(f"command changed (was `{record.get('command')}`)")
    if record.get("library") != digest(library):
        closure = library_closure(root, section)
        if old is None:
            reasons.append("library changed")
        else:
            def runs(manifest: dict[str, str]) -> dict[str, str]:
                return manifest if closure is None else {p: h for p, h in manifest.items() if p in closure}

            changed = _changes(runs(old), runs(library))
            if changed:
                reasons.append(f"library changed: {_listed(changed)}")
    changed = _changes(record.get("scripts", {}), script_manifest(root, section))
    if changed:
        reasons.append(f"script changed: {_listed(changed)}")
    if record.get("exit", 0) != 0:
        reasons.append(f"last run failed (exit code {record['exit']})")
    if _section_text(root, section) is None:
        reasons.append(f"missing from {section.page}")
    return [note] + reasons if note and reasons else reasons


# ------------------------------------------------------------------------------------------------ run
def _git(root: Path, *args: str) -> str:
    """Git's output, without its trailing newline (a porcelain line's leading status columns kept)."""
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=root).stdout.rstrip()


def run_section(root: Path, section: Section, state: dict, state_path: Path, order: list[Section]) -> int:
    """Run one section from ``root``, write its page (at once), record it in the state file; its exit code.

    ``order``: every section, whose commands order the page. The library and script hashes are taken *before* the run (the code it starts on); the provenance line of
    a ``docs/benchmarks.md`` section names the commit and the tracked ``.py`` files that differed from it."""
    library, scripts = library_manifest(root), script_manifest(root, section)
    commit = _git(root, "rev-parse", "--short", "HEAD") or "unknown"
    dirty = [line[3:] for line in _git(root, "status", "--porcelain", "--untracked-files=no").splitlines()
             if line[3:].endswith(".py")]
    stamp = (f"Code at commit `{commit}`" + (f" with uncommitted changes to {_listed([f'`{f}`' for f in dirty], 12)}"
                                             if dirty else "") + f", run {datetime.date.today().isoformat()}.")
    argv = [sys.executable, str(root / section.script), *section.arguments]
    if section.whole_page:
        argv += ["--out", section.page]  # relative: the run's directory is root
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    if section.whole_page:  # the script writes its page and prints its progress: let it through
        code = subprocess.run(argv, cwd=root, env=env, check=False).returncode
    else:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
        code = done.returncode
        text = done.stdout + (f"\n[exit code {code}]\n{done.stderr[-2000:]}" if code else "")
        commands = {s.name: s.command for s in order if s.page == section.page and not s.whole_page}
        report.write_page(root / section.page, {section.name: report.render(section.command, stamp, text)}, commands)
    seconds = time.perf_counter() - start
    key = digest(library)
    record = {"command": section.command, "library": key, "scripts": scripts, "commit": commit, "uncommitted": dirty,
              "finished": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "seconds": round(seconds, 1), "exit": code,
              "load": Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else None}
    # merged into the file as it is now: another pass may have recorded other sections meanwhile
    with report.locked(state_path):
        current = load_state(state_path)
        for target in (state, current):
            target["libraries"][key] = library
            target["sections"][section.name] = record
        save_state(state_path, current)
    return code


def regenerate(root: Path, sections: list[Section], names: list[str] | None = None, state_path: Path | None = None,
               budget: float | None = None, status_only: bool = False, out=None) -> int:
    """Status or run. ``names``: the sections to rerun whatever their state (default: the stale ones);
    returns 0 when every section run exited with 0 (and, with ``status_only``, always 0). ``out``: where the
    progress and status lines go (default: standard output at the time of the call)."""
    out = out if out is not None else sys.stdout
    state_path = state_path or root / STATE
    by_name = {s.name: s for s in sections}
    unknown = [n for n in names or [] if n not in by_name]
    if unknown:
        raise ValueError(f"unknown section(s) {unknown}: choose among {list(by_name)}")
    state = load_state(state_path)
    library = library_manifest(root)
    reasons = {s.name: staleness(root, s, state, library) for s in sections}
    if status_only:
        for s in sections:
            record = state["sections"].get(s.name, {})
            when = f" [{record['commit']}, {record['finished']}, {record['seconds']:.0f} s]" if record else ""
            word = "stale" if reasons[s.name] else "fresh"
            print(f"{word:5s} {s.name}{when}" + (": " + "; ".join(reasons[s.name]) if reasons[s.name] else ""),
                  file=out)
        stale = sum(bool(r) for r in reasons.values())
        print(f"{stale} of {len(sections)} sections stale", file=out)
        return 0
    todo = [s for s in sections if (s.name in names if names else reasons[s.name])]
    report.ensure_peers([s.name for s in todo])
    deadline = None if budget is None else time.monotonic() + budget
    failed = 0
    for s in todo:
        last = state["sections"].get(s.name, {}).get("seconds")
        if deadline is not None and last is not None and last > deadline - time.monotonic():
            print(f"skipped {s.name}: its last run took {last:.0f} s, {deadline - time.monotonic():.0f} s left",
                  file=out, flush=True)
            continue
        print(f"running {s.name}: {s.command} ...", file=out, flush=True)
        code = run_section(root, s, state, state_path, sections)
        print(f"  {s.name}: exit code {code}, {state['sections'][s.name]['seconds']:.0f} s, written to {s.page}",
              file=out, flush=True)
        failed += code != 0
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="sections to rerun whatever their state (default: the stale ones)")
    parser.add_argument("--status", action="store_true", help="list every section, fresh or stale and why; run nothing")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds: start no section whose last recorded run took longer than the time left")
    args = parser.parse_args(argv)
    try:
        return regenerate(ROOT, default_sections(), args.names, budget=args.budget, status_only=args.status)
    except ValueError as error:
        parser.error(str(error))


if __name__ == "__main__":
    sys.exit(main())
