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
pairs, ``O(d)`` each), until no pair is violated by more than :data:`VIOLATION` or the clock
runs out; each round's LP value is a valid bound.

On data whose best cards are nearly monotone it is the certificate: on adult (2000 rows, 36
binary features, C0 0.01) it reaches the incumbent's 0.219, where the big-M LP gives 0.073 and
Gurobi's branch and bound 0.192 after 60 s. It knows nothing of the linear form beyond signs, so
on breastcancer (9 integer features, the best cards use 6 of them) it stays at 0.0049: there the
backend hands over to the box search of :mod:`solvers.exact.box_cover`, whose pair conflicts are these cuts
with the signs refined into ranges of points, and which proves the optimum.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import highspy
import numpy as np
import scipy.sparse as sp
from numba import njit

from formulations.program import Program
from solvers import progress
from solvers.exact.box_cover import applies, box_cover, box_cover_result, starting_from
from solvers.registry import Backend, get_backend
from solvers.result import Result, Status, relative_gap
from solvers.exact.supports import max_size_of, solve_supports
from solvers.exact.zero_one_supports import ZeroOneProgram, zero_one_rows

#: a pair is a cut when its left side is below 1 by more than this
VIOLATION = 1e-6
#: rounds of row generation at most
MAX_ROUNDS = 200
#: share of the time limit the sign-cover LP may take before HiGHS gets the strengthened program
LP_SHARE = 0.25
#: share of the time left the support enumeration (0/1 features) may take before HiGHS
ENUMERATION_SHARE = 0.2


def _binary_plain_slim(kind: "ZeroOneProgram | str") -> bool:
    """A plain SLIM program (no operational rows, read with ``counted=False``) on 0/1 features and
    countable row weights: the support enumeration's kind (:mod:`solvers.exact.zero_one_supports`) that
    searches its supports to the end."""
    return not isinstance(kind, str) and kind.binary and kind.countable


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
    def from_program(cls, program: Program) -> "SignCoverProblem | None":
        """The problem, or None when ``program`` is not a SLIM-shaped MILP."""
        needed = {"coef", "intercept", "loss", "size"}
        if program.lazy is not None or program.cones or not needed <= set(program.blocks) \
                or "zero_one" not in program.row_blocks:
            return None
        read = zero_one_rows(program)
        if isinstance(read, str):
            return None
        X, y, margin = read
        coef, b, loss, size = (program.blocks[k] for k in ("coef", "intercept", "loss", "size"))
        lo, hi = program.col_lb[coef].copy(), program.col_ub[coef].copy()
        epsilon = program.c[program.blocks["abs"]] if "abs" in program.blocks else np.zeros(lo.size)
        step = program.integer[coef].astype(float)  # least non-zero magnitude: 1 if integer, else 0
        least_pos, least_neg = np.maximum(lo, step), np.maximum(-hi, step)
        forced = program.col_lb[size] >= 0.5
        cost = np.where(forced, 0.0, program.c[size])
        return cls(X, y, program.c[loss].copy(), cost + epsilon * least_pos, cost + epsilon * least_neg, lo, hi,
                   max_size_of(program), margin, float(program.col_lb[b][0]), float(program.col_ub[b][0]),
                   float(program.offset) + float(program.c[size] @ forced))


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


@njit(cache=True)
def most_violated(Xp: np.ndarray, Xn: np.ndarray, zp: np.ndarray, zn: np.ndarray, s_plus: np.ndarray,
                  s_minus: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every positive row the negative row of its most violated sign-cover cut and for every
    negative row the positive one (``-1`` where none is violated by more than ``tol``); and the
    violations (``1 -`` the cut's left side)."""
    n_pos, n_neg, d = Xp.shape[0], Xn.shape[0], Xp.shape[1]
    best_for_pos = np.full(n_pos, -1, np.int64)
    viol_pos = np.zeros(n_pos)
    best_for_neg = np.full(n_neg, -1, np.int64)
    viol_neg = np.zeros(n_neg)
    size_pos = np.full(n_pos, d + 1)
    size_neg = np.full(n_neg, d + 1)
    for p in range(n_pos):
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
    return best_for_pos, viol_pos, best_for_neg, viol_neg


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


def sign_cover(problem: SignCoverProblem, deadline: float = math.inf, target: float = math.inf) -> SignCover:
    """The sign-cover LP bound of ``problem`` by row generation (module docstring).

    Stops at ``deadline`` (``time.perf_counter()`` seconds), after :data:`MAX_ROUNDS` rounds, when
    no pair is violated, or once the bound reaches ``target`` (nothing more is needed)."""
    t0 = time.perf_counter()
    X = np.ascontiguousarray(problem.X, dtype=float)
    m, d = X.shape
    P, N = np.flatnonzero(problem.y > 0), np.flatnonzero(problem.y < 0)
    pos_lo, pos_hi, neg_lo, neg_hi = _sign_bounds(problem.lo, problem.hi)  # columns z (m), s+ (d), s- (d)
    col_lo = np.concatenate([np.zeros(m), pos_lo, neg_lo])
    col_hi = np.concatenate([np.ones(m), pos_hi, neg_hi])
    base = sp.vstack([sp.hstack([sp.csr_matrix((d, m)), sp.identity(d), sp.identity(d)]),
                      sp.csr_matrix(np.concatenate([np.zeros(m), np.ones(2 * d)])[None, :])]).tocsc()
    one_row = _one_row_cuts(problem)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
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
        h.addRows(rows.shape[0], np.ones(rows.shape[0]), np.full(rows.shape[0], highspy.kHighsInf), rows.nnz,
                  rows.indptr, rows.indices, rows.data)

    add(one_row)
    Xp, Xn = np.ascontiguousarray(X[P]), np.ascontiguousarray(X[N])
    bound, rounds, converged = -math.inf, 0, False
    seen: set[tuple[int, int]] = set()
    while rounds < MAX_ROUNDS:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        if math.isfinite(left):
            h.setOptionValue("time_limit", left)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        rounds += 1
        bound = max(bound, h.getInfo().objective_function_value)
        if bound >= target:
            break
        x = np.asarray(h.getSolution().col_value)
        bp, _, bn, _ = most_violated(Xp, Xn, x[P], x[N], x[m:m + d], x[m + d:], VIOLATION)
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
        activity = np.asarray(h.getSolution().row_value)[base.shape[0]:]
        keep = np.ones(stacked.shape[0], dtype=bool)
        keep[:activity.size] = activity <= 1.0 + 1e-7
        stacked = stacked[keep]
    return SignCover(bound, stacked, rounds, converged, time.perf_counter() - t0)


def solve_sign_cover(program: Program, *, time_limit: float | None = None, node_limit: int | None = None,
                     mip_rel_gap: float = 1e-6, warm_start: np.ndarray | None = None, verbose: bool = False,
                     **options) -> Result:
    """SLIM exactly: the sign-cover LP (module docstring) within :data:`LP_SHARE` of the time limit,
    stopped once it proves the start optimal; on a plain program with 0/1 features, the support
    enumeration with Bayes-error bounds (:mod:`solvers.exact.zero_one_supports`) within
    :data:`ENUMERATION_SHARE` of the time left, which finishes where the cards are small (it stops
    rather than hand over, its incumbent kept); then, on a plain program with integer points, at
    most :data:`solvers.exact.box_cover.MAX_FEATURES` free features and features of more than two values
    (on 0/1 features HiGHS does better: binarised mammo, 16 features), the box search
    (:mod:`solvers.exact.box_cover`) with the time left, else HiGHS on the program strengthened with the
    sign indicators and the cuts binding at that LP (:meth:`SignCover.strengthen`), from the best
    start, with the time left. The bound is the larger of the last step's and the LP's (both valid
    for every model); the model the better of the start and the last step's. A program that is not
    SLIM-shaped goes to HiGHS as it is."""
    t0 = time.perf_counter()
    highs = get_backend("highs")
    problem = SignCoverProblem.from_program(program)
    if problem is None:
        result = highs.solve(program, time_limit=time_limit, node_limit=node_limit, mip_rel_gap=mip_rel_gap,
                             warm_start=warm_start, verbose=verbose, **options)
        return replace(result, message=f"sign_cover: not a SLIM program; solved by highs: {result.message}")
    start = None if warm_start is None else np.asarray(warm_start, dtype=float)
    if start is not None and not program.is_feasible(start):
        start = None
    incumbent = math.inf if start is None else program.objective(start)

    def proven(objective: float, bound: float) -> bool:
        return objective - bound <= mip_rel_gap * max(abs(objective), 1e-10)

    def proven_by_lp(what: str, nodes: int = 0) -> Result:
        """The start, certified by the LP's bound alone."""
        bound = min(cover.bound, incumbent)
        return Result(Status.OPTIMAL, x=start, objective=incumbent, bound=bound, gap=relative_gap(incumbent, bound),
                      nodes=nodes, solve_time=time.perf_counter() - t0, backend="sign_cover",
                      message=f"optimal: the {lp} reaches {what}")

    deadline = math.inf if time_limit is None else t0 + LP_SHARE * time_limit
    target = incumbent - mip_rel_gap * max(abs(incumbent), 1e-10) if math.isfinite(incumbent) else math.inf
    cover = sign_cover(problem, deadline=deadline, target=target)
    lp = f"sign-cover LP bound {cover.bound:.9g} ({cover.rounds} rounds, {cover.cuts.shape[0]} cuts kept, " \
         f"{cover.seconds:.2f} s)"
    report = progress.current()
    if report is not None and math.isfinite(cover.bound):
        report(time.perf_counter() - t0, incumbent, min(cover.bound, incumbent), math.nan)
    if start is not None and proven(incumbent, cover.bound):
        return proven_by_lp("the start")
    enumerated = ""
    kind = ZeroOneProgram.from_program(program, counted=False)
    if time_limit is not None and _binary_plain_slim(kind):
        # 0/1 features: the supports by size with Bayes-error bounds often finish (small cards)
        share = ENUMERATION_SHARE * max(t0 + time_limit - time.perf_counter(), 1e-3)
        supports = solve_supports(program, time_limit=share, node_limit=node_limit, mip_rel_gap=mip_rel_gap,
                                  warm_start=start, may_hand_over=False)
        if supports.status == Status.OPTIMAL:
            bound = max(supports.bound, min(cover.bound, supports.objective))
            return replace(supports, bound=bound, gap=relative_gap(supports.objective, bound), backend="sign_cover",
                           solve_time=time.perf_counter() - t0, message=f"{lp}; then supports: {supports.message}")
        if supports.x is not None and supports.objective < incumbent:
            start, incumbent = supports.x, supports.objective
        enumerated = f"supports ({supports.message}); "
        if start is not None and proven(incumbent, cover.bound):
            return proven_by_lp(f"the model of the {enumerated[:-2]}", supports.nodes)
    left = None if time_limit is None else max(t0 + time_limit - time.perf_counter(), 1e-3)
    if applies(kind) is None and not kind.binary:
        # few features of many values: the box search (pair conflicts) certifies where HiGHS cannot
        found = box_cover(kind, **starting_from(program, start),
                          deadline=math.inf if left is None else time.perf_counter() + left, node_limit=node_limit,
                          mip_rel_gap=mip_rel_gap)
        found.bound = max(found.bound, min(cover.bound, found.objective))
        return box_cover_result(program, kind, found, start, t0, message=f"{lp}; {enumerated}then ",
                                backend="sign_cover")
    result = highs.solve(cover.strengthen(program), time_limit=left, node_limit=node_limit, mip_rel_gap=mip_rel_gap,
                         warm_start=None if start is None else SignCover.signed(program, start), verbose=verbose,
                         **options)
    message = f"{lp}; {enumerated}then highs on the strengthened program: {result.message}"
    if result.status == Status.INFEASIBLE:
        return replace(result, backend="sign_cover", message=message, solve_time=time.perf_counter() - t0)
    found = None if result.x is None else result.x[:program.n_variables]
    candidates = [(program.objective(x), x) for x in (start, found) if x is not None]
    bound = max(float(result.bound) if not math.isnan(result.bound) else -math.inf, cover.bound)
    if not candidates:
        return replace(result, x=None, bound=bound, backend="sign_cover", message=message,
                       solve_time=time.perf_counter() - t0)
    objective, x = min(candidates, key=lambda pair: pair[0])
    bound = min(bound, objective)
    return replace(result, status=Status.OPTIMAL if proven(objective, bound) else Status.FEASIBLE, x=x,
                   objective=objective, bound=bound, gap=relative_gap(objective, bound), backend="sign_cover",
                   message=message, solve_time=time.perf_counter() - t0)


# declared to solvers.registry (imported lazily there: no cycle)
BACKENDS = {"sign_cover": Backend(solve_sign_cover, frozenset({"MILP"}))}
