"""The blocked screen of a wide table one group at a time, the most used first, under a bound that
rises as groups are done (RiskSLIM's kind; Ustun & Rudin 2019, eq. 1).

When screening every support (:mod:`solvers.exact.blocked_supports`) would take longer than the time
left, a pass in a spread order proves nothing until it ends. This pass orders the groups of columns
``g_0, g_1, ...`` (the nested-threshold groups of :mod:`solvers.exact.group_screen`, or single columns)
and screens them as *branches*: branch ``k`` lists the supports whose first group in that order is
``g_k`` (``g_k`` and ``size - 1`` columns of the groups after it; :func:`ordered_branches`). After
branches ``0..k`` every model either lies in a support they listed, which the screen, the survivors'
box fits and their searches bound, or uses no column of ``g_0..g_k``: its points there are 0, so it is
a point of the hull of the sparse box with those columns fixed at 0, and the hull floor of that box
(:func:`solvers.exact.floor.hull_floor`, the least sparse tangent plane) bounds it. The bound after
branch ``k`` is therefore

.. math::

    \\min\\big(\\text{incumbent},\\ \\text{least bound of the listed supports},\\
    F(g_0 \\cup \\dots \\cup g_k)\\big),

with ``F(G)`` the hull floor without the columns of ``G`` (:class:`RestFloor`).

A branch too long for the time left is screened in *parts* (:func:`branch_parts`): runs of its pairs
``(g_k, g_{k+1}), (g_k, g_{k+2}), ...`` in order. Every column support of branch ``k`` that uses fewer
than ``size`` groups has ``g_{k+1}`` among the groups of its group support (the lowest groups it misses
complete it), so it lies in the first pair; the others lie in the pair of their second group. After
the parts up to the pair ``(g_k, g_{k+j})`` the models the branch has not listed use none of
``g_{k+1}..g_{k+j}`` (nor of ``g_0..g_{k-1}``), and the bound is

.. math::

    \\min\\big(\\text{incumbent},\\ \\text{least bound of the listed supports},\\
    F(g_0 \\cup \\dots \\cup g_{k-1} \\cup g_{k+1} \\cup \\dots \\cup g_{k+j}),\\ F(g_0 \\cup \\dots \\cup g_k)\\big),

which rises part by part while the branch runs (:meth:`RestFloor.fork` for the first floor). ``F`` rises
as strong
variables leave the box (a table whose signal sits in a few variables loses most of its fit with
them), so the groups go in decreasing weight of their variable at the continuous fit (the loss minimiser
over the box; all the groups of one variable together, :func:`group_order`): the fit's gap shrinks with
time, and when every branch is done the pass is the whole screen.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from solvers.exact.blocked_pass import Branch, GroupBranch
from solvers.exact.floor import Floor, SparseBox, hull_floor
from solvers.exact.nested_columns import nested_chains
from solvers.limits import Limits


def group_order(X: np.ndarray, every: Branch | GroupBranch, point: np.ndarray) -> list[np.ndarray]:
    """The groups of ``every`` (positions in the columns of ``X``; single columns for a :class:`Branch`),
    variable by variable in decreasing ``sum |w_j|`` of the variable's columns at ``point`` (a variable:
    a chain of nested columns, :func:`solvers.exact.nested_columns.nested_chains`, or a column in none),
    a variable's groups in their order in ``every``; ties by position."""
    d = X.shape[1]
    if isinstance(every, GroupBranch):
        groups = [every.columns[every.start[g]:every.start[g + 1]] for g in range(every.start.size - 1)]
    else:
        groups = [np.array([c], np.int64) for c in every.columns]
    variable = np.arange(d)
    for i, chain in enumerate(nested_chains(X, np.arange(d))):
        variable[chain] = d + i
    weight = np.zeros(2 * d)
    np.add.at(weight, variable, np.abs(np.asarray(point, float)))
    keys = [(-weight[variable[g[0]]], int(variable[g[0]]), position) for position, g in enumerate(groups)]
    return [groups[i] for i in sorted(range(len(groups)), key=keys.__getitem__)]


def ordered_branches(groups: list[np.ndarray], size: int, grouped: bool) -> list[Branch | GroupBranch]:
    """Branch ``k`` of the module docstring for each ``k`` with ``size - 1`` columns' worth of groups
    after ``g_k``: a :class:`~solvers.exact.blocked_pass.GroupBranch` of ``g_k, g_{k+1}, ...`` whose pairs
    start at ``g_k`` and whose members must hold a column of ``g_k`` (``grouped``; in the last branch
    every member of its one group support, so that the column supports within its last ``size - 1``
    groups are listed too), or a :class:`~solvers.exact.blocked_pass.Branch` of single columns whose
    pairs start at ``g_k`` (a support within the last ``size - 1`` columns lies in the last branch's)."""
    branches: list[Branch | GroupBranch] = []
    for k in range(len(groups) - size + 1):
        rest = groups[k:]
        pairs = np.array([(0, b) for b in range(1, len(rest) - size + 2)], np.int64).reshape(-1, 2)
        columns = np.concatenate(rest).astype(np.int64)
        if grouped:
            start = np.concatenate([[0], np.cumsum([g.size for g in rest])]).astype(np.int64)
            branches.append(GroupBranch(start, columns, pairs, lead_only=k < len(groups) - size))
        else:
            branches.append(Branch(columns, pairs))
    return branches


#: a branch too long for the time left is screened in about this many parts (:func:`branch_parts`)
PARTS = 64


def branch_parts(branch: Branch | GroupBranch, size: int, parts: int = PARTS) -> list[Branch | GroupBranch]:
    """``branch`` (of :func:`ordered_branches`: pairs ``(0, 1), (0, 2), ...``) as runs of consecutive pairs
    listing about ``1 / parts`` of its supports each (at least one pair each), in order; together they
    list what ``branch`` lists (module docstring)."""
    counts = [replace(branch, pairs=branch.pairs[i:i + 1]).count(size) for i in range(branch.pairs.shape[0])]
    target = sum(counts) / parts
    runs, first, held = [], 0, 0
    for i, count in enumerate(counts):
        held += count
        if held >= target or i == len(counts) - 1:
            runs.append(replace(branch, pairs=branch.pairs[first:i + 1]))
            first, held = i + 1, 0
    return runs


class RestFloor:
    """The hull floor of the models that use none of a growing set of columns (module docstring):
    :meth:`without` fixes more columns at 0 and returns the floor, never below the one before (the
    models left are fewer), each from the last point (warm)."""

    def __init__(self, data, box: SparseBox, start: tuple[np.ndarray, float]) -> None:
        self.data, self.box = data, box
        self.lb, self.ub = box.lb.copy(), box.ub.copy()
        self.point = (np.asarray(start[0], float).copy(), float(start[1]))
        self.bound = -np.inf
        self.iterations = 0

    def fork(self) -> "RestFloor":
        """A copy that goes on from here on its own (its columns fixed at 0 so far, point and bound)."""
        twin = RestFloor(self.data, self.box, self.point)
        twin.lb, twin.ub, twin.bound = self.lb.copy(), self.ub.copy(), self.bound
        return twin

    def exclude(self, columns: np.ndarray) -> None:
        """Fix the points of ``columns`` (feature indices) at 0, the floor left for the next :meth:`without`."""
        self.lb[columns] = 0.0
        self.ub[columns] = 0.0

    def without(self, columns: np.ndarray, limits: Limits) -> float:
        """The floor with the points of ``columns`` (feature indices) fixed at 0 too, within ``limits``: the
        hull floor of the box of the features not fixed at 0 (a feature at 0 adds nothing to a tangent
        plane, and no L0 cost), on their columns only."""
        self.exclude(columns)
        keep = self.box.forced | (self.lb < 0) | (self.ub > 0)
        floor: Floor = hull_floor(replace(self.data, X=np.ascontiguousarray(self.data.X[:, keep])),
                                  self.box.within(self.lb, self.ub).on(keep), (self.point[0][keep], self.point[1]),
                                  limits)
        self.iterations += floor.iterations
        if floor.point is not None:
            point = np.zeros_like(self.point[0])
            point[keep] = floor.point[0]
            self.point = (point, floor.point[1])
        self.bound = max(self.bound, floor.bound)
        return self.bound
