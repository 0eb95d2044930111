"""benchmarks/papers.py --quick runs and writes a well-formed page (skips without ../shared)."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_papers_quick_writes_a_well_formed_page(shared_data, tmp_path):
    out = tmp_path / "papers.md"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "papers.py"), "--quick", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("# The papers' tables, regenerated\n")
    headings = re.findall(r"^## (\d)\. ", text, flags=re.M)
    assert headings == ["1", "2", "3", "4", "5"]
    assert re.search(r"\bnan\b", text, flags=re.I) is None
    # every markdown table: a header, a separator of as many cells, rows of as many cells
    lines = text.splitlines()
    tables = 0
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            tables += 1
            width = lines[i - 1].count("|")
            assert line.count("|") == width
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert lines[j].count("|") == width, lines[j]
                j += 1
            assert j > i + 1  # at least one row
    assert tables >= 6
    # the RiskSLIM row: our objective to 7 digits, the reference, and whether it is certified
    row = re.search(r"^\| (0\.\d{7}) \| (0\.\d{10}) \| [^|]+ \| (yes|no) \| 0\.1133646 \|", text, flags=re.M)
    assert row is not None
    assert abs(float(row.group(1)) - 0.1133646) < 1e-4
    assert float(row.group(2)) <= float(row.group(1))
    # the Facets table quotes the paper's Table 1 beside ours, Golovin's column included
    assert "| Golo. ours |" in text.replace("| Chev. ours | Golo. ours |", "| Golo. ours |")
    assert "| breastcancer | 200x27 |" in text
