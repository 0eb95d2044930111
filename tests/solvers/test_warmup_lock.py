"""One compilation at a time per installed copy: the warm-up's lock file (solvers.warmup)."""
from __future__ import annotations

import fcntl

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

