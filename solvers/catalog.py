"""The formulation catalog: one explicit line per formulation, nothing registered by import.

An :class:`Entry` names a formulation (a frozen spec class of :mod:`formulations`), the default
backends of its exact and relaxed programs, its heuristic (a start for the exact solve) and its
extra methods (local search, randomized rounding, proximal path + rounding). Everything is
named by ``"module:attribute"`` and imported on first use, so reading the catalog costs nothing
and a formulation cannot hide an import cycle.

The pipeline (:mod:`solvers.pipeline`), the estimators and ``compare`` read this table only;
adding a formulation is one builder module in :mod:`formulations` plus one line here.

Signatures: ``heuristic(instance, limits, seed) -> Model | None``;
``method(instance, source_fit, limits, seed) -> (Model | None, message)``, with ``limits`` the
phase's started budget (:class:`solvers.limits.Limits`).
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
    #: the route table of the exact engine (``"module:ROUTE"``, :mod:`solvers.exact.route`), run
    #: when no backend is named; ``exact_backend`` is then what a caller names to bypass it
    exact_route: str | None = None
    heuristic: str | None = None
    #: modules whose numba kernels the heuristic runs (:mod:`solvers.compiled`)
    heuristic_kernels: tuple[str, ...] = ()
    method_paths: Mapping[str, str] = field(default_factory=dict)
    #: ``"module:function"`` of ``hook(instance, program) -> program`` that gives the exact
    #: program's lazy oracle the formulation's polishing (a heuristic of :mod:`solvers.heuristics`)
    polisher: str | None = None
    #: spec keyword arguments used when a caller builds the spec by this entry's name; several
    #: entries may share one spec class (e.g. "facets" / "facets_logistic") and differ here
    defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def spec_class(self) -> type:
        return _resolve(self.spec)

    @property
    def route(self) -> tuple | None:
        return _resolve(self.exact_route) if self.exact_route else None

    @property
    def kernels(self) -> tuple[str, ...]:
        """Every module whose numba kernels an exact fit of this formulation may run: the
        heuristic's and those named by the route's steps, in order, each once."""
        named = list(self.heuristic_kernels) + [m for step in (self.route or ()) for m in step.kernels]
        return tuple(dict.fromkeys(named))

    def exact_program(self, instance: Any) -> Any:
        """The exact program of ``instance``, its lazy oracle given the entry's polisher (if any)."""
        program = instance.exact()
        return _resolve(self.polisher)(instance, program) if self.polisher else program

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
    Entry("slim", "formulations.slim:SLIM", "SLIM MILP: 0-1 loss by big-M, L0 + tie-breaking L1 (Ustun & Rudin 2016); "
          "exact route: Bayes-error floor, support enumeration (0/1 features), sign-cover LP bound, box search "
          "(few features of many values), HiGHS on the MILP strengthened with the LP's cuts",
          exact_backend="highs", exact_route="solvers.exact.slim_route:ROUTE",
          heuristic="solvers.heuristics.slim:heuristic",
          heuristic_kernels=("solvers.heuristics.slim_search", "solvers.exact.bayes_error")),
    Entry("convex_rounding", "formulations.rounding:ConvexRounding",
          "ternary / binary weights, hinge loss over [0,1]^d, randomized rounding and local search "
          "(Chevaleyre, Koriche & Zucker 2013)", exact_backend="highs", relaxed_backend="highs",
          heuristic="solvers.heuristics.local_search:heuristic",
          method_paths={"randomized_rounding": "solvers.heuristics.rounding:randomized_rounding_method",
                        "local_search": "solvers.heuristics.local_search:local_search_method"}),
    Entry("facets", "formulations.facets:Facets", "Facets-penalised hinge loss on the grid coef / grid_unit integer "
          "(Belahcene et al. 2020): MILP, LP relaxation", exact_backend="highs", relaxed_backend="ecos",
          heuristic="solvers.heuristics.facets:heuristic", method_paths={"prox_rounding": "solvers.heuristics.facets:prox_rounding",
          "golovin_rounding": "solvers.heuristics.golovin_rounding:golovin_rounding"},
          defaults={"loss": "hinge", "lam": 0.01, "grid_unit": 0.1}),
    Entry("facets_logistic", "formulations.facets:Facets", "Facets-penalised logistic loss (Belahcene et al. "
          "2020): exact by tangent cutting planes, exp-cone relaxation, FISTA + rounding", exact_backend="highs",
          relaxed_backend="ecos", heuristic="solvers.heuristics.facets:heuristic",
          method_paths={"prox_rounding": "solvers.heuristics.facets:prox_rounding",
                        "golovin_rounding": "solvers.heuristics.golovin_rounding:golovin_rounding"},
          defaults={"loss": "logistic", "lam": 0.01, "grid_unit": 0.1}),
    Entry("riskslim", "formulations.riskslim:RiskSLIM", "certified logistic risk score (Ustun & Rudin 2019): exact "
          "route: support enumeration with convex bounds, a sparse tangent floor, then SCIP's lazy-cut tree",
          exact_backend="scip", exact_route="solvers.exact.riskslim_route:ROUTE", relaxed_backend="highs",
          heuristic="solvers.heuristics.riskslim:heuristic", polisher="solvers.heuristics.polish:with_polisher",
          heuristic_kernels=("solvers.exact.box_logistic",)),
    Entry("fused", "formulations.fused:FusedLassoHinge", "integer points per ordered one-hot bin: hinge loss + "
          "within-variable fused lasso (Sokolovska, eqs. 1-5); LP relaxation or binarsity proximal path",
          exact_backend="highs", relaxed_backend="highs", heuristic="solvers.heuristics.fused:heuristic"),
    Entry("eye", "formulations.eye:EYEPenalized", "EYE-penalised logistic regression: credible sparse models that "
          "prefer known factors (Wang et al. 2018, eq. 2); conic program by ECOS, proximal path",
          exact_backend=None, relaxed_backend="ecos"),
    Entry("penalized", "formulations.penalized:PenalizedProgram", "logistic / hinge / least-squares loss + any "
          "conic-encodable penalty (L1, elastic net, OWL, EYE, Facets; EYE paper Table 2): conic program by ECOS, "
          "proximal path; with an integer coefficient set and the hinge, a MILP for backend 'highs'",
          exact_backend=None, relaxed_backend="ecos"),
)}


def entry_for(spec: Any) -> Entry:
    """The catalog entry of a formulation spec (by its class; among entries of one class, the first
    of those whose ``defaults`` agree with most of the spec's fields)."""
    key = f"{type(spec).__module__}:{type(spec).__qualname__}"
    matches = [entry for entry in CATALOG.values() if entry.spec == key]
    if matches:
        agree = [sum(getattr(spec, name, object()) == value for name, value in entry.defaults.items())
                 for entry in matches]
        return matches[agree.index(max(agree))]
    raise KeyError(f"{type(spec).__name__} is not in solvers.catalog.CATALOG; add one Entry line for it")


def get_entry(name: str) -> Entry:
    """The entry called ``name``, or a ``ValueError`` listing the known names."""
    if name not in CATALOG:
        raise ValueError(f"unknown formulation {name!r}; choose one of {sorted(CATALOG)}")
    return CATALOG[name]
