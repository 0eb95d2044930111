"""One pass of the blocked screen over its pairs of first columns, on one thread or several.

The supports a pass lists are given as *branches* (:class:`Branch`): an order of the columns and the
pairs of first columns (positions in that order) whose supports it lists, each support once over all
branches. On a table of binarised variables the supports of *groups* of nested columns may be listed
instead (:class:`GroupBranch`, :mod:`solvers.exact.group_screen`): far fewer, each standing for the
column supports inside it, and the column supports of the groups left are the pass's survivors
(:func:`plain_branch` chooses). :func:`solvers.exact.blocked_entropy.screen_pair` lists and screens the
supports of one pair of one branch and releases the GIL (numba ``nogil``), so ``n_jobs`` threads of this
process screen as many pairs at once, sharing the bit sets of the table (each thread holds only its
pair's blocked copy and patterns: :func:`screen_memory`). Each thread takes the next pair of a fixed
spread order (a seeded permutation of every branch's pairs), and after every call (at most
:data:`~solvers.exact.blocked_entropy.CALL_SUPPORTS` supports) adds its counts and survivors to the pass
and looks at the budget: the pass stops at the deadline (or an interrupt), when it holds more
survivors than its memory budget allows (:func:`most_held`), or when the rate so far projects the rest
past :data:`PROJECTION_SHARE` (or the share it is given) of the time left, looked at from
:data:`PROJECT_AFTER` seconds and :data:`PROJECT_WINDOW` of the time left at its start on (or from a
hundredth of its supports).
What a finished pass returns (supports listed, least pruned bound, survivors) does not depend on the
threads; the survivors come sorted.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from solvers.exact.blocked_entropy import CALL_SUPPORTS, first_middle, screen_pair, table_bytes
from solvers.exact.box_logistic import copy_counts
from solvers.exact.group_screen import GROUP_COLUMNS, groups_of, pair_blocks, screen_group_pair
from solvers.exact.nested_columns import nested_chains
from solvers.exact.worker_threads import run_threads
from solvers.limits import Limits

#: rows of a thread's survivors buffer (a call of a plain branch that leaves more is made again with a
#: buffer that holds them; a group branch's call ends before a prefix that might not fit,
#: :meth:`GroupBranch.screen`)
MAX_SURVIVORS = 1 << 14
#: survivors a pass may hold whatever its memory budget (counted in :func:`screen_memory`); past it, as
#: many as the budget holds (:func:`most_held`), then the pass gives up (the incumbent is too weak for
#: the screen)
MAX_KEPT = 1 << 20
#: bytes per column of a support the pass holds, over its life: the call's rows, their concatenation
#: and sort, the caller's feature indices and the survivors' bounds
HELD_BYTES = 48
#: column supports one call of a group branch may return, per row of a call's buffer
MEMBERS = 16
#: the pass goes on only while its projection stays within this share of the time left
PROJECTION_SHARE = 0.9
#: least seconds of screening before the first projection (or once a hundredth of the supports is listed):
#: a rate over the first fraction of a second errs widely on a shared machine
PROJECT_AFTER = 0.5
#: and least share of the time left at the pass's start before it (the larger of the two counts)
PROJECT_WINDOW = 0.02
#: a support of groups takes about this many times a column support's time (2 columns per group,
#: ``docs/benchmarks.md``): groups are listed when that many times their supports are fewer than
#: the column supports
GROUP_COST = 5.0


def screen_words(y: np.ndarray, weights: np.ndarray) -> float:
    """64-bit words per column of the bit sets of both labels' rows (each row repeated by its weight
    over its label's unit, :func:`solvers.exact.box_logistic.copy_counts`), with room for the blocks."""
    positive = y > 0
    counted = [copy_counts(weights[side]) for side in (positive, ~positive)]
    return sum(float(c[0].sum()) for c in counted if c is not None) / 64.0 + 10


def screen_memory(d: int, size: int, words: float, threads: int) -> float:
    """Bytes of a pass on ``d`` columns of ``words`` 64-bit words of rows (both labels, copies
    included: :func:`screen_words`): the bit sets as given, and per thread their blocked copy, the
    patterns of a prefix (at most ``(GROUP_COLUMNS + 1)^(size - 1)``, a group branch's), the pair's
    tables (:func:`solvers.exact.blocked_entropy.table_bytes`), a call's survivors (with a group
    branch's members) and a group branch's cells of each last group (both labels, and their sums); the
    survivors held; the ``c log c`` table."""
    patterns = (GROUP_COLUMNS + 1.0) ** max(size - 1, 0)
    per_thread = 8.0 * d * words + 8.0 * patterns * words + table_bytes(d, size) + \
        8.0 * size * MAX_SURVIVORS * (1 + MEMBERS) + 24.0 * d * patterns * (GROUP_COLUMNS + 1.0)
    return 8.0 * d * words + threads * per_thread + 8.0 * size * MAX_KEPT + 8.0 * min(64.0 * words, 2**20)


def most_held(memory: float, bits, size: int, threads: int) -> int:
    """Survivors of ``size`` columns a pass may hold within ``memory`` bytes: what the bit sets (``bits``,
    :func:`screen_pairs`) and each thread's blocked copy of them leave, at :data:`HELD_BYTES` per column
    of a support, and at least :data:`MAX_KEPT`."""
    table = float(bits[0].nbytes + bits[3].nbytes)
    return max(MAX_KEPT, int((memory - (1 + threads) * table) // (HELD_BYTES * size)))


@dataclass(frozen=True)
class Branch:
    """Supports listed as positions in ``columns`` (rows of the bit sets, ascending positions): those
    whose first two are a row of ``pairs``."""

    columns: np.ndarray
    pairs: np.ndarray

    def count(self, size: int) -> int:
        """Supports of ``size`` columns it lists."""
        return sum(math.comb(self.columns.size - int(b) - 1, size - 2) for b in self.pairs[:, 1])

    def work(self, size: int) -> float:
        """Its screen's time in column supports' (:data:`GROUP_COST`)."""
        return float(self.count(size))

    def screen(self, bits, xlogx, a: int, b: int, size: int, cutoff: float, out: np.ndarray):
        """The screen of the supports of the pair ``(a, b)``, call by call: ``(listed, survivors
        (positions, each row ascending), least pruned sum)``. A call that leaves more
        survivors than ``out`` holds is made again from the same prefix with a buffer that holds them
        (a call lists about :data:`~solvers.exact.blocked_entropy.CALL_SUPPORTS` supports, so the
        buffer stays small): it never overflows."""
        middle = first_middle(b, size)
        while True:
            before = middle.copy()
            listed, count, floor, _, finished = screen_pair(*bits, xlogx, self.columns, a, b, size, cutoff, out,
                                                            False, middle, CALL_SUPPORTS)
            if count > out.shape[0]:
                middle[:] = before
                out = np.empty((count, size), np.int64)
                continue
            yield listed, np.sort(self.columns[out[:count]], axis=1), floor
            if finished:
                return


@dataclass(frozen=True)
class GroupBranch:
    """Supports of ``size`` groups (:mod:`solvers.exact.group_screen`: group ``g`` holds the positions
    ``columns[start[g]:start[g + 1]]``, each inside the one before) whose first two are a row of
    ``pairs``; each stands for the column supports inside it (its members, :mod:`solvers.exact.group_screen`),
    which are what its screen returns; with ``lead_only``, only those holding a column of group 0 (the
    others belong to later branches of :mod:`solvers.exact.ordered_screen`)."""

    start: np.ndarray
    columns: np.ndarray
    pairs: np.ndarray
    lead_only: bool = False

    def count(self, size: int) -> int:
        """Supports of ``size`` groups it lists."""
        return sum(math.comb(self.start.size - int(b) - 2, size - 2) for b in self.pairs[:, 1])

    def work(self, size: int) -> float:
        """Its screen's time in column supports' (:data:`GROUP_COST` each)."""
        return GROUP_COST * self.count(size)

    def screen(self, bits, xlogx, a: int, b: int, size: int, cutoff: float, out: np.ndarray):
        """As :meth:`Branch.screen`: the survivors are the column supports of the group supports left
        whose own sums are below the cutoff too (:func:`solvers.exact.group_screen.screen_group_pair`
        screens both), and the least pruned sum is over both kinds. A call ends before a prefix whose
        members might not fit in its buffer (:data:`MEMBERS` rows per row of ``out``); a buffer that does
        not hold its first prefix's is made to hold them and the call made again: it never overflows."""
        bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg = bits
        blocked_pos, valid_pos, starts_pos, blocked_neg, valid_neg, starts_neg = pair_blocks(
            bits_pos, n_pos, bits_neg, n_neg, self.start, self.columns, a, b)
        blocked = (blocked_pos, valid_pos, starts_pos, unit_pos, blocked_neg, valid_neg, starts_neg, unit_neg)
        middle = first_middle(b, size)
        found = np.empty((MEMBERS * out.shape[0], size), np.int64)
        while True:
            before = middle.copy()
            listed, count, floor, finished = screen_group_pair(*blocked, xlogx, self.start, self.columns, a, b, size,
                                                               cutoff, self.lead_only, found, middle, CALL_SUPPORTS)
            if count > found.shape[0]:  # (its first prefix alone left more than ``found`` holds)
                middle[:] = before
                found = np.empty((count, size), np.int64)
                continue
            yield listed, np.sort(found[:count], axis=1), floor
            if finished:
                return


def all_pairs(d: int, size: int) -> Branch:
    """Every support of ``size`` of ``d`` columns in their order."""
    pairs = np.array([(a, b) for b in range(1, d - size + 2) for a in range(b)], np.int64).reshape(-1, 2)
    return Branch(np.arange(d, dtype=np.int64), pairs)


def plain_branch(X: np.ndarray, size: int) -> Branch | GroupBranch:
    """The branch listing every support of ``size`` of the 0/1 columns of ``X`` (positions): the supports
    of groups of at most :data:`~solvers.exact.group_screen.GROUP_COLUMNS` nested columns
    (:func:`solvers.exact.nested_columns.nested_chains`) when some group holds two columns and
    :data:`GROUP_COST` times their number is below the column supports' (and ``size >= 3``), else the
    column supports."""
    d = X.shape[1]
    plain = all_pairs(d, size)
    if size < 3:
        return plain
    start, columns = groups_of(nested_chains(X, np.arange(d)), d, GROUP_COLUMNS)
    groups = start.size - 1
    if groups < size or groups == d:
        return plain
    pairs = np.array([(a, b) for b in range(1, groups - size + 2) for a in range(b)], np.int64).reshape(-1, 2)
    grouped = GroupBranch(start, columns, pairs)
    return grouped if grouped.work(size) < plain.work(size) else plain


@dataclass
class Pass:
    """What a pass found: supports listed, least bound of the pruned ones (inf: none), the survivors
    (rows of the bit sets, each row ascending, rows sorted), why it stopped (None: it finished),
    whether that was its projection (the rest would not fit the time left), and the seconds the whole
    pass projected at its rate when its projection or the deadline stopped it (nan: otherwise)."""

    listed: int = 0
    pruned: float = math.inf
    survivors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    stopped: str | None = None
    too_long: bool = False
    projected: float = math.nan


def screen_pairs(bits, xlogx, branches: list[Branch | GroupBranch], size: int, cutoff: float, limits: Limits,
                 threads: int, share: float = PROJECTION_SHARE) -> Pass:
    """Screen every support of ``size`` columns the ``branches`` list at ``cutoff`` (``bits``:
    ``(bits_pos, n_pos, unit_pos, bits_neg, n_neg, unit_neg)``) on ``threads`` threads, within the
    started budget ``limits`` (module docstring; stopped when the rest projects past ``share`` of the
    time left)."""
    total = sum(branch.count(size) for branch in branches)
    pairs = np.array([(i, a, b) for i, branch in enumerate(branches) for a, b in branch.pairs], np.int64).reshape(-1, 3)
    pairs = pairs[np.random.default_rng(0).permutation(pairs.shape[0])]
    lock = threading.Lock()
    found = Pass()
    kept: list[np.ndarray] = []
    state = {"next": 0, "held": 0}
    timed = limits.deadline is not None
    started = time.perf_counter()
    first_look = max(PROJECT_AFTER, PROJECT_WINDOW * limits.seconds_left())  # (inf without a deadline)
    most = most_held(limits.memory, bits, size, threads)

    def verdict() -> str | None:  # (under the lock)
        if state["held"] > most:
            return (f"more than {most} supports of {size} features (what the memory budget holds) pass the screen "
                    f"at the incumbent")
        took = time.perf_counter() - started
        if limits.expired():
            found.projected = took / found.listed * total if found.listed else math.nan
            return f"screened {found.listed} of {total} supports of {size} features by the deadline"
        if timed and found.listed < total and (took >= first_look or found.listed >= 0.01 * total):
            if took / found.listed * (total - found.listed) > share * limits.seconds_left():
                found.too_long, found.projected = True, took / found.listed * total
                return (f"screening the {total} supports of {size} features would take about "
                        f"{found.projected:.0f} s, more than the {max(limits.seconds_left(), 0.0):.0f} s left")
        return None

    def work() -> None:
        out = np.empty((MAX_SURVIVORS, size), np.int64)
        while True:
            with lock:
                if found.stopped is not None or state["next"] >= pairs.shape[0]:
                    return
                i, a, b = pairs[state["next"]]
                state["next"] += 1
            for listed, rows, floor in branches[i].screen(bits, xlogx, int(a), int(b), size, cutoff, out):
                with lock:
                    found.listed += listed
                    found.pruned = min(found.pruned, floor)
                    kept.append(rows)
                    state["held"] += rows.shape[0]
                    found.stopped = found.stopped or verdict()
                    if found.stopped is not None:
                        return

    def stop() -> None:  # a thread failed (its error is raised once the others end)
        with lock:
            found.stopped = found.stopped or "an error in a screening thread"

    run_threads(work, threads, stop)
    rows = np.concatenate(kept) if kept else np.zeros((0, size), np.int64)
    found.survivors = rows[np.lexsort(rows.T[::-1])] if rows.shape[0] else rows
    return found
