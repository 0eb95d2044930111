"""ThresholdBinarizer: exact names, no side effects, a stated policy for unseen values; cards read by hand."""
import re

import numpy as np
import pandas as pd
import pytest

from milpscore.binarize import ThresholdBinarizer, cut_points, format_number


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
