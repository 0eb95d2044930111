"""ThresholdBinarizer: exact names, no side effects, a stated policy for unseen values; cards read by hand."""
import re

import numpy as np
import pandas as pd
import pytest

from milpscore.data.binarize import ThresholdBinarizer, cut_points, format_number


def test_fit_leaves_the_callers_frame_alone():
    df = pd.DataFrame({0: [1.0, 2.0, 3.0, 4.0], 1: [0, 1, 0, 1]})
    ThresholdBinarizer(2).fit(df)
    assert list(df.columns) == [0, 1]


def test_names_are_unique_and_state_the_exact_threshold():
    rng = np.random.default_rng(0)
    big = 12345.0 + rng.random(200) * 0.01  # thresholds that agree to 4 significant digits
    df = pd.DataFrame({"big": big, "tiny": rng.random(200) * 0.05})
    b = ThresholdBinarizer(5).fit(df)
    names = list(b.get_feature_names_out())
    assert len(set(names)) == len(names)
    out = b.transform(df)
    for name in names:  # reading the name back reproduces the column
        col, threshold = re.fullmatch(r"(.+) >= (.+)", name).groups()
        np.testing.assert_array_equal(out[name], (df[col] >= float(threshold)).astype(float))


def test_format_number_round_trips():
    for value in [0.01413059611, 45728.3, 16.0, -3.9, 1e-20, 123456789.123]:
        assert float(format_number(value)) == value


def test_zero_inflated_columns_get_cuts():
    rng = np.random.default_rng(1)
    v = np.where(rng.random(1000) < 0.85, 0.0, rng.exponential(1.0, 1000))
    cuts = cut_points(v, 3)
    assert cuts.size == 3 and np.all(cuts > 0)


@pytest.mark.parametrize("bad, match", [
    (pd.DataFrame({"x": [np.nan], "b": [1.0], "c": ["u"]}), "NaN"),
    (pd.DataFrame({"x": [2.0], "b": [2.0], "c": ["u"]}), "other than 0/1"),
    (pd.DataFrame({"x": [2.0], "b": [1.0], "c": ["never seen"]}), "unseen categories"),
])
def test_unseen_values_raise_by_default(bad, match):
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "b": [0.0, 1.0, 0.0, 1.0], "c": ["u", "v", "u", "v"]})
    b = ThresholdBinarizer(2).fit(train)
    with pytest.raises(ValueError, match=match):
        b.transform(bad)
    ignored = ThresholdBinarizer(2, handle_unknown="ignore").fit(train).transform(bad)
    assert np.isin(ignored.to_numpy(), (0.0, 1.0)).all()


def test_groups_record_one_threshold_family_per_variable():
    df = pd.DataFrame({"age": [20, 30, 40, 50, 60], "sex": [0, 1, 0, 1, 0]})
    b = ThresholdBinarizer(3).fit(df)
    assert b.groups_["sex"] == ["sex"] and len(b.groups_["age"]) == 3 and b.n_candidates_ == 4


def test_a_slim_card_applied_by_hand_reproduces_predict():
    from milpscore.estimators import SLIMClassifier

    rng = np.random.default_rng(3)
    raw = pd.DataFrame({"a": np.round(rng.normal(size=300), 6), "b": rng.random(300) * 0.03})
    y = (raw["a"] + 40 * raw["b"] + rng.normal(0, 0.3, 300) > 0.6).astype(int)
    binarizer = ThresholdBinarizer(4).fit(raw)
    model = SLIMClassifier(c0=0.001, coef_bound=3, time_limit=10).fit(binarizer.transform(raw), y)
    card = model.scorecard_
    total = np.zeros(len(raw))
    for condition, points in zip(card.table["condition"], card.table["points"]):
        col, threshold = re.fullmatch(r"(.+) >= (.+)", condition).groups()
        total += points * (raw[col].to_numpy() >= float(threshold))
    rule = card.rule()
    m = re.search(r"total score >= (-?\d+)", rule)
    predicted = np.where(total >= int(m.group(1)), 1, 0) if m else np.where(
        total > float(re.search(r"total score > (\S+),", rule).group(1)), 1, 0)
    np.testing.assert_array_equal(predicted, model.predict(binarizer.transform(raw)))


# ------------------------------------------------------------ mixed tables: text, missing, special codes
def _mixed(n=200, seed=0):
    rng = np.random.default_rng(seed)
    months = rng.integers(0, 30, n).astype(float)
    months[:20] = -7  # "no record"
    months[20:25] = -9
    income = rng.normal(50, 10, n)
    income[25:40] = np.nan
    city = np.array(["a"] * 80 + ["b"] * 60 + ["c"] * 30 + ["d"] * 20 + ["e"] * 10, dtype=object)
    return pd.DataFrame({"months": months, "income": income, "city": rng.permutation(city)})


def test_text_columns_get_their_top_levels_and_other_levels():
    frame = _mixed()
    b = ThresholdBinarizer(2, max_categories=3, missing="indicator").fit(frame)
    assert b.groups_["city"] == ["city == a", "city == b", "city == c", "city: other levels"]
    new = pd.DataFrame({"months": [3.0, 3.0], "income": [50.0, 50.0], "city": ["d", "never seen"]})
    out = b.transform(new)  # a level first seen at transform is one of the other levels
    np.testing.assert_array_equal(out["city: other levels"], [1.0, 1.0])
    assert out.filter(like="city ==").to_numpy().sum() == 0
    every = ThresholdBinarizer(2, max_categories=None, missing="indicator").fit(frame)
    assert "city: other levels" not in every.get_feature_names_out()
    with pytest.raises(ValueError, match="column 'city' has unseen categories"):
        every.transform(new)


def test_missing_values_get_an_indicator_and_no_threshold():
    frame = _mixed()
    with pytest.raises(ValueError, match="column 'income' contains NaN .*missing='indicator'"):
        ThresholdBinarizer(2).fit(frame)
    b = ThresholdBinarizer(2, missing="indicator").fit(frame)
    out = b.transform(frame)
    missing = frame["income"].isna().to_numpy()
    np.testing.assert_array_equal(out["income is missing"], missing.astype(float))
    assert out.loc[missing, [c for c in out.columns if c.startswith("income >=")]].to_numpy().sum() == 0
    with pytest.raises(ValueError, match="column 'months' has missing values"):  # none in fit: no indicator
        b.transform(frame.assign(months=np.nan))


def test_special_codes_get_indicators_and_stay_out_of_the_thresholds():
    frame = _mixed()
    b = ThresholdBinarizer(3, missing="indicator", special_values=[-7, -8, -9]).fit(frame)
    cuts = [v for c, op, v in b.rules_ if c == "months" and op == ">="]
    assert cuts and min(cuts) > 0  # thresholds from the real values only
    assert b.groups_["months"][-2:] == ["months == -9", "months == -7"]  # -8 never occurs: no indicator
    out = b.transform(frame)
    special = frame["months"].isin([-7, -9]).to_numpy()
    assert out.loc[special, [c for c in out.columns if c.startswith("months >=")]].to_numpy().sum() == 0
    np.testing.assert_array_equal(out["months == -7"], (frame["months"] == -7).astype(float))
    with pytest.raises(ValueError, match="column 'months' has special values"):
        b.transform(frame.assign(months=-8.0))
    per_column = ThresholdBinarizer(3, missing="indicator", special_values={"months": [-7]}).fit(frame)
    assert "months == -7" in per_column.get_feature_names_out() and "months == -9" not in per_column.groups_["months"]
    with pytest.raises(ValueError, match="special_values names columns"):
        ThresholdBinarizer(special_values={"nope": [-7]}).fit(frame)


def test_zero_cuts_keep_numbers_and_codes_become_categories():
    frame = _mixed().assign(region=lambda f: np.arange(len(f)) % 3 + 1)
    b = ThresholdBinarizer(0, missing="indicator", special_values=[-7, -9], categorical=["region"]).fit(frame)
    out = b.transform(frame)
    regular = ~frame["months"].isin([-7, -9])
    np.testing.assert_array_equal(out["months"], np.where(regular, frame["months"], 0.0))
    assert b.groups_["region"] == ["region == 1", "region == 2", "region == 3"]


def test_transform_refuses_text_and_infinity_by_column_name():
    frame = _mixed()
    b = ThresholdBinarizer(2, missing="indicator").fit(frame)
    with pytest.raises(ValueError, match=r"column 'months' holds text \('yes' in 1 row"):
        b.transform(frame.astype({"months": object}).assign(months=lambda f: ["yes"] + list(f["months"][1:])))
    with pytest.raises(ValueError, match="column 'income' holds infinite values"):
        b.transform(frame.assign(income=np.inf))
    with pytest.raises(ValueError, match="column 'income' holds infinite values"):
        ThresholdBinarizer(2).fit(frame.fillna(0).assign(income=-np.inf))
    with pytest.raises(ValueError, match=r"column names repeat: \['a'\]"):
        ThresholdBinarizer(2).fit(pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"]))


def test_the_model_file_round_trip_and_its_checks():
    import json

    frame = _mixed()
    b = ThresholdBinarizer(2, missing="indicator", special_values=[-7, -9], max_categories=3).fit(frame)
    data = json.loads(json.dumps(b.to_dict()))
    again = ThresholdBinarizer.from_dict(data)
    pd.testing.assert_frame_equal(again.transform(frame), b.transform(frame))
    mutations = [("rules", [["months", "<=", 3.0]], "op in"), ("rules", [["nope", ">=", 1.0]], "one of the columns"),
                 ("rules", [["months", ">=", None]], "finite number"), ("rules", [["city", "==", 3]], "level"),
                 ("rules", [["months", ">=", 5.0], ["months", ">=", 2.0]], "increasing thresholds"),
                 ("missing", "impute", "missing must be"), ("max_cuts", -1, "max_cuts"),
                 ("special_values", ["x"], "special_values"), ("columns", ["a", "a"], "distinct"),
                 ("max_categories", 0, "max_categories")]
    for key, value, match in mutations:
        with pytest.raises(ValueError, match=match):
            ThresholdBinarizer.from_dict({**data, key: value})


def test_a_model_file_written_before_the_text_and_missing_options_still_loads():
    old = {"kind": "thresholds", "handle_unknown": "error", "max_cuts": 2, "thresholds": "quantile",
           "columns": ["x", "c"], "rules": [["x", ">=", 2.0], ["c", "==", "u"], ["c", "==", "v"]]}
    b = ThresholdBinarizer.from_dict(old)
    out = b.transform(pd.DataFrame({"x": [1.0, 3.0], "c": ["u", "v"]}))
    np.testing.assert_array_equal(out.to_numpy(), [[0, 1, 0], [1, 0, 1]])
    with pytest.raises(ValueError, match="unseen categories"):  # no 'other levels' in an old file
        b.transform(pd.DataFrame({"x": [1.0], "c": ["w"]}))
