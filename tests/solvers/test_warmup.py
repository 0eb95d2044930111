"""The warm-up (solvers.warmup): one compilation at a time per installed copy (its lock file), and a fit compiles the kernels its instance needs."""
from __future__ import annotations

import fcntl

import pytest

from solvers import warmup


def test_a_held_lock_is_seen_and_no_second_compilation_starts(monkeypatch):
    started = []
    monkeypatch.setattr(warmup, "_start", lambda names: started.append(names))
    monkeypatch.setattr(warmup, "_background", [])
    assert not warmup._compiling_elsewhere()
    with open(warmup._lock_path(), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # another compiler at work on this copy
        assert warmup._compiling_elsewhere()
        warmup.compile_in_background()
        assert started == []
        fcntl.flock(handle, fcntl.LOCK_UN)
    assert not warmup._compiling_elsewhere()
    warmup.compile_in_background()
    assert started == [()]



def test_a_fit_needs_the_kernels_of_the_steps_that_take_its_instance():
    import numpy as np

    from solvers.catalog import CATALOG
    from solvers.limits import Limits

    entry, limits = CATALOG["slim"], Limits(time_limit=60)
    rng = np.random.default_rng(0)
    binary = warmup.TINY_SPECS["slim"].instance(*warmup._tiny(rng, True))
    integer = warmup.TINY_SPECS["slim"].instance(*warmup._tiny(rng, False))
    need_binary = warmup.needed_kernels(entry, warmup.steps_taking(entry, binary, limits))
    need_integer = warmup.needed_kernels(entry, warmup.steps_taking(entry, integer, limits))
    assert need_binary[0] == need_integer[0] == "solvers.heuristics.slim_search"
    assert "solvers.exact.supports" in need_binary and "solvers.exact.box_cover" not in need_binary
    assert "solvers.exact.box_cover" in need_integer and "solvers.exact.supports" not in need_integer
    with pytest.raises(ValueError, match="slim:foo"):
        warmup.compile_kernels(("slim:foo",))


def test_a_fit_compiles_the_parts_it_needs_and_a_step_the_tiny_instance_skips_through_its_twin():
    import numpy as np

    from solvers.catalog import CATALOG
    from solvers.limits import Limits

    entry, limits = CATALOG["slim"], Limits.untimed().started()
    binary = warmup.TINY_SPECS["slim"].instance(*warmup._tiny(np.random.default_rng(0), True))
    every = [step.name for step in warmup._steps_to_run(entry, binary, limits, None)]
    assert "blocked" in every and "sign_cover_lp" in every and "sign_cover_lp_long" not in every
    # the long LP does not take a tiny instance: its kernels are compiled by the LP that does
    assert [s.name for s in warmup._steps_to_run(entry, binary, limits, ("sign_cover_lp_long",))] == ["sign_cover_lp"]
    chosen = warmup._steps_to_run(entry, binary, limits, (warmup.HEURISTIC, "bayes_supports"))
    assert [step.name for step in chosen] == ["bayes_supports"]
    assert warmup._targets(("slim:binary:heuristic+sign_cover_lp",)) == [("slim", "binary", ("heuristic", "sign_cover_lp"))]
    with pytest.raises(ValueError, match="no part"):
        warmup._targets(("slim:binary:highs",))  # HiGHS runs no kernel of ours
