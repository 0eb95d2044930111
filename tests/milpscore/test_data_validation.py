"""Bad input gets a clear error naming the column/argument and the fix (parametrised)."""
import re

import numpy as np
import pandas as pd
import pytest

from milpscore.data.binarize import ThresholdBinarizer, cut_points
from milpscore.data.validation import encode_labels, validate_xy
from milpscore.estimators.slim import SLIMClassifier

GOOD_X = pd.DataFrame({"age": [30, 40, 50, 60], "bp": [1.0, 2.0, 3.0, 4.0]})
GOOD_Y = [0, 1, 0, 1]


@pytest.mark.parametrize("X, y, error, match", [
    (GOOD_X.assign(bp=[1.0, np.nan, 3.0, 4.0]), GOOD_Y, ValueError, "column 'bp' contains NaN in 1 row"),
    (GOOD_X.assign(age=[1.0, np.inf, 3.0, 4.0]), GOOD_Y, ValueError, "column 'age' contains inf"),
    (GOOD_X.assign(sex=["m", "f", "m", "f"]), GOOD_Y, TypeError, "column 'sex' is not numeric.*ThresholdBinarizer"),
    (GOOD_X, [1, 1, 1, 1], ValueError, "only one class"),
    (GOOD_X, [0, 1, 2, 1], ValueError, "Only binary classification is supported; y has 3 classes"),
    (GOOD_X, [0.1, 1.5, 2.2, 1.0], ValueError, "Unknown label type: continuous"),
    (GOOD_X.iloc[:1], [1], ValueError, "need at least 2"),
    (GOOD_X, [0, 1, 0], ValueError, "X has 4 rows but y has 3"),
    (np.arange(4.0), GOOD_Y, ValueError, "must be 2-D"),
    (GOOD_X, [0.0, 1.0, np.nan, 1.0], ValueError, "NaN or inf labels"),
    (np.array([["a", "b"], ["c", "d"]]), [0, 1], TypeError, "must be numeric"),
])
def test_bad_input_raises_documented_error(X, y, error, match):
    with pytest.raises(error, match=match):
        validate_xy(X, y)
    with pytest.raises(error, match=match):
        SLIMClassifier(time_limit=1).fit(X, y)


@pytest.mark.parametrize("y, negative, positive", [
    ([0, 1, 1, 0], 0, 1), ([-1, 1, 1, -1], -1, 1), ([False, True, True, False], False, True),
    (["no", "yes", "yes", "no"], "no", "yes"), (["malignant", "benign", "benign", "malignant"], "benign", "malignant"),
])
def test_label_mapping_recorded(y, negative, positive):
    y_pm1, labels = encode_labels(y)
    assert (labels.negative, labels.positive) == (negative, positive)
    np.testing.assert_array_equal(labels.decode(y_pm1), np.asarray(y))
    assert set(y_pm1) == {-1.0, 1.0}


def test_predict_checks_columns_and_shape():
    model = SLIMClassifier(time_limit=2).fit(GOOD_X, GOOD_Y)
    with pytest.raises(ValueError, match="3 features, but SLIMClassifier is expecting 2"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"lacks the columns \['bp'\].*has \['BP'\] instead"):
        model.predict(GOOD_X.rename(columns={"bp": "BP"}))
    # the same columns in another order are aligned by name
    np.testing.assert_array_equal(model.decision_function(GOOD_X[GOOD_X.columns[::-1]]),
                                  model.decision_function(GOOD_X))
    with pytest.raises(ValueError, match="sample_weight"):
        SLIMClassifier(time_limit=1).fit(GOOD_X, GOOD_Y, sample_weight=[1, 2])


def test_cut_points_and_binarizer_names():
    v = np.array([1, 2, 2, 3, 4, 5, 6, 7, 8, 9.0])
    cuts = cut_points(v, 3)
    assert len(cuts) <= 3 and (cuts > v.min()).all() and np.isin(cuts, v).all()
    np.testing.assert_array_equal(cut_points(np.array([0, 1, 2, 0.0]), 5), [1, 2])
    frame = pd.DataFrame({"radius": [10.0, 12.0, 14.0, 20.0], "smoker": [0, 1, 1, 0], "site": ["a", "b", "a", "c"]})
    out = ThresholdBinarizer(max_cuts=2).fit_transform(frame)
    assert "smoker" in out.columns and "site == a" in out.columns
    assert any(c.startswith("radius >= ") for c in out.columns)
    col = [c for c in out.columns if c.startswith("radius >= ")][0]
    t = float(col.split(">= ")[1])
    np.testing.assert_array_equal(out[col].to_numpy(), (frame["radius"] >= t).astype(float))
    with pytest.raises(ValueError, match="column 'radius' contains NaN"):
        ThresholdBinarizer().fit(frame.assign(radius=[1.0, np.nan, 2.0, 3.0]))


@pytest.mark.parametrize("name, kwargs", [
    ("SLIMClassifier", {"time_limit": 5}), ("ConvexRoundingClassifier", {"time_limit": 5}),
    ("LocalSearchClassifier", {"time_limit": 5}), ("FacetsClassifier", {"solver": "ecos"}),
    ("FacetsClassifier", {"solver": "highs-exact", "loss": "hinge", "time_limit": 5}),
    ("FacetsClassifier", {"solver": "prox"}), ("RiskScoreClassifier", {"time_limit": 5}),
])
@pytest.mark.parametrize("huge", [1e300, 1.7e308, 1e7])
def test_values_too_large_for_the_solvers_ask_to_rescale(name, kwargs, huge):
    import milpscore

    X = np.array([[0.0, 1.0], [1.0, 0.0], [huge, 1.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="rescale"):
        getattr(milpscore, name)(**kwargs).fit(X, [0, 1, 1, 0])


# ------------------------------------------- repeated names, overflow, text and empty input at predict
_ESTIMATORS = [("SLIMClassifier", {"time_limit": 5}), ("ConvexRoundingClassifier", {"time_limit": 5}),
               ("LocalSearchClassifier", {"time_limit": 5}), ("FacetsClassifier", {"solver": "ecos"}),
               ("EYEClassifier", {}), ("RiskScoreClassifier", {"time_limit": 5}),
               ("FusedScoreClassifier", {"time_limit": 5})]


def _small():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 2, 40).astype(float), "b": rng.integers(0, 2, 40).astype(float)})
    return X, (X["a"] + rng.random(40) > 0.8).astype(int)


@pytest.mark.parametrize("name, kwargs", _ESTIMATORS, ids=[n for n, _ in _ESTIMATORS])
def test_repeated_column_names_are_refused_by_name(name, kwargs):
    import milpscore

    X, y = _small()
    with pytest.raises(ValueError, match=r"(repeated|duplicate) column names \['a'\]"):
        getattr(milpscore, name)(**kwargs).fit(X.set_axis(["a", "a"], axis=1), y)


@pytest.mark.parametrize("name, kwargs", _ESTIMATORS, ids=[n for n, _ in _ESTIMATORS])
def test_predict_names_text_and_overflow_and_takes_zero_rows(name, kwargs):
    import warnings

    import milpscore

    X, y = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = getattr(milpscore, name)(**kwargs).fit(X, y)
    if name == "FusedScoreClassifier":  # bins raw values: huge ones fall in the end bins, 0 rows give 0 labels
        assert model.predict(X.iloc[:0]).shape == (0,)
        assert model.predict(X.assign(a=1.7e308)).shape == (40,)
        with pytest.raises((TypeError, ValueError), match="column 'a'"):
            model.predict(X.astype(object).assign(a="yes"))
        return
    with pytest.raises(ValueError, match=r"column 'b' has values up to 1e\+308 .* rescale"):  # as fit refuses them
        model.predict(X.assign(b=1e308))
    with pytest.raises(TypeError, match="column 'a' is not numeric"):
        model.predict(X.astype(object).assign(a="yes"))
    with pytest.raises(TypeError, match="column x1 has values that cannot be converted"):
        model.predict(np.array([[1.0, "yes"]], dtype=object))


def test_saved_model_with_values_passed_through_refuses_overflow_like_fit(tmp_path, capsys):
    from milpscore.cli import main
    from milpscore.model_files.persist import load_model

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.integers(0, 2, 40), "x": rng.normal(0, 1, 40)})
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--binarize", "0", "--time-limit", "3", "--quiet",
                 "--output", str(tmp_path / "m.json")]) == 0
    model = load_model(tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"column 'x' has values up to 1e\+300 .* rescale"):
        model.predict(frame.drop(columns="y").assign(x=1e300))
    frame.assign(x=1e300).to_csv(tmp_path / "huge.csv", index=False)
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "huge.csv"), "--binarize", "0", "--time-limit", "3"]) == 2
    assert re.search(r"column 'x' has values up to 1e\+300 .* rescale", capsys.readouterr().err)
