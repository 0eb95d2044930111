"""The formulation contract: a frozen specification, bound to data, gives a frozen instance.

A *formulation* is a frozen dataclass of modelling choices (no data). Binding it to data gives an
*instance* that owns everything data-dependent (merged rows, big-M values, bounds) and answers:

=====================  ===================================================================
``exact()``            the integer program (:class:`~formulations.program.Program`)
``relaxed()``          its relaxation (by default ``exact().relax()``); a lower bound
``decode(x)``          the :class:`Model` of a solution vector of ``exact()`` or ``relaxed()``
                       (both start with the same ``"coef"`` / ``"intercept"`` layout); values
                       are returned as solved, never rounded
``lift(model)``        the full solution vector of ``exact()`` for a model (auxiliary
                       variables filled at their values): ``exact().objective(lift(m)) ==
                       objective(m)`` and zero ``violations`` when ``m`` is feasible
``objective(model)``   the true objective of a model, computed from the data
``round(model)``       the nearest model inside the coefficient set and the constraints
=====================  ===================================================================

Same names and argument order for every formulation; nothing acts on "the last instance built".
The pipeline (:mod:`solvers.pipeline`) relies on nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

from formulations.program import Program


@dataclass(frozen=True)
class Model:
    """A decoded model: ``score(x) = x . coef + intercept`` in the instance's feature space.

    Attributes
    ----------
    coef : (d,) coefficients in model units (points for integer formulations).
    intercept : float, model units.
    extras : formulation-specific additions (e.g. the grid unit of Facets).
    """

    coef: np.ndarray
    intercept: float
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "coef", np.asarray(self.coef, dtype=float).reshape(-1))
        object.__setattr__(self, "intercept", float(self.intercept))

    def scores(self, X: Any) -> np.ndarray:
        """``X @ coef + intercept`` (dense or sparse ``X`` with ``d`` columns)."""
        return np.asarray(X @ self.coef, dtype=float).reshape(-1) + self.intercept

    @property
    def size(self) -> int:
        """Number of non-zero coefficients."""
        return int(np.count_nonzero(self.coef))


@runtime_checkable
class Instance(Protocol):
    """A formulation bound to data (see the module docstring for the meaning of each method)."""

    spec: Any

    def exact(self) -> Program: ...

    def relaxed(self) -> Program: ...

    def decode(self, x: np.ndarray) -> Model: ...

    def lift(self, model: Model) -> np.ndarray: ...

    def objective(self, model: Model) -> float: ...

    def round(self, model: Model) -> Model: ...


@runtime_checkable
class Formulation(Protocol):
    """Modelling choices only; ``instance`` binds them to data (labels in ``{-1, +1}``)."""

    def instance(self, X: Any, y: np.ndarray, sample_weight: np.ndarray | None = None) -> Instance: ...


class CachedPrograms:
    """Mixin of frozen instances: ``exact()`` is built once by ``self._build()`` and cached in
    ``self._cache`` (a ``dict`` field with ``compare=False``); ``relaxed()`` is ``exact().relax()``.
    """

    _cache: dict

    def __getstate__(self) -> dict:
        """Pickles (fitted estimators keep their instance) without the cached programs: they are
        rebuilt on first use, and may hold closures (epigraph lifts) that do not pickle."""
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def _build(self) -> Program:
        raise NotImplementedError  # pragma: no cover - each instance builds its own program

    def exact(self) -> Program:
        """The exact program (built on first use, then cached)."""
        if "exact" not in self._cache:
            self._cache["exact"] = self._build()
        return self._cache["exact"]

    def relaxed(self) -> Program:
        """The continuous relaxation: the exact program with integrality dropped (same rows)."""
        return self.exact().relax()
