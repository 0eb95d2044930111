"""benchmarks/regenerate.py: git blob hashes, the library digest, script dependencies, staleness and the
resumable run — on a tiny git repository in tmp_path with fake section scripts (no benchmark is run)."""
import hashlib
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("regenerate_under_test", ROOT / "benchmarks" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


regenerate = _load()


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A git work tree with a three-folder library and two section scripts sharing a helper module."""
    files = {
        "formulations/maths.py": "A = 1\n", "solvers/algo.py": "B = 2\n", "milpscore/card.py": "C = 3\n",
        "benchmarks/helper.py": "VALUE = 'first'\n",
        # section one prints the helper's value; section two fails unless section one is already in the page
        "benchmarks/one.py": "import sys\nfrom helper import VALUE\nprint('load 0.0'); print('one says', VALUE, sys.argv[1:])\n",
        "benchmarks/two.py": ("import pathlib, sys\n"
                              "page = pathlib.Path('docs/benchmarks.md').read_text()\n"
                              "assert 'one says' in page, 'section one not written before section two ran'\n"
                              "print('two ran'); sys.exit(int(pathlib.Path('fail').exists()))\n"),
        "benchmarks/unrelated.py": "X = 0\n",
        ".gitignore": "__pycache__/\n*.pyc\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    return tmp_path


def sections():
    return [regenerate.Section("one", "benchmarks/one.py", ("--flag",)), regenerate.Section("two", "benchmarks/two.py")]


def status(repo):
    out = io.StringIO()
    regenerate.regenerate(repo, sections(), status_only=True, out=out)
    return {line.split()[1].rstrip(":"): line for line in out.getvalue().splitlines()
            if line.startswith(("fresh", "stale"))}


def test_blob_hash_is_gits(repo):
    for path in ("formulations/maths.py", "benchmarks/one.py"):
        assert regenerate.blob_hash((repo / path).read_bytes()) == _git(repo, "hash-object", path)
    # and a known value: the empty blob
    assert regenerate.blob_hash(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_library_manifest_and_digest(repo):
    manifest = regenerate.library_manifest(repo)
    assert manifest == {p: _git(repo, "hash-object", p)
                        for p in ("formulations/maths.py", "milpscore/card.py", "solvers/algo.py")}
    lines = "".join(f"{manifest[p]} {p}\n" for p in sorted(manifest))
    assert regenerate.digest(manifest) == hashlib.sha256(lines.encode()).hexdigest()
    # ignored files do not count; untracked ones do; the digest follows content, not commits
    (repo / "solvers" / "__pycache__").mkdir()
    (repo / "solvers" / "__pycache__" / "algo.cpython-311.pyc").write_bytes(b"\0")
    assert regenerate.library_manifest(repo) == manifest
    (repo / "solvers" / "new.py").write_text("D = 4\n")
    assert "solvers/new.py" in regenerate.library_manifest(repo)
    (repo / "solvers" / "new.py").unlink()
    (repo / "milpscore" / "card.py").write_text("C = 4\n")
    assert regenerate.digest(regenerate.library_manifest(repo)) != regenerate.digest(manifest)
    (repo / "milpscore" / "card.py").write_text("C = 3\n")
    assert regenerate.digest(regenerate.library_manifest(repo)) == regenerate.digest(manifest)


def test_script_files_follow_imports_and_file_names(repo):
    assert regenerate.script_files(repo, "benchmarks/one.py") == ["benchmarks/helper.py", "benchmarks/one.py"]
    assert regenerate.script_files(repo, "benchmarks/two.py") == ["benchmarks/two.py"]
    (repo / "benchmarks" / "three.py").write_text("import subprocess\nWORKER = 'unrelated.py'\nimport helper\n")
    assert regenerate.script_files(repo, "benchmarks/three.py") == [
        "benchmarks/helper.py", "benchmarks/three.py", "benchmarks/unrelated.py"]


def test_run_status_and_staleness(repo):
    before = status(repo)
    assert all(line.startswith("stale") and "never run" in line for line in before.values()), before
    # one pass: both sections run, in order, each written before the next starts (two.py checks it)
    log = io.StringIO()
    assert regenerate.regenerate(repo, sections(), out=log) == 0
    page = (repo / "docs" / "benchmarks.md").read_text()
    assert "## `OPENBLAS_NUM_THREADS=1 python benchmarks/one.py --flag`" in page
    assert "one says first ['--flag']" in page and "two ran" in page
    assert page.index("one says") < page.index("two ran")
    state = json.loads((repo / "docs" / "benchmarks.state.json").read_text())
    record = state["sections"]["one"]
    assert record["library"] == regenerate.digest(regenerate.library_manifest(repo))
    assert record["scripts"] == {p: _git(repo, "hash-object", p) for p in ("benchmarks/helper.py", "benchmarks/one.py")}
    assert record["exit"] == 0 and record["commit"] == _git(repo, "rev-parse", "--short", "HEAD")
    assert all(line.startswith("fresh") for line in status(repo).values())
    # a second pass has nothing to do
    log = io.StringIO()
    assert regenerate.regenerate(repo, sections(), out=log) == 0
    assert "running" not in log.getvalue()

    # a helper of section one changes: only one is stale, and the reason names the file
    (repo / "benchmarks" / "helper.py").write_text("VALUE = 'second'\n")
    now = status(repo)
    assert now["one"].startswith("stale") and "script changed: benchmarks/helper.py changed" in now["one"]
    assert now["two"].startswith("fresh")
    log = io.StringIO()
    regenerate.regenerate(repo, sections(), out=log)
    assert "running one" in log.getvalue() and "running two" not in log.getvalue()
    assert "one says second" in (repo / "docs" / "benchmarks.md").read_text()
    assert "one says first" not in (repo / "docs" / "benchmarks.md").read_text()

    # the library changes: both stale, the file named; an unrelated benchmark script does not count
    (repo / "benchmarks" / "unrelated.py").write_text("X = 1\n")
    assert all(line.startswith("fresh") for line in status(repo).values())
    (repo / "solvers" / "algo.py").write_text("B = 5\n")
    now = status(repo)
    assert all(line.startswith("stale") and "library changed: solvers/algo.py changed" in line for line in now.values())
    (repo / "solvers" / "algo.py").write_text("B = 2\n")  # back to the content it ran on: fresh again
    assert all(line.startswith("fresh") for line in status(repo).values())

    # a section named on the command line runs even when fresh; a failing run is recorded and stays stale
    (repo / "fail").write_text("")
    log = io.StringIO()
    assert regenerate.regenerate(repo, sections(), names=["two"], out=log) == 1
    assert "running two" in log.getvalue() and "running one" not in log.getvalue()
    assert "[exit code 1]" in (repo / "docs" / "benchmarks.md").read_text()
    assert "last run failed (exit code 1)" in status(repo)["two"]
    (repo / "fail").unlink()

    # a changed command (other arguments) makes its section stale
    changed = [regenerate.Section("one", "benchmarks/one.py", ("--other",)), sections()[1]]
    out = io.StringIO()
    regenerate.regenerate(repo, changed, status_only=True, out=out)
    assert "stale one" in out.getvalue() and "command changed" in out.getvalue()

    # a section deleted from the page is stale
    page = (repo / "docs" / "benchmarks.md").read_text()
    (repo / "docs" / "benchmarks.md").write_text(page.split("## `OPENBLAS_NUM_THREADS=1 python benchmarks/two.py`")[0])
    assert "missing from docs/benchmarks.md" in status(repo)["two"]

    with pytest.raises(ValueError, match="unknown section"):
        regenerate.regenerate(repo, sections(), names=["three"])


def test_budget_skips_sections_longer_than_the_time_left(repo):
    regenerate.regenerate(repo, sections(), out=io.StringIO())
    path = repo / "docs" / "benchmarks.state.json"
    state = json.loads(path.read_text())
    state["sections"]["one"]["seconds"] = 5000.0  # as if its last run took 5000 s
    path.write_text(json.dumps(state))
    log = io.StringIO()
    regenerate.regenerate(repo, sections(), names=["one", "two"], budget=60, out=log)
    assert "skipped one" in log.getvalue() and "running two" in log.getvalue()


def test_a_section_run_elsewhere_is_judged_by_the_commit_its_page_names(repo):
    """No record: report.py wrote the section; its stamp's commit gives the code it ran on."""
    commit = _git(repo, "rev-parse", "--short", "HEAD")
    (repo / "docs").mkdir()
    (repo / "docs" / "benchmarks.md").write_text(
        "# Benchmarks\n\n## `OPENBLAS_NUM_THREADS=1 python benchmarks/one.py --flag`\n\n"
        f"Code at commit `{commit}`, run 2026-11-25.\n\n```text\nload 0.0\n```\n")
    assert status(repo)["one"].startswith("fresh")
    (repo / "formulations" / "maths.py").write_text("A = 2\n")
    line = status(repo)["one"]
    assert line.startswith("stale") and f"its page says commit {commit}" in line
    assert "formulations/maths.py changed" in line
    (repo / "docs" / "benchmarks.md").write_text(
        (repo / "docs" / "benchmarks.md").read_text().replace(f"`{commit}`", f"`{commit}` with uncommitted changes"))
    assert "code unknown" in status(repo)["one"]


def test_the_real_sections_are_the_reports_runs_and_the_whole_pages():
    names = [s.name for s in regenerate.default_sections()]
    assert names[:-4] == list(regenerate.report.RUNS)
    assert names[-4:] == ["papers", "results", "results-supervised", "eye-reproduction"]
    for section in regenerate.default_sections():
        assert (ROOT / section.script).is_file()
        assert all((ROOT / p).is_file() for p in regenerate.script_files(ROOT, section.script))


def test_status_runs_from_the_command_line():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "regenerate.py"), "--status"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith(f"of {len(regenerate.default_sections())} sections stale")


def test_a_record_written_meanwhile_by_another_pass_is_kept(repo):
    """Two passes in one tree (e.g. two sessions): each run merges its record into the file as it is now."""
    state_path = repo / "docs" / "benchmarks.state.json"
    state = regenerate.load_state(state_path)  # what a pass read when it started: empty
    other = {"command": "elsewhere", "library": "0" * 64, "scripts": {}, "commit": "abc", "exit": 0}
    regenerate.save_state(state_path, {"sections": {"other": other}, "libraries": {"0" * 64: {}}})
    regenerate.run_section(repo, sections()[0], state, state_path, sections())
    saved = json.loads(state_path.read_text())
    assert set(saved["sections"]) == {"one", "other"} and saved["sections"]["other"] == other
    assert saved["sections"]["one"]["library"] in saved["libraries"]


def test_a_rewritten_section_keeps_its_place_in_the_page(tmp_path):
    """Small diffs: the page's order is kept; a new section goes after its predecessor in the run order, an
    older form of a command (same script, same first option) is replaced where it stood."""
    report = regenerate.report
    commands = {"a": "python a.py", "b": "python b.py --x 1", "c": "python c.py"}
    page = tmp_path / "page.md"
    body = lambda cmd, text: report.render(cmd, "stamp", text)  # noqa: E731
    page.write_text("# t\n\n" + body("python c.py", "old c") + "\n" + body("python b.py --x 0", "older b") + "\n"
                    + body("python other.py", "kept") + "\n")
    report.write_page(page, {"c": body("python c.py", "new c")}, commands)
    report.write_page(page, {"b": body("python b.py --x 1", "new b")}, commands)
    report.write_page(page, {"a": body("python a.py", "new a")}, commands)
    text = page.read_text()
    assert "old c" not in text and "older b" not in text
    assert text.index("new a") < text.index("new c") < text.index("new b") < text.index("kept")


def test_only_the_library_files_a_section_can_run_make_it_stale(repo):
    """A section that imports ``solvers.algo`` depends on it, its package's ``__init__``, what they
    import (relative imports and module names in strings too) and the non-Python files; a change
    elsewhere in the library leaves it fresh. A section importing nothing depends on everything."""
    (repo / "solvers" / "__init__.py").write_text("from .algo import B\n")
    # regular packages: a namespace portion would lose to an installed milpscore's packages
    (repo / "formulations" / "__init__.py").write_text("")
    (repo / "solvers" / "algo.py").write_text("from formulations.maths import A\nB = 2\n")
    (repo / "solvers" / "kernels.py").write_text("K = 0\n")
    (repo / "solvers" / "route.py").write_text("R = 1\n")
    # module names in strings, plain and as a catalog's "module:attribute" entry point
    (repo / "solvers" / "table.py").write_text("KERNELS = ['solvers.kernels']\nROUTE = 'solvers.route:R'\n")
    (repo / "formulations" / "table.json").write_text("{}\n")
    (repo / "benchmarks" / "uses.py").write_text(
        "import pathlib, sys\nsys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))\n"
        "import solvers.table\nfrom solvers.algo import B\nprint('load 0.0', B)\n")
    secs = [regenerate.Section("uses", "benchmarks/uses.py"), regenerate.Section("one", "benchmarks/one.py", ("--flag",))]
    assert regenerate.library_closure(repo, secs[0]) == {
        "solvers/__init__.py", "solvers/algo.py", "solvers/table.py", "solvers/kernels.py", "solvers/route.py",
        "formulations/__init__.py", "formulations/maths.py", "formulations/table.json"}
    assert regenerate.library_closure(repo, secs[1]) is None
    assert regenerate.regenerate(repo, secs, out=io.StringIO()) == 0

    def stale():
        out = io.StringIO()
        regenerate.regenerate(repo, secs, status_only=True, out=out)
        return {line.split()[1].rstrip(":") for line in out.getvalue().splitlines() if line.startswith("stale")}

    assert stale() == set()
    (repo / "milpscore" / "card.py").write_text("C = 4\n")  # outside the closure of `uses`
    assert stale() == {"one"}
    for path in ("solvers/kernels.py", "solvers/route.py", "formulations/maths.py", "formulations/table.json"):
        before = (repo / path).read_text()
        (repo / path).write_text(before + "\n")
        assert stale() == {"one", "uses"}, path
        (repo / path).write_text(before)
