"""Dependency direction formulations <- solvers <- milpscore, and README/CI consistency."""
import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "formulations": {"numpy", "scipy", "numba", "formulations"},
    "solvers": None,  # anything but milpscore
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


STDLIB = set(__import__("sys").stdlib_module_names)


@pytest.mark.parametrize("package", ["formulations", "solvers"])
def test_layers(package):
    offenders = {}
    for path in (ROOT / package).rglob("*.py"):
        imported = _imports(path) - STDLIB - {"__future__"}
        if package == "formulations":
            bad = imported - ALLOWED["formulations"]
        else:
            bad = imported & {"milpscore"}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert not offenders, f"layer violations: {offenders}"


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_readme_has_exactly_two_setup_commands():
    cmds = _readme_commands()
    assert len(cmds) == 2
    assert cmds[0].startswith("pip install .") and "milpscore fit" in cmds[0]
    assert "pytest" in cmds[1] and "[test]" in cmds[1]


def test_ci_runs_readme_test_command_verbatim():
    script = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in script and "venv" in script
    extracted = subprocess.run(["bash", "-c", "awk '/^```bash$/{inside=1; next} /^```$/{inside=0} inside' README.md | sed -n 2p"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert extracted == _readme_commands()[1]
    assert "sed -n 2p" in script
