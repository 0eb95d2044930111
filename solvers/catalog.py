"""The formulation catalog: one explicit line per formulation, nothing registered by import.

An :class:`Entry` names a formulation (a frozen spec class of :mod:`formulations`), the default
backends of its exact and relaxed programs, its heuristic (a start for the exact solve) and its
extra methods (local search, randomized rounding, proximal path + rounding). Everything is
named by ``"module:attribute"`` and imported on first use, so reading the catalog costs nothing
and a formulation cannot hide an import cycle.

The pipeline (:mod:`solvers.pipeline`), the estimators and ``compare`` read this table only;
adding a formulation is one builder module in :mod:`formulations` plus one line here.

Signatures: ``heuristic(instance, clock, seed) -> Model | None``;
``method(instance, source_fit, clock, seed) -> (Model | None, message)``.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Entry:
    """One formulation of the catalog (see the module docstring)."""

    name: str
    spec: str
    description: str
    exact_backend: str | None = "highs"
    relaxed_backend: str = "highs"
    heuristic: str | None = None
    method_paths: Mapping[str, str] = field(default_factory=dict)

    @property
    def spec_class(self) -> type:
        return _resolve(self.spec)

    @property
    def heuristic_function(self) -> Callable | None:
        return _resolve(self.heuristic) if self.heuristic else None

    @property
    def methods(self) -> dict[str, Callable]:
        return {name: _resolve(path) for name, path in self.method_paths.items()}

    @property
    def method_names(self) -> tuple[str, ...]:
        """Every method ``compare`` can run for this formulation, in table order."""
        names = (["exact"] if self.exact_backend else []) + ["relaxed", "rounding"]
        names += ["heuristic"] if self.heuristic else []
        return tuple(names + list(self.method_paths))


@cache
def _resolve(path: str) -> Any:
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


CATALOG: dict[str, Entry] = {entry.name: entry for entry in (
    Entry("slim", "formulations.slim:SLIM", "SLIM MILP: 0-1 loss by big-M, L0 + tie-breaking L1 (Ustun & Rudin 2016)",
          heuristic="solvers.slim:heuristic"),
)}


def entry_for(spec: Any) -> Entry:
    """The catalog entry of a formulation spec (by its class)."""
    key = f"{type(spec).__module__}:{type(spec).__qualname__}"
    for entry in CATALOG.values():
        if entry.spec == key:
            return entry
    raise KeyError(f"{type(spec).__name__} is not in solvers.catalog.CATALOG; add one Entry line for it")


def get_entry(name: str) -> Entry:
    """The entry called ``name``, or a ``ValueError`` listing the known names."""
    if name not in CATALOG:
        raise ValueError(f"unknown formulation {name!r}; choose one of {sorted(CATALOG)}")
    return CATALOG[name]
