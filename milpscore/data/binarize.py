"""Threshold binarisation: a raw table to readable 0/1 indicators a score card can award points to.

Score cards need binary features: a SLIM point is awarded when ``"worst radius >= 16.8"``.
:class:`ThresholdBinarizer` turns each column of a mixed table into indicators, by one rule per
column kind (what optbinning and the FICO / RiskSLIM score cards do):

* a numeric column whose values are 0/1 is kept (``"smoker"``);
* another numeric column becomes ``column >= t`` at the thresholds of
  :func:`formulations.bins.cut_points` (all interior unique values when few, else quantiles, with
  zero-inflated columns cut among their non-minimal values; or supervised, among the label's
  boundary points), the same rule as the ordered bins of :mod:`milpscore.data.binning`; with
  ``max_cuts=0`` its values are passed through unchanged;
* a text / categorical column (or one listed in ``categorical``) becomes ``column == level`` for
  its ``max_categories`` most frequent levels (ties by text) and ``"column: other levels"`` for
  the rest;
* with ``missing="indicator"``, a column with missing values in fit also gets ``"column is
  missing"``; its threshold indicators are 0 on those rows (``missing="error"`` refuses them);
* ``special_values`` (e.g. ``-7, -8, -9`` meaning "no record") get their own indicator
  ``"column == -7"`` where they occur, and are excluded from the thresholds: a special row's
  ``column >= t`` indicators are 0 (its value passed through is 0 with ``max_cuts=0``).

Values passed through (``max_cuts=0``) must satisfy ``|x| <= MAX_ABS_VALUE`` (1e6), at fit and at
transform alike, as every linear model's input (:func:`milpscore.data.validation.validate_features`).

Each threshold is the shortest decimal giving the same indicator on every training row as the
data value the cut was chosen at (:func:`milpscore.cards.card_text.readable_cuts`: ``>= 0.01117``, not
``>= 0.011173184357542``), and names print it exactly (:func:`format_number`), so a condition read
off a card is the rule the model applies, on any data. Everything fitted is in
:meth:`ThresholdBinarizer.to_dict` (JSON values), which :func:`milpscore.model_files.persist.save_model` writes
into the model file: ``predict`` applies the same transformation.

Policy for values not seen in fit: NaN in a column without a missing indicator, a new category
in a column without "other levels", a special code seen nowhere in fit, and a value other than 0/1
in a column kept as binary raise a ``ValueError`` naming the column; ``handle_unknown="ignore"``
maps them to all-zero indicators instead. Text in a numeric column and ``+-inf`` are always
refused, naming the column.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from formulations.bins import cut_points, supervised_cut_points
from formulations.validation import MAX_ABS_VALUE
from milpscore.cards.card_text import readable_cuts

__all__ = ["ThresholdBinarizer", "cut_points", "format_number", "supervised_cut_points"]

#: rule operators: kept 0/1 column, threshold, value passed through, category level, the levels
#: not listed, the missing-value indicator, a special code
OPS = ("id", ">=", "value", "==", "other", "missing", "special")


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers / strings (JSON values)."""
    return value.item() if isinstance(value, np.generic) else value


def format_number(value: float) -> str:
    """Shortest text that reads back as exactly ``value`` (``16.8``, ``0.01413059611``, ``45728.3``)."""
    value = float(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _rule_name(col: str, op: str, value: Any) -> str:
    if op in ("id", "value"):
        return col
    if op == ">=":
        return f"{col} >= {format_number(value)}"
    if op == "==":
        return f"{col} == {value}"
    if op == "other":
        return f"{col}: other levels"
    if op == "missing":
        return f"{col} is missing"
    return f"{col} == {format_number(value)}"  # special code


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be {' or '.join(map(repr, choices))}, got {value!r}")


class _Columns:
    """The output columns of :meth:`ThresholdBinarizer.transform`, filled by ``out[:, k] = values``:
    one dense array, or (``sparse``) the non-zeros of each column kept as they come."""

    def __init__(self, n: int, m: int, sparse: bool):
        self.n, self.m, self.sparse = n, m, sparse
        self.dense = None if sparse else np.zeros((n, m))
        self.parts: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __setitem__(self, key: tuple, values: Any) -> None:
        k = key[1]
        if not self.sparse:
            self.dense[:, k] = values
            return
        values = np.broadcast_to(np.asarray(values, dtype=float), (self.n,))
        rows = np.flatnonzero(values)
        self.parts[k] = (rows, values[rows])

    def frame(self, columns: Any, index: Any) -> pd.DataFrame:
        if not self.sparse:
            return pd.DataFrame(self.dense, columns=columns, index=index)
        ks = range(self.m)
        rows = [self.parts.get(k, (np.zeros(0, np.int64), np.zeros(0)))[0] for k in ks]
        vals = [self.parts.get(k, (np.zeros(0, np.int64), np.zeros(0)))[1] for k in ks]
        indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
        matrix = sp.csc_matrix((np.concatenate(vals) if vals else np.zeros(0),
                                np.concatenate(rows) if rows else np.zeros(0, np.int64), indptr),
                               shape=(self.n, self.m))
        out = pd.DataFrame.sparse.from_spmatrix(matrix, columns=columns)
        out.index = index
        return out


class ThresholdBinarizer(TransformerMixin, BaseEstimator):
    """Turn each column of a mixed table into 0/1 indicators (module docstring: the rules).

    Output is a DataFrame whose column names state each rule exactly. ``rules_`` lists
    ``(column, op, value)`` per output column (``op`` in :data:`OPS`), ``groups_`` maps each input
    column to the output columns made from it (for one-threshold-per-variable constraints) and
    ``n_candidates_`` counts them.

    Parameters
    ----------
    max_cuts : int
        Maximum number of thresholds per numeric column; 0 keeps numeric columns as values.
    thresholds : {"quantile", "supervised"}
        How they are chosen: quantiles of the values (:func:`cut_points`, unsupervised; default),
        or among the label's boundary points by greedy Gini splitting
        (:func:`~formulations.bins.supervised_cut_points`; ``fit(X, y)`` then needs the two-class
        label, so fit it on training rows only). ``boundary_points_`` counts, per numeric column,
        the candidate thresholds the supervised choice saw.
    handle_unknown : {"error", "ignore"}
        At transform, values not seen in fit (module docstring) raise a ``ValueError`` naming the
        column ("error", default), or give all-zero indicators ("ignore"; a binary column's value
        then counts as 0).
    max_categories : int or None
        Levels of a categorical column with their own indicator (the most frequent); the rest
        share ``"column: other levels"``, as do levels first seen at transform. None: every level.
    missing : {"error", "indicator"}
        Missing values (NaN, empty cells) refused with the column named, or given an indicator.
    special_values : sequence of numbers, or dict column -> sequence
        Codes with a meaning of their own (e.g. ``-7, -8, -9``) in every numeric column, or per
        column: each gets an indicator where it occurs and is kept out of the thresholds.
    categorical : sequence of column names
        Numeric columns to treat as categories (codes such as a region number).
    sparse_output : bool
        ``transform`` returns the same DataFrame with pandas sparse columns (fill value 0), built
        column by column without a dense ``n x rules`` array (the same values; every estimator and
        ``compare`` take it). A scipy.sparse input ``X`` is read one column at a time.
    """

    def __init__(self, max_cuts: int = 3, handle_unknown: str = "error", thresholds: str = "quantile",
                 max_categories: int | None = 10, missing: str = "error",
                 special_values: Sequence[float] | Mapping[str, Sequence[float]] = (),
                 categorical: Sequence[str] = (), sparse_output: bool = False):
        self.max_cuts = max_cuts
        self.handle_unknown = handle_unknown
        self.thresholds = thresholds
        self.max_categories = max_categories
        self.missing = missing
        self.special_values = special_values
        self.categorical = categorical
        self.sparse_output = sparse_output

    # ------------------------------------------------------------------------ checks
    @staticmethod
    def _frame(X: Any) -> pd.DataFrame:
        if sp.issparse(X):  # sparse columns: each is densified alone when it is read
            frame = pd.DataFrame.sparse.from_spmatrix(sp.csc_matrix(X))
        else:
            frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        frame = frame.set_axis([str(c) for c in frame.columns], axis=1)  # a copy: the caller's frame is untouched
        if frame.columns.duplicated().any():
            raise ValueError(f"column names repeat: {sorted(set(frame.columns[frame.columns.duplicated()]))}; "
                             "rename them so that every column has its own name")
        return frame

    def _check_params(self) -> None:
        _check_choice("handle_unknown", self.handle_unknown, ("error", "ignore"))
        _check_choice("thresholds", self.thresholds, ("quantile", "supervised"))
        _check_choice("missing", self.missing, ("error", "indicator"))
        if isinstance(self.max_cuts, bool) or not isinstance(self.max_cuts, (int, np.integer)) or self.max_cuts < 0:
            raise ValueError(f"max_cuts must be an integer >= 0 (0 keeps numeric columns), got {self.max_cuts!r}")
        k = self.max_categories
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(f"max_categories must be an integer >= 1 or None, got {k!r}")
        if isinstance(self.categorical, str):
            raise ValueError(f"categorical must be a list of column names, got the string {self.categorical!r}")

    def _specials(self, columns: Sequence[str]) -> dict[str, np.ndarray]:
        """Special codes per column (finite numbers; a dict names existing columns)."""
        given = self.special_values
        per = dict(given) if isinstance(given, Mapping) else {c: given for c in columns}
        unknown = sorted(set(per) - set(columns))
        if unknown:
            raise ValueError(f"special_values names columns {unknown[:5]} that X does not have")
        out = {}
        for col, codes in per.items():
            try:
                arr = np.unique(np.asarray(list(codes) if not np.isscalar(codes) else [codes], dtype=float))
            except (TypeError, ValueError):
                raise ValueError(f"special_values must be numbers, got {codes!r}") from None
            if not np.isfinite(arr).all():
                raise ValueError(f"special_values must be finite numbers, got {codes!r}")
            out[col] = arr
        return out

    def _is_numeric(self, s: pd.Series, col: str) -> bool:
        return col not in set(self.categorical) and (pd.api.types.is_numeric_dtype(s)
                                                     or pd.api.types.is_bool_dtype(s))

    # --------------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any = None) -> "ThresholdBinarizer":
        self._check_params()
        frame = self._frame(X)
        unknown = sorted(set(self.categorical) - set(frame.columns))
        if unknown:
            raise ValueError(f"categorical names columns {unknown[:5]} that X does not have")
        positive = self._positive(y, len(frame)) if self.thresholds == "supervised" else None
        specials = self._specials(list(frame.columns))
        self.boundary_points_: dict[str, int] = {}
        self.rules_: list[tuple[str, str, Any]] = []  # (column, op, value)
        for col in frame.columns:
            s = frame[col]
            missing = s.isna().to_numpy()
            if missing.any() and self.missing == "error":
                raise ValueError(f"column {col!r} contains NaN (missing values) in {int(missing.sum())} row(s); "
                                 "drop or impute them, or give them an indicator column (missing='indicator'; "
                                 "CLI: --missing indicator)")
            if self._is_numeric(s, col):
                v = s.to_numpy(dtype=float)
                self._refuse_inf(col, v)
                self.rules_.extend(self._numeric_rules(col, v, missing, specials.get(col, np.zeros(0)), positive))
            else:
                text = s[~missing].astype(str)
                counts = text.value_counts()
                levels = sorted(counts.index, key=lambda v: (-counts[v], v))
                kept = levels if self.max_categories is None else levels[:self.max_categories]
                self.rules_.extend((col, "==", level) for level in kept)
                if len(kept) < len(levels):
                    self.rules_.append((col, "other", None))
            if missing.any():
                self.rules_.append((col, "missing", None))
        self.feature_names_in_ = np.array(frame.columns, dtype=object)
        self._finish()
        return self

    def _numeric_rules(self, col: str, v: np.ndarray, missing: np.ndarray, codes: np.ndarray,
                       positive: np.ndarray | None) -> list[tuple[str, str, Any]]:
        special = np.isin(v, codes)
        regular = ~missing & ~special
        values = v[regular]
        rules: list[tuple[str, str, Any]] = []
        if values.size and np.isin(values, (0.0, 1.0)).all():
            rules.append((col, "id", None))
        elif values.size and self.max_cuts == 0:
            self._refuse_large(col, values)
            rules.append((col, "value", None))
        elif values.size:
            if positive is None:
                cuts = cut_points(values, self.max_cuts)
            else:
                cuts, self.boundary_points_[col] = supervised_cut_points(values, positive[regular], self.max_cuts)
            rules.extend((col, ">=", float(t)) for t in readable_cuts(values, cuts))  # same indicators, short numbers
        rules.extend((col, "special", float(c)) for c in codes if (v == c).any())
        return rules

    def _finish(self) -> None:
        names = self.get_feature_names_out()
        if len(set(names)) != len(names):
            seen: set = set()
            dup = next(n for n in names if n in seen or seen.add(n))
            raise ValueError(f"two indicators would both be called {dup!r}; rename the column or the level")
        self.groups_ = {col: [n for n, (c, _, _) in zip(names, self.rules_) if c == col]
                        for col in self.feature_names_in_}
        self.n_candidates_ = len(self.rules_)

    @staticmethod
    def _refuse_inf(col: str, v: np.ndarray) -> None:
        inf = np.isinf(v)
        if inf.any():
            raise ValueError(f"column {col!r} holds infinite values in {int(inf.sum())} row(s); replace them by "
                             "a number or leave the cell empty (missing)")

    @staticmethod
    def _refuse_large(col: str, v: np.ndarray) -> None:
        """A column passed through as values (``max_cuts=0``) obeys the linear models' limit, at fit and
        at transform alike (:data:`formulations.validation.MAX_ABS_VALUE`)."""
        big = np.abs(v) > MAX_ABS_VALUE
        if big.any():
            raise ValueError(f"column {col!r} has values up to {np.abs(v).max():.3g} in {int(big.sum())} row(s); a "
                             f"linear score accepts |x| <= {MAX_ABS_VALUE:g}: rescale the column or binarise it "
                             "(max_cuts >= 1)")

    @staticmethod
    def _positive(y: Any, n: int) -> np.ndarray:
        """The two-class label as booleans (the larger class value is ``True``)."""
        if y is None:
            raise ValueError("thresholds='supervised' chooses thresholds from the label: call fit(X, y)")
        labels = np.asarray(y)
        if labels.ndim != 1 or labels.size != n:
            raise ValueError(f"y must have one label per row of X ({n}), got shape {labels.shape}")
        classes = np.unique(labels)
        if classes.size != 2:
            raise ValueError(f"thresholds='supervised' needs a two-class label, got {classes.size} classes")
        return labels == classes[1]

    # ---------------------------------------------------------------- model file
    def to_dict(self) -> dict[str, Any]:
        """The fitted rules as plain JSON values (:func:`milpscore.model_files.persist.save_model`)."""
        special = self.special_values
        return {"kind": "thresholds", "handle_unknown": self.handle_unknown, "max_cuts": int(self.max_cuts),
                "thresholds": self.thresholds, "missing": self.missing,
                "max_categories": None if self.max_categories is None else int(self.max_categories),
                "special_values": ({str(k): [float(c) for c in np.atleast_1d(v)] for k, v in special.items()}
                                   if isinstance(special, Mapping) else [float(c) for c in np.atleast_1d(special)]),
                "categorical": [str(c) for c in self.categorical],
                "columns": [str(c) for c in self.feature_names_in_],
                "rules": [[c, op, _plain(v)] for c, op, v in self.rules_]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ThresholdBinarizer":
        """A fitted binariser from :meth:`to_dict` (no refit: the same rules), every field checked:
        a ``ValueError`` names the first field that is not what :meth:`to_dict` writes."""
        def need(ok: bool, field: str, what: str) -> None:
            if not ok:
                raise ValueError(f"preprocessor.{field} must be {what}")

        need(isinstance(data, dict), "", "an object")
        for key in ("max_cuts", "handle_unknown", "columns", "rules"):
            need(key in data, key, "present")
        columns = data["columns"]
        need(isinstance(columns, list) and all(isinstance(c, str) for c in columns)
             and len(set(columns)) == len(columns), "columns", "a list of distinct column names")
        special = data.get("special_values", [])
        need(isinstance(special, (list, dict)), "special_values", "a list of numbers or an object column -> list")
        out = cls(max_cuts=data["max_cuts"], handle_unknown=data["handle_unknown"],
                  thresholds=data.get("thresholds", "quantile"), max_categories=data.get("max_categories"),
                  missing=data.get("missing", "error"), special_values=special,
                  categorical=data.get("categorical", []))
        try:
            out._check_params()
            out._specials(columns)
        except ValueError as exc:
            raise ValueError(f"preprocessor: {exc}") from None
        rules = data["rules"]
        need(isinstance(rules, list), "rules", "a list of [column, op, value]")
        parsed = []
        for k, rule in enumerate(rules):
            field = f"rules[{k}]"
            need(isinstance(rule, list) and len(rule) == 3, field, "[column, op, value]")
            col, op, value = rule
            need(col in columns, field, f"a rule on one of the columns {columns[:5]}..., not {col!r}")
            need(op in OPS, field, f"an op in {list(OPS)}, not {op!r}")
            if op in (">=", "special"):
                need(isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
                     field, "a finite number")
                value = float(value)
            elif op == "==":
                need(isinstance(value, str), field, "a level (text)")
            else:
                need(value is None, field, "null")
            parsed.append((col, op, value))
        for col in columns:
            cuts = [v for c, op, v in parsed if c == col and op == ">="]
            need(all(a < b for a, b in zip(cuts, cuts[1:])), "rules", f"increasing thresholds of {col!r}")
        out.rules_ = parsed
        out.feature_names_in_ = np.array(columns, dtype=object)
        out._finish()
        return out

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        return np.array([_rule_name(col, op, v) for col, op, v in self.rules_], dtype=object)

    # ---------------------------------------------------------------------- transform
    def _unknown(self, col: str, bad: np.ndarray, what: str) -> None:
        if bad.any() and self.handle_unknown == "error":
            raise ValueError(f"column {col!r} has {what} in {int(bad.sum())} row(s) not seen in fit; clean them, or "
                             "use ThresholdBinarizer(handle_unknown='ignore') to score them as all-zero indicators")

    def _numbers(self, col: str, s: pd.Series) -> np.ndarray:
        """A numeric column's values; text where fit saw numbers is refused with the column named."""
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            v = s.to_numpy(dtype=float)
        else:
            v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
            text = np.isnan(v) & ~s.isna().to_numpy()
            if text.any():
                raise ValueError(f"column {col!r} holds text ({s[text].iloc[0]!r} in {int(text.sum())} row(s)) where "
                                 "fit saw numbers; pass numbers (or leave the cell empty)")
        self._refuse_inf(col, v)
        return v

    def transform(self, X: Any) -> pd.DataFrame:
        frame = self._frame(X)
        missing_cols = [c for c in self.feature_names_in_ if c not in frame.columns]
        if missing_cols:
            raise ValueError(f"columns {missing_cols[:5]} seen in fit are missing from X")
        specials = self._specials(list(self.feature_names_in_))
        out = _Columns(len(frame), len(self.rules_), bool(self.sparse_output))
        by_col: dict[str, list[int]] = {}
        for k, (col, _, _) in enumerate(self.rules_):
            by_col.setdefault(col, []).append(k)
        for col, ks in by_col.items():
            rules = [self.rules_[k] for k in ks]
            ops = {op for _, op, _ in rules}
            s = frame[col]
            missing = s.isna().to_numpy()
            if "missing" not in ops:
                self._unknown(col, missing, "missing values (NaN)")
            if ops & {"==", "other"}:
                text = s.astype(str).to_numpy()
                levels = [v for _, op, v in rules if op == "=="]
                listed = np.isin(text, levels) & ~missing
                if "other" not in ops:
                    self._unknown(col, ~listed & ~missing, "unseen categories")
                for k, (_, op, v) in zip(ks, rules):
                    out[:, k] = {"==": lambda: text == v, "other": lambda: ~listed & ~missing,
                                 "missing": lambda: missing}[op]()
                continue
            v = self._numbers(col, s)
            codes = specials.get(col, np.zeros(0))
            special = np.isin(v, codes)
            seen = [value for _, op, value in rules if op == "special"]
            self._unknown(col, special & ~np.isin(v, seen), "special values")
            regular = ~missing & ~special
            for k, (_, op, t) in zip(ks, rules):
                if op == "id":
                    self._unknown(col, regular & ~np.isin(v, (0.0, 1.0)), "values other than 0/1")
                    out[:, k] = regular & (v == 1.0)
                elif op == ">=":
                    out[:, k] = regular & (v >= t)
                elif op == "value":
                    self._refuse_large(col, v[regular])
                    out[:, k] = np.where(regular, v, 0.0)
                elif op == "special":
                    out[:, k] = v == t
                else:  # missing
                    out[:, k] = missing
        return out.frame(self.get_feature_names_out(), frame.index)
