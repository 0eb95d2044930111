"""Solver-neutral matrix form of a (mixed-integer, conic) optimisation program.

A :class:`Program` is

.. math::

    \\min_x\\; c^\\top x + \\text{offset}
    \\quad\\text{s.t.}\\quad
    \\text{row\\_lb} \\le A x \\le \\text{row\\_ub},\\;
    \\text{col\\_lb} \\le x \\le \\text{col\\_ub},\\;
    x_j \\in \\mathbb{Z}\\ (j \\in \\text{integer}),\\;
    D_k x + e_k \\in \\mathcal{K}_k \\ (k = 1..K),

with ``A`` a scipy CSR matrix and each cone :class:`Cone` an affine image ``D x + e`` lying in
a second-order cone ``u_0 >= ||u_{1:}||_2`` or exponential cones
``{(u, v, w): v > 0, v exp(u / v) <= w}`` (cvxpy's ``ExpCone`` convention; the ECOS backend
permutes to its own order).

Programs are built with :class:`ProgramBuilder` from whole sparse matrices: one call adds a
block of variables or a block of rows, never one Python object per row or term.
"""
from __future__ import annotations

import re

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np
import scipy.sparse as sp

SOC = "soc"
EXP = "exp"
_CONE_KINDS = (SOC, EXP)


@dataclass(frozen=True)
class Cone:
    """A block of ``count`` cone constraints of one kind and dimension: ``D x + e``.

    Rows are stacked cone after cone: rows ``i*dim .. (i+1)*dim - 1`` of ``D x + e`` form cone
    ``i``. ``kind`` is ``"soc"`` (``u_0 >= ||u_1:||_2``, any ``dim >= 1``) or ``"exp"``
    (``dim == 3``, ``(u, v, w)`` with ``v exp(u / v) <= w``, ``v > 0``, cvxpy's convention).
    One block may hold thousands of per-sample cones: nothing is built per cone.
    """

    kind: str
    D: sp.csr_matrix
    e: np.ndarray
    dim: int
    name: str = ""

    @property
    def count(self) -> int:
        return self.D.shape[0] // self.dim

    def residual(self, x: np.ndarray) -> float:
        """Largest violation over the cones of the block at ``x`` (0 when inside)."""
        if self.count == 0:
            return 0.0
        u = (self.D @ x + self.e).reshape(self.count, self.dim)
        if self.kind == SOC:
            return float(max(0.0, np.max(np.linalg.norm(u[:, 1:], axis=1) - u[:, 0])))
        a, b, w = u.T
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            inside = np.where(b > 0, b * np.exp(np.minimum(a / np.where(b > 0, b, 1.0), 700.0)) - w,
                              np.maximum(a, -w))
        return float(max(0.0, np.max(np.maximum(inside, -b))))


@runtime_checkable
class LazyOracle(Protocol):
    """Rows a program has but does not write down (cutting-plane programs).

    ``cuts(x) -> (rows, lb)``: CSR rows over all variables with ``rows @ x' >= lb`` valid for every
    solution of the true problem and violated by ``x`` (zero rows when ``x`` satisfies them all);
    ``value(x)``: the true objective of ``x`` (the program's objective under-estimates it).
    An oracle may also offer ``polish(x) -> x'`` (a feasible point at least as good near ``x``).
    Example: :class:`formulations.tangent_cuts.TangentCuts`.
    """

    def cuts(self, x: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]: ...

    def value(self, x: np.ndarray) -> float: ...


@dataclass(frozen=True)
class Program:
    """Minimisation program in solver-neutral matrix form (see module docstring).

    Attributes
    ----------
    c : (n,) objective coefficients; offset : constant added to the objective.
    A : (m, n) CSR matrix of linear rows with bounds ``row_lb``, ``row_ub`` (may be +-inf).
    col_lb, col_ub : (n,) variable bounds (may be +-inf).
    integer : (n,) bool mask of integer variables.
    cones : tuple of :class:`Cone`.
    blocks : name -> slice of the variable vector (``"w"``, ``"loss"``, ...).
    row_blocks : name -> slice of the rows of ``A``.
    lazy : optional :class:`LazyOracle`: the program is then a relaxation of the true problem
        (rows still missing); backends declaring ``"LAZY"`` add the oracle's rows while solving
        and report ``lazy.value`` of their solution as its objective. :meth:`relax` keeps it.
    """

    c: np.ndarray
    offset: float
    A: sp.csr_matrix
    row_lb: np.ndarray
    row_ub: np.ndarray
    col_lb: np.ndarray
    col_ub: np.ndarray
    integer: np.ndarray
    cones: tuple[Cone, ...] = ()
    blocks: Mapping[str, slice] = field(default_factory=dict)
    row_blocks: Mapping[str, slice] = field(default_factory=dict)
    lazy: Any = None

    # ------------------------------------------------------------------ shape
    @property
    def n_variables(self) -> int:
        return self.c.shape[0]

    @property
    def n_rows(self) -> int:
        return self.A.shape[0]

    @property
    def is_mip(self) -> bool:
        """True when at least one variable is integer."""
        return bool(self.integer.any())

    @property
    def cone_kinds(self) -> set[str]:
        return {cone.kind for cone in self.cones}

    def relax(self) -> "Program":
        """Continuous relaxation: same program with the integer mask cleared (``lazy`` kept)."""
        return replace(self, integer=np.zeros_like(self.integer))

    def extended(self, columns: Mapping[str, tuple[np.ndarray, np.ndarray, bool]] | None = None,
                 rows: Mapping[str, tuple[sp.spmatrix, np.ndarray, np.ndarray]] | None = None) -> "Program":
        """This program with more variables and rows.

        ``columns``: name -> ``(lb, ub, integer)``, appended (in order) after the last variable with
        no cost and no entry in the existing rows. ``rows``: name -> ``(matrix, lb, ub)`` over the
        extended variable vector, appended after the last row. Cones are not extended (a conic
        program with new columns is refused)."""
        columns, rows = dict(columns or {}), dict(rows or {})
        if columns and self.cones:
            raise ValueError("Program.extended: new columns in a conic program are not supported")
        n = self.n_variables
        blocks, lbs, ubs, ints = dict(self.blocks), [self.col_lb], [self.col_ub], [self.integer]
        for name, (lb, ub, integer) in columns.items():
            lb = np.asarray(lb, dtype=float)
            blocks[name] = slice(n, n + lb.size)
            lbs.append(lb)
            ubs.append(np.asarray(ub, dtype=float))
            ints.append(np.full(lb.size, bool(integer)))
            n += lb.size
        A = sp.hstack([self.A, sp.csr_matrix((self.n_rows, n - self.n_variables))], format="csr")
        row_blocks, mats, row_lb, row_ub = dict(self.row_blocks), [A], [self.row_lb], [self.row_ub]
        m = self.n_rows
        for name, (matrix, lb, ub) in rows.items():
            matrix = sp.csr_matrix(matrix)
            if matrix.shape[1] != n:
                raise ValueError(f"Program.extended: rows {name!r} have {matrix.shape[1]} columns, not {n}")
            row_blocks[name] = slice(m, m + matrix.shape[0])
            mats.append(matrix)
            row_lb.append(np.broadcast_to(np.asarray(lb, dtype=float), matrix.shape[0]))
            row_ub.append(np.broadcast_to(np.asarray(ub, dtype=float), matrix.shape[0]))
            m += matrix.shape[0]
        return replace(self, c=np.concatenate([self.c, np.zeros(n - self.n_variables)]),
                       A=sp.vstack(mats, format="csr"), row_lb=np.concatenate(row_lb), row_ub=np.concatenate(row_ub),
                       col_lb=np.concatenate(lbs), col_ub=np.concatenate(ubs), integer=np.concatenate(ints),
                       blocks=blocks, row_blocks=row_blocks)

    def block(self, x: np.ndarray, name: str) -> np.ndarray:
        """The part of a solution vector belonging to the named variable block."""
        return np.asarray(x)[self.blocks[name]]

    # -------------------------------------------------------------- evaluate
    def objective(self, x: np.ndarray) -> float:
        """Objective value ``c @ x + offset``."""
        return float(self.c @ np.asarray(x, dtype=float) + self.offset)

    def violations(self, x: np.ndarray, tol: float = 1e-6) -> dict[str, float]:
        """Largest violation of each constraint family at ``x``.

        Returns a dict with keys ``rows``, ``bounds``, ``integrality``, ``cones`` (each the
        maximum absolute violation, 0.0 when satisfied) and ``feasible`` (1.0 when every
        family is within ``tol``, else 0.0).
        """
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n_variables,):
            raise ValueError(f"x has shape {x.shape}; the program has {self.n_variables} variables")
        ax = self.A @ x if self.n_rows else np.zeros(0)
        rows = _max0(np.concatenate([self.row_lb - ax, ax - self.row_ub]))
        bounds = _max0(np.concatenate([self.col_lb - x, x - self.col_ub]))
        xi = x[self.integer]
        integrality = float(np.max(np.abs(xi - np.round(xi)))) if xi.size else 0.0
        cones = max((cone.residual(x) for cone in self.cones), default=0.0)
        out = {"rows": rows, "bounds": bounds, "integrality": integrality, "cones": cones}
        out["feasible"] = float(max(out.values()) <= tol)
        return out

    def is_feasible(self, x: np.ndarray, tol: float = 1e-6) -> bool:
        return bool(self.violations(x, tol)["feasible"])

    def summary(self) -> str:
        kinds = ", ".join(f"{k}:{sum(c.count for c in self.cones if c.kind == k)}"
                          for k in sorted(self.cone_kinds))
        return (f"Program({self.n_variables} variables [{int(self.integer.sum())} integer], "
                f"{self.n_rows} rows, {self.A.nnz} nonzeros, cones[{kinds}], "
                f"blocks={list(self.blocks)}"
                + (f", lazy={self.lazy!r}" if self.lazy is not None else "") + ")")

    __repr__ = summary


def _max0(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(max(0.0, v.max())) if v.size else 0.0


class ProgramBuilder:
    """Assemble a :class:`Program` block by block from whole (sparse) matrices.

    >>> b = ProgramBuilder()
    >>> w = b.add_variables("w", 3, lb=-1, ub=1, integer=True)
    >>> t = b.add_variables("t", 3, lb=0, cost=1.0)
    >>> I = sp.identity(3)
    >>> b.add_rows("abs_pos", {"t": I, "w": -I}, lb=0)   # t >= w
    >>> b.add_rows("abs_neg", {"t": I, "w": I}, lb=0)    # t >= -w
    >>> program = b.build()
    """

    def __init__(self) -> None:
        self._n = 0
        self._blocks: dict[str, slice] = {}
        self._c: list[np.ndarray] = []
        self._lb: list[np.ndarray] = []
        self._ub: list[np.ndarray] = []
        self._int: list[np.ndarray] = []
        self._row_parts: list[tuple[str, dict[str, sp.csr_matrix], int]] = []
        self._row_lb: list[np.ndarray] = []
        self._row_ub: list[np.ndarray] = []
        self._row_blocks: dict[str, slice] = {}
        self._m = 0
        self._cones: list[tuple[str, dict[str, sp.csr_matrix], np.ndarray, str]] = []
        self.offset = 0.0

    # ------------------------------------------------------------ variables
    def add_variables(self, name: str, size: int, lb=-np.inf, ub=np.inf, *,
                      integer=False, cost=0.0) -> slice:
        """Add a named block of ``size`` variables; scalars broadcast. Returns its slice."""
        if name in self._blocks:
            raise ValueError(f"variable block {name!r} already exists")
        size = int(size)
        if size < 0:
            raise ValueError(f"size of block {name!r} must be >= 0, got {size}")
        lb = np.broadcast_to(np.asarray(lb, dtype=float), (size,)).copy()
        ub = np.broadcast_to(np.asarray(ub, dtype=float), (size,)).copy()
        if np.any(np.isnan(lb)) or np.any(np.isnan(ub)):
            raise ValueError(f"bounds of block {name!r} contain NaN")
        bad = np.flatnonzero(lb > ub)
        if bad.size:
            j = bad[0]
            raise ValueError(f"impossible bounds in block {name!r}: lb[{j}]={lb[j]} > ub[{j}]={ub[j]}")
        block = slice(self._n, self._n + size)
        self._blocks[name] = block
        self._c.append(np.broadcast_to(np.asarray(cost, dtype=float), (size,)).copy())
        self._lb.append(lb)
        self._ub.append(ub)
        self._int.append(np.broadcast_to(np.asarray(integer, dtype=bool), (size,)).copy())
        self._n += size
        return block

    def size(self, name: str) -> int:
        s = self._blocks[name]
        return s.stop - s.start

    def bounds(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the lower and upper bounds of a variable block (encoders read boxes here)."""
        i = list(self._blocks).index(name)
        return self._lb[i].copy(), self._ub[i].copy()

    # ----------------------------------------------------------------- rows
    def _coerce_terms(self, terms: Mapping[str, object], n_rows: int | None) -> tuple[dict, int]:
        out = {}
        for name, mat in terms.items():
            if name not in self._blocks:
                raise KeyError(f"unknown variable block {name!r}; known: {list(self._blocks)}")
            m = sp.csr_matrix(mat, dtype=float)
            if m.shape[1] != self.size(name):
                raise ValueError(f"matrix for block {name!r} has {m.shape[1]} columns, block has {self.size(name)}")
            if n_rows is None:
                n_rows = m.shape[0]
            elif m.shape[0] != n_rows:
                raise ValueError(f"matrix for block {name!r} has {m.shape[0]} rows, expected {n_rows}")
            out[name] = m
        if n_rows is None:
            raise ValueError("add_rows needs at least one term to know the number of rows")
        return out, n_rows

    def add_rows(self, name: str, terms: Mapping[str, object], lb=-np.inf, ub=np.inf) -> slice:
        """Add rows ``lb <= sum_b terms[b] @ x[b] <= ub``; ``terms`` maps block -> matrix."""
        if name in self._row_blocks:
            raise ValueError(f"row block {name!r} already exists")
        mats, m = self._coerce_terms(terms, None)
        lb = np.broadcast_to(np.asarray(lb, dtype=float), (m,)).copy()
        ub = np.broadcast_to(np.asarray(ub, dtype=float), (m,)).copy()
        bad = np.flatnonzero(lb > ub)
        if bad.size:
            raise ValueError(f"impossible row bounds in {name!r}: lb[{bad[0]}] > ub[{bad[0]}]")
        self._row_parts.append((name, mats, m))
        self._row_lb.append(lb)
        self._row_ub.append(ub)
        block = slice(self._m, self._m + m)
        self._row_blocks[name] = block
        self._m += m
        return block

    # ---------------------------------------------------------------- cones
    def add_cones(self, kind: str, dim: int, terms: Mapping[str, object], constant=0.0,
                  name: str = "") -> int:
        """Add a block of cones ``sum_b terms[b] @ x[b] + constant``, ``dim`` rows per cone.

        Row ``i*dim + k`` is coordinate ``k`` of cone ``i`` (see :class:`Cone`). Returns the
        number of cones added. ``kind`` is ``"soc"`` or ``"exp"`` (``dim`` must be 3).
        """
        if kind not in _CONE_KINDS:
            raise ValueError(f"cone kind must be one of {_CONE_KINDS}, got {kind!r}")
        if kind == EXP and dim != 3:
            raise ValueError(f"an exponential cone has dimension 3, got {dim}")
        mats, k = self._coerce_terms(terms, None)
        if dim < 1 or k % dim:
            raise ValueError(f"{k} cone rows are not a multiple of dim={dim}")
        e = np.broadcast_to(np.asarray(constant, dtype=float), (k,)).copy()
        self._cones.append((kind, mats, e, dim, name))
        return k // dim

    @staticmethod
    def interleave(parts: list) -> sp.csr_matrix:
        """Stack per-coordinate matrices (each ``(count, n)``) cone after cone.

        ``parts[k][i]`` becomes row ``i*len(parts) + k``: the layout :class:`Cone` expects.
        """
        parts = [sp.csr_matrix(p, dtype=float) for p in parts]
        dim, count = len(parts), parts[0].shape[0]
        order = (np.arange(dim)[None, :] * count + np.arange(count)[:, None]).reshape(-1)
        return sp.vstack(parts, format="csr")[order]

    # ---------------------------------------------------------------- build
    def _assemble(self, mats: Mapping[str, sp.csr_matrix], m: int) -> sp.csr_matrix:
        pieces = [mats[b] if b in mats else sp.csr_matrix((m, s.stop - s.start))
                  for b, s in self._blocks.items()]
        return sp.hstack(pieces, format="csr") if pieces else sp.csr_matrix((m, 0))

    def build(self) -> Program:
        """Freeze the blocks into a :class:`Program` (CSR rows, cones in insertion order)."""
        if self._row_parts:
            A = sp.vstack([self._assemble(mats, m) for _, mats, m in self._row_parts], format="csr")
        else:
            A = sp.csr_matrix((0, self._n))
        cones = tuple(Cone(kind, self._assemble(mats, e.size), e, dim, name)
                      for kind, mats, e, dim, name in self._cones)
        cat = (lambda parts, dt=float: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt))
        return Program(
            c=cat(self._c), offset=float(self.offset), A=A,
            row_lb=cat(self._row_lb), row_ub=cat(self._row_ub),
            col_lb=cat(self._lb), col_ub=cat(self._ub), integer=cat(self._int, bool),
            cones=cones, blocks=dict(self._blocks), row_blocks=dict(self._row_blocks),
        )


def _safe_name(text: str) -> str:
    """A name LP and MPS readers accept: relations spelled out, other characters to ``_``."""
    text = str(text)
    for op, word in ((">=", "_ge_"), ("<=", "_le_"), ("==", "_eq_"), ("<", "_lt_"), (">", "_gt_")):
        text = text.replace(f" {op} ", word).replace(op, word)
    return re.sub(r"[^A-Za-z0-9_.()]", "_", text)


def column_names(program: Program, labels: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """One unique name per variable: ``block(label)`` where ``labels[block]`` names the block's
    entries (e.g. ``coef(age_ge_60)``), else ``block_k``."""
    labels = labels or {}
    names = []
    for block, sl in program.blocks.items():
        given = labels.get(block)
        size = sl.stop - sl.start
        if given is not None and len(given) != size:
            raise ValueError(f"labels[{block!r}] has {len(given)} names for a block of {size} variables")
        names += [f"{block}({_safe_name(g)})" for g in given] if given is not None else [f"{block}_{k}" for k in range(size)]
    seen: dict[str, int] = {}
    for k, name in enumerate(names):  # two labels that sanitise alike stay distinct
        if name in seen:
            names[k] = f"{name}_{k}"
        seen[name] = k
    return names


def row_names(program: Program) -> list[str]:
    """``block_k`` for every row."""
    return [f"{block}_{k}" for block, sl in program.row_blocks.items() for k in range(sl.stop - sl.start)]

