"""HTML documents of milpscore: every string from data or a model escaped, pages complete.

Nothing a user supplies (column names, class labels, the target's name, notes, file names) is
trusted: each goes through :func:`escape` (``& < > " '`` as entities) before it reaches markup,
and pages carry no script. :func:`page` wraps a body in a complete document
(``<!DOCTYPE html>``, ``<meta charset>``, its own style sheet) or, for a notebook cell, in a
``<div>`` with the same styles. :func:`fit_page` is the page of ``milpscore fit --format html``:
the data summary, the card, the metrics and the exact-vs-relaxed table; a data file is named by
its base name only (no directory of the machine that fitted it).
"""
from __future__ import annotations

import html
from pathlib import PurePath
from typing import Any, Mapping

import pandas as pd

STYLE = """
.milpscore { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111; max-width: 60em; }
.milpscore h2 { font-size: 1.2em; margin: 0.6em 0 0.3em; }
.milpscore table { border-collapse: collapse; margin: 0.4em 0; }
.milpscore td, .milpscore th { padding: 0.25em 0.6em; }
.milpscore-points td { border-bottom: 1px solid #ccc; }
.milpscore-points td.n { text-align: right; color: #555; }
.milpscore-points td.p { text-align: right; white-space: nowrap; font-weight: 600; }
.milpscore-points td.d, .milpscore-points td.b { color: #555; white-space: nowrap; }
.milpscore-points tr.total td { border-top: 2px solid #111; border-bottom: none; font-weight: 700; }
.milpscore-rule { font-weight: 700; margin: 0.6em 0; }
.milpscore-scroll { overflow-x: auto; }
.milpscore-risk th, .milpscore-risk td { border: 1px solid #999; text-align: center; min-width: 3.2em; }
.milpscore-risk th { background: #eee; text-align: left; }
.milpscore-details pre { font-size: 0.85em; color: #333; white-space: pre-wrap; }
.milpscore-metrics td { border-bottom: 1px solid #ddd; }
.milpscore .dataframe td, .milpscore .dataframe th { border: 1px solid #ccc; font-size: 0.9em; }
"""


def escape(text: Any) -> str:
    """``str(text)`` with ``& < > " '`` replaced by entities: safe in element text and in quoted
    attributes."""
    return html.escape(str(text), quote=True)


def page(title: str, body: str, *, fragment: bool = False) -> str:
    """A complete HTML document with ``body`` (markup already escaped by the caller) under its
    styles; ``fragment=True``: a ``<div>`` with the styles, for a notebook cell."""
    styled = f"<div class='milpscore'>{body}</div>"
    if fragment:
        return f"<style>{STYLE}</style>{styled}"
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body>{styled}</body></html>\n")


def data_name(path: str | None) -> str | None:
    """A data file's base name (``/home/me/study/data.csv`` -> ``data.csv``)."""
    return None if path is None else PurePath(str(path)).name


def fit_page(card: Any, summary: str, metrics: Mapping[str, Any], table: pd.DataFrame | None = None,
             data_path: str | None = None) -> str:
    """The page of ``milpscore fit --format html``.

    ``summary`` is the data line the text mode prints (it may name the data file, the target and
    the labels: all escaped); occurrences of ``data_path`` in it are replaced by the file's base
    name. ``card`` is a :class:`milpscore.cards.scorecard.ScoreCard`, ``metrics`` maps names to numbers
    or text, ``table`` is the exact-vs-relaxed table (or None).
    """
    if data_path is not None:
        summary = summary.replace(str(data_path), data_name(data_path))
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v if isinstance(v, str) else f'{v:.4f}')}</td></tr>"
                   for k, v in metrics.items())
    parts = [f"<p class='milpscore-data'>{escape(summary)}</p>", card.to_html(),
             f"<h2>Metrics</h2><table class='milpscore-metrics'><tbody>{rows}</tbody></table>"]
    if table is not None:
        parts.append("<h2>Exact and relaxed programs</h2>"
                     + table.to_html(index=False, escape=True, float_format="{:.4g}".format, border=0))
    return page(str(card.title), "".join(parts))
