"""Peers in their own virtual environment, timed in the same interleaved rounds as our code.

Peers (skglm, celer, prox-tv, FasterRisk) are benchmark references, never dependencies of the
package, so they live in virtual environments of their own: ``python benchmarks/peers.py setup``
creates ``benchmarks/.peers`` (or ``$MILPSCORE_PEERS``) and, for FasterRisk, which pins an old
scikit-learn, ``benchmarks/.peers-fasterrisk`` (or ``$MILPSCORE_FASTERRISK``), and for Gurobi (the optional
column of ``slim_certify.py``) ``benchmarks/.peers-gurobi`` (or ``$MILPSCORE_GUROBI``), from the registry, and for
risk-slim on CPLEX Community Edition (``riskslim_cplex.py``) ``benchmarks/.peers-riskslim`` (or
``$MILPSCORE_RISKSLIM``; risk-slim itself from its repository or ``$MILPSCORE_RISKSLIM_SRC``); prox-tv compiles
against LAPACKE (Debian's ``liblapacke-dev``, installed by ``setup`` when it runs as root with
apt-get) and is built with ``--no-build-isolation``. A :class:`Peer` is one long-lived worker process in that environment
(:mod:`benchmarks.peer_worker`): the data are sent once, every call is timed inside the worker
around the peer's call only (no start-up, no transfer) and comes back as a
:class:`timing.Measured`, so :func:`timing.interleaved` puts it in the same rounds as our cases.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Measured  # noqa: E402

HERE = Path(__file__).resolve().parent
ENV = Path(os.environ.get("MILPSCORE_PEERS", HERE / ".peers"))
#: FasterRisk pins an old scikit-learn: an environment of its own
FASTERRISK_ENV = Path(os.environ.get("MILPSCORE_FASTERRISK", HERE / ".peers-fasterrisk"))
#: Gurobi (pip wheel, size-limited licence: 2000 variables, 2000 constraints) for slim_certify's column
GUROBI_ENV = Path(os.environ.get("MILPSCORE_GUROBI", HERE / ".peers-gurobi"))
#: risk-slim (not on PyPI: from its repository, or a local checkout in $MILPSCORE_RISKSLIM_SRC) on
#: CPLEX Community Edition from PyPI; it needs NumPy 1 (np.float_) and the packages built for it
RISKSLIM_ENV = Path(os.environ.get("MILPSCORE_RISKSLIM", HERE / ".peers-riskslim"))
RISKSLIM_SOURCE = os.environ.get("MILPSCORE_RISKSLIM_SRC", "https://github.com/ustunb/risk-slim")
#: skglm for ``scale_relaxed.py``'s child processes, which run in milpscore's own interpreter: the package
#: alone (``pip install --no-deps --target``), found through ``sys.path`` beside milpscore's numpy and numba
SKGLM_TARGET = Path(os.environ.get("MILPSCORE_SKGLM", HERE / ".peers-skglm"))
RISKSLIM_PACKAGES = ["cplex", "numpy<2", "pandas<2.3", "scipy<1.15", "prettytable", "Cython", "setuptools", "wheel"]
PACKAGES = ["numpy", "scipy", "scikit-learn", "threadpoolctl", "skglm", "celer"]
BUILT = ["cffi", "setuptools", "wheel"]  # prox-tv's build needs them in the environment itself


def python(env: Path = ENV) -> Path:
    return env / "bin" / "python"


def setup() -> None:
    """Create the peers' environments and install them (prox-tv is optional: said when it fails)."""
    subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
    pip = [str(python()), "-m", "pip", "install", "-q"]
    subprocess.run(pip + PACKAGES + BUILT, check=True)
    if not Path("/usr/include/lapacke.h").exists() and shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "liblapacke-dev"])  # prox-tv compiles against it
    built = subprocess.run(pip + ["--no-build-isolation", "prox-tv"])
    if built.returncode:
        print("prox-tv did not build (it needs LAPACKE: apt-get install liblapacke-dev); its rows are skipped")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(SKGLM_TARGET), "skglm"],
                   check=True)
    subprocess.run([sys.executable, "-m", "venv", str(FASTERRISK_ENV)], check=True)
    subprocess.run([str(python(FASTERRISK_ENV)), "-m", "pip", "install", "-q", "fasterrisk"], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(GUROBI_ENV)], check=True)
    subprocess.run([str(python(GUROBI_ENV)), "-m", "pip", "install", "-q", "gurobipy"], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(RISKSLIM_ENV)], check=True)
    subprocess.run([str(python(RISKSLIM_ENV)), "-m", "pip", "install", "-q", *RISKSLIM_PACKAGES], check=True)
    if not _install_riskslim():
        print(f"risk-slim did not install from {RISKSLIM_SOURCE} (set MILPSCORE_RISKSLIM_SRC to a checkout); "
              "benchmarks/riskslim_cplex.py skips its rows")
    print(f"peers installed in {ENV}, {SKGLM_TARGET}, {FASTERRISK_ENV}, {GUROBI_ENV} and {RISKSLIM_ENV}")


def _install_riskslim() -> bool:
    """Build risk-slim into its environment from a copy of its source whose ``setup.py`` no longer
    asks ``scipy.get_include()`` (gone from SciPy; its extensions need only NumPy's headers)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "risk-slim"
        if Path(RISKSLIM_SOURCE).is_dir():
            shutil.copytree(RISKSLIM_SOURCE, source)
        elif subprocess.run(["git", "clone", "-q", "--depth", "1", RISKSLIM_SOURCE, str(source)]).returncode:
            return False
        setup_py = source / "setup.py"
        setup_py.write_text(setup_py.read_text().replace(", scipy.get_include()]", "]"))
        return subprocess.run([str(python(RISKSLIM_ENV)), "-m", "pip", "install", "-q", "--no-build-isolation",
                               str(source)], cwd=tmp).returncode == 0


class Peer:
    """A worker process in the peers' environment; ``None`` from :meth:`start` when there is none."""

    def __init__(self, process: subprocess.Popen):
        self._process = process
        self._dir = Path(tempfile.mkdtemp(prefix="peer-data-"))

    @classmethod
    def start(cls) -> "Peer | None":
        if not python().exists():
            return None
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        process = subprocess.Popen([str(python()), str(HERE / "peer_worker.py")], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, env=env)
        return cls(process)

    def _ask(self, request: dict) -> dict:
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        reply = json.loads(self._process.stdout.readline())
        if not reply["ok"]:
            raise RuntimeError(f"peer {request.get('function', request['op'])}: {reply['error']}")
        return reply

    def versions(self) -> dict:
        return self._ask({"op": "versions"})["versions"]

    def has(self, package: str) -> bool:
        return self.versions().get(package) is not None

    def load(self, **arrays: np.ndarray) -> None:
        """Send the arrays once; 2-D ones are stored column-major (Fortran) there, as the peers prefer."""
        path = self._dir / "data.npz"
        np.savez(path, **arrays)
        self._ask({"op": "load", "path": str(path)})

    def call(self, function: str, **kwargs: Any) -> Measured:
        reply = self._ask({"op": "call", "function": function, "kwargs": kwargs})
        return Measured(reply["seconds"], np.load(reply["path"]))

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait(timeout=30)

    def __enter__(self) -> "Peer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["setup"]:
        setup()
    else:
        print(__doc__)
