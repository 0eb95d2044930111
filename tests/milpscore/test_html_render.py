"""HTML cards and pages: complete documents, a real risk table, every user string escaped; loaded
in headless Chromium (Debian's ``chromium``), which must run no script from the data."""
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from milpscore.cards.html_page import fit_page
from milpscore.cards.risk_table import risk_table
from milpscore.cards.scorecard import ScoreCard

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(),
                                    reason="headless Chromium is not installed (Debian: apt-get install chromium)")

#: markup that leaves a trace if the browser runs it: a title, an attribute on <html>
HOSTILE = ["<script>document.title='PWNED'</script>",
           "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\">"]
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "div", "h2", "p", "table", "thead", "tbody", "tr",
                "th", "td", "details", "summary", "pre"}


class _Tree(HTMLParser):
    """Start tags (with attributes), text per element and the declaration of a document."""

    def __init__(self, markup: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.decl: str | None = None
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self.feed(markup)

    def handle_decl(self, decl):
        self.decl = decl

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _risk_card(names=("age >= 60", "smoker", "exercise"), labels=("stroke", "no stroke"), title="Stroke risk",
               notes=("exact (highs): status=optimal objective=0.5 bound=0.5 gap=0",)):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (200, 3)).astype(float)
    coef, intercept = np.array([2.0, 1.0, -1.0]), -1.0
    y = (rng.random(200) < 1 / (1 + np.exp(-(X @ coef + intercept)))).astype(int)
    return ScoreCard.from_coefficients(coef, intercept, list(names), positive_label=labels[0], negative_label=labels[1],
                                       title=title, X=X, risk=risk_table(coef, intercept, X, y), notes=list(notes))


def _chromium(tmp_path: Path, page: Path, *flags: str) -> subprocess.CompletedProcess:
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'profile'}", *flags, page.as_uri()]
    run = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def test_a_page_is_a_complete_document_with_a_real_risk_table():
    card = _risk_card()
    page = card.to_html_page()
    tree = _Tree(page)
    assert page.startswith("<!DOCTYPE html>") and tree.decl == "DOCTYPE html"
    assert [t for t, _ in tree.tags[:3]] == ["html", "head", "meta"] and page.rstrip().endswith("</html>")
    assert {t for t, _ in tree.tags} <= ALLOWED_TAGS
    rows = tree.rows
    assert rows[0] == ["1.", "age >= 60", "2 points", "\u2026", "+ ______"]
    assert rows[3] == ["", "ADD POINTS FROM ROWS 1\u20133", "SCORE", "=", "______"]  # five cells, not one string
    score, risk = rows[4], rows[5]  # the risk table: two rows, one column per score
    assert score == ["SCORE", "-1", "0", "1", "2", "3"]
    assert risk == ["RISK"] + [f"{100 / (1 + np.exp(-(s - 1))):.1f}%" for s in range(-1, 4)]
    text = "".join(tree.text)
    assert "PREDICT 'stroke' IF SCORE >= 2, ELSE 'no stroke'" in text and "Model details" in text
    assert card._repr_html_().startswith("<style>")  # a notebook cell: a fragment with its styles


def test_hostile_strings_are_text_in_every_writer():
    card = _risk_card(names=HOSTILE + ["a & b"], labels=(HOSTILE[0], HOSTILE[1]), title=HOSTILE[1], notes=HOSTILE)
    table = pd.DataFrame({"program": HOSTILE, "objective": [0.5, 0.25]})
    summary = f"data: /home/someone/secret study/{HOSTILE[0]}.csv (target {HOSTILE[1]!r}); labels {HOSTILE[0]!r}"
    pages = [card.to_html(), card.to_html_page(), card._repr_html_(),
             fit_page(card, summary, {HOSTILE[0]: 0.5, "note": HOSTILE[1]}, table,
                      data_path=f"/home/someone/secret study/{HOSTILE[0]}.csv")]
    for page in pages:
        tree = _Tree(page)
        assert {t for t, _ in tree.tags} <= ALLOWED_TAGS
        assert not any(k.startswith("on") or k == "data-pwned" for _, attrs in tree.tags for k in attrs)
        text = "".join(tree.text)
        assert HOSTILE[0] in text  # shown as what it is: text
    assert HOSTILE[1] in "".join(_Tree(pages[3]).text)
    assert "/home/someone" not in pages[3] and "secret study" not in pages[3]  # the base name only


def _hostile_csv(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 80
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    label = np.where(a + b + (rng.random(n) < 0.2) >= 2, HOSTILE[0], "ok")
    frame = pd.DataFrame({HOSTILE[1]: label, "<b>bold</b> & a": a, HOSTILE[0] + " b": b})
    path = folder / "hostile data.csv"
    frame.to_csv(path, index=False)
    return path


@needs_chromium
def test_cli_html_page_runs_no_script_in_chromium(tmp_path, capsys):
    from milpscore.cli import main

    csv = _hostile_csv(tmp_path)
    assert main(["fit", str(csv), "--format", "html", "--time-limit", "10"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and str(tmp_path) not in page and "hostile data.csv" in page
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    dom = _chromium(tmp_path, path, "--virtual-time-budget=2000", "--dump-dom").stdout
    tree = _Tree(dom)  # the document as the browser built it, after loading
    tags = {t for t, _ in tree.tags}
    assert "script" not in tags and "img" not in tags and "b" not in tags, tags
    assert not any("data-pwned" in attrs for _, attrs in tree.tags)
    title = dom.split("<title>")[1].split("</title>")[0]
    assert title != "PWNED"
    text = "".join(tree.text)
    for hostile in (HOSTILE[0], "<img src=x onerror=", "<b>bold</b> & a"):  # the target is printed by repr
        assert hostile in text  # printed, not interpreted


@needs_chromium
def test_risk_card_screenshot(tmp_path):
    """The page as a reader sees it (docs/figures/risk_card_html.png is the same shot at full size)."""
    import matplotlib.image

    path = tmp_path / "card.html"
    path.write_text(_risk_card().to_html_page(), encoding="utf-8")
    shot = tmp_path / "card.png"
    _chromium(tmp_path, path, f"--screenshot={shot}", "--window-size=800,500", "--hide-scrollbars")
    image = matplotlib.image.imread(shot)
    assert image.shape[:2] == (500, 800)
    ink = image[..., :3].min(axis=2) < 0.5
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    # text and tables from the top left, over a fair part of the window, the bottom left blank
    assert rows[0] < 40 and 150 < rows[-1] < 450 and cols[0] < 40 and cols[-1] > 300
