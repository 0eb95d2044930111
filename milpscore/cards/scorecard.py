"""ScoreCard: the points table of an integer linear classifier, with its decision rule.

A card predicts the positive class when ``total points + intercept > 0``, i.e. when the total
score exceeds ``threshold = -intercept``. With integer points on features of integer values (0/1
conditions, counts) the score is an integer and this reads "predict <positive> if SCORE >=
floor(threshold) + 1", exact on any data; a feature of real values makes the score real, and the
rule then prints the exact threshold, "SCORE > threshold".

Rows are ``(variable, condition, points)``: for SLIM the condition is a binary feature's name
(``"worst radius >= 16.8"``); for a fused points table one variable has several ranges; a feature
that is not 0/1 prints ``per unit of <name>`` (its points are multiplied by its value).

What a clinician reads (the layout of the scoring systems printed in the SLIM, RiskSLIM and
FasterRisk papers: Ustun & Rudin 2016, Machine Learning 102; Ustun & Rudin 2019, JMLR 20; Liu et
al. 2022, NeurIPS) is the card: numbered rows, the total line, the rule and, for a risk score, the
SCORE -> RISK table laid out horizontally.
Everything about the solve (solver, status, objective, bound, gap, the decision function, the
full risk table with observed rates) is in the "model details" block (:meth:`ScoreCard.details`),
printed after the card in text, in a collapsed section in HTML, below the card (PNG) or on a
second page (PDF).

Real-valued points and thresholds print with the fewest digits that keep every training row's
prediction (:func:`milpscore.cards.card_text.readable_points`) when the card was built with its
training design ``X``; the exact values stay in ``table`` and in the details.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from milpscore.data.binarize import format_number
from milpscore.cards.card_text import literal, readable_points
from milpscore.cards.html_page import escape, page
from milpscore.cards.risk_table import format_risk, format_risk_table


def _is_integral(values: Any, tol: float = 1e-9) -> bool:
    values = np.asarray(values, dtype=float)
    return bool(np.all(np.abs(values - np.round(values)) <= tol))


def _fmt_points(p: float) -> str:
    return f"{int(round(p)):d}" if abs(p - round(p)) <= 1e-9 else format_number(p)


@dataclass(frozen=True)
class ScoreCard:
    """Points table plus decision rule.

    Attributes
    ----------
    table : DataFrame with columns ``variable``, ``condition``, ``points`` (exact points).
    intercept : the model's intercept (the card's "base score").
    positive_label, negative_label : the user's class labels.
    title : heading for text / HTML rendering.
    notes : how the model was found (solver, status, gap, constraints): the model details.
    risk : for a risk score, the :func:`milpscore.cards.risk_table.risk_table` (``points`` ->
        ``predicted_risk``, and ``observed_risk`` / ``count`` on the training data), else None.
    per_unit : per row, True when the feature is not 0/1 (its points count per unit of it).
    shown_points, shown_threshold : the rounded points and threshold printed when the exact ones
        are not integers (:func:`milpscore.cards.card_text.readable_points`); None: print them exactly.
    integer_values : every feature of the card took integer values on its training rows (always
        true of 0/1 conditions, and assumed when the card was built without them): with integer
        points the score is then an integer, and the rule is printed in its rounded form.
    """

    table: pd.DataFrame
    intercept: float
    positive_label: Any = 1
    negative_label: Any = -1
    title: str = "Score card"
    notes: tuple[str, ...] = field(default=())
    risk: pd.DataFrame | None = None
    per_unit: tuple[bool, ...] = field(default=())
    shown_points: tuple[float, ...] | None = None
    shown_threshold: float | None = None
    integer_values: bool = True

    @classmethod
    def from_coefficients(cls, coef: np.ndarray, intercept: float, names: Sequence[str], *,
                          positive_label: Any = 1, negative_label: Any = -1, title: str = "Score card",
                          notes: Sequence[str] = (), tol: float = 1e-9, X: Any = None,
                          risk: pd.DataFrame | None = None) -> "ScoreCard":
        """Card of a linear model on named features, keeping only non-zero points.

        ``X`` (optional): the training design, one column per name. With it, features that are
        not 0/1 print "per unit of <name>" and real-valued points are printed rounded so that
        the printed card predicts every row of ``X`` as the model does (module docstring).
        """
        coef = np.asarray(coef, dtype=float)
        if coef.shape != (len(names),):
            raise ValueError(f"coef has shape {coef.shape} but {len(names)} names were given")
        keep = np.abs(coef) > tol
        order = np.argsort(-coef[keep], kind="stable")
        kept = np.flatnonzero(keep)[order]
        table = pd.DataFrame({"variable": [str(names[j]) for j in kept], "condition": [str(names[j]) for j in kept],
                              "points": coef[kept]})
        card = cls(table, float(intercept), positive_label, negative_label, title, tuple(notes), risk)
        if X is None:
            return card
        shape = getattr(X, "shape", np.shape(X))
        if len(shape) != 2 or shape[1] != len(names):
            raise ValueError(f"X has shape {shape} but {len(names)} names were given; pass the training "
                             "design the coefficients apply to")
        return card.with_training_rows(X[:, kept] if hasattr(X, "toarray") else np.asarray(X)[:, kept])

    def with_training_rows(self, Z: Any) -> "ScoreCard":
        """This card printed for its training rows: ``Z`` (n rows, one column per card row, in
        order) holds each training row's value of the row's feature (0/1 for a condition).

        A row whose column is not 0/1 prints "per unit of"; real-valued points are rounded to the
        fewest significant digits (2 to 6) with a threshold that predict every row of ``Z`` as the
        exact card does (:func:`milpscore.cards.card_text.readable_points`; none found: exact values)."""
        Z = np.asarray(Z.toarray() if hasattr(Z, "toarray") else Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != len(self.table):
            raise ValueError(f"Z has shape {Z.shape}; it needs one column per card row ({len(self.table)})")
        points = self.table["points"].to_numpy(dtype=float)
        per_unit = tuple(bool(v) for v in ~np.all((Z == 0) | (Z == 1), axis=0))
        shown = None if _is_integral(points) else readable_points(points, self.threshold, Z)
        return replace(self, per_unit=per_unit, integer_values=_is_integral(Z),
                       shown_points=None if shown is None else tuple(float(v) for v in shown[0]),
                       shown_threshold=None if shown is None else float(shown[1]))

    # ---------------------------------------------------------------- rule
    @property
    def threshold(self) -> float:
        """Predict positive when the total score is strictly greater than this value."""
        return -float(self.intercept)

    @property
    def is_integral(self) -> bool:
        return _is_integral(self.table["points"]) and _is_integral([self.intercept])

    def _printed_points(self) -> np.ndarray:
        return np.asarray(self.shown_points if self.shown_points is not None else self.table["points"], dtype=float)

    def _cut(self) -> tuple[str, str]:
        """The printed comparison: ``(">=", "4")`` for integer points on features of integer values
        (exact on any data: the score is an integer), else ``(">", threshold)``, the threshold
        printed so that it reads back exactly."""
        t = self.threshold if self.shown_threshold is None else self.shown_threshold
        if self.integer_values and _is_integral(self._printed_points()):
            return ">=", _fmt_points(np.floor(t + 1e-9) + 1)
        return ">", format_number(t)

    def rule(self) -> str:
        """The decision rule in words."""
        op, value = self._cut()
        return f"predict {self.positive_label!r} if total score {op} {value}, else {self.negative_label!r}"

    def _paper_rule(self) -> str:
        """The rule on the card, on the score (points only, the base score folded into the threshold)."""
        op, value = self._cut()
        return f"PREDICT {self.positive_label!r} IF SCORE {op} {value}, ELSE {self.negative_label!r}"

    def total(self, conditions: pd.DataFrame) -> np.ndarray:
        """Total score per row from a 0/1 DataFrame with one column per card condition (exact points)."""
        missing = [c for c in self.table["condition"] if c not in conditions.columns]
        if missing:
            raise ValueError(f"conditions {missing[:5]} of the card are not columns of the input")
        m = conditions[list(self.table["condition"])].to_numpy(dtype=float)
        return m @ self.table["points"].to_numpy(dtype=float)

    # ----------------------------------------------------------- rendering
    def to_frame(self) -> pd.DataFrame:
        """The points table as a DataFrame (a copy)."""
        return self.table.copy()

    def _rows(self, exact: bool = False) -> list[tuple[str, str]]:
        """``(condition as printed, points as printed)`` per row; a range of a variable with several
        rows reads ``"age: 40 to < 50"``, a feature that is not 0/1 ``"per unit of age"``.
        ``exact``: the exact points rather than the printed (rounded) ones."""
        out = []
        per_unit = self.per_unit or (False,) * len(self.table)
        points = self.table["points"].to_numpy(dtype=float) if exact else self._printed_points()
        for (v, c), p, unit in zip(self.table[["variable", "condition"]].itertuples(index=False), points, per_unit):
            text = f"per unit of {c}" if unit else str(c) if str(v) == str(c) else f"{v}: {c}"
            out.append((text, _fmt_points(p) + (" point" if abs(float(p)) == 1 else " points")))
        return out

    def risk_row(self) -> list[tuple[str, str]]:
        """``(SCORE, RISK)`` as printed, one pair per attainable score (risk scores only)."""
        if self.risk is None:
            return []
        return [(_fmt_points(s), format_risk(r)) for s, r in zip(self.risk["points"], self.risk["predicted_risk"])]

    def _risk_lines(self, width: int) -> list[str]:
        """The SCORE -> RISK table laid out horizontally, wrapped to ``width`` characters."""
        pairs = self.risk_row()
        if not pairs:
            return []
        cell = max(max(len(s), len(r)) for s, r in pairs) + 2
        per_line = max(1, (max(width, 72) - 7) // (cell + 1))
        lines: list[str] = []
        for k in range(0, len(pairs), per_line):
            chunk = pairs[k:k + per_line]
            lines += ["SCORE |" + "|".join(s.center(cell) for s, _ in chunk) + "|",
                      "RISK  |" + "|".join(r.center(cell) for _, r in chunk) + "|"]
            if k + per_line < len(pairs):
                lines.append("")
        return lines

    def card_lines(self) -> list[str]:
        """The card as the SLIM / RiskSLIM papers print it: numbered rows "condition  N points
        ... + ____", a total line, the decision rule and (risk scores) the SCORE -> RISK table."""
        rows = self._rows()
        if not rows:
            body = ["     (no points: every row gets the same class)"]
        else:
            cw = max(len(c) for c, _ in rows)
            pw = max(max(len(p) for _, p in rows), len("SCORE"))
            body = [f"{k + 1:>3}.  {c.ljust(cw)}  {p.rjust(pw)}  ...  + _____" for k, (c, p) in enumerate(rows)]
            total = f"ADD POINTS FROM ROWS 1-{len(rows)}" if len(rows) > 1 else "POINTS FROM ROW 1"
            body.append(f"      {total.ljust(cw)}  {'SCORE'.rjust(pw)}  ...  = _____")
        width = max(len(line) for line in body + [self._paper_rule()])
        rule = "=" * width
        risk = self._risk_lines(width)
        return [self.title, rule, *body, rule, self._paper_rule(), *([""] + risk if risk else [])]

    def details(self) -> list[str]:
        """The model details: the decision function, the exact values behind rounded numbers, how
        the model was found (the notes) and, for a risk score, the full risk table."""
        pos = self.positive_label
        out = [f"decision_function = SCORE + base score ({format_number(self.intercept)}); > 0 predicts {pos!r}"]
        if self.shown_points is not None:
            out += ["points and threshold are printed rounded (the same prediction on every training row); exact:",
                    *(f"  {c}: {format_number(p)}" for (c, _), p in zip(self._rows(exact=True), self.table["points"])),
                    f"  rule: SCORE > {format_number(self.threshold)}"]
        elif not self.is_integral:
            op, value = self._cut()
            if op == ">=":
                out.append(f"exact rule: SCORE > {format_number(self.threshold)} (the same as SCORE >= {value}: "
                           "integer points on features of integer values give an integer score)")
        out += list(self.notes)
        if self.risk is not None:
            out += format_risk_table(self.risk)
        return out

    def _lines(self) -> list[str]:
        return [*self.card_lines(), "", "Model details", "-------------", *self.details()]

    def __str__(self) -> str:
        return "\n".join(self._lines())

    def to_html(self, details: bool = True) -> str:
        """The card as an HTML fragment (a notebook cell): the points table in the papers' layout
        (numbered rows, a total line), the rule, the horizontal SCORE -> RISK table and, with
        ``details``, the model details in a collapsed section. Every string is escaped."""
        rows = "".join(f"<tr><td class='n'>{k + 1}.</td><td class='c'>{escape(c)}</td><td class='p'>{escape(p)}</td>"
                       f"<td class='d'>&hellip;</td><td class='b'>+ ______</td></tr>"
                       for k, (c, p) in enumerate(self._rows()))
        n = len(self.table)
        if n:
            words = f"ADD POINTS FROM ROWS 1&ndash;{n}" if n > 1 else "POINTS FROM ROW 1"
            rows += (f"<tr class='total'><td class='n'></td><td class='c'>{words}</td><td class='p'>SCORE</td>"
                     "<td class='d'>=</td><td class='b'>______</td></tr>")
        else:
            rows = "<tr><td class='c'>(no points: every row gets the same class)</td></tr>"
        risk = ""
        if self.risk is not None:
            pairs = self.risk_row()
            risk = ("<div class='milpscore-scroll'><table class='milpscore-risk'><tbody><tr><th scope='row'>SCORE</th>"
                    + "".join(f"<td>{escape(s)}</td>" for s, _ in pairs) + "</tr><tr><th scope='row'>RISK</th>"
                    + "".join(f"<td>{escape(r)}</td>" for _, r in pairs) + "</tr></tbody></table></div>")
        more = ("<details class='milpscore-details'><summary>Model details</summary><pre>"
                + escape("\n".join(self.details())) + "</pre></details>") if details else ""
        return (f"<div class='milpscore-card'><h2>{escape(self.title)}</h2><table class='milpscore-points'><tbody>"
                f"{rows}</tbody></table><p class='milpscore-rule'>{escape(self._paper_rule())}</p>{risk}{more}</div>")

    def _repr_html_(self) -> str:
        return page(self.title, self.to_html(), fragment=True)

    def to_html_page(self, details: bool = True) -> str:
        """The card as a complete HTML document (``<!DOCTYPE html>``, its own styles)."""
        return page(self.title, self.to_html(details))

    def save(self, path: str, dpi: int = 200, details: bool = True) -> str:
        """Write the card as an image or PDF (by suffix: ``.png``, ``.pdf``, ``.svg``) through matplotlib,
        in a monospace font so the columns line up as in the terminal. Names print literally (no
        mathtext: a ``$`` stays a ``$``). With ``details``, the model details go on a second page
        (PDF) or below the card, smaller and grey (PNG, SVG)."""
        # a Figure on its own Agg canvas, not pyplot: the caller's backend (a notebook's inline one) stays as it is
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        card, more = self.card_lines(), (["Model details", "-------------", *self.details()] if details else [])
        text = dict(family="monospace", va="top", ha="left", parse_math=False, usetex=False)

        def figure(lines: list[str], size: float, extra: list[str] = ()) -> Any:
            chars = max([len(line) for line in lines] + [int(0.8 * len(line)) for line in extra])
            rows = len(lines) + 0.8 * (len(extra) + 1) * bool(extra)
            fig = Figure(figsize=(0.0085 * size * chars + 0.6, 0.0175 * size * rows + 0.5))
            FigureCanvasAgg(fig)
            fig.text(0.02, 0.98, "\n".join(lines), fontsize=size, **text)
            return fig

        if str(path).lower().endswith(".pdf") and more:
            from matplotlib.backends.backend_pdf import PdfPages

            with PdfPages(path) as pdf:
                for lines, size in ((card, 10), (more, 8)):
                    fig = figure(lines, size)
                    pdf.savefig(fig, bbox_inches="tight", pad_inches=0.15)
            return str(path)
        fig = figure(card, 10, more)
        if more:  # below the card: measure where it ends
            box = fig.texts[0].get_window_extent(fig.canvas.get_renderer()).transformed(fig.transFigure.inverted())
            fig.text(0.02, box.y0 - 0.03, "\n".join(more), fontsize=8, color="0.3", **text)
        fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
        return str(path)

    def plot(self, scores: np.ndarray | None = None, y: np.ndarray | None = None, ax: Any = None) -> Any:
        """Bar chart of the points, or with ``scores`` and ``y`` per-class histograms of the score.

        Returns the matplotlib Axes.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, max(2.0, 0.35 * len(self.table) + 1)))
        if scores is None:
            labels = [literal(c) for c in self.table["condition"]]  # names printed literally, no mathtext
            ax.barh(labels[::-1], self.table["points"].to_numpy()[::-1], color="tab:blue")
            ax.set_xlabel("points")
            ax.set_title(literal(self.title))
            return ax
        scores = np.asarray(scores, dtype=float)
        y = np.asarray(y)
        bins = np.arange(np.floor(scores.min()) - 0.5, np.ceil(scores.max()) + 1.5) if self.is_integral else 20
        for label, colour in ((self.negative_label, "tab:blue"), (self.positive_label, "tab:red")):
            ax.hist(scores[y == label], bins=bins, alpha=0.6, color=colour, label=literal(label))
        ax.axvline(self.threshold, color="k", linestyle="--", label="threshold")
        ax.set_xlabel("total score")
        ax.set_ylabel("samples")
        ax.legend()
        ax.set_title(literal(self.title))
        return ax
