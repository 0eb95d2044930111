"""The same fit twice gives the same model (issue 26): in one process and in two, with
``time_limit=None`` and a node limit; ties between models of equal objective are broken by
:func:`solvers.exact.route.preferred` (fewer non-zeros, smaller sum |points|, lexicographic)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from formulations.base import Model
from solvers.exact.route import preferred

SCRIPT = """
import json, numpy as np
from milpscore import SLIMClassifier
from milpscore.estimators import ConvexRoundingClassifier, RiskScoreClassifier
rng = np.random.default_rng(3)
X = (rng.random((300, 12)) < 0.4).astype(float)
y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.8, 300) > 0.6, 1, 0)
out = []
for make in (lambda: SLIMClassifier(c0=0.01, max_size=4, time_limit=None, node_limit=2000),
             lambda: RiskScoreClassifier(c0=1e-3, max_size=3, time_limit=None, node_limit=2000),
             lambda: ConvexRoundingClassifier(rounding="exact", time_limit=None, random_state=0)):
    for _ in range(2):
        m = make().fit(X, y)
        out.append([m.coef_.tolist(), float(m.intercept_)])
print(json.dumps(out))
"""


def _run() -> list:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_same_model_twice_in_one_process_and_in_two():
    first, second = _run(), _run()
    assert first == second  # two processes
    for a, b in zip(first[::2], first[1::2]):
        assert a == b  # one process, first call and a later one


def test_ties_are_broken_by_the_stated_rule_whatever_the_order():
    sparse, dense = Model(np.array([0.0, 2.0]), 1.0), Model(np.array([1.0, 1.0]), 1.0)
    assert preferred(sparse, 0.5, dense, 0.5) and not preferred(dense, 0.5, sparse, 0.5)
    assert preferred(dense, 0.4, sparse, 0.5)  # a lower objective always wins
    low, high = Model(np.array([-1.0, 0.0]), 0.0), Model(np.array([1.0, 0.0]), 0.0)
    assert preferred(low, 0.5, high, 0.5 + 1e-15) and not preferred(high, 0.5, low, 0.5)
