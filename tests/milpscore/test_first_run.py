"""A newcomer's first run: a fresh environment, a copy of the clone's root as working directory (its own, so
tests running beside it cannot touch its caches), an empty
numba cache, and README's main job (``milpscore fit``) -- which must compile its kernels once,
say so in one line on stderr, and print a proven card.

The environment is a new virtual environment that sees this one's dependencies (a ``.pth`` file
naming this environment's site-packages, which come after its own) and holds its own copy of the three packages and the console
script, as ``pip install .`` lays them out (pip itself is not run: it would need the network for
its build back-end). Its site-packages starts without any numba cache.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("milpscore", "formulations", "solvers")
COMPILING = "compiling the slim engine's numba kernels"
CONSOLE_SCRIPT = """import sys
from milpscore.cli import main
sys.exit(main())
"""


def _install(home: Path) -> tuple[Path, Path, Path]:
    """(python of a fresh environment under ``home`` with the packages installed, its site-packages, a copy
    of the clone -- its packages and ``pyproject.toml``, no caches -- to run from, as a newcomer does)."""
    venv.EnvBuilder(with_pip=False).create(home / "venv")
    python = home / "venv" / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    site = Path(purelib)
    paths = sysconfig.get_paths()
    (site / "dependencies.pth").write_text("\n".join(dict.fromkeys((paths["purelib"], paths["platlib"]))) + "\n")
    clone = home / "clone"
    for name in PACKAGES:
        shutil.copytree(ROOT / name, site / name, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(ROOT / name, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    (home / "venv" / "bin" / "milpscore").write_text(f"#!{python}\n{CONSOLE_SCRIPT}")
    (home / "venv" / "bin" / "milpscore").chmod(0o755)
    return python, site, clone


def _stop_compilations(python: Path) -> None:
    """End the background compilations a fit of ``python`` left running (every kernel of every kind:
    minutes of a core the rest of the suite needs, for an environment deleted after the test)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and command[:1] == [str(python).encode()] and b"solvers.warmup" in command:
            try:
                os.kill(int(entry.name), 15)
            except OSError:
                pass


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    home = _install(tmp_path_factory.mktemp("newcomer"))
    yield home
    _stop_compilations(home[0])


def _run(installed, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    python, _, clone = installed
    base = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    return subprocess.run([str(python), str(python.parent / "milpscore"), *args], cwd=clone, capture_output=True,
                          text=True, env={**base, **(env or {})}, timeout=1200)


def _cache_files(folder: Path) -> list[Path]:
    return list(folder.rglob("*.nbi"))


def test_first_fit_compiles_once_into_the_installed_package_and_proves_the_card(installed, tmp_path):
    python, site, clone = installed
    assert sysconfig.get_paths()["purelib"] != str(site)
    clone_cache = {p: p.stat().st_mtime_ns for p in _cache_files(clone / "solvers")}
    # README's main job with a time limit no machine speed can break: the 60 s default is timed in
    # benchmarks/first_run.py, not asserted here
    first = _run(installed, "fit", "--time-limit", "600")
    assert first.returncode == 0, first.stderr
    assert "status=optimal" in first.stdout and "gap=0" in first.stdout
    assert sum(COMPILING in line for line in first.stderr.splitlines()) == 1
    assert _cache_files(site / "solvers"), "the kernels were not cached beside the installed package"
    assert {p: p.stat().st_mtime_ns for p in _cache_files(clone / "solvers")} == clone_cache, \
        "the fit compiled into the clone's source tree, not the installed package"

    second = _run(installed, "fit", "--time-limit", "600")
    assert second.returncode == 0, second.stderr
    assert COMPILING not in second.stderr and "status=optimal" in second.stdout


@pytest.fixture
def own_install(tmp_path):
    home = _install(tmp_path)  # its own: the module's may still be compiling in the background
    yield home
    _stop_compilations(home[0])


def test_numba_cache_dir_is_where_the_first_fit_compiles_to(own_install, tmp_path):
    installed = own_install
    cache = tmp_path / "numba-cache"
    csv = tmp_path / "tiny.csv"
    csv.write_text("y,a,b,c\n" + "".join(f"{int(i % 3 == 0)},{i % 2},{(i // 2) % 2},{int(i % 3 == 0 or i % 7 == 0)}\n"
                                         for i in range(60)))
    run = _run(installed, "fit", str(csv), "--formulation", "slim", "--test-size", "0", "--time-limit", "600",
               env={"NUMBA_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    assert COMPILING in run.stderr
    assert _cache_files(cache), "NUMBA_CACHE_DIR received no kernels"
    again = _run(installed, "fit", str(csv), "--formulation", "slim", "--test-size", "0", "--time-limit", "600",
                 env={"NUMBA_CACHE_DIR": str(cache)})
    assert again.returncode == 0 and COMPILING not in again.stderr, again.stderr
