"""Model files are untrusted (milpscore.model_files.model_schema): mutations of saved SLIM, RiskSLIM and fused
(bins) models are each refused with a ModelFileError naming the field, or predict exactly as the
original; oversized, deeply nested and 10**400 files are refused before or while parsing, by name."""
import copy
import json
import time

import numpy as np
import pandas as pd
import pytest

from milpscore import FusedScoreClassifier, RiskScoreClassifier, SLIMClassifier
from milpscore.data.binarize import ThresholdBinarizer
from milpscore.cli import main
from milpscore.model_files.model_schema import MAX_MODEL_BYTES, ModelFileError
from milpscore.model_files.persist import load_model, model_to_dict

REFUSED = object()  # marker: the mutation must be refused


def _data():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"age": rng.integers(20, 80, 150).astype(float), "bp": rng.normal(120, 15, 150),
                      "chol": rng.normal(200, 30, 150)})
    y = ((X.age - 50) / 10 + (X.bp - 120) / 15 + rng.normal(0, 1, 150) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def saved():
    X, y = _data()
    tb = ThresholdBinarizer(max_cuts=2).fit(X)
    Z = pd.DataFrame(tb.transform(X), columns=tb.get_feature_names_out())
    slim = SLIMClassifier(time_limit=5, max_size=3).fit(Z, y)
    risk = RiskScoreClassifier(time_limit=5, max_size=3).fit(Z, y)
    fused = FusedScoreClassifier(time_limit=5, n_bins=3).fit(X, y)
    return X, {"slim": model_to_dict(slim, tb, "y"), "riskscore": model_to_dict(risk, tb, "y"),
               "fused": model_to_dict(fused, None, "y")}


def _set(doc, path, value):
    *head, last = path
    for key in head:
        doc = doc[key]
    if value is REFUSED:
        del doc[last]
    else:
        doc[last] = value


def first_nonzero(doc):
    return next(k for k, v in enumerate(doc["model"]["coef"]) if v)


# (name, formulations, mutate(doc) -> None, expected field in the message or None = same predictions)
MUTATIONS = [
    ("coef null", "all", lambda d: _set(d, ["model", "coef", 0], None), "model.coef[0]"),
    ("coef NaN", "all", lambda d: _set(d, ["model", "coef", 1], float("nan")), "model.coef[1]"),
    ("coef Infinity", "all", lambda d: _set(d, ["model", "coef", 0], float("inf")), "model.coef[0]"),
    ("coef 10**400", "all", lambda d: _set(d, ["model", "coef", 0], 10 ** 400), "model.coef[0]"),
    ("coef text", "all", lambda d: _set(d, ["model", "coef", 0], "1"), "model.coef[0]"),
    ("coef bool", "all", lambda d: _set(d, ["model", "coef", 0], True), "model.coef[0]"),
    ("coef short", "all", lambda d: d["model"]["coef"].pop(), "model.coef"),
    ("coef long", "all", lambda d: d["model"]["coef"].append(0.0), "model.coef"),
    ("coef changed", "all", lambda d: _set(d, ["model", "coef", first_nonzero(d)],
                                            d["model"]["coef"][first_nonzero(d)] + 1), "card."),
    ("coef missing", "all", lambda d: _set(d, ["model", "coef"], REFUSED), "model.coef"),
    ("intercept NaN", "all", lambda d: _set(d, ["model", "intercept"], float("nan")), "model.intercept"),
    ("intercept text", "all", lambda d: _set(d, ["model", "intercept"], "-3"), "model.intercept"),
    ("intercept +1", "all", lambda d: _set(d, ["model", "intercept"], d["model"]["intercept"] + 1), "card.intercept"),
    ("multiplier 0", "all", lambda d: _set(d, ["model", "multiplier"], 0), "model.multiplier"),
    ("multiplier -1", "all", lambda d: _set(d, ["model", "multiplier"], -1.0), "model.multiplier"),
    ("link unknown", "all", lambda d: _set(d, ["model", "link"], "probit"), "model.link"),
    ("link flipped", "slim", lambda d: _set(d, ["model", "link"], "logistic"), None),
    ("labels equal", "all", lambda d: _set(d, ["model", "labels", "positive"], d["model"]["labels"]["negative"]),
     "model.labels.positive"),
    ("label null", "all", lambda d: _set(d, ["model", "labels", "positive"], None), "model.labels.positive"),
    ("feature renamed", "all", lambda d: _set(d, ["model", "features", 0], "x >= 1"), "model.features[0]"),
    ("format_version true", "all", lambda d: _set(d, ["format_version"], True), "format_version"),
    ("format_version -7", "all", lambda d: _set(d, ["format_version"], -7), "format_version"),
    ("format_version 1.0", "all", lambda d: _set(d, ["format_version"], 1.0), "format_version"),
    ("format_version newer", "all", lambda d: _set(d, ["format_version"], 99), "format_version"),
    ("format other", "all", lambda d: _set(d, ["format"], "pickle"), "format"),
    ("model missing", "all", lambda d: _set(d, ["model"], REFUSED), "model"),
    ("model list", "all", lambda d: _set(d, ["model"], []), "model"),
    ("estimator list", "all", lambda d: _set(d, ["estimator"], []), "estimator"),
    ("library_version number", "all", lambda d: _set(d, ["library_version"], 5), "library_version"),
    ("columns duplicated", "all", lambda d: d["schema"]["columns"].append(d["schema"]["columns"][0]),
     "schema.columns"),
    ("column renamed", "all", lambda d: _set(d, ["schema", "columns", 0], "AGE"), "schema.columns"),
    ("columns empty", "all", lambda d: _set(d, ["schema", "columns"], []), "schema.columns"),
    ("card points +1", "all", lambda d: _set(d, ["card", "rows", 0, "points"], d["card"]["rows"][0]["points"] + 1),
     "card.rows[0]"),
    ("card row dropped", "all", lambda d: d["card"]["rows"].pop(), "card.rows"),
    ("card row renamed", "all", lambda d: _set(d, ["card", "rows", 0, "variable"], "other"), "card.rows[0]"),
    ("card intercept", "all", lambda d: _set(d, ["card", "intercept"], d["card"]["intercept"] - 2), "card.intercept"),
    ("card rows text", "all", lambda d: _set(d, ["card", "rows"], "x"), "card.rows"),
    ("card notes numbers", "all", lambda d: _set(d, ["card", "notes"], [1]), "card.notes[0]"),
    ("risk_table text", "all", lambda d: _set(d, ["risk_table"], "x"), "risk_table"),
    ("solver text", "all", lambda d: _set(d, ["solver"], "x"), "solver"),
    ("preprocessor kind", "all", lambda d: _set(d, ["preprocessor", "kind"], "pickle"), "preprocessor.kind"),
    ("preprocessor list", "all", lambda d: _set(d, ["preprocessor"], [1]), "preprocessor"),
    # harmless edits: the same predictions
    ("params changed", "all", lambda d: _set(d, ["estimator", "params", "time_limit"], 1e9), None),
    ("solver dropped", "all", lambda d: _set(d, ["solver"], None), None),
    ("title changed", "all", lambda d: _set(d, ["card", "title"], "<script>alert(1)</script>"), None),
    ("unknown key", "all", lambda d: _set(d, ["evil"], "__import__('os').system('touch PWNED')"), None),
    ("card rows reordered", "all", lambda d: d["card"]["rows"].reverse(), None),
    # the binariser's rules
    ("rule operator <=", "thresholds", lambda d: _set(d, ["preprocessor", "rules", 0, 1], "<="), "preprocessor.rules[0]"),
    ("rule threshold NaN", "thresholds", lambda d: _set(d, ["preprocessor", "rules", 0, 2], float("nan")),
     "preprocessor.rules[0]"),
    ("rule threshold null", "thresholds", lambda d: _set(d, ["preprocessor", "rules", 0, 2], None),
     "preprocessor.rules[0]"),
    ("rule column unknown", "thresholds", lambda d: _set(d, ["preprocessor", "rules", 0, 0], "zzz"),
     "preprocessor.rules[0]"),
    ("rules unsorted", "thresholds", lambda d: d["preprocessor"]["rules"][:2].reverse() or _set(
        d, ["preprocessor", "rules"], d["preprocessor"]["rules"][:2][::-1] + d["preprocessor"]["rules"][2:]),
     "preprocessor.rules"),
    ("rule threshold moved", "thresholds", lambda d: _set(d, ["preprocessor", "rules", 0, 2],
                                                        d["preprocessor"]["rules"][0][2] - 0.5), "model.features[0]"),
    ("max_cuts text", "thresholds", lambda d: _set(d, ["preprocessor", "max_cuts"], "x"), "preprocessor"),
    # the fused table's bins
    ("cuts unsorted", "bins", lambda d: d["preprocessor"]["variables"][0]["cuts"].reverse(),
     "preprocessor.variables[0].cuts"),
    ("cut null", "bins", lambda d: _set(d, ["preprocessor", "variables", 0, "cuts", 0], None),
     "preprocessor.variables[0].cuts[0]"),
    ("cut 10**400", "bins", lambda d: _set(d, ["preprocessor", "variables", 1, "cuts", 0], 10 ** 400),
     "preprocessor.variables[1].cuts[0]"),
    ("bin kind", "bins", lambda d: _set(d, ["preprocessor", "variables", 0, "kind"], "ordinal"),
     "preprocessor.variables[0].kind"),
    ("categorical with cuts", "bins", lambda d: _set(d, ["preprocessor", "variables", 0, "kind"], "categorical"),
     "preprocessor.variables[0].categories"),
    ("unknown_category", "bins", lambda d: _set(d, ["preprocessor", "unknown_category"], "maybe"),
     "preprocessor.unknown_category"),
    ("bin column renamed", "bins", lambda d: _set(d, ["preprocessor", "variables", 0, "name"], "AGE"),
     "schema.columns"),
    ("cut moved", "bins", lambda d: _set(d, ["preprocessor", "variables", 0, "cuts", 0],
                                         d["preprocessor"]["variables"][0]["cuts"][0] - 1.0), "either"),
]


def _applies(kind, formulation):
    return (kind == "all" or kind == formulation
            or (kind == "thresholds" and formulation in ("slim", "riskscore"))
            or (kind == "bins" and formulation == "fused"))


CASES = [(f, m) for f in ("slim", "riskscore", "fused") for m in MUTATIONS if _applies(m[1], f)]


def _outputs(model, X):
    out = [model.decision_function(X), model.predict(X)]
    if model.data["model"]["link"] == "logistic":
        out.append(model.predict_proba(X))
    return out


def test_at_least_forty_mutations_per_formulation():
    for f in ("slim", "riskscore", "fused"):
        assert sum(1 for g, _ in CASES if g == f) >= 40


@pytest.mark.parametrize("formulation, mutation", CASES, ids=[f"{f}-{m[0]}" for f, m in CASES])
def test_mutation_is_refused_by_name_or_predicts_the_same(saved, tmp_path, formulation, mutation):
    X, docs = saved
    name, _, mutate, field = mutation
    original = tmp_path / "original.json"
    original.write_text(json.dumps(docs[formulation]))
    reference = _outputs(load_model(original), X)
    doc = copy.deepcopy(docs[formulation])
    mutate(doc)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))  # NaN / Infinity / 10**400 written as JSON allows
    if field is None or field == "either":
        try:
            model = load_model(path)
        except ModelFileError as exc:
            assert field == "either", f"{name}: a harmless edit was refused: {exc}"
            assert str(exc).startswith("model.json: field '")
            return
        if name == "link flipped":  # a SLIM card read as a risk score: predictions unchanged, probabilities new
            np.testing.assert_array_equal(model.predict(X), load_model(original).predict(X))
            return
        for got, want in zip(_outputs(model, X), reference):
            np.testing.assert_array_equal(got, want)
        return
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(f"model.json: field '{field}") or (field == "card." and "field 'card." in message), \
        f"{name}: {message}"


def test_oversized_file_is_refused_from_its_size_before_reading(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as fh:
        fh.truncate(MAX_MODEL_BYTES + 1)  # sparse: nothing is written, nothing may be read
    t = time.perf_counter()
    with pytest.raises(ValueError, match=r"big.json: \d+ bytes is larger than a model file may be"):
        load_model(path)
    assert time.perf_counter() - t < 0.5


@pytest.mark.parametrize("text, match", [("[" * 100000 + "]" * 100000, "cannot read a model"),
                                         ("1" * 5000, "field '\\(top level\\)'"),
                                         ('{"format": "milpscore-model", "format_version": ' + "9" * 400 + "}",
                                          "field 'format_version' must be a positive integer, got Infinity"),
                                         ("\xff\xfe", "cannot read a model"), ("", "cannot read a model")])
def test_pathological_json_is_refused_by_name(tmp_path, text, match):
    path = tmp_path / "m.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ValueError, match=match):
        load_model(path)


def test_cli_predict_names_the_field_and_exits_2(saved, tmp_path, capsys):
    X, docs = saved
    doc = copy.deepcopy(docs["riskscore"])
    doc["model"]["coef"][2] = None
    model = tmp_path / "model.json"
    model.write_text(json.dumps(doc))
    data = tmp_path / "d.csv"
    X.to_csv(data, index=False)
    assert main(["predict", str(model), str(data)]) == 2
    err = capsys.readouterr().err
    assert "model.json: field 'model.coef[2]' must be a finite number, got null" in err and "Traceback" not in err
