"""The written schema of a model file, and its validation: nothing in a model file is trusted.

:func:`read_model_file` refuses a file larger than :data:`MAX_MODEL_BYTES` from ``os.stat``
*before* reading it, parses it with ``json`` only (integers of more than 15 digits, ``NaN`` and
``Infinity`` are read as floats, so ``10**400`` is refused as a non-finite number, by name), and
:func:`validate_model` checks every field :func:`milpscore.model_files.persist.load_model` uses. A violation
raises :class:`ModelFileError` (a ``ValueError``) naming the field, e.g. ``model.json: field
'model.coef[3]' must be a finite number, got null``. Fields not listed are ignored (never read).

Schema (format_version 1)::

    format          "milpscore-model"
    format_version  int, 1 <= v <= FORMAT_VERSION (bool refused)
    library_version str
    estimator       {class: str, params: object}       params.grid_unit (Facets): finite > 0
    schema          {columns: [str, distinct, >= 1], target?: str}
    preprocessor    null
                  | {kind: "thresholds", ...}  ThresholdBinarizer.from_dict checks it (rules: known
                                               operators, finite increasing thresholds, its columns)
                  | {kind: "bins", unknown_category: "error"|"ignore",
                     variables: [{name: str, kind: "numeric"|"categorical",
                                  cuts: [finite, strictly increasing] (numeric, >= 1 level),
                                  categories: [str|number, distinct, >= 1] (categorical)}]}
                    its columns equal schema.columns
    model           {features: [str], coef: [finite] (one per feature), intercept: finite,
                     labels: {negative, positive: distinct str|finite number|bool},
                     link: "sign"|"logistic", multiplier: finite > 0 (1 for "sign")}
                    features: the preprocessor's output names ("bin k" for bins; schema.columns
                    without a preprocessor)
    card            {title: str, notes: [str], intercept: finite, rows: [{variable: str,
                     condition: str, points: finite}]}
                    consistent with the points: the rows are those the library writes for
                    (coef, intercept) (non-zero points per feature, divided by grid_unit for
                    Facets; for bins the runs of equal points of each used column, with the
                    constant of the unused columns in the card intercept)
    risk_table      null | [{...: finite number or null}]   (display only)
    solver          null | object                            (display only)

Every rule is exercised by ``tests/milpscore/test_model_file_fuzz.py`` (mutations of saved
models: each is refused naming its field or predicts exactly as the original).
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from milpscore.data.binarize import ThresholdBinarizer
from milpscore.data.binning import OrderedBinner

FORMAT = "milpscore-model"
FORMAT_VERSION = 1
#: largest model file read (bytes), checked with ``os.stat`` before the file is opened
MAX_MODEL_BYTES = 32 * 2**20
#: card points and coefficients agree to this relative tolerance
CARD_TOL = 1e-9

__all__ = ["ModelFileError", "read_model_file", "validate_model", "FORMAT", "FORMAT_VERSION", "MAX_MODEL_BYTES"]


class ModelFileError(ValueError):
    """A model file that does not follow the schema; ``field`` names the first bad field."""

    def __init__(self, source: str, field: str, what: str, got: Any = ...):
        self.field = field
        shown = "" if got is ... else f", got {_show(got)}"
        super().__init__(f"{source}: field '{field}' must be {what}{shown}")


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _parse_int(text: str) -> int | float:
    """JSON integers: more than 15 digits become a float (``10**400`` -> inf, refused as non-finite)."""
    return int(text) if len(text.lstrip("-")) <= 15 else float(text)


def read_model_file(path: str | Path) -> dict:
    """The JSON object in ``path``: size checked before reading, parsed by ``json`` only."""
    path = Path(path)
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise ValueError(f"cannot read a model from {str(path)!r}: {exc.strerror}") from None
    if size > MAX_MODEL_BYTES:
        raise ValueError(f"{path.name}: {size} bytes is larger than a model file may be ({MAX_MODEL_BYTES} bytes); "
                         "not read")
    try:
        return json.loads(path.read_bytes(), parse_int=_parse_int)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise ValueError(f"cannot read a model from {str(path)!r}: {type(exc).__name__}: {str(exc)[:200]}") from None


class _Checker:
    def __init__(self, source: str):
        self.source = source

    def fail(self, field: str, what: str, got: Any = ...) -> None:
        raise ModelFileError(self.source, field, what, got)

    def obj(self, parent: dict, key: str, field: str) -> dict:
        value = self.get(parent, key, field)
        if not isinstance(value, dict):
            self.fail(field, "an object", value)
        return value

    def get(self, parent: dict, key: str, field: str) -> Any:
        if key not in parent:
            self.fail(field, "present")
        return parent[key]

    def text(self, value: Any, field: str) -> str:
        if not isinstance(value, str):
            self.fail(field, "text", value)
        return value

    def number(self, value: Any, field: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(field, "a finite number", value)
        try:
            out = float(value)
        except OverflowError:
            out = math.inf
        if not math.isfinite(out):
            self.fail(field, "a finite number", value)
        return out

    def numbers(self, value: Any, field: str) -> np.ndarray:
        if not isinstance(value, list):
            self.fail(field, "a list of finite numbers", value)
        return np.array([self.number(v, f"{field}[{k}]") for k, v in enumerate(value)], dtype=float)

    def texts(self, value: Any, field: str, distinct: bool = False) -> list[str]:
        if not isinstance(value, list):
            self.fail(field, "a list of text", value)
        out = [self.text(v, f"{field}[{k}]") for k, v in enumerate(value)]
        if distinct and len(set(out)) != len(out):
            dup = next(v for v in out if out.count(v) > 1)
            self.fail(field, "a list of distinct names", f"{dup!r} twice")
        return out

    def label(self, value: Any, field: str) -> Any:
        """A class label or category: text, a bool or a finite number."""
        if isinstance(value, (bool, str)):
            return value
        self.number(value, field)
        return value


def validate_model(data: Any, source: str = "model file") -> Any:
    """Check ``data`` (a parsed model file) against the schema (module docstring); return its
    preprocessor (a fitted :class:`ThresholdBinarizer` / :class:`OrderedBinner`, or None)."""
    c = _Checker(source)
    if not isinstance(data, dict):
        c.fail("(top level)", "an object", data)
    if data.get("format") != FORMAT:
        c.fail("format", f"{FORMAT!r} (this is not a milpscore model file)", data.get("format"))
    version = c.get(data, "format_version", "format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        c.fail("format_version", "a positive integer", version)
    if version > FORMAT_VERSION:
        raise ModelFileError(source, "format_version", f"at most {FORMAT_VERSION}: the file has model format {version} "
                             f"(written by milpscore {_show(data.get('library_version'))}), this milpscore reads "
                             f"formats up to {FORMAT_VERSION}: upgrade milpscore")
    c.text(c.get(data, "library_version", "library_version"), "library_version")
    estimator = c.obj(data, "estimator", "estimator")
    cls = c.text(c.get(estimator, "class", "estimator.class"), "estimator.class")
    params = c.obj(estimator, "params", "estimator.params")
    unit = 1.0
    if cls == "FacetsClassifier":
        unit = c.number(params.get("grid_unit", 1.0) if params.get("grid_unit") is not None else 1.0,
                        "estimator.params.grid_unit")
        if unit <= 0:
            c.fail("estimator.params.grid_unit", "a number > 0", unit)
    schema = c.obj(data, "schema", "schema")
    columns = c.texts(c.get(schema, "columns", "schema.columns"), "schema.columns", distinct=True)
    if not columns:
        c.fail("schema.columns", "a non-empty list of column names", columns)
    if "target" in schema and schema["target"] is not None:
        c.text(schema["target"], "schema.target")
    preprocessor = _preprocessor(c, data.get("preprocessor"), columns)
    model = c.obj(data, "model", "model")
    features = c.texts(c.get(model, "features", "model.features"), "model.features")
    coef = c.numbers(c.get(model, "coef", "model.coef"), "model.coef")
    expected = _feature_names(preprocessor, columns)
    if len(coef) != len(expected):
        c.fail("model.coef", f"a list of {len(expected)} numbers (one per feature of the preprocessor)",
               f"{len(coef)} numbers")
    if features != expected:
        k = next((k for k, (a, b) in enumerate(zip(features, expected)) if a != b), min(len(features), len(expected)))
        c.fail(f"model.features[{k}]" if k < len(features) else "model.features",
               f"the preprocessor's feature {expected[k]!r}" if k < len(expected) else f"{len(expected)} names",
               features[k] if k < len(features) else f"{len(features)} names")
    intercept = c.number(c.get(model, "intercept", "model.intercept"), "model.intercept")
    labels = c.obj(model, "labels", "model.labels")
    negative = c.label(c.get(labels, "negative", "model.labels.negative"), "model.labels.negative")
    positive = c.label(c.get(labels, "positive", "model.labels.positive"), "model.labels.positive")
    if negative == positive and type(negative) is type(positive):
        c.fail("model.labels.positive", "different from model.labels.negative", positive)
    link = c.get(model, "link", "model.link")
    if link not in ("sign", "logistic"):
        c.fail("model.link", "one of 'sign', 'logistic'", link)
    multiplier = c.number(c.get(model, "multiplier", "model.multiplier"), "model.multiplier")
    if multiplier <= 0 or (link == "sign" and multiplier != 1.0):
        c.fail("model.multiplier", "a number > 0 (1 for link 'sign')", multiplier)
    _card(c, c.obj(data, "card", "card"), preprocessor, features, coef, intercept, unit)
    risk = data.get("risk_table")
    if risk is not None:
        if not isinstance(risk, list) or not all(isinstance(r, dict) for r in risk):
            c.fail("risk_table", "null or a list of objects", risk)
        for k, r in enumerate(risk):
            for key, v in r.items():
                if v is not None and not isinstance(v, str):
                    c.number(v, f"risk_table[{k}].{key}")
    if data.get("solver") is not None and not isinstance(data["solver"], dict):
        c.fail("solver", "null or an object", data["solver"])
    return preprocessor


def _preprocessor(c: _Checker, prep: Any, columns: list[str]) -> Any:
    if prep is None:
        return None
    if not isinstance(prep, dict):
        c.fail("preprocessor", "null or an object", prep)
    kind = prep.get("kind")
    if kind == "thresholds":
        try:
            out = ThresholdBinarizer.from_dict(prep)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            text = str(exc)
            if text.startswith("preprocessor.") and " must be " in text:
                field, what = text.split(" must be ", 1)
                raise ModelFileError(c.source, field, what) from None
            raise ModelFileError(c.source, "preprocessor", f"a valid binariser ({type(exc).__name__}: {text})") from None
        names = list(out.feature_names_in_)
    elif kind == "bins":
        if prep.get("unknown_category") not in ("error", "ignore"):
            c.fail("preprocessor.unknown_category", "one of 'error', 'ignore'", prep.get("unknown_category"))
        variables = c.get(prep, "variables", "preprocessor.variables")
        if not isinstance(variables, list) or not variables:
            c.fail("preprocessor.variables", "a non-empty list", variables)
        for k, v in enumerate(variables):
            field = f"preprocessor.variables[{k}]"
            if not isinstance(v, dict):
                c.fail(field, "an object", v)
            c.text(c.get(v, "name", f"{field}.name"), f"{field}.name")
            vkind = c.get(v, "kind", f"{field}.kind")
            cuts = c.numbers(c.get(v, "cuts", f"{field}.cuts"), f"{field}.cuts")
            cats = c.get(v, "categories", f"{field}.categories")
            if not isinstance(cats, list):
                c.fail(f"{field}.categories", "a list", cats)
            if vkind == "numeric":
                if np.any(np.diff(cuts) <= 0):
                    c.fail(f"{field}.cuts", "strictly increasing", v["cuts"])
                if cats:
                    c.fail(f"{field}.categories", "empty for a numeric column", cats)
            elif vkind == "categorical":
                if len(cuts) or not cats:
                    c.fail(f"{field}.categories", "a non-empty list (and cuts empty) for a categorical column", cats)
                for j, cat in enumerate(cats):
                    c.label(cat, f"{field}.categories[{j}]")
                if len({(type(x), x) for x in cats}) != len(cats):
                    c.fail(f"{field}.categories", "distinct", cats)
            else:
                c.fail(f"{field}.kind", "one of 'numeric', 'categorical'", vkind)
        out = OrderedBinner.from_dict(prep)
        names = [v.name for v in out.variables_]
    else:
        c.fail("preprocessor.kind", "one of 'thresholds', 'bins'", kind)
    if names != columns:
        c.fail("schema.columns", f"the preprocessor's columns {names[:5]}", columns[:5])
    return out


def _feature_names(preprocessor: Any, columns: list[str]) -> list[str]:
    if preprocessor is None:
        return list(columns)
    if isinstance(preprocessor, OrderedBinner):
        return [f"bin {k}" for k in range(preprocessor.n_bins_out)]
    return [str(n) for n in preprocessor.get_feature_names_out()]


def _card(c: _Checker, card: dict, preprocessor: Any, features: list[str], coef: np.ndarray, intercept: float,
          unit: float) -> None:
    """The card's rows and intercept are those the library writes for these points."""
    c.text(c.get(card, "title", "card.title"), "card.title")
    c.texts(c.get(card, "notes", "card.notes"), "card.notes")
    card_intercept = c.number(c.get(card, "intercept", "card.intercept"), "card.intercept")
    rows = c.get(card, "rows", "card.rows")
    if not isinstance(rows, list):
        c.fail("card.rows", "a list of {variable, condition, points}", rows)
    got = []
    for k, r in enumerate(rows):
        if not isinstance(r, dict):
            c.fail(f"card.rows[{k}]", "an object {variable, condition, points}", r)
        got.append((c.text(c.get(r, "variable", f"card.rows[{k}].variable"), f"card.rows[{k}].variable"),
                    c.text(c.get(r, "condition", f"card.rows[{k}].condition"), f"card.rows[{k}].condition"),
                    c.number(c.get(r, "points", f"card.rows[{k}].points"), f"card.rows[{k}].points")))
    if isinstance(preprocessor, OrderedBinner):
        want, constant = [], 0.0
        for var, block in zip(preprocessor.variables_, preprocessor.blocks_):
            pts = coef[block]
            if np.all(pts == pts[0]):
                constant += float(pts[0])
                continue
            start = 0
            for k in range(1, len(pts) + 1):
                if k == len(pts) or pts[k] != pts[start]:
                    want.append((var.name, var.range_label(start, k - 1), float(pts[start])))
                    start = k
        want_intercept = intercept + constant
    else:
        keep = np.flatnonzero(np.abs(coef) > CARD_TOL)
        want = [(features[j], features[j], float(coef[j] / unit)) for j in keep]
        want_intercept = intercept / unit

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= CARD_TOL * max(1.0, abs(a), abs(b))

    if not close(card_intercept, want_intercept):
        c.fail("card.intercept", f"{want_intercept!r} (the model's intercept{' / grid_unit' if unit != 1 else ''})",
               card_intercept)
    remaining = list(want)
    for k, (var, cond, pts) in enumerate(got):
        match = next((w for w in remaining if w[0] == var and w[1] == cond and close(w[2], pts)), None)
        if match is None:
            c.fail(f"card.rows[{k}]", "a row of the model's points (card and model.coef disagree)",
                   {"variable": var, "condition": cond, "points": pts})
        remaining.remove(match)
    if remaining:
        var, cond, pts = remaining[0]
        c.fail("card.rows", f"a list with the row {var!r} {cond!r}: {pts:g} points (a point of model.coef)",
               f"{len(got)} rows")
