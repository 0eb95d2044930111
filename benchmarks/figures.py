"""Render every figure of milpscore to PNG (docs/figures/), to be looked at: not a test, not timed.

Run: ``python benchmarks/figures.py`` (about a minute). Each plot function of
:mod:`milpscore.cards.plots`, the score card and risk table exports and the SLIM accuracy-size path is
drawn on the bundled default data (scikit-learn's breast cancer, binarised) or small generated data,
and one line per file written is printed. With Debian's headless Chromium (``/usr/bin/chromium``)
the risk card's HTML page is also photographed as a browser shows it (``risk_card_html.png``).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from milpscore import RiskScoreClassifier, SLIMClassifier, compare, plots  # noqa: E402
from milpscore.data.datasets import load_default  # noqa: E402
from milpscore.studies.selection import path_grid, regularisation_path  # noqa: E402
from milpscore.studies.slim_path import slim_path  # noqa: E402

OUT = ROOT / "docs" / "figures"


def save(figure, name: str) -> None:
    path = OUT / f"{name}.png"
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    print("wrote", path.relative_to(ROOT))


def screenshot(page: str, name: str, size: str = "1000,330") -> None:
    """``page`` (a complete HTML document) as headless Chromium renders it, when it is installed."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        print("skipped", name, "(no /usr/bin/chromium)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "page.html"
        html.write_text(page, encoding="utf-8")
        subprocess.run([str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp}/profile", f"--screenshot={OUT / f'{name}.png'}",
                        f"--window-size={size}", "--hide-scrollbars", html.as_uri()],
                       check=True, capture_output=True, timeout=120)
    print("wrote", (OUT / f"{name}.png").relative_to(ROOT))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    X, y = load_default()
    slim = SLIMClassifier(c0=0.01, max_size=5, time_limit=20).fit(X, y)  # time to prove the cards optimal
    save(plots.plot_score_histograms(slim, X, y).figure, "score_histograms")
    slim.scorecard_.save(OUT / "slim_card.png", dpi=120)  # the card, the model details below it
    print("wrote", (OUT / "slim_card.png").relative_to(ROOT))
    risk = RiskScoreClassifier(max_size=4, time_limit=20).fit(X, y)
    risk.scorecard_.save(OUT / "risk_card.png", dpi=120)
    print("wrote", (OUT / "risk_card.png").relative_to(ROOT))
    screenshot(risk.scorecard_.to_html_page(), "risk_card_html")
    save(risk.plot_risk_table().figure, "risk_table")
    table = compare(X, y, ["slim", "facets", "convex_rounding"], time_limit=5, progress=False)
    axes = plots.plot_exact_vs_relaxed(table, data=f"breast cancer (scikit-learn), {len(y)} rows, {X.shape[1]} "
                                       "binary features; each method 5 s at most, default settings")
    save(np.atleast_1d(axes)[0].figure, "exact_vs_relaxed")
    small = X.iloc[:, :12]
    grid = path_grid(small, y, [0.001, 0.01, 0.03, 0.1], [0.5, 1.0], cv=2, seed=0, n_jobs=2)
    figure, panels = plt.subplots(1, 2, figsize=(11, 3.8))
    plots.plot_grid_heatmap(grid, "accuracy", ax=panels[0])
    plots.plot_grid_heatmap(grid, "integrity", ax=panels[1], cmap="magma")
    save(figure, "grid_heatmaps")
    path = regularisation_path(small, y, np.geomspace(1e-4, 0.1, 10), grid_unit=0.5)
    data = f"breast cancer (scikit-learn): the first {small.shape[1]} of its {X.shape[1]} binary features"
    save(plots.plot_path(path, grid_unit=0.5, data=data).figure, "regularisation_path")
    rng = np.random.default_rng(0)
    margins = np.array([0.5, 1.0, 2.0, 4.0])
    errors = np.maximum(rng.normal(1.0, 1.0, (4, 20)) * np.array([50, 10, 0, 0])[:, None], 0.0)
    save(plots.plot_rounding_error(margins, errors, bound=[2e4, 1e4, 5e3, 2.5e3]).figure, "rounding_error")
    train, test = np.arange(len(y)) % 3 != 0, np.arange(len(y)) % 3 == 0  # held-out third: a test-error line
    sizes = slim_path(X[train], y[train], sizes=range(1, 5), c0=1e-4, coef_bound=5, time_limit=12,
                      X_test=X[test], y_test=y[test])
    save(sizes.plot().figure, "slim_path")


if __name__ == "__main__":
    main()
