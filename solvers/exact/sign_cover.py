"""A lower bound on SLIM from sign-cover cuts, by row generation (LP, HiGHS).

Take a positive row ``p`` and a negative row ``q`` of a SLIM program (:mod:`formulations.slim`;
``y_i (lambda . x_i + lambda_0) >= margin`` is "row i correct"). Both correct means
``lambda . x_p + lambda_0 >= margin`` and ``lambda . x_q + lambda_0 <= -margin``, so

.. math::

    \\sum_j \\lambda_j (x_{pj} - x_{qj}) \\ge 2\\,\\mathrm{margin} > 0,

which needs a point of the right sign where the rows differ: some ``j`` with ``x_pj > x_qj`` and
``lambda_j > 0``, or ``x_pj < x_qj`` and ``lambda_j < 0``. With ``z`` the rows' error indicators and
``s^+_j = [lambda_j > 0]``, ``s^-_j = [lambda_j < 0]`` (so the L0 indicator is ``s^+_j + s^-_j``),
every model satisfies the *sign-cover cut*

.. math::

    z_p + z_q + \\sum_{j: x_{pj} > x_{qj}} s^+_j + \\sum_{j: x_{pj} < x_{qj}} s^-_j \\ \\ge\\ 1 .

Rows with equal ``x`` and opposite labels give ``z_p + z_q >= 1``; with sign-constrained points
the cuts hold the dominance rows of :func:`formulations.slim.conflicting_rows`. A bounded intercept
gives the one-row form: a positive row with ``margin - hi(lambda_0) > 0`` needs some
``lambda_j x_pj > 0`` (``z_p + sum_{x_pj > 0} s^+_j + sum_{x_pj < 0} s^-_j >= 1``), and the mirror
for a negative row when ``lo(lambda_0) > -margin``. The cuts say what a *monotone* classifier must
get wrong for the given signs (a linear score is monotone in each feature, in the direction of
its point's sign), so

.. math::

    \\min\\; \\sum_i w_i z_i + \\sum_j c_{0,j} (s^+_j + s^-_j) \\quad\\text{s.t. the cuts},\\
    s^+_j + s^-_j \\le 1,\\ \\textstyle\\sum_j (s^+_j + s^-_j) \\le K,\\ 0 \\le z, s \\le 1

is a relaxation of SLIM, and so is the same with the L1 tie-breaker's least price of each sign
added to ``c_{0,j}`` (``epsilon_j`` times the least magnitude of a non-zero point of that sign in
the box: 1 for integer points, their bound if the box excludes 0), and its LP value is a lower
bound, valid for the LP over *any* subset of the cuts. The LP starts from the one-row cuts and,
each round, adds for every row the pair it violates most (a numba pass over all ``|P| |N|``
pairs, ``O(d)`` each; on 0/1 rows matrix products) and solves the LP again (from the last basis,
or afresh by the interior point method when the new cuts are many: :data:`IPM_ADDED_SHARE`),
until no pair is violated by more than :data:`VIOLATION` or the clock runs out; each round's LP
value is a valid bound.

The bound sees signs only, not the linear form: where the best cards need several points of
different sizes it stays low, and the box search (:mod:`solvers.exact.box_cover`), whose pair
conflicts are these cuts with the signs refined into ranges of points, takes over. The cuts binding
at the last LP also strengthen the MILP HiGHS solves (:meth:`SignCover.strengthen`). Which of these
steps runs on which instance is decided by the SLIM route table (:mod:`solvers.exact.slim_route`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp
from numba import njit

from formulations.program import Program
from formulations.rows import is_binary
from solvers import progress
from solvers.backends.highs_model import new_highs, set_limits
from solvers.exact.zero_one_supports import ZeroOneProgram
from solvers.limits import Limits

#: a pair is a cut when its left side is below 1 by more than this
VIOLATION = 1e-6
#: rounds of row generation at most
MAX_ROUNDS = 200
#: a round whose new cuts are at least this share of the LP's rows is solved by HiGHS's interior point
#: method (with crossover), the others by the dual simplex from the last basis: after a large addition
#: the warm start is worth little, and on wide 0/1 tables the interior point is several times faster
IPM_ADDED_SHARE = 0.3


def _sign_bounds(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bounds of ``s+`` and ``s-`` for points in ``[lo, hi]``: a sign the box excludes is fixed at 0,
    one it forces (0 outside the box) at 1. Returns ``(s+ lower, s+ upper, s- lower, s- upper)``."""
    return (lo > 0).astype(float), (hi > 0).astype(float), (hi < 0).astype(float), (lo < 0).astype(float)


@dataclass(frozen=True)
class SignCoverProblem:
    """What the cuts need of a SLIM program (:mod:`formulations.slim`): rows ``X`` (unsigned, one per
    ``loss`` column), labels ``y``, row weights, the least objective a positive / negative point of
    each feature pays beyond the forced L0 costs (its L0 cost unless forced, plus the L1
    tie-breaker at the smallest such point), the points' box, the most features, the margin, the
    intercept's box, and the offset with the forced features' L0 costs (a forced feature pays its
    cost even at a zero point). Operational rows are ignored: the bound is
    then that of a relaxation, still valid."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    cost_pos: np.ndarray
    cost_neg: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    max_size: int
    margin: float
    intercept_lo: float
    intercept_hi: float
    offset: float

    @classmethod
    def from_zero_one(cls, problem: ZeroOneProgram) -> "SignCoverProblem":
        """The cuts' view of a plain SLIM problem (:class:`ZeroOneProgram`)."""
        step = problem.integer.astype(float)  # least non-zero magnitude: 1 if integer, else 0
        least_pos, least_neg = np.maximum(problem.lo, step), np.maximum(-problem.hi, step)
        cost = np.where(problem.forced, 0.0, problem.cost)
        return cls(problem.X, problem.y, problem.weights, cost + problem.epsilon * least_pos,
                   cost + problem.epsilon * least_neg, problem.lo, problem.hi, problem.max_size, problem.margin,
                   problem.intercept_lo, problem.intercept_hi, problem.offset + float(problem.cost @ problem.forced))


@dataclass(frozen=True)
class SignCover:
    """The LP's bound (objective units, offset included; ``-inf`` if no LP was solved), the cuts
    binding at its last LP as rows over ``[z, s+, s-]``, the rounds, and whether the last LP
    violated no pair (then ``bound`` is the relaxation's optimum)."""

    bound: float
    cuts: sp.csr_matrix
    rounds: int
    converged: bool
    seconds: float

    @staticmethod
    def signed(program: Program, x: np.ndarray) -> np.ndarray:
        """A solution ``x`` of ``program`` extended to :meth:`strengthen`'s program (its signs)."""
        coef = np.asarray(x, dtype=float)[program.blocks["coef"]]
        return np.concatenate([x, (coef > 0).astype(float), (coef < 0).astype(float)])

    def strengthen(self, program: Program) -> Program:
        """``program`` (SLIM-shaped) with the sign indicators and these cuts: columns ``sign_pos``,
        ``sign_neg`` (binary, ``s^+ + s^- <=`` the L0 indicator, ``lambda_j <= U_j s^+_j``,
        ``lambda_j >= L_j s^-_j``, so a non-zero point sets its own sign) and rows ``sign_cover``.
        Its optimum is the program's (a model's true signs satisfy every cut); its LP is at least
        :attr:`bound`."""
        coef, loss, size = (program.blocks[k] for k in ("coef", "loss", "size"))
        lo, hi = program.col_lb[coef], program.col_ub[coef]
        pos_lo, pos_hi, neg_lo, neg_hi = _sign_bounds(lo, hi)
        d, m, n = coef.stop - coef.start, loss.stop - loss.start, program.n_variables
        total = n + 2 * d
        pos, neg = np.arange(n, n + d), np.arange(n + d, n + 2 * d)
        coefs, sizes = np.arange(coef.start, coef.stop), np.arange(size.start, size.stop)

        def rows(*terms: tuple[np.ndarray, np.ndarray]) -> sp.csr_matrix:
            """One row per feature: sum of ``values * x[columns]`` over the terms."""
            r = np.tile(np.arange(d), len(terms))
            cols = np.concatenate([c for c, _ in terms])
            vals = np.concatenate([np.broadcast_to(v, d) for _, v in terms])
            return sp.csr_matrix((vals, (r, cols)), shape=(d, total))

        where = np.concatenate([np.arange(loss.start, loss.stop), pos, neg])  # [z, s+, s-] -> program
        cuts = self.cuts.tocoo()
        cover = sp.csr_matrix((cuts.data, (cuts.row, where[cuts.col])), shape=(cuts.shape[0], total))
        assert cuts.shape[1] == m + 2 * d
        return program.extended(
            columns={"sign_pos": (pos_lo, pos_hi, True), "sign_neg": (neg_lo, neg_hi, True)},
            rows={"sign_split": (rows((sizes, 1.0), (pos, -1.0), (neg, -1.0)), 0.0, np.inf),
                  "sign_pos_link": (rows((coefs, 1.0), (pos, -np.maximum(hi, 0.0))), -np.inf, 0.0),
                  "sign_neg_link": (rows((coefs, 1.0), (neg, -np.minimum(lo, 0.0))), 0.0, np.inf),
                  "sign_cover": (cover, 1.0, np.inf)})


@njit(cache=True, nogil=True)
def most_violated(Xp: np.ndarray, Xn: np.ndarray, zp: np.ndarray, zn: np.ndarray, s_plus: np.ndarray,
                  s_minus: np.ndarray, tol: float, p0: int, p1: int, best_for_pos: np.ndarray, viol_pos: np.ndarray,
                  size_pos: np.ndarray, best_for_neg: np.ndarray, viol_neg: np.ndarray, size_neg: np.ndarray) -> None:
    """Pricing of the positive rows ``p0 <= p < p1`` against every negative row: for each of them the
    negative row of its most violated sign-cover cut, and for every negative row the positive one
    (``-1`` where none is violated by more than ``tol``), with the violations (``1 -`` the cut's
    left side) and the cuts' sizes; the negative side's arrays carry over between blocks."""
    n_neg, d = Xn.shape[0], Xp.shape[1]
    for p in range(p0, p1):
        for q in range(n_neg):
            room = 1.0 - zp[p] - zn[q]
            if room <= tol:
                continue
            cover = 0.0
            size = 0
            for j in range(d):
                a, b = Xp[p, j], Xn[q, j]
                if a > b:
                    cover += s_plus[j]
                    size += 1
                elif a < b:
                    cover += s_minus[j]
                    size += 1
                if cover >= room - tol:
                    break
            v = room - cover
            if v > tol:
                # most violated first; among (nearly) equally violated, the cut on fewer features
                if v > viol_pos[p] + tol or (v > viol_pos[p] - tol and size < size_pos[p]):
                    viol_pos[p], best_for_pos[p], size_pos[p] = v, q, size
                if v > viol_neg[q] + tol or (v > viol_neg[q] - tol and size < size_neg[q]):
                    viol_neg[q], best_for_neg[q], size_neg[q] = v, p, size


#: pair terms (positive row x negative row x feature) priced between two looks at the clock
PAIR_TERMS_PER_LOOK = 2 * 10**6
#: pairs (positive row x negative row) priced at once on 0/1 rows (:func:`_most_violated_products`; a few arrays of
#: this many entries)
PAIRS_PER_BLOCK = 2**20


@dataclass
class Pricing:
    """The most violated cut found so far for each row: the other row's index (``-1``: none violated by
    more than :data:`VIOLATION`), the violation (``1 -`` the cut's left side) and the cut's size (the
    features where the rows differ), per positive row (``*_pos``) and per negative row (``*_neg``)."""

    best_pos: np.ndarray
    viol_pos: np.ndarray
    size_pos: np.ndarray
    best_neg: np.ndarray
    viol_neg: np.ndarray
    size_neg: np.ndarray

    @classmethod
    def empty(cls, n_pos: int, n_neg: int, d: int) -> "Pricing":
        return cls(np.full(n_pos, -1, np.int64), np.zeros(n_pos), np.full(n_pos, d + 1, np.int64),
                   np.full(n_neg, -1, np.int64), np.zeros(n_neg), np.full(n_neg, d + 1, np.int64))


@dataclass(frozen=True)
class _NegativeSide:
    """What :func:`_most_violated_products` needs of the 0/1 negative rows ``Xn`` at one LP point: ``Xn``
    transposed, weighted by ``s+ + s-`` and not, ``Xn s-`` and the rows' counts of ones."""

    transposed: np.ndarray
    weighted: np.ndarray
    cover: np.ndarray
    ones: np.ndarray

    @classmethod
    def of(cls, Xn: np.ndarray, s_plus: np.ndarray, s_minus: np.ndarray) -> "_NegativeSide":
        transposed = np.ascontiguousarray(Xn.T)
        return cls(transposed, (s_plus + s_minus)[:, None] * transposed, Xn @ s_minus, Xn.sum(axis=1))


def _most_violated_products(Bp: np.ndarray, zp: np.ndarray, zn: np.ndarray, s_plus: np.ndarray,
                            neg: _NegativeSide, p0: int, found: Pricing) -> None:
    """:func:`most_violated` of the 0/1 positive rows ``Bp`` (rows ``p0`` on, errors ``zp``) by matrix
    products: on 0/1 rows a pair's cover is ``x_p . s+ + x_q . s- - x_p diag(s+ + s-) x_q`` and its
    size the Hamming distance ``|x_p| + |x_q| - 2 x_p . x_q``. Each row takes its most violated pair,
    the one on fewest features (the first) among those within :data:`VIOLATION` of it; the negative
    rows' picks are merged into ``found`` by the same rule."""
    room = 1.0 - zp[:, None] - zn[None, :]
    v = room - (Bp @ s_plus)[:, None] - neg.cover[None, :] + Bp @ neg.weighted
    v[room <= VIOLATION] = -np.inf  # (a pair its rows' errors already cover)
    size = Bp.sum(axis=1)[:, None] + neg.ones[None, :] - 2.0 * (Bp @ neg.transposed)
    picks = ((1, found.best_pos, found.viol_pos, found.size_pos, slice(p0, p0 + len(Bp)), 0),
             (0, found.best_neg, found.viol_neg, found.size_neg, slice(None), p0))
    for axis, best, viol, sizes, at, offset in picks:
        top = v.max(axis=axis)
        fewest = np.where(v >= np.expand_dims(top, axis) - VIOLATION, size, np.inf)
        pick = np.argmin(fewest, axis=axis)
        least = np.take_along_axis(fewest, np.expand_dims(pick, axis), axis=axis).squeeze(axis)
        old_v, old_size = viol[at], sizes[at]
        better = (top > VIOLATION) & ((top > old_v + VIOLATION) | ((top > old_v - VIOLATION) & (least < old_size)))
        viol[at] = np.where(better, top, old_v)
        sizes[at] = np.where(better, least, old_size).astype(np.int64)
        best[at] = np.where(better, pick + offset, best[at])


def price(Xp: np.ndarray, Xn: np.ndarray, x: np.ndarray, P: np.ndarray, N: np.ndarray, m: int, d: int,
          limits: Limits, zero_one: bool = False) -> "tuple[np.ndarray, np.ndarray] | None":
    """The most violated cut of every row at the LP point ``x``, priced in blocks of positive rows with a
    look at the clock between blocks; None when the budget ``limits`` ends first. On 0/1 rows
    (``zero_one``) by matrix products (:func:`_most_violated_products`), else pair by pair
    (:func:`most_violated`). Returns ``(best negative row per positive row, best positive row per
    negative row)``."""
    n_pos, n_neg = Xp.shape[0], Xn.shape[0]
    found = Pricing.empty(n_pos, n_neg, d)
    zp, zn, s_plus, s_minus = x[P], x[N], x[m:m + d], x[m + d:]
    neg = _NegativeSide.of(Xn, s_plus, s_minus) if zero_one else None
    pairs = PAIRS_PER_BLOCK if zero_one else PAIR_TERMS_PER_LOOK // max(d, 1)
    block = max(1, pairs // max(n_neg, 1))
    for p0 in range(0, n_pos, block):
        if limits.expired():
            return None
        p1 = min(p0 + block, n_pos)
        if neg is not None:
            _most_violated_products(Xp[p0:p1], zp[p0:p1], zn, s_plus, neg, p0, found)
        else:
            most_violated(Xp, Xn, zp, zn, s_plus, s_minus, VIOLATION, p0, p1, found.best_pos, found.viol_pos,
                          found.size_pos, found.best_neg, found.viol_neg, found.size_neg)
    return found.best_pos, found.best_neg


def _cover_rows(direction: np.ndarray, errors: tuple[np.ndarray, ...], m: int) -> sp.csr_matrix:
    """Cuts over columns ``[z (m), s+ (d), s- (d)]``, one per row of ``direction`` (``(k, d)``): the
    indicators ``z`` of ``errors`` (arrays of ``k`` row indices each) plus ``s+_j`` where
    ``direction > 0`` and ``s-_j`` where it is ``< 0``."""
    k, d = direction.shape
    up_r, up_j = np.nonzero(direction > 0)
    down_r, down_j = np.nonzero(direction < 0)
    rows = np.concatenate([np.tile(np.arange(k), len(errors)), up_r, down_r])
    cols = np.concatenate([*errors, m + up_j, m + d + down_j])
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(k, m + 2 * d))


def _cut_rows(X: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> sp.csr_matrix:
    """Sign-cover cuts of the pairs ``(pos[r], neg[r])`` (module docstring)."""
    return _cover_rows(X[pos] - X[neg], (pos, neg), X.shape[0])


def _one_row_cuts(problem: SignCoverProblem) -> sp.csr_matrix:
    """One-row cuts (module docstring) of the rows the intercept's box cannot make correct alone."""
    needs = np.where(problem.y > 0, problem.margin - problem.intercept_hi > 0, problem.intercept_lo > -problem.margin)
    rows = np.flatnonzero(needs)
    return _cover_rows(problem.y[rows, None] * problem.X[rows], (rows,), problem.X.shape[0])


def _solved(h: highspy.Highs, limits: Limits) -> bool:
    """Solve the LP in ``h`` within ``limits`` by the solver its options name; an interior point that
    falls short is finished by the simplex from where it stopped. Whether it ended at the optimum."""
    set_limits(h, seconds=limits.remaining())
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal and h.getOptions().solver == "ipm" \
            and not limits.expired():
        h.setOptionValue("solver", "simplex")
        set_limits(h, seconds=limits.remaining())
        h.run()
    return h.getModelStatus() == highspy.HighsModelStatus.kOptimal


def sign_cover(problem: SignCoverProblem, limits: Limits, target: float = math.inf) -> SignCover:
    """The sign-cover LP bound of ``problem`` by row generation (module docstring), on
    ``limits.threads`` threads.

    Stops when the budget ``limits`` ends (started here if not yet), after :data:`MAX_ROUNDS`
    rounds, when no pair is violated, or once the bound reaches ``target`` (nothing more is
    needed). Each round's bound goes to the progress reporter, if any (:mod:`solvers.progress`; no
    incumbent of its own: ``inf``)."""
    t0 = time.perf_counter()
    report = progress.current()
    limits = limits.started()
    X = np.ascontiguousarray(problem.X, dtype=float)
    m, d = X.shape
    P, N = np.flatnonzero(problem.y > 0), np.flatnonzero(problem.y < 0)
    pos_lo, pos_hi, neg_lo, neg_hi = _sign_bounds(problem.lo, problem.hi)  # columns z (m), s+ (d), s- (d)
    col_lo = np.concatenate([np.zeros(m), pos_lo, neg_lo])
    col_hi = np.concatenate([np.ones(m), pos_hi, neg_hi])
    base = sp.vstack([sp.hstack([sp.csr_matrix((d, m)), sp.identity(d), sp.identity(d)]),
                      sp.csr_matrix(np.concatenate([np.zeros(m), np.ones(2 * d)])[None, :])]).tocsc()
    one_row = _one_row_cuts(problem)
    h = new_highs(threads=limits.threads)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = m + 2 * d, base.shape[0]
    lp.col_cost_ = np.concatenate([problem.weights, problem.cost_pos, problem.cost_neg])
    lp.col_lower_, lp.col_upper_ = col_lo, col_hi
    lp.row_lower_ = np.zeros(d + 1)
    lp.row_upper_ = np.append(np.ones(d), float(problem.max_size))
    lp.offset_ = problem.offset
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = base.indptr, base.indices, base.data
    h.passModel(lp)
    cuts = [one_row]

    def add(rows: sp.csr_matrix) -> None:
        h.setOptionValue("solver", "ipm" if rows.shape[0] >= IPM_ADDED_SHARE * (h.getNumRow() + rows.shape[0])
                         else "simplex")
        h.addRows(rows.shape[0], np.ones(rows.shape[0]), np.full(rows.shape[0], highspy.kHighsInf), rows.nnz,
                  rows.indptr, rows.indices, rows.data)

    add(one_row)
    Xp, Xn = np.ascontiguousarray(X[P]), np.ascontiguousarray(X[N])
    zero_one = is_binary(X)
    bound, rounds, converged = -math.inf, 0, False
    seen: set[tuple[int, int]] = set()
    while rounds < MAX_ROUNDS:
        if limits.expired():
            break
        if not _solved(h, limits):
            break
        rounds += 1
        activity = np.asarray(h.getSolution().row_value)[base.shape[0]:]  # (of the cuts at the last LP solved)
        bound = max(bound, h.getInfo().objective_function_value)
        if report is not None:
            report(time.perf_counter() - t0, math.inf, bound, math.nan)
        if bound >= target:
            break
        x = np.asarray(h.getSolution().col_value)
        priced = price(Xp, Xn, x, P, N, m, d, limits, zero_one)
        if priced is None:
            break
        bp, bn = priced
        pairs = {(int(p), int(q)) for p, q in zip(np.flatnonzero(bp >= 0), bp[bp >= 0])}
        pairs |= {(int(p), int(q)) for q, p in zip(np.flatnonzero(bn >= 0), bn[bn >= 0])}
        pairs -= seen
        if not pairs:
            converged = True
            break
        seen |= pairs
        pair = np.array(sorted(pairs))
        new = _cut_rows(X, P[pair[:, 0]], N[pair[:, 1]])
        add(new)
        cuts.append(new)
    stacked = sp.vstack(cuts, format="csr") if cuts else sp.csr_matrix((0, m + 2 * d))
    if rounds:  # keep the cuts binding at the last LP solved, and those added after it
        keep = np.ones(stacked.shape[0], dtype=bool)
        keep[:activity.size] = activity <= 1.0 + 1e-7
        stacked = stacked[keep]
    return SignCover(bound, stacked, rounds, converged, time.perf_counter() - t0)
