"""When an unproven fit's proof would end (:func:`solvers.exact.route.projected_finish`): the earliest
end among the steps that stopped short of their proof with a projection of their own work."""
from __future__ import annotations

import math

import numpy as np
import pytest

from formulations.base import Model
from solvers.exact.route import Projection, StepRecord, projected_finish
from solvers.limits import LEAST_SHARE, phase_seconds, seconds_left_for
from solvers.multipliers import MultiplierFit, Projections, projected
from solvers.pipeline import Fit
from solvers.result import Status


def test_the_earliest_end_among_the_steps_that_projected_one():
    records = (StepRecord("floor", True, seconds=0.1),
               StepRecord("bayes_supports", True, seconds=0.5, started=1.0, share=0.2, projected=90.0),
               StepRecord("blocked", True, seconds=40.0, started=1.6, projected=300.0),
               StepRecord("support_floor", False, reason="no max_size", projected=5.0),  # (skipped: not read)
               StepRecord("highs", True, seconds=10.0, started=41.6, projected=math.nan))
    found = projected_finish(records)
    assert found == Projection("blocked", 1.6, 300.0) and found.finish == pytest.approx(301.6)
    assert projected_finish(records[:1] + records[3:]) is None
    assert projected_finish(()) is None


def test_its_sentence_names_the_step_its_seconds_and_the_time_limit():
    said = Projection("monotone_supports", 6.2, 1234.4).sentence()
    assert said == ("not proven: the monotone_supports step projected about 1,234 s for its work (started 6 s "
                    "into the fit), so a time limit of about 1,241 s or more for this fit may prove it")
    shared = Projection("bayes_supports", 1.0, 100.0, 0.2)  # (a step that takes a fifth of the time left)
    assert shared.finish == pytest.approx(501.0)
    assert "(started 1 s into the fit, and it takes 20% of the time left), so a time limit of about 501 s" in \
        shared.sentence()
    # a step with least seconds (at most half the time left): work within them needs twice them left
    least = Projection("bayes_supports", 1.0, 4.0, 0.2, 5.0)
    assert least.finish == pytest.approx(1.0 + 4.0 / LEAST_SHARE)
    assert "20% of the time left, at least 5 s or half of it), so a time limit of about 9 s" in least.sentence()
    assert Projection("bayes_supports", 1.0, 6.0, 0.2, 5.0).finish == pytest.approx(31.0)  # (past them: the share)
    for seconds in (0.5, 3.0, 4.9, 5.0, 6.0, 40.0):  # the inverse of the share rule
        left = seconds_left_for(seconds, 0.2, 5.0)
        assert phase_seconds(0.2, left, 5.0) == pytest.approx(seconds)
        assert phase_seconds(0.2, left * 0.99, 5.0) < seconds


def _multiplier(m: float, objective: float, bound: float, projected: float = math.nan) -> MultiplierFit:
    """A multiplier's fit of 3 s after a set-up of 1 s; its one step started 2 s in and, when ``projected``
    is a number, projected its work at that many seconds."""
    status = Status.OPTIMAL if bound >= objective else Status.FEASIBLE
    fit = Fit("exact", Model(np.zeros(2), 0.0), status, objective, bound, times={"total": 3.0},
              steps=(StepRecord("supports", True, seconds=1.0, started=2.0, projected=projected),))
    return MultiplierFit(m, None, fit, objective, setup_seconds=1.0)


def test_several_multipliers_sum_what_each_needs():
    """The first multiplier certified (its 4 s), the second not: it needs its projected time limit (set-up
    1 s + its step's start 2 s + 100 s)."""
    fits = [_multiplier(1.0, 0.31, 0.305), _multiplier(2.0, 0.30, 0.20, projected=100.0)]
    found = projected(fits, 1e-4)
    assert found == Projections(((2.0, 103.0),), 107.0)
    assert found.sentence() == ("not proven: the steps of the multipliers not proven projected their work "
                                "(multiplier 2 about 103 s, set-ups included), so a time limit of about 107 s "
                                "or more for this fit may prove it")
    # a multiplier not certified and without a projection: nothing can be said
    assert projected([fits[0], _multiplier(2.0, 0.30, 0.25)], 1e-4) is None
    # every multiplier certified: proven, no projection
    assert projected([fits[0], _multiplier(2.0, 0.30, 0.30)], 1e-4) is None


def test_while_the_first_multiplier_is_unproven_its_projection_is_a_floor():
    """The later multipliers search what the first's screen leaves once it ends: their own projections
    (here 5,000 s, made without it) are not counted, and the time limit is "more than" the first's."""
    fits = [_multiplier(1.0, 0.30, 0.20, projected=100.0), _multiplier(2.0, 0.31, 0.25, projected=5000.0)]
    found = projected(fits, 1e-4)
    assert found == Projections(((1.0, 103.0),), 103.0, at_least=True)
    assert found.sentence() == ("not proven: the steps of multiplier 1 projected about 103 s for its work (set-up "
                                "included), and the later multipliers take their time after it, so a time limit of "
                                "more than about 103 s for this fit may prove it")
