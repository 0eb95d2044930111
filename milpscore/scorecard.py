"""ScoreCard: the points table of an integer linear classifier, with its decision rule.

A card predicts the positive class when ``total points + intercept > 0``, i.e. when the total
score exceeds ``threshold = -intercept``. With integer points and intercept this reads
"predict <positive> if total score >= threshold + 1".

Rows are ``(variable, condition, points)``: for SLIM the condition is a binary feature's name
(``"worst radius >= 16.8"``); for a fused points table one variable has several ranges.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any, Sequence

import numpy as np
import pandas as pd

from milpscore.binarize import format_number


def _is_integral(values: np.ndarray, tol: float = 1e-9) -> bool:
    values = np.asarray(values, dtype=float)
    return bool(np.all(np.abs(values - np.round(values)) <= tol))


def _fmt_points(p: float) -> str:
    return f"{int(round(p)):d}" if abs(p - round(p)) <= 1e-9 else format_number(p)


@dataclass(frozen=True)
class ScoreCard:
    """Points table plus decision rule.

    Attributes
    ----------
    table : DataFrame with columns ``variable``, ``condition``, ``points``.
    intercept : the model's intercept (the card's "base score").
    positive_label, negative_label : the user's class labels.
    title : heading for text / HTML rendering.
    notes : extra lines printed under the rule (e.g. solver status and gap).
    """

    table: pd.DataFrame
    intercept: float
    positive_label: Any = 1
    negative_label: Any = -1
    title: str = "Score card"
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def from_coefficients(cls, coef: np.ndarray, intercept: float, names: Sequence[str], *,
                          positive_label: Any = 1, negative_label: Any = -1, title: str = "Score card",
                          notes: Sequence[str] = (), tol: float = 1e-9) -> "ScoreCard":
        """Card of a linear model on named features, keeping only non-zero points."""
        coef = np.asarray(coef, dtype=float)
        if coef.shape != (len(names),):
            raise ValueError(f"coef has shape {coef.shape} but {len(names)} names were given")
        keep = np.abs(coef) > tol
        table = pd.DataFrame({"variable": [str(n) for n, k in zip(names, keep) if k],
                              "condition": [str(n) for n, k in zip(names, keep) if k],
                              "points": coef[keep]})
        order = np.argsort(-table["points"].to_numpy(), kind="stable")
        return cls(table.iloc[order].reset_index(drop=True), float(intercept), positive_label,
                   negative_label, title, tuple(notes))

    # ---------------------------------------------------------------- rule
    @property
    def threshold(self) -> float:
        """Predict positive when the total score is strictly greater than this value."""
        return -float(self.intercept)

    @property
    def is_integral(self) -> bool:
        return _is_integral(self.table["points"]) and _is_integral([self.intercept])

    def rule(self) -> str:
        """The decision rule in words."""
        if self.is_integral:
            return (f"predict {self.positive_label!r} if total score >= {_fmt_points(self.threshold + 1)}, "
                    f"else {self.negative_label!r}")
        return (f"predict {self.positive_label!r} if total score > {format_number(self.threshold)}, "
                f"else {self.negative_label!r}")

    def _paper_rule(self) -> str:
        """The rule on the card, on the score (points only, the base score folded into the threshold)."""
        if self.is_integral:
            return (f"PREDICT {self.positive_label!r} IF SCORE >= {_fmt_points(self.threshold + 1)}, "
                    f"ELSE {self.negative_label!r}")
        return f"PREDICT {self.positive_label!r} IF SCORE > {format_number(self.threshold)}, ELSE {self.negative_label!r}"

    def total(self, conditions: pd.DataFrame) -> np.ndarray:
        """Total score per row from a 0/1 DataFrame with one column per card condition."""
        missing = [c for c in self.table["condition"] if c not in conditions.columns]
        if missing:
            raise ValueError(f"conditions {missing[:5]} of the card are not columns of the input")
        m = conditions[list(self.table["condition"])].to_numpy(dtype=float)
        return m @ self.table["points"].to_numpy(dtype=float)

    # ----------------------------------------------------------- rendering
    def to_frame(self) -> pd.DataFrame:
        """The points table as a DataFrame (a copy)."""
        return self.table.copy()

    def _rows(self) -> list[tuple[str, str]]:
        """``(condition as printed, points as printed)`` per row; a range of a variable with several
        rows reads ``"age: 40 to < 50"``."""
        out = []
        for v, c, p in self.table.itertuples(index=False):
            text = str(c) if str(v) == str(c) else f"{v}: {c}"
            out.append((text, _fmt_points(p) + (" point" if abs(float(p)) == 1 else " points")))
        return out

    def _lines(self) -> list[str]:
        """The card as the SLIM / RiskSLIM papers print it: numbered rows "condition  N points
        ... + ____", a total line and the decision rule in integer form."""
        rows = self._rows()
        if not rows:
            body = ["     (no points: every row gets the same class)"]
            width = len(body[0])
        else:
            cw = max(len(c) for c, _ in rows)
            pw = max(len(p) for _, p in rows)
            body = [f"{k + 1:>3}.  {c.ljust(cw)}  {p.rjust(pw)}  ...  + _____" for k, (c, p) in enumerate(rows)]
            width = len(body[0])
            total = f"ADD POINTS FROM ROWS 1-{len(rows)}" if len(rows) > 1 else "POINTS FROM ROW 1"
            body.append(f"      {total.ljust(cw)}  {'SCORE'.rjust(pw)}  ...  = _____")
            width = max(width, len(body[-1]))
        rule = "=" * width
        return [self.title, rule, *body, rule, self._paper_rule(),
                f"(score + base score {_fmt_points(self.intercept)} is decision_function; > 0 predicts "
                f"{self.positive_label!r})", *self.notes]

    def __str__(self) -> str:
        return "\n".join(self._lines())

    def to_html(self) -> str:
        """The card as an HTML table in the papers' layout (numbered rows, a total line, the rule)."""
        rows = "".join(f"<tr><td>{k + 1}.</td><td>{escape(c)}</td><td style='text-align:right'>{escape(p)}</td>"
                       f"<td>&hellip;</td><td>+ ______</td></tr>" for k, (c, p) in enumerate(self._rows()))
        n = len(self.table)
        total = (f"<tr style='border-top:2px solid'><td></td><td><b>ADD POINTS FROM ROWS 1-{n}</b></td>"
                 f"<td style='text-align:right'><b>SCORE</b></td><td>=</td><td>______</td></tr>") if n else ""
        notes = "".join(f"<br><small>{escape(line)}</small>" for line in self.notes)
        return (f"<div><b>{escape(self.title)}</b><table style='border-collapse:collapse'><tbody>{rows}{total}"
                f"</tbody></table><p><b>{escape(self._paper_rule())}</b>"
                f"<br><small>base score {escape(_fmt_points(self.intercept))}</small>{notes}</p></div>")

    _repr_html_ = to_html

    def save(self, path: str, dpi: int = 200) -> str:
        """Write the card as an image or PDF (by suffix: ``.png``, ``.pdf``, ``.svg``) through matplotlib,
        in a monospace font so the columns line up as in the terminal."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        lines = self._lines()
        width = max(len(line) for line in lines)
        fig = plt.figure(figsize=(0.11 * width + 0.6, 0.24 * len(lines) + 0.5))
        fig.text(0.02, 0.98, "\n".join(lines), family="monospace", fontsize=10, va="top", ha="left")
        fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
        plt.close(fig)
        return str(path)

    def plot(self, scores: np.ndarray | None = None, y: np.ndarray | None = None, ax: Any = None) -> Any:
        """Bar chart of the points, or with ``scores`` and ``y`` per-class histograms of the score.

        Returns the matplotlib Axes.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, max(2.0, 0.35 * len(self.table) + 1)))
        if scores is None:
            labels = [c for c in self.table["condition"]]
            ax.barh(labels[::-1], self.table["points"].to_numpy()[::-1], color="tab:blue")
            ax.set_xlabel("points")
            ax.set_title(self.title)
            return ax
        scores = np.asarray(scores, dtype=float)
        y = np.asarray(y)
        bins = np.arange(np.floor(scores.min()) - 0.5, np.ceil(scores.max()) + 1.5) if self.is_integral else 20
        for label, colour in ((self.negative_label, "tab:blue"), (self.positive_label, "tab:red")):
            ax.hist(scores[y == label], bins=bins, alpha=0.6, color=colour, label=str(label))
        ax.axvline(self.threshold, color="k", linestyle="--", label="threshold")
        ax.set_xlabel("total score")
        ax.set_ylabel("samples")
        ax.legend()
        ax.set_title(self.title)
        return ax
