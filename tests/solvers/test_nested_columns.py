"""Chains of nested 0/1 columns (solvers.exact.nested_columns) against the definition and the binariser.

On a table binarised by ThresholdBinarizer the chains are exactly the variables' threshold columns
(most ones first); on random tables every chain found is nested column by column, the chains are
disjoint, and no column outside them is nested with the last column of a chain in the wrong place.
"""
import numpy as np
import pandas as pd
import pytest

from milpscore.data.binarize import ThresholdBinarizer
from solvers.exact.nested_columns import nested_chains


def test_a_binarised_table_gives_one_chain_per_variable():
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"a": rng.normal(size=500), "b": rng.exponential(size=500), "c": rng.integers(0, 2, 500)})
    X = ThresholdBinarizer(max_cuts=4).fit_transform(raw).to_numpy(float)
    names = list(ThresholdBinarizer(max_cuts=4).fit(raw).get_feature_names_out())
    X = np.column_stack([X, (rng.random(500) < 0.5)])  # an unrelated column: in no chain
    chains = nested_chains(X, np.arange(X.shape[1]))
    by_variable = {}
    for j, name in enumerate(names):
        by_variable.setdefault(name.split(">=")[0].split(" ")[0], []).append(j)
    expected = sorted(sorted(v, key=lambda j: -X[:, j].sum()) for v in by_variable.values() if len(v) >= 2)
    assert sorted(c.tolist() for c in chains) == expected


@pytest.mark.parametrize("seed", range(6))
def test_every_chain_is_nested_and_the_chains_are_disjoint(seed):
    rng = np.random.default_rng(seed)
    n, d = 60, 12
    base = rng.random(n)
    X = np.column_stack([base >= t for t in rng.random(d // 2)] + [rng.random((n, d - d // 2)) < 0.5]).astype(float)
    X[:, 0] = X[:, 1] if seed % 2 else X[:, 0]  # equal columns: one chain
    columns = rng.permutation(d)[: d - 2]
    chains = nested_chains(X, columns)
    seen = np.concatenate(chains) if chains else np.zeros(0, int)
    assert np.unique(seen).size == seen.size and set(seen.tolist()) <= set(columns.tolist())
    for chain in chains:
        assert chain.size >= 2
        for k in range(1, chain.size):
            assert np.all(X[:, chain[k]] <= X[:, chain[k - 1]])  # each contained in the one before
    thresholds = [j for j in columns if j < d // 2]  # the nested ones among the columns given
    if len(thresholds) >= 2:
        assert any(set(thresholds) <= set(c.tolist()) for c in chains)
