"""Ordered one-hot binning (milpscore/data/binning.py): bins, labels, unseen values, errors."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from milpscore.data.binning import OrderedBinner


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 200
    return pd.DataFrame({
        "age": rng.integers(20, 80, n),
        "hba1c": rng.normal(7.0, 1.0, n),
        "insulin": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
        "smoker": rng.random(n) < 0.4,
        "stage": rng.integers(1, 4, n),
    })


def test_one_hot_has_one_one_per_variable(table):
    binner = OrderedBinner(n_bins=4).fit(table)
    M = binner.transform(table)
    assert M.shape == (len(table), binner.n_bins_out)
    blocks = np.column_stack([np.asarray(M[:, b].sum(axis=1)).ravel() for b in binner.blocks_])
    assert np.all(blocks == 1)
    assert [v.n_bins for v in binner.variables_] == [4, 4, 2, 2, 3]
    assert len(binner.get_feature_names_out()) == binner.n_bins_out


def test_numeric_bins_are_ordered_intervals_matching_their_definition(table):
    binner = OrderedBinner(n_bins=4).fit(table)
    age = binner.variables_[0]
    codes = binner.codes(table)[:, 0]
    t = np.concatenate([[-np.inf], age.cuts, [np.inf]])
    values = table["age"].to_numpy()
    assert np.all((values >= t[codes]) & (values < t[codes + 1]))  # bin m is [t_m, t_{m+1})
    assert np.all(np.bincount(codes, minlength=4) > 0)  # no empty training bin


def test_quantile_bins_are_balanced_and_few_values_get_one_bin_each(table):
    binner = OrderedBinner(n_bins=4).fit(table)
    counts = np.bincount(binner.codes(table)[:, 1])
    assert counts.min() >= 0.15 * len(table)  # quartile bins of a continuous column
    stage = binner.variables_[4]
    assert stage.labels == ("< 2", "2 to < 3", ">= 3")  # one bin per value when few; end bins open


def test_labels_read_like_a_clinical_score():
    df = pd.DataFrame({"age": [30, 35, 38, 40, 41, 44, 50, 55, 59, 60, 66, 71]})
    age = OrderedBinner(n_bins=4).fit(df).variables_[0]
    np.testing.assert_array_equal(age.cuts, [40, 50, 60])
    assert age.labels == ("< 40", "40 to < 50", "50 to < 60", ">= 60")  # covers 49.5 too
    assert age.range_label(1, 3) == ">= 40"
    assert age.range_label(0, 1) == "< 50"
    assert age.range_label(0, 3) == "any value"
    x = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5]})
    v = OrderedBinner(n_bins=2).fit(x).variables_[0]
    assert v.labels == ("< 2", ">= 2")  # the shortest cut in (1.5, 2.5]: the same bins on the training rows
    v3 = OrderedBinner(n_bins=3).fit(pd.DataFrame({"x": np.linspace(0, 1, 9)})).variables_[0]
    assert " to < " in v3.labels[1]


def test_unseen_numeric_values_go_to_end_bins(table):
    binner = OrderedBinner(n_bins=4).fit(table)
    new = table.head(3).copy()
    new["age"] = [-100, 10_000, 45]
    new["hba1c"] = [1e9, -1e9, 7.0]
    codes = binner.codes(new)
    assert codes[0, 0] == 0 and codes[1, 0] == 3
    assert codes[0, 1] == 3 and codes[1, 1] == 0


def test_categorical_order_user_given_frequency_and_bool(table):
    binner = OrderedBinner().fit(table)
    assert binner.variables_[2].categories == ("no", "yes")  # frequency order
    assert binner.variables_[3].categories == (False, True)
    given = OrderedBinner(categories={"insulin": ["yes", "no"], "stage": [3, 2, 1]}).fit(table)
    assert given.variables_[2].categories == ("yes", "no")
    assert given.variables_[4].kind == "categorical"
    codes = given.codes(table)
    np.testing.assert_array_equal(codes[:, 2], (table["insulin"] == "no").astype(int))
    np.testing.assert_array_equal(codes[:, 4], 3 - table["stage"])
    ordered = pd.DataFrame({"size": pd.Categorical(["S", "L", "M", "S"], categories=["S", "M", "L"], ordered=True)})
    assert OrderedBinner().fit(ordered).variables_[0].categories == ("S", "M", "L")
    assert given.variables_[2].range_label(0, 1) == "yes, no"


def test_unseen_category_error_or_first_bin(table):
    binner = OrderedBinner().fit(table)
    new = table.head(2).copy()
    new["insulin"] = ["maybe", "yes"]
    with pytest.raises(ValueError, match="insulin.*not seen in fit"):
        binner.transform(new)
    lenient = OrderedBinner(unknown_category="first").fit(table)
    assert lenient.codes(new)[:, 2].tolist() == [0, 1]


def test_numpy_input_and_constant_column():
    X = np.column_stack([np.arange(10.0), np.zeros(10)])
    binner = OrderedBinner(n_bins=3).fit(X)
    assert list(binner.feature_names_in_) == ["x0", "x1"]
    assert binner.variables_[1].labels == ("any value",)
    assert binner.transform(X).shape == (10, 4)


@pytest.mark.parametrize("bad,match", [
    (pd.DataFrame({"a": [1.0, np.nan, 2.0]}), "'a' contains NaN"),
    (pd.DataFrame({"a": [1.0, np.inf, 2.0]}), "'a' contains inf"),
    (pd.DataFrame({"c": ["x", None, "y"]}), "'c' has 1 missing"),
    (pd.DataFrame({"a": []}), "empty"),
    (np.arange(5.0), "2-D"),
])
def test_bad_training_tables_get_clear_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        OrderedBinner().fit(bad)


def test_bad_parameters_and_transform_inputs(table):
    with pytest.raises(ValueError, match="n_bins"):
        OrderedBinner(n_bins=1).fit(table)
    with pytest.raises(ValueError, match="unknown_category"):
        OrderedBinner(unknown_category="drop").fit(table)
    with pytest.raises(ValueError, match="unknown columns"):
        OrderedBinner(categories={"nope": [1]}).fit(table)
    with pytest.raises(ValueError, match="missing from the categories"):
        OrderedBinner(categories={"insulin": ["no"]}).fit(table)
    binner = OrderedBinner().fit(table)
    with pytest.raises(ValueError, match="missing from X"):
        binner.transform(table.drop(columns=["age"]))
    bad = table.head(2).copy()
    bad["hba1c"] = [np.nan, 1.0]
    with pytest.raises(ValueError, match="hba1c"):
        binner.transform(bad)
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        OrderedBinner().transform(table)


def test_from_dict_refuses_what_to_dict_never_writes(table):
    import json

    binner = OrderedBinner(n_bins=4).fit(table)
    data = json.loads(json.dumps(binner.to_dict()))
    again = OrderedBinner.from_dict(data)
    assert (again.transform(table) != binner.transform(table)).nnz == 0
    numeric = next(k for k, v in enumerate(data["variables"]) if v["kind"] == "numeric" and len(v["cuts"]) > 1)
    categorical = next(k for k, v in enumerate(data["variables"]) if v["kind"] == "categorical")

    def mutated(k, **change):
        variables = [dict(v) for v in data["variables"]]
        variables[k].update(change)
        return {**data, "variables": variables}

    cuts = data["variables"][numeric]["cuts"]
    for bad, match in [(mutated(numeric, cuts=cuts[::-1]), r"variables\[\d+\]\.cuts must be increasing"),
                       (mutated(numeric, cuts=[None]), "finite numbers"),
                       (mutated(numeric, kind="ordinal"), "kind must be"),
                       (mutated(categorical, categories=["a", "a"]), "distinct values"),
                       (mutated(categorical, cuts=[1.0]), "not both"),
                       (mutated(max(numeric, categorical), name=data["variables"][min(numeric, categorical)]["name"]),
                        "name must be a column name of its own"),
                       ({**data, "unknown_category": "drop"}, "unknown_category"),
                       ({**data, "variables": []}, "non-empty list")]:
        with pytest.raises(ValueError, match=match):
            OrderedBinner.from_dict(bad)
