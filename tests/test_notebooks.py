"""Execute every notebook in notebooks/ with nbclient (kernel python3); any error fails the test."""
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _kernel_or_skip() -> None:
    pytest.importorskip("nbclient")
    pytest.importorskip("nbformat")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.skip("no 'python3' Jupyter kernel: pip install ipykernel (part of the test extra) "
                    "or run `python -m ipykernel install --user`")


def test_notebooks_exist():
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{k:02d}" for k in range(1, len(NOTEBOOKS) + 1)]
    assert len(NOTEBOOKS) >= 6


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_use_data_that_ship_with_a_dependency(path):
    """A bare clone runs every notebook: no CSV read from disk, and ../shared only behind a check that
    it exists (with data that ship with a dependency, or generated, otherwise)."""
    import json

    code = "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]
                     if cell["cell_type"] == "code")
    assert "read_csv" not in code
    assert "shared" not in code or ".exists()" in code or ".is_dir()" in code


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path):
    _kernel_or_skip()
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit executed outputs"
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
