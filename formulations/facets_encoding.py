"""Linear and conic encodings of the Facets penalties (Belahcene et al. 2020, eqs. 3, 9, 14).

Plain functions (the table of penalty encoders in :mod:`formulations.conic_encodings` names
:func:`encode_facets_penalty`; the gamma-scaled penalties of eq. 9, which may wrap any penalty,
are encoded there); each writes whole sparse blocks
into a :class:`~formulations.program.ProgramBuilder` and returns a *lift* ``w -> {block: values}``
of the auxiliary blocks it created.

One scaling everywhere: for a penalty on the grid ``mu Z`` (``Facets(lam, mu)`` or
``StronglyConvexFacets(lam, mu, eps)``) and a weight block ``w`` in model units, with
``x = w / mu`` and ``a >= |w|``:

* facets (eq. 3): ``t_j >= (k+1) a_j / mu - k(k+1)/2``, ``k < U``, cost ``scale lam (1 - eps)``
  (one row per facet per coefficient; ``U = ceil(max box / mu)``);
* SCF (eq. 14): ``scale lam eps (a / mu + SCF_SQUARE ||w||^2 / mu^2)``, the square as one rotated
  second-order cone (``square="cone"``, convex programs) or as the chords of ``x^2`` between
  consecutive grid points (``square="chords"``: linear rows, exact at every point of ``mu Z``
  and above the square in between, for integer programs solved by a MILP solver).

With ``w`` already in grid units the caller passes ``mu = 1``.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import scipy.sparse as sp

from formulations.encodings import add_abs
from formulations.errors import NotRepresentableError
from formulations.penalties.facets import (SCF_SQUARE, Facets, StronglyConvexFacets, facet_pieces,
                                           integer_square_chords, max_affine)
from formulations.program import SOC, ProgramBuilder

Lift = Callable[..., Mapping[str, np.ndarray]]


def add_max_affine(builder: ProgramBuilder, arg: str, slopes: np.ndarray, offsets: np.ndarray, *,
                   name: str, cost: float) -> slice:
    """Epigraph ``t_j >= slopes[k] * a_j - offsets[k]`` for all ``k``, ``a`` = block ``arg``.

    One row per piece per coordinate, built as one sparse block (``kron`` of the pieces with the
    identity), row block ``name + "_rows"``; ``t >= 0`` with objective ``cost * sum_j t_j``.
    Returns the slice of ``t``.
    """
    d = builder.size(arg)
    t = builder.add_variables(name, d, lb=0.0, cost=cost)
    eye = sp.identity(d, format="csr")
    ones = np.ones((len(slopes), 1))
    builder.add_rows(name + "_rows", {name: sp.kron(ones, eye, format="csr"),
                                      arg: sp.kron(-np.asarray(slopes, dtype=float)[:, None], eye, format="csr")},
                     lb=np.repeat(-np.asarray(offsets, dtype=float), d))
    return t


def add_squared_norm(builder: ProgramBuilder, block: str, *, name: str = "squared_norm",
                     cost: float = 1.0) -> slice:
    """Rotated SOC ``||x||_2^2 <= q`` of a block, written as the standard SOC of dimension d+2.

    ``||x||^2 <= q * 1``  <=>  ``||(2 x, q - 1)||_2 <= q + 1``. Adds the scalar ``q >= 0`` with
    objective ``cost * q``. Returns its slice.
    """
    d = builder.size(block)
    q = builder.add_variables(name, 1, lb=0.0, cost=cost)
    qcol = sp.csr_matrix(np.r_[1.0, 1.0, np.zeros(d)][:, None])
    xmat = sp.vstack([sp.csr_matrix((2, d)), 2.0 * sp.identity(d)], format="csr")
    builder.add_cones(SOC, d + 2, {name: qcol, block: xmat}, constant=np.r_[1.0, -1.0, np.zeros(d)], name=name)
    return q


def _box(builder: ProgramBuilder, weights: str, penalty: Any) -> np.ndarray:
    lb, ub = builder.bounds(weights)
    box = np.maximum(np.abs(lb), np.abs(ub))
    if not np.all(np.isfinite(box)):
        raise NotRepresentableError(
            f"{type(penalty).__name__} is piecewise linear with infinitely many facets: its epigraph "
            f"needs a box on block {weights!r}; add the variables with finite lb/ub (|w_j| <= U * mu), "
            "or use the proximal solver")
    return box


def encode_facets_penalty(builder: ProgramBuilder, penalty: Facets | StronglyConvexFacets, *, weights: str,
                          name: str, scale: float = 1.0, square: str = "cone") -> Lift:
    """``scale * penalty.value(w)`` for :class:`Facets` / :class:`StronglyConvexFacets` (eqs. 3, 14).

    Blocks (module docstring): ``name_abs`` (``a >= |w|``, cost ``scale lam eps / mu``),
    ``name_facets`` (cost ``scale lam (1 - eps)``) and, for SCF, ``name_square``: the scalar
    ``q >= ||w||^2`` of one rotated SOC (``square="cone"``, cost ``scale lam eps SCF_SQUARE / mu^2``)
    or one chord epigraph per coefficient on ``a / mu`` (``square="chords"``, cost
    ``scale lam eps SCF_SQUARE``; exact on ``mu Z``, above the square in between: a relaxation
    of the chords bounds nothing below, so use them only where ``w`` is on the grid).
    Returns ``lift(w)``, the auxiliary values at which the encoding equals the penalty.
    """
    if square not in ("cone", "chords"):
        raise ValueError(f"square must be 'cone' or 'chords', got {square!r}")
    eps = float(getattr(penalty, "eps", 0.0))
    mu, lam = float(penalty.mu), float(penalty.lam) * float(scale)
    U = max(int(np.ceil(_box(builder, weights, penalty).max(initial=0.0) / mu - 1e-12)), 1)
    add_abs(builder, weights, name=name + "_abs", cost=lam * eps / mu)
    slopes, offsets = facet_pieces(U)
    add_max_affine(builder, name + "_abs", slopes / mu, offsets, name=name + "_facets", cost=lam * (1 - eps))
    chords = integer_square_chords(U)
    if eps > 0:
        if square == "cone":
            add_squared_norm(builder, weights, name=name + "_square", cost=lam * eps * SCF_SQUARE / mu ** 2)
        else:
            add_max_affine(builder, name + "_abs", chords[0] / mu, chords[1], name=name + "_square",
                           cost=lam * eps * SCF_SQUARE)

    def lift(w: np.ndarray) -> dict[str, np.ndarray]:
        w = np.asarray(w, dtype=float)
        a = np.abs(w)
        out = {name + "_abs": a, name + "_facets": max_affine(a / mu, slopes, offsets)}
        if eps > 0:
            out[name + "_square"] = (np.array([w @ w]) if square == "cone" else max_affine(a / mu, *chords))
        return out

    return lift
