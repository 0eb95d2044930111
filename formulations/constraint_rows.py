"""The program side of operational constraints: rows, ``used`` indicators and their lift.

:func:`add_constraint_rows` writes :class:`~formulations.constraints.CompiledConstraints` into a
program whose points are block ``"coef"`` (see :mod:`formulations.constraints` for the maths of
``used`` and the exactness of ``used => points != 0``); :func:`lift_constraint_blocks` fills the
blocks it created for a given model.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import scipy.sparse as sp

from formulations.constraints import SUPPORTED_BY, CompiledConstraints
from formulations.errors import NotRepresentableError
from formulations.program import ProgramBuilder


def add_constraint_rows(builder: ProgramBuilder, compiled: CompiledConstraints, *, coef_lb: np.ndarray,
                        coef_ub: np.ndarray, integer: np.ndarray, used_block: str | None = None,
                        formulation: str = "this formulation") -> None:
    """Add ``compiled`` to a program whose points are block ``"coef"`` (bounds ``coef_lb/ub``).

    ``used_block``: the formulation's own 0/1 used indicators tied to the points by big-M rows
    (SLIM's ``size``); None creates block ``"used"`` with ``lb used <= points <= ub used`` when a
    row needs it. Features in ``compiled.nonzero`` get ``|points| >= used`` (sign binaries in block
    ``"used_sign"`` for features whose range holds both signs). Performance constraints are the
    formulation's to add; here they raise.
    """
    if compiled.performance:
        raise NotRepresentableError(
            f"{formulation} has no per-row error indicators, so it cannot bound "
            f"{compiled.performance[0].describe()}; use {SUPPORTED_BY['performance']}")
    if compiled.n_rows == 0:
        return
    d = len(compiled.names)
    if compiled.needs_used and used_block is None:
        big_lb, big_ub = np.minimum(coef_lb, 0.0), np.maximum(coef_ub, 0.0)
        if not (np.all(np.isfinite(big_lb)) and np.all(np.isfinite(big_ub))):
            raise NotRepresentableError(f"{formulation}: 'used' indicators need finite coefficient bounds")
        used_block = "used"
        builder.add_variables(used_block, d, lb=0.0, ub=1.0, integer=True)
        eye = sp.identity(d, format="csr")
        builder.add_rows("used_upper", {"coef": -eye, used_block: sp.diags(big_ub, format="csr")}, lb=0.0)
        builder.add_rows("used_lower", {"coef": eye, used_block: -sp.diags(big_lb, format="csr")}, lb=0.0)
    js = np.flatnonzero(compiled.nonzero)
    if js.size:
        if not np.all(integer[js]):
            bad = [compiled.names[j] for j in js if not integer[j]]
            raise NotRepresentableError(f"{formulation}: constraints that require a feature to be used need integer "
                                        f"points (used => |points| >= 1); {bad} are continuous")
        pos_only, neg_only = coef_lb[js] >= 0, coef_ub[js] <= 0
        pick = lambda sel: sp.csr_matrix((np.ones(sel.size), (np.arange(sel.size), sel)), shape=(sel.size, d))  # noqa: E731
        if pos_only.any():  # points >= used
            s = js[pos_only]
            builder.add_rows("used_nonzero_pos", {"coef": pick(s), used_block: -pick(s)}, lb=0.0)
        if neg_only.any():  # points <= -used
            s = js[neg_only]
            builder.add_rows("used_nonzero_neg", {"coef": -pick(s), used_block: -pick(s)}, lb=0.0)
        both = js[~pos_only & ~neg_only]
        if both.size:  # sign t: points >= used - (|lb|+1)(1 - t),  points <= -used + (ub+1) t
            lo, hi = np.abs(coef_lb[both]) + 1.0, coef_ub[both] + 1.0
            builder.add_variables("used_sign", both.size, lb=0.0, ub=1.0, integer=True)
            builder.add_rows("used_sign_pos", {"coef": pick(both), used_block: -pick(both),
                                               "used_sign": -sp.diags(lo, format="csr")}, lb=-lo)
            builder.add_rows("used_sign_neg", {"coef": -pick(both), used_block: -pick(both),
                                               "used_sign": sp.diags(hi, format="csr")}, lb=0.0)
    terms = {"coef": compiled.P, "intercept": sp.csr_matrix(compiled.c[:, None])}
    if compiled.needs_used:
        terms[used_block] = compiled.U
    builder.add_rows("operational", terms, lb=compiled.lb, ub=compiled.ub)


def lift_constraint_blocks(x: np.ndarray, blocks: Mapping[str, slice], coef: np.ndarray, compiled: CompiledConstraints,
                           coef_lb: np.ndarray, coef_ub: np.ndarray) -> None:
    """Fill, in place, the blocks :func:`add_constraint_rows` created (``used``, ``used_sign``) for ``coef``."""
    coef = np.asarray(coef, dtype=float)
    if "used" in blocks:
        x[blocks["used"]] = (coef != 0).astype(float)
    if "used_sign" in blocks:
        js = np.flatnonzero(compiled.nonzero)
        both = js[(coef_lb[js] < 0) & (coef_ub[js] > 0)]
        x[blocks["used_sign"]] = (coef[both] > 0).astype(float)
