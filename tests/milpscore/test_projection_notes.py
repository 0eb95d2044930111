"""An unproven exact fit says when its proof would end (the projection of the step that stopped short
of it) on its card, in its model file and in ``multipliers_``; a proven fit says nothing of the kind."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from milpscore.estimators.base import NOTE_WIDTH
from milpscore.estimators.riskscore import RiskScoreClassifier
from milpscore.estimators.slim import SLIMClassifier
from milpscore.model_files.persist import model_to_dict


def _few_valued(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of ``d`` integer columns 0..10, the label from four of them and noise."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 11, (n, d)).astype(float)
    y = np.where(X[:, :4] @ np.array([1.0, -1.0, 0.5, 0.5]) - 5 + rng.normal(0, 4, n) > 0, 1, 0)
    return X, y


def test_an_orthant_screen_too_long_for_the_time_limit_projects_past_it():
    """1,200 rows of 24 columns 0..10, supports of five: the orthant screen projects far past 6 s, so it
    does not start; the fit is unproven and its card, its ``fit_.projection`` and its model file give
    that projection (the number the step's own message gives, to its three digits), past the limit."""
    X, y = _few_valued(1200, 24, 11)
    model = SLIMClassifier(c0=0.001, coef_bound=5, max_size=5, time_limit=6).fit(X, y)
    assert model.status_ == "feasible", model.fit_.message
    projection = model.fit_.projection
    assert projection is not None and projection.step == "monotone_supports", model.fit_.message
    step = {r.step: r for r in model.fit_.steps}["monotone_supports"]
    said = float(re.search(r"its screen would take about ([0-9.e+]+) s", step.message).group(1))
    assert projection.seconds == pytest.approx(said, rel=5e-3), step.message
    assert projection.finish > 6.0 and 0.0 <= projection.started < 6.0
    notes = [note.strip() for note in model.scorecard_.notes]
    first = notes.index(next(note for note in notes if note.startswith("not proven")))
    assert " ".join(notes[first:]) == projection.sentence(), notes  # (in lines of the card's width)
    assert all(len(note) <= NOTE_WIDTH for note in model.scorecard_.notes[first:])
    solver = model_to_dict(model)["solver"]
    assert solver["projected_time_limit"] == pytest.approx(projection.finish)


def test_a_proven_fit_projects_nothing():
    X, y = _few_valued(120, 4, 3)
    model = SLIMClassifier(c0=0.01, coef_bound=3, max_size=2, time_limit=60).fit(X, y)
    assert model.status_ == "optimal", model.fit_.message
    assert model.fit_.projection is None
    assert not any(note.startswith("not proven") for note in model.scorecard_.notes)
    assert model_to_dict(model)["solver"]["projected_time_limit"] is None


def test_each_multiplier_has_its_projected_seconds_column():
    """Two multipliers, each proven (or proven above the other's objective, its limit): neither projects."""
    X, y = _few_valued(150, 5, 4)
    model = RiskScoreClassifier(max_size=2, coef_bound=3, multiplier=(1.0, 2.0), time_limit=60).fit(X >= 5, y)
    table = model.multipliers_
    assert model.status_ == "optimal" and model.projection_ is None, table
    assert table["projected_seconds"].map(math.isnan).all(), table
