"""Fitted models to and from a versioned JSON file (no pickle): points, intercept, input schema,
binning rules, card, risk table and the solver's certificate.

The file states its format version and the library version that wrote it. A file of a format
this library reads (``<= FORMAT_VERSION``) loads; a newer one is refused with the versions named.
Nothing in a file is trusted: :mod:`milpscore.model_files.model_schema` checks it (size, then every field).
:class:`SavedModel` predicts from raw columns: the stored binariser (``x >= t`` rules or ordered
bins) is applied first, columns are matched by name, and a missing column is an error naming it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from milpscore.data.binarize import ThresholdBinarizer
from milpscore.model_files.model_schema import FORMAT, FORMAT_VERSION, ModelFileError, read_model_file, validate_model
from milpscore.cards.scorecard import ScoreCard


def _plain(value: Any) -> Any:
    """JSON-able copy of a value: numpy scalars and arrays to Python; non-finite floats to None."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)  # a parameter object (constraints, coefficient sets): recorded, not restored


def model_to_dict(estimator: Any, preprocessor: ThresholdBinarizer | None = None,
                  target: str | None = None) -> dict[str, Any]:
    """Everything :func:`load_model` needs, as JSON values (see the module docstring); ``target``
    (the label column's name, when known) goes into the schema, so ``predict`` never asks for it."""
    from milpscore import __version__

    if not hasattr(estimator, "coef_"):
        raise ValueError(f"{type(estimator).__name__} is not fitted; call fit before saving")
    binner = getattr(estimator, "binner_", None)
    prep = binner if binner is not None else preprocessor
    card = estimator.scorecard_
    fit = getattr(estimator, "fit_", None)
    projection = getattr(estimator, "projection_", None)
    features = (list(getattr(estimator, "feature_names_in_", [])) if binner is None
                else [f"bin {k}" for k in range(len(estimator.coef_))])
    if binner is None and not features:
        features = [f"x{j}" for j in range(estimator.n_features_in_)]
    out = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "library_version": __version__,
        "estimator": {"class": type(estimator).__name__, "params": _plain(estimator.get_params())},
        "schema": {"columns": list(prep.to_dict()["columns"] if isinstance(prep, ThresholdBinarizer) else
                                   [v.name for v in prep.variables_] if prep is not None else features),
                   **({"target": str(target)} if target is not None else {})},
        "preprocessor": prep.to_dict() if prep is not None else None,
        "model": {"features": features, "coef": _plain(estimator.coef_), "intercept": float(estimator.intercept_),
                  "labels": {"negative": _plain(estimator.classes_[0]), "positive": _plain(estimator.classes_[1])},
                  "link": "logistic" if hasattr(estimator, "predict_proba") else "sign",
                  "multiplier": float(getattr(estimator, "multiplier_", 1.0))},
        "card": {"title": card.title, "intercept": float(card.intercept), "notes": list(card.notes),
                 "rows": _plain(card.table.to_dict(orient="records"))},
        "risk_table": _plain(estimator.risk_table_.to_dict(orient="records")) if hasattr(estimator, "risk_table_")
        else None,
        "solver": None if fit is None else {"method": fit.method, "status": fit.status.value,
                                            "objective": _plain(fit.objective), "bound": _plain(fit.bound),
                                            "gap": _plain(fit.gap), "message": fit.message,
                                            "times": _plain(dict(fit.times)),
                                            "projected_time_limit": None if projection is None
                                            else projection.finish},
    }
    return out


def save_model(estimator: Any, path: str | Path, preprocessor: ThresholdBinarizer | None = None,
               target: str | None = None) -> Path:
    """Write a fitted estimator (and the binariser its columns came from, if any) as JSON."""
    path = Path(path)
    path.write_text(json.dumps(model_to_dict(estimator, preprocessor, target), indent=1))
    return path


def load_model(path: str | Path) -> "SavedModel":
    """Read a model written by :func:`save_model` (any library version with a readable format).

    Nothing in the file is trusted: its size is checked before it is read, and every field is
    validated against the schema of :mod:`milpscore.model_files.model_schema`; a violation raises
    :class:`~milpscore.model_files.model_schema.ModelFileError` naming the field."""
    data = read_model_file(path)
    preprocessor = validate_model(data, Path(path).name)
    return SavedModel(data, preprocessor)


@dataclass(frozen=True)
class SavedModel:
    """A loaded model: ``decision_function`` / ``predict`` / ``predict_proba`` on raw columns."""

    data: dict
    preprocessor: Any = None

    @property
    def coef(self) -> np.ndarray:
        return np.asarray(self.data["model"]["coef"], dtype=float)

    @property
    def intercept(self) -> float:
        return float(self.data["model"]["intercept"])

    @property
    def classes(self) -> np.ndarray:
        labels = self.data["model"]["labels"]
        return np.array([labels["negative"], labels["positive"]], dtype=object)

    @property
    def scorecard(self) -> ScoreCard:
        card = self.data["card"]
        table = pd.DataFrame(card["rows"], columns=["variable", "condition", "points"])
        risk = self.data.get("risk_table")  # a risk score's card shows its SCORE -> RISK row
        return ScoreCard(table, card["intercept"], self.classes[1], self.classes[0], card["title"],
                         tuple(card["notes"]), pd.DataFrame(risk) if risk else None)

    def _design(self, X: Any) -> np.ndarray:
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
        columns = self.data["schema"]["columns"]
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            extra = [c for c in frame.columns if c not in columns]
            raise ValueError(f"columns {missing[:5]} of the model are missing from the input"
                             + (f" (the input has {extra[:5]} instead: renamed?)" if extra else ""))
        frame = frame[columns]
        if self.preprocessor is None:
            from milpscore.data.validation import validate_features

            return validate_features(frame)
        design = self.preprocessor.transform(frame)
        return design.toarray() if hasattr(design, "toarray") else np.asarray(design, dtype=float)

    def decision_function(self, X: Any) -> np.ndarray:
        """Total score plus base score per row."""
        return self._design(X) @ self.coef + self.intercept

    def predict(self, X: Any) -> np.ndarray:
        return self.classes[(self.decision_function(X) > 0).astype(int)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """``(n, 2)`` class probabilities (risk scores only: the logistic of the score)."""
        if self.data["model"]["link"] != "logistic":
            raise ValueError(f"a {self.data['estimator']['class']} gives classes, not probabilities")
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X) / self.data["model"]["multiplier"]))
        return np.column_stack([1.0 - p, p])


__all__ = ["save_model", "load_model", "model_to_dict", "SavedModel", "FORMAT_VERSION", "ModelFileError"]
