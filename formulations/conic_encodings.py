"""Conic encodings of losses and penalties: epigraphs written into a :class:`ProgramBuilder`.

Every encoder adds whole blocks (sparse matrices, one :class:`~formulations.program.Cone` block
for all samples) and returns a *lift*: a function mapping the model's weights to the values of
the auxiliary blocks it created, so a weight vector can be turned into a feasible point of the
program (warm starts; tests check ``Program.violations`` of the lifted point and that its
objective equals the loss / penalty value).

Losses (``z_i = x_i . w + b``, objective gains ``scale * sum_i s_i loss_i``):

* logistic ``log(1 + exp(-y_i z_i)) <= l_i``  <=>  ``(-l_i, 1, 1 - v_i) in K_exp`` and
  ``(-y_i z_i - l_i, 1, v_i) in K_exp`` (``K_exp`` in cvxpy's convention ``v exp(u / v) <= w``):
  ``1 - v_i >= exp(-l_i)`` and ``v_i >= exp(-y_i z_i - l_i)``, so ``exp(-l_i)(1 + exp(-y_i z_i))
  <= 1``; conversely ``v_i = exp(-y_i z_i - l_i)`` is feasible for any ``l_i`` above the loss.
  This is cvxpy's ``logistic`` canonicalisation (``u_i + v_i <= 1``, two cones) with ``u_i =
  1 - v_i`` substituted into the first cone: 2n variables and no linear row per sample instead of
  3n and one (both cones are ``v > 0`` already, so no bound is written). All 2n cones are one block.
  The scores are variables ``z = X w + b`` (n equality rows) and the cones read ``z_i`` alone: the
  dense data sit in equality rows, which interior-point solvers do not rescale every iteration,
  instead of in cone rows. ``benchmarks/conic.py`` times both forms with ECOS
  (``docs/benchmarks.md``).
* hinge ``max(0, margin - y_i z_i)`` through linear rows (:func:`formulations.encodings.add_hinge`).
* least squares (``"least_squares"``) ``1/2 (y_i - z_i)^2``: ``t >= sum_i s_i (y_i - z_i)^2`` as one standard SOC
  ``(t + 1, t - 1, 2 sqrt(s) . (y - z))`` (a rotated cone ``||q||^2 <= t`` written as
  ``||(t - 1, 2 q)|| <= t + 1``); the objective gains ``scale / 2 * t``.

Penalties are encoded through one explicit table keyed by penalty class,
:data:`PENALTY_ENCODERS` at the end of this module (like cvxpy's canonicalisation table): the
baselines of EYE Table 2 and EYE itself are written here, Facets, SCF and scaled penalties in
:mod:`formulations.facets_encoding`. :func:`add_penalty` looks a class up along its MRO, so a
subclass uses its parent's encoder. Adding a penalty is one encoder and one line of the table.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import scipy.sparse as sp

from formulations.encodings import add_hinge
from formulations.errors import NotRepresentableError
from formulations.facets_encoding import encode_facets_penalty
from formulations.penalties import (EYE, OWL, L1, ElasticNet, Facets, L2Squared, NaiveQ, Scaled,
                                  StronglyConvexFacets, WeightedL1, WeightedL2Squared)
from formulations.program import EXP, SOC, ProgramBuilder

#: ``lift(w) -> {block name: values}`` for the auxiliary blocks an encoder created.
Lift = Callable[..., Mapping[str, np.ndarray]]
#: ``encoder(builder, penalty, *, weights, name, scale) -> Lift``.
PenaltyEncoder = Callable[..., Lift]

LOSSES = ("logistic", "hinge", "least_squares")


# ====================================================================== losses
def _design(X, y, sample_weight):
    X = sp.csr_matrix(X, dtype=float)
    y = np.asarray(y, dtype=float).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries; give one label per row")
    s = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(-1)
    if s.shape != y.shape or np.any(s < 0) or not np.all(np.isfinite(s)):
        raise ValueError("sample_weight must be finite, >= 0 and have one entry per row of X")
    return X, y, s


def _scores(X: sp.csr_matrix, w: np.ndarray, b: float | None) -> np.ndarray:
    return X @ np.asarray(w, dtype=float) + (0.0 if b is None else float(b))


def add_logistic(builder: ProgramBuilder, X, y: np.ndarray, *, weights: str, intercept: str | None,
                 sample_weight: np.ndarray | None = None, name: str = "logistic",
                 scale: float = 1.0) -> Lift:
    """Logistic-loss epigraph ``l_i >= log(1 + exp(-y_i (x_i . w + b)))`` by exponential cones.

    Adds blocks ``name`` (``l``, shape (n,), cost ``scale * s_i``), ``name_v`` and ``name_z`` (the
    scores, shape (n,)), the equality rows ``name_scores``: ``z = X w + b``, and one cone block of
    ``2n`` exponential cones on ``(l, v, z)`` (see module docstring). ``y`` in {-1, +1}. Returns
    ``lift(w, b)``.
    """
    X, y, s = _design(X, y, sample_weight)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("logistic loss needs labels y in {-1, +1}; map {0, 1} labels with 2*y - 1")
    n = y.size
    builder.add_variables(name, n, cost=scale * s)
    builder.add_variables(name + "_v", n)
    builder.add_variables(name + "_z", n)
    eye = sp.identity(n, format="csr")
    scores = {name + "_z": eye, weights: -X}
    if intercept is not None:
        scores[intercept] = -np.ones((n, 1))
    builder.add_rows(name + "_scores", scores, lb=0.0, ub=0.0)
    # cones 0..n-1: (-l, 1, 1 - v); cones n..2n-1: (-y z - l, 1, v)
    stack = lambda first, second: sp.vstack([first, second], format="csr")  # noqa: E731
    empty = lambda cols: sp.csr_matrix((2 * n, cols))  # noqa: E731
    terms = {
        name: ProgramBuilder.interleave([stack(-eye, -eye), empty(n), empty(n)]),
        name + "_v": ProgramBuilder.interleave([empty(n), empty(n), stack(-eye, eye)]),
        name + "_z": ProgramBuilder.interleave([stack(sp.csr_matrix((n, n)), sp.diags(-y)), empty(n), empty(n)]),
    }
    constant = np.zeros((2 * n, 3))
    constant[:, 1] = 1.0
    constant[:n, 2] = 1.0  # the first cones' third entry is 1 - v
    builder.add_cones(EXP, 3, terms, constant.reshape(-1), name=name + "_exp")

    def lift(w, b=None):
        scores = _scores(X, w, b)
        loss = np.logaddexp(0.0, -y * scores)
        return {name: loss, name + "_v": np.exp(-y * scores - loss), name + "_z": scores}

    return lift


def add_hinge_loss(builder: ProgramBuilder, X, y: np.ndarray, *, weights: str, intercept: str | None,
                   sample_weight: np.ndarray | None = None, name: str = "hinge",
                   scale: float = 1.0, margin: float = 1.0) -> Lift:
    """Hinge loss ``max(0, margin - y_i (x_i . w + b))`` by linear rows (reuses ``add_hinge``)."""
    X, y, s = _design(X, y, sample_weight)
    add_hinge(builder, X, y, weights=weights, intercept=intercept, margin=margin,
              sample_weight=s, name=name, scale=scale)

    def lift(w, b=None):
        return {name: np.maximum(0.0, margin - y * _scores(X, w, b))}

    return lift


def add_least_squares(builder: ProgramBuilder, X, y: np.ndarray, *, weights: str,
                      intercept: str | None, sample_weight: np.ndarray | None = None,
                      name: str = "least_squares", scale: float = 1.0) -> Lift:
    """Least squares ``1/2 sum_i s_i (y_i - x_i . w - b)^2`` through one second-order cone.

    Adds block ``name`` (scalar ``t >= sum_i s_i r_i^2``, cost ``scale / 2``) and one SOC of
    dimension ``n + 2``: ``(t + 1, t - 1, 2 sqrt(s) . (y - X w - b))``.
    """
    X, y, s = _design(X, y, sample_weight)
    n, d = X.shape
    builder.add_variables(name, 1, lb=0.0, cost=0.5 * scale)
    root = np.sqrt(s)
    t_col = np.zeros((n + 2, 1))
    t_col[:2, 0] = 1.0
    terms = {name: sp.csr_matrix(t_col),
             weights: sp.vstack([sp.csr_matrix((2, d)), sp.diags(-2 * root) @ X], format="csr")}
    if intercept is not None:
        terms[intercept] = sp.csr_matrix(np.concatenate([[0.0, 0.0], -2 * root])[:, None])
    builder.add_cones(SOC, n + 2, terms, np.concatenate([[1.0, -1.0], 2 * root * y]), name=name + "_soc")

    def lift(w, b=None):
        r = y - _scores(X, w, b)
        return {name: np.array([float(s @ r ** 2)])}

    return lift


_LOSS_ENCODERS = {"logistic": add_logistic, "hinge": add_hinge_loss, "least_squares": add_least_squares}


def add_loss(builder: ProgramBuilder, loss: str, X, y, *, weights: str, intercept: str | None,
             sample_weight=None, name: str | None = None, scale: float = 1.0, **options) -> Lift:
    """Encode the loss named ``loss`` (``"logistic"``, ``"hinge"``, ``"least_squares"``); see above."""
    if loss not in _LOSS_ENCODERS:
        raise ValueError(f"unknown loss {loss!r}; choose one of {LOSSES}")
    return _LOSS_ENCODERS[loss](builder, X, y, weights=weights, intercept=intercept,
                                sample_weight=sample_weight, name=name or loss, scale=scale, **options)


# ================================================================== penalties
def penalty_encoder(penalty: Any) -> PenaltyEncoder:
    """The encoder of ``type(penalty)`` in :data:`PENALTY_ENCODERS` (first match along its MRO).

    An encoder adds variables, rows and cones such that, minimised over its auxiliary variables,
    the objective gains exactly ``scale * penalty.value(w)`` for the weight block ``weights``, and
    returns ``lift(w) -> {aux block: values}`` reaching that minimum.
    """
    for cls in type(penalty).__mro__:
        if cls in PENALTY_ENCODERS:
            return PENALTY_ENCODERS[cls]
    known = sorted(c.__name__ for c in PENALTY_ENCODERS)
    raise NotRepresentableError(
        f"no conic encoding for penalty {type(penalty).__name__}; encodable penalties: {known}. "
        "Use the proximal solver (solvers.proximal.gradient) for the others.")


def add_penalty(builder: ProgramBuilder, penalty: Any, *, weights: str, name: str = "penalty",
                scale: float = 1.0) -> Lift:
    """Encode ``scale * penalty.value(w)`` for the weight block ``weights``; returns ``lift(w)``."""
    if scale < 0:
        raise ValueError(f"penalty scale must be >= 0, got {scale}")
    return penalty_encoder(penalty)(builder, penalty, weights=weights, name=name, scale=float(scale))


# ============================================================ penalty encoders
def _add_abs_subset(builder: ProgramBuilder, weights: str, cols: np.ndarray, *, name: str, cost) -> None:
    """``a_k >= |w_{cols[k]}|`` (two rows per entry), block ``name`` of size ``len(cols)``, cost ``cost``."""
    d = builder.size(weights)
    k = cols.size
    builder.add_variables(name, k, lb=0.0, cost=cost)
    select = sp.csr_matrix((np.ones(k), (np.arange(k), cols)), shape=(k, d))
    eye = sp.identity(k, format="csr")
    builder.add_rows(name + "_pos", {name: eye, weights: -select}, lb=0.0)
    builder.add_rows(name + "_neg", {name: eye, weights: select}, lb=0.0)


def _add_squared_norm(builder: ProgramBuilder, weights: str, coef: np.ndarray, *, name: str,
                      cost: float) -> None:
    """``q >= ||coef . w||_2^2`` as the standard SOC ``(q + 1, q - 1, 2 coef . w)``; cost on ``q``.

    (``||(q - 1, 2 z)|| <= q + 1``  <=>  ``4 ||z||^2 <= 4 q``: the rotated cone as a standard one.)
    """
    cols = np.flatnonzero(coef)
    d = builder.size(weights)
    builder.add_variables(name, 1, lb=0.0, cost=cost)
    q_col = np.zeros((cols.size + 2, 1))
    q_col[:2, 0] = 1.0
    w_rows = sp.vstack([sp.csr_matrix((2, d)),
                        sp.csr_matrix((2 * coef[cols], (np.arange(cols.size), cols)), shape=(cols.size, d))],
                       format="csr")
    constant = np.zeros(cols.size + 2)
    constant[:2] = [1.0, -1.0]
    builder.add_cones(SOC, cols.size + 2, {name: sp.csr_matrix(q_col), weights: w_rows}, constant,
                      name=name + "_soc")


def _l1_l2(builder, weights, *, name, l1, l2) -> Lift:
    """Shared form ``sum_j l1_j |w_j| + 1/2 sum_j l2_j w_j^2`` (vectors ``l1``, ``l2`` >= 0)."""
    d = builder.size(weights)
    l1 = np.broadcast_to(np.asarray(l1, dtype=float), (d,))
    l2 = np.broadcast_to(np.asarray(l2, dtype=float), (d,))
    cols = np.flatnonzero(l1 > 0)
    if cols.size:
        _add_abs_subset(builder, weights, cols, name=name + "_abs", cost=l1[cols])
    if np.any(l2 > 0):
        _add_squared_norm(builder, weights, np.sqrt(l2), name=name + "_sq", cost=0.5)

    def lift(w):
        w = np.asarray(w, dtype=float)
        out = {}
        if cols.size:
            out[name + "_abs"] = np.abs(w[cols])
        if np.any(l2 > 0):
            out[name + "_sq"] = np.array([float(l2 @ (w * w))])
        return out

    return lift


def _encode_l1(builder, penalty: L1, *, weights, name, scale) -> Lift:
    return _l1_l2(builder, weights, name=name, l1=scale * penalty.lam, l2=0.0)


def _encode_l2_squared(builder, penalty: L2Squared, *, weights, name, scale) -> Lift:
    return _l1_l2(builder, weights, name=name, l1=0.0, l2=scale * penalty.lam)


def _encode_elastic_net(builder, penalty: ElasticNet, *, weights, name, scale) -> Lift:
    rho = penalty.l1_ratio
    return _l1_l2(builder, weights, name=name, l1=scale * penalty.lam * rho,
                  l2=scale * penalty.lam * (1.0 - rho))


def _check_size(builder, weights, vector, what) -> None:
    if vector.size != builder.size(weights):
        raise ValueError(f"{what} has {vector.size} entries but block {weights!r} has "
                         f"{builder.size(weights)} coefficients; give one per coefficient")


def _encode_weighted_l1(builder, penalty: WeightedL1, *, weights, name, scale) -> Lift:
    _check_size(builder, weights, penalty.weights, "WeightedL1.weights")
    return _l1_l2(builder, weights, name=name, l1=scale * penalty.weights, l2=0.0)


def _encode_weighted_l2_squared(builder, penalty: WeightedL2Squared, *, weights, name, scale) -> Lift:
    _check_size(builder, weights, penalty.weights, "WeightedL2Squared.weights")
    return _l1_l2(builder, weights, name=name, l1=0.0, l2=scale * penalty.weights)


def _encode_naive_q(builder, penalty: NaiveQ, *, weights, name, scale) -> Lift:
    """``lam ((1 - beta) ||r . w||^2 + 2 beta ||(1 - r) . w||_1)`` (EYE paper, section 3.2)."""
    _check_size(builder, weights, penalty.r, "NaiveQ.r")
    lam, beta, r = scale * penalty.lam, penalty.beta, penalty.r
    return _l1_l2(builder, weights, name=name, l1=2 * lam * beta * (1 - r), l2=2 * lam * (1 - beta) * r ** 2)


def _encode_owl(builder, penalty: OWL, *, weights, name, scale) -> Lift:
    """LP form of the sorted-L1 norm through sums of the k largest magnitudes.

    With ``a = |w|``, ``c`` non-increasing and ``delta_k = c_k - c_{k+1}`` (``c_{p+1} = 0``):
    ``sum_i c_i a_(i) = sum_k delta_k T_k(a)`` and the top-k sum is the LP
    ``T_k(a) = min_{tau_k, xi_k >= 0} k tau_k + sum_j xi_kj`` s.t. ``xi_kj >= a_j - tau_k``.
    Only the K levels with ``delta_k > 0`` are written: K (p + 1) variables, K p + 2 p rows
    (K = number of distinct non-zero weights; 2 for the paper's two-level OWL).
    """
    c = penalty.weights
    _check_size(builder, weights, c, "OWL.weights")
    p = c.size
    delta = c - np.append(c[1:], 0.0)
    levels = np.flatnonzero(delta > 0)  # k - 1 for the active top-k sums
    K = levels.size
    abs_name, tau_name, xi_name = name + "_abs", name + "_tau", name + "_xi"
    _add_abs_subset(builder, weights, np.arange(p), name=abs_name, cost=0.0)
    builder.add_variables(tau_name, K, cost=scale * delta[levels] * (levels + 1))
    builder.add_variables(xi_name, K * p, lb=0.0, cost=scale * np.repeat(delta[levels], p))
    builder.add_rows(name + "_topk", {
        xi_name: sp.identity(K * p, format="csr"),
        tau_name: sp.kron(sp.identity(K), np.ones((p, 1)), format="csr"),
        abs_name: -sp.kron(np.ones((K, 1)), sp.identity(p), format="csr"),
    }, lb=0.0)

    def lift(w):
        a = np.abs(np.asarray(w, dtype=float))
        tau = np.sort(a)[::-1][levels] if p else np.zeros(0)
        return {abs_name: a, tau_name: tau, xi_name: np.maximum(a[None, :] - tau[:, None], 0.0).reshape(-1)}

    return lift


def _encode_eye(builder, penalty: EYE, *, weights, name, scale) -> Lift:
    """EYE (EYE paper eq. 2): ``lam (A + sqrt(A^2 + B^2))``, ``A = ||(1-r) . w||_1``, ``B = ||r . w||_2``.

    Linear rows ``a_j >= |w_j|`` for the ``r_j < 1`` (cost ``lam (1 - r_j)``: the ``A`` term) and
    one SOC ``t >= ||(sum_j (1 - r_j) a_j, r . w)||_2`` (cost ``lam`` on ``t``) of dimension
    ``2 + #{r_j > 0}``. ``r`` may be fractional (section 3.4).
    """
    r = penalty.r
    _check_size(builder, weights, r, "EYE.r")
    d = r.size
    lam = scale * penalty.lam
    unknown = np.flatnonzero(r < 1)
    known = np.flatnonzero(r > 0)
    abs_name, t_name = name + "_abs", name + "_t"
    if unknown.size:
        _add_abs_subset(builder, weights, unknown, name=abs_name, cost=lam * (1 - r[unknown]))
    builder.add_variables(t_name, 1, lb=0.0, cost=lam)
    dim = 2 + known.size
    t_col = np.zeros((dim, 1))
    t_col[0, 0] = 1.0
    terms = {t_name: sp.csr_matrix(t_col),
             weights: sp.csr_matrix((r[known], (2 + np.arange(known.size), known)), shape=(dim, d))}
    if unknown.size:
        terms[abs_name] = sp.csr_matrix((1 - r[unknown], (np.ones(unknown.size, int), np.arange(unknown.size))),
                                        shape=(dim, unknown.size))
    builder.add_cones(SOC, dim, terms, name=name + "_soc")

    def lift(w):
        w = np.asarray(w, dtype=float)
        a = float((1 - r) @ np.abs(w))
        out = {t_name: np.array([np.hypot(a, np.linalg.norm(r * w))])}
        if unknown.size:
            out[abs_name] = np.abs(w[unknown])
        return out

    return lift


#: The penalty encoders, one line per penalty class (:func:`penalty_encoder` searches the MRO).

def encode_scaled_penalty(builder: ProgramBuilder, penalty: Any, *, weights: str, name: str,
                          scale: float = 1.0) -> Lift:
    """``scale * penalty.penalty.value(w / gamma)`` (eq. 9): the inner penalty on ``v = w / gamma``.

    Adds block ``name_scaled`` (``v``, box of ``w`` divided by gamma) and rows ``gamma v = w``,
    then encodes the inner penalty on ``v`` (Facets / SCF by
    :func:`formulations.facets_encoding.encode_facets_penalty`, others by :func:`add_penalty`).
    Returns ``lift(w)``.
    """
    g = float(penalty.gamma)
    lb, ub = builder.bounds(weights)
    builder.add_variables(name + "_scaled", lb.size, lb=lb / g, ub=ub / g)
    eye = sp.identity(lb.size, format="csr")
    builder.add_rows(name + "_scaled_rows", {name + "_scaled": g * eye, weights: -eye}, lb=0.0, ub=0.0)
    if isinstance(penalty.penalty, (Facets, StronglyConvexFacets)):
        inner = encode_facets_penalty(builder, penalty.penalty, weights=name + "_scaled", name=name, scale=scale)
    else:
        inner = add_penalty(builder, penalty.penalty, weights=name + "_scaled", name=name, scale=scale)
    return lambda w: {name + "_scaled": np.asarray(w, dtype=float) / g, **inner(np.asarray(w, dtype=float) / g)}


PENALTY_ENCODERS: dict[type, PenaltyEncoder] = {
    L1: _encode_l1,
    L2Squared: _encode_l2_squared,
    ElasticNet: _encode_elastic_net,
    WeightedL1: _encode_weighted_l1,
    WeightedL2Squared: _encode_weighted_l2_squared,
    NaiveQ: _encode_naive_q,
    OWL: _encode_owl,
    EYE: _encode_eye,
    Facets: encode_facets_penalty,
    StronglyConvexFacets: encode_facets_penalty,
    Scaled: encode_scaled_penalty,
}
