"""Shared pytest configuration: headless plotting, BLAS capped to one thread, shared data path."""
import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder ``../shared/data`` beside the checkout: the one way a test reads the project's shared
    data sets. A bare clone has no such folder; the test then skips, saying why."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data sets at {SHARED_DATA} (absent in a bare clone)")
    return SHARED_DATA


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """Compile the exact engine's numba kernels once, before any timed fit (``solvers.warmup``):
    in a fresh environment a fit with a short time limit skips the steps whose kernels are not
    compiled (``solvers.compiled``), and tests with short time limits expect them to run."""
    from solvers.warmup import compile_kernels

    compile_kernels()


@pytest.fixture(scope="module")
def dask_client():
    """A ``dask.distributed`` client on a LocalCluster of two one-thread workers in this process
    (skips without dask's distributed scheduler)."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client
