"""Adapters to external solvers: a Program in, a :class:`solvers.result.Result` out.

Each backend module declares ``BACKENDS = {name: Backend(solve_function, capabilities)}``;
:mod:`solvers.registry` loads them by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from solvers.result import Result


@dataclass(frozen=True)
class Backend:
    """A solve function ``f(program, **options) -> Result`` and what it can solve."""

    solve: Callable[..., Result]
    capabilities: frozenset[str]
