"""The notebooks as committed (read, not executed): every drawing cell has its PNG, no cell has an error;
and (slow) every notebook executes with nbclient (kernel python3) without error."""
import json
import re
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


#: a cell draws when it calls the plots module, pyplot, or a .plot method (path.plot(), card.plot(...))
DRAWS = re.compile(r"\bplots\.|\bplt\.|\.plot\(")


def _code_cells(path):
    return [cell for cell in json.loads(path.read_text())["cells"] if cell["cell_type"] == "code"]


def drawing_cells_without_png(path) -> list[int]:
    """Numbers (among the code cells, from 1) of the cells that draw and saved no ``image/png`` output."""
    return drawing_cells_without_png_in(json.loads(path.read_text()))


def drawing_cells_without_png_in(nb) -> list[int]:
    """:func:`drawing_cells_without_png` of a notebook already read (a dict or an nbformat node)."""
    cells = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    return [k for k, cell in enumerate(cells, 1)
            if DRAWS.search("".join(cell["source"]).replace("import matplotlib.pyplot as plt", ""))
            and not any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))]


def error_outputs(path) -> list[str]:
    """``ename: evalue`` of every error output saved in the notebook."""
    return [f"{out.get('ename')}: {out.get('evalue')}" for cell in _code_cells(path) for out in cell.get("outputs", [])
            if out.get("output_type") == "error"]


def test_the_figure_check_sees_a_missing_figure_and_an_error(tmp_path):
    """The two checks below can fail: a drawing cell without PNG output, and an error output, are found."""
    cells = [{"cell_type": "code", "source": ["import matplotlib.pyplot as plt\n", "x = 1"], "outputs": []},
             {"cell_type": "code", "source": ["plots.plot_path(path);"], "outputs": [
                 {"output_type": "display_data", "data": {"text/plain": "<Figure size 600x400 with 1 Axes>"}}]},
             {"cell_type": "code", "source": ["path.plot()"], "outputs": [
                 {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}}]},
             {"cell_type": "code", "source": ["fig, ax = plt.subplots()"], "outputs": [
                 {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}]}]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert drawing_cells_without_png(path) == [2, 4]
    assert error_outputs(path) == ["ValueError: bad"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_shows_its_figures_and_no_error(path):
    """Read as committed: a cell that draws (``plots.``, ``plt.``, ``.plot(``) saved a PNG (executed by
    ``python notebooks/run_all.py``, not under ``MPLBACKEND=Agg``), and no cell saved an error."""
    counts = [cell.get("execution_count") for cell in _code_cells(path)]
    assert counts == list(range(1, len(counts) + 1)), \
        f"cells not executed in order ({counts}): run python notebooks/run_all.py and commit the outputs"
    assert drawing_cells_without_png(path) == [], "drawing cells without a PNG: run python notebooks/run_all.py"
    assert error_outputs(path) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path):
    _kernel_or_skip()
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit executed outputs"
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    # as notebooks/run_all.py runs it (this tree, inline figures), a notebook that reads
    # MILPSCORE_NOTEBOOK_ROWS on fewer rows than its committed run
    client.execute(env={**_run_all().kernel_environment(), "MILPSCORE_NOTEBOOK_ROWS": "100000"})
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert drawing_cells_without_png_in(nb) == []


def _run_all():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", NOTEBOOKS[0].parent / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
