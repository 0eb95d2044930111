"""Operational constraints over the named parts of a linear score (Ustun & Rudin 2016, section 4).

A score card is an integer program because the card must obey rules a fitted-then-rounded model
does not: "at most one threshold of age", "points rise with age", "if insulin is used, HbA1c is
used", "at most 20% false positives". The constraints here name the parts of a model

* ``points[f]``: the coefficient of feature ``f`` (points, grid steps: the formulation's units);
* ``used[f]``: 1 when ``points[f] != 0``, else 0;
* ``intercept``;

and compile, from whole arrays, into sparse rows ``lb <= P points + U used + c intercept <= ub``
(:class:`CompiledConstraints`) that every exact formulation adds to its program with
:func:`formulations.constraint_rows.add_constraint_rows`. The relaxation keeps the rows (it is the same program with
integrality dropped).

Exactness of ``used``. The formulations tie ``used`` to the points by big-M rows
``lb_f used_f <= points_f <= ub_f used_f`` (so ``points != 0`` forces ``used = 1``). A constraint
that *requires* a feature to be used (:class:`AtLeast`, :class:`Exactly`, the consequent of
:class:`Implies`, a :class:`Linear` row with a ``used`` term) also needs ``used = 1 => points != 0``.
For integer points that is ``|points_f| >= used_f``, written with one sign binary per feature
(block ``used_sign``) unless the feature's sign is fixed; continuous points cannot express it
(``NotRepresentableError``). So ``used[f] == (points[f] != 0)`` at every feasible point, and the
independent check :meth:`CompiledConstraints.violation` evaluates the rows at
``used = points != 0``.

Performance rows (:class:`MaxFalsePositiveRate`, :class:`MinTruePositiveRate`) are rows over the
per-row error indicators of a formulation that has them (SLIM's 0-1 loss); the others raise.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from formulations.errors import NotRepresentableError

#: formulations that accept each kind of constraint (for error messages)
SUPPORTED_BY = {"rows": "slim, riskslim, facets, facets_logistic, fused",
                "performance": "slim (it has per-row 0-1 error indicators)"}


def _names(features: Any) -> tuple[str, ...]:
    items = (features,) if isinstance(features, str) else tuple(features)
    if not items or not all(isinstance(f, str) for f in items):
        raise TypeError(f"features must be one or more feature names (str), got {features!r}")
    return tuple(items)


def _group_text(features: Sequence[str]) -> str:
    """``age >= {30, 40}`` for thresholds of one variable, else the names joined by commas."""
    heads = {str(f).rpartition(" >= ")[0] for f in features}
    if len(heads) == 1 and "" not in heads and len(features) > 1:
        return f"{heads.pop()} >= {{{', '.join(str(f).rpartition(' >= ')[2] for f in features)}}}"
    return ", ".join(features)


def _count(k: Any, n: int, what: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"{what}: k must be an integer in 0..{n} (the group has {n} features), got {k!r}")
    return int(k)


@dataclass(frozen=True)
class _GroupCount:
    """``sum_{f in group} used[f]`` compared with ``k`` (the subclasses say how)."""

    features: Sequence[str]
    k: int = 1
    word: ClassVar[str] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _names(self.features))
        _count(self.k, len(self.features), type(self).__name__)

    def describe(self) -> str:
        return f"{self.word} {self.k} of {_group_text(self.features)}"


@dataclass(frozen=True)
class AtMost(_GroupCount):
    """At most ``k`` features of the group are used: ``sum_{f in group} used[f] <= k``."""

    word: ClassVar[str] = "at most"


@dataclass(frozen=True)
class AtLeast(_GroupCount):
    """At least ``k`` features of the group are used (``sum used >= k``; used means non-zero points)."""

    word: ClassVar[str] = "at least"


@dataclass(frozen=True)
class Exactly(_GroupCount):
    """Exactly ``k`` features of the group are used."""

    word: ClassVar[str] = "exactly"


@dataclass(frozen=True)
class Implies:
    """If ``feature`` is used, ``then`` is used too: ``used[feature] <= used[then]``."""

    feature: str
    then: str

    def describe(self) -> str:
        return f"{self.feature} used => {self.then} used"


@dataclass(frozen=True)
class Monotone:
    """Points that never decrease (``direction="increasing"``) or never increase along an order.

    ``kind="thresholds"``: the features are nested indicators ``x >= t_1``, ``x >= t_2``, ... of one
    variable (``t`` increasing); the card's cumulative effect at level ``k`` is
    ``sum_{j <= k} points[j]``, which is monotone exactly when every ``points[j]`` has the sign of
    the direction. ``kind="levels"``: the features are ordered one-hot bins; adjacent points satisfy
    ``points[k+1] - points[k] >= 0`` (increasing) or ``<= 0``.
    """

    features: Sequence[str]
    direction: str = "increasing"
    kind: str = "thresholds"

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _names(self.features))
        if self.direction not in ("increasing", "decreasing"):
            raise ValueError(f"Monotone direction must be 'increasing' or 'decreasing', got {self.direction!r}")
        if self.kind not in ("thresholds", "levels"):
            raise ValueError(f"Monotone kind must be 'thresholds' or 'levels', got {self.kind!r}")

    def describe(self) -> str:
        return f"points {self.direction} along {_group_text(self.features)}"


@dataclass(frozen=True)
class Linear:
    """Any row ``lb <= sum_f a_f points[f] + sum_f b_f used[f] + c intercept <= ub``, by name."""

    points: Mapping[str, float] = field(default_factory=dict)
    used: Mapping[str, float] = field(default_factory=dict)
    intercept: float = 0.0
    lb: float = -np.inf
    ub: float = np.inf
    label: str = ""

    def __post_init__(self) -> None:
        if not self.points and not self.used and self.intercept == 0:
            raise ValueError("Linear row has no terms; give points={...}, used={...} or intercept=")
        if not self.lb <= self.ub or np.isnan(self.lb) or np.isnan(self.ub):
            raise ValueError(f"Linear row {self.label!r}: impossible bounds lb={self.lb} > ub={self.ub}")
        for part in (self.points, self.used):
            if not all(np.isfinite(v) for v in part.values()):
                raise ValueError(f"Linear row {self.label!r}: coefficients must be finite")

    def describe(self) -> str:
        terms = [f"{v:+g} points[{f}]" for f, v in self.points.items()]
        terms += [f"{v:+g} used[{f}]" for f, v in self.used.items()]
        terms += [f"{self.intercept:+g} intercept"] if self.intercept else []
        text = " ".join(terms)
        return self.label or f"{self.lb:g} <= {text} <= {self.ub:g}"


@dataclass(frozen=True)
class _Rate:
    """A bound on a (sample-weighted) rate of the training rows (the subclasses say which)."""

    rate: float
    text: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not 0 <= self.rate <= 1:
            raise ValueError(f"{type(self).__name__}: rate must lie in [0, 1], got {self.rate!r}")

    def describe(self) -> str:
        return f"{self.text} {self.rate:g}"


@dataclass(frozen=True)
class MaxFalsePositiveRate(_Rate):
    """At most ``rate`` of the (sample-weighted) negative rows are scored positive."""

    text: ClassVar[str] = "false-positive rate <="


@dataclass(frozen=True)
class MinTruePositiveRate(_Rate):
    """At least ``rate`` of the (sample-weighted) positive rows are scored positive (sensitivity)."""

    text: ClassVar[str] = "sensitivity >="


PERFORMANCE = (MaxFalsePositiveRate, MinTruePositiveRate)
CONSTRAINTS = (AtMost, AtLeast, Exactly, Implies, Monotone, Linear) + PERFORMANCE


def excludes(a: str, b: str) -> AtMost:
    """Not both ``a`` and ``b``: ``used[a] + used[b] <= 1``."""
    return AtMost((a, b), 1)


def one_per_group(groups: Mapping[str, Sequence[str]]) -> tuple[AtMost, ...]:
    """At most one indicator of each variable (``groups``: variable -> its indicator columns, e.g.
    :attr:`milpscore.data.binarize.ThresholdBinarizer.groups_`)."""
    return tuple(AtMost(tuple(cols), 1) for cols in groups.values() if len(cols) > 1)


def check_constraints(constraints: Iterable[Any]) -> tuple:
    """A tuple of constraints of the kinds above (clear error otherwise)."""
    items = tuple(constraints or ())
    for c in items:
        if not isinstance(c, CONSTRAINTS):
            raise TypeError(f"{c!r} is not a constraint; use AtMost, AtLeast, Exactly, Implies, Monotone, Linear, "
                            "MaxFalsePositiveRate or MinTruePositiveRate from formulations.constraints")
    return items


@dataclass(frozen=True)
class CompiledConstraints:
    """Rows ``lb <= P points + U used + c intercept <= ub`` over ``d`` named features.

    ``nonzero``: features whose ``used`` must imply non-zero points (see module docstring);
    ``performance``: the performance constraints, for formulations with per-row errors.
    """

    names: tuple[str, ...]
    P: sp.csr_matrix
    U: sp.csr_matrix
    c: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    labels: tuple[str, ...]
    nonzero: np.ndarray
    performance: tuple = ()

    @property
    def n_rows(self) -> int:
        return int(self.lb.size)

    @property
    def empty(self) -> bool:
        """No rows and no performance constraints: every model obeys them."""
        return self.n_rows == 0 and not self.performance

    @property
    def needs_used(self) -> bool:
        return bool(self.U.nnz)

    def row_values(self, coef: np.ndarray, intercept: float) -> np.ndarray:
        coef = np.asarray(coef, dtype=float)
        return self.P @ coef + self.U @ (coef != 0).astype(float) + self.c * float(intercept)

    def violation(self, coef: np.ndarray, intercept: float) -> float:
        """Largest violation of the rows at ``used = (points != 0)`` (0 when all hold)."""
        if self.n_rows == 0:
            return 0.0
        v = self.row_values(coef, intercept)
        return float(max(np.max(self.lb - v, initial=0.0), np.max(v - self.ub, initial=0.0)))


def binding(constraints: "CompiledConstraints | None") -> bool:
    """Whether an instance's compiled operational constraints restrict its models at all (rows or
    performance constraints): the one test every step and heuristic asks before it searches
    without them."""
    return constraints is not None and not constraints.empty


def compile_constraints(constraints: Iterable[Any], names: Sequence[str]) -> CompiledConstraints:
    """Rows of ``constraints`` over the features ``names`` (unknown names are an error naming them)."""
    names = tuple(str(n) for n in names)
    index = {n: j for j, n in enumerate(names)}
    d = len(names)
    P_rows, U_rows, c, lb, ub, labels = [], [], [], [], [], []
    nonzero = np.zeros(d, bool)
    performance = []

    def cols(features: Sequence[str], where: str) -> np.ndarray:
        unknown = [f for f in features if f not in index]
        if unknown:
            raise ValueError(f"{where} names unknown features {unknown}; the model's features are "
                             f"{list(names)[:30]}{' ...' if d > 30 else ''}")
        return np.array([index[f] for f in features], dtype=int)

    def row(p: dict | None = None, u: dict | None = None, icpt: float = 0.0, lo=-np.inf, hi=np.inf, label=""):
        P_rows.append(p or {})
        U_rows.append(u or {})
        c.append(icpt)
        lb.append(lo)
        ub.append(hi)
        labels.append(label)

    for con in check_constraints(constraints):
        text = con.describe()
        if isinstance(con, PERFORMANCE):
            performance.append(con)
        elif isinstance(con, (AtMost, AtLeast, Exactly)):
            js = cols(con.features, type(con).__name__)
            if np.unique(js).size != js.size:
                raise ValueError(f"{type(con).__name__} lists a feature twice: {list(con.features)}")
            lo = con.k if isinstance(con, (AtLeast, Exactly)) else -np.inf
            hi = con.k if isinstance(con, (AtMost, Exactly)) else np.inf
            if np.isfinite(lo):
                nonzero[js] = True
            row(u={int(j): 1.0 for j in js}, lo=lo, hi=hi, label=text)
        elif isinstance(con, Implies):
            a, b = cols((con.feature, con.then), "Implies")
            nonzero[b] = True
            row(u={int(a): 1.0, int(b): -1.0}, hi=0.0, label=text)
        elif isinstance(con, Monotone):
            js = cols(con.features, "Monotone")
            sign = 1.0 if con.direction == "increasing" else -1.0
            if con.kind == "thresholds":
                for j in js:
                    row(p={int(j): sign}, lo=0.0, label=f"{text} ({names[j]})")
            else:
                for a, b in zip(js[:-1], js[1:]):
                    row(p={int(b): sign, int(a): -sign}, lo=0.0, label=f"{text} ({names[a]} -> {names[b]})")
        else:  # Linear
            pj = dict(zip(cols(list(con.points), "Linear points").tolist(), map(float, con.points.values())))
            uj = dict(zip(cols(list(con.used), "Linear used").tolist(), map(float, con.used.values())))
            nonzero[list(uj)] = True
            row(p=pj, u=uj, icpt=float(con.intercept), lo=con.lb, hi=con.ub, label=text)

    def matrix(entries: list[dict]) -> sp.csr_matrix:
        r = np.repeat(np.arange(len(entries)), [len(e) for e in entries])
        k = np.array([j for e in entries for j in e], dtype=int)
        v = np.array([x for e in entries for x in e.values()], dtype=float)
        return sp.csr_matrix((v, (r, k)), shape=(len(entries), d))

    return CompiledConstraints(names, matrix(P_rows), matrix(U_rows), np.asarray(c, float), np.asarray(lb, float),
                               np.asarray(ub, float), tuple(labels), nonzero, tuple(performance))


def threshold_groups(names: Sequence[str]) -> dict[str, list[str]]:
    """Indicator columns named ``"<variable> >= <threshold>"`` (the names
    :class:`milpscore.data.binarize.ThresholdBinarizer` writes), grouped by variable in threshold order."""
    groups: dict[str, list[tuple[float, str]]] = {}
    for name in names:
        variable, sep, value = str(name).rpartition(" >= ")
        if not sep:
            continue
        try:
            groups.setdefault(variable, []).append((float(value), str(name)))
        except ValueError:
            continue
    return {v: [n for _, n in sorted(items)] for v, items in groups.items()}


def operational_constraints(constraints: Iterable[Any] | None, names: Sequence[str],
                            one_threshold_per_variable: bool = False) -> tuple:
    """The user's constraints plus, when asked, at most one ``x >= t`` indicator per variable
    (groups read from the column names, :func:`threshold_groups`)."""
    items = check_constraints(constraints or ())
    if one_threshold_per_variable:
        groups = threshold_groups(names)
        if not groups:
            raise ValueError("one_threshold_per_variable=True needs indicator columns named '<variable> >= <t>' "
                             "(milpscore.data.binarize.ThresholdBinarizer writes them); none of the columns is")
        items += one_per_group(groups)
    return items


def fold_level_monotone(constraints: Iterable[Any], names: Sequence[str],
                        directions: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Per-variable directions (+1 / -1 / 0) with every ``Monotone(kind="levels")`` over whole
    variables folded in, and the other constraints (for tables whose variables own ordered bins)."""
    directions = np.array(directions, dtype=int)
    rest = []
    for con in check_constraints(constraints):
        if not isinstance(con, Monotone):
            rest.append(con)
            continue
        if con.kind != "levels":
            raise NotRepresentableError("the bins of a points table are ordered levels: use Monotone(..., "
                                        "kind='levels') (kind='thresholds' is for x >= t indicators)")
        unknown = [f for f in con.features if f not in names]
        if unknown:
            raise ValueError(f"Monotone names unknown variables {unknown}; the variables are {list(names)}")
        sign = 1 if con.direction == "increasing" else -1
        for f in con.features:
            j = list(names).index(f)
            if directions[j] not in (0, sign):
                raise ValueError(f"variable {f!r} is asked to be both increasing and decreasing")
            directions[j] = sign
    return directions, tuple(rest)

