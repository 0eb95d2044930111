"""Smooth data-fitting losses for the proximal path: value, gradient, Lipschitz constant, dual.

Every loss is an average over the ``n`` samples, :math:`f(w, b) = \\frac1n\\sum_i \\phi_i(x_i^\\top w + b)`,
bound to its data once (the Lipschitz constant of :math:`\\nabla f` is computed once, from the
data, on first use). The intercept ``b`` is never penalised. Losses work through a linear
*state* (``X w + b``, or ``G w`` for the Gram form of least squares) so a solver can extrapolate
states instead of recomputing matrix products: ``state(a x + (1-a) y) = a state(x) + (1-a) state(y)``.

* :class:`LeastSquares` :math:`\\frac1{2n}\\|y - Xw - b\\|^2` (intercept profiled out by centring).
* :class:`Logistic` :math:`\\frac1n\\sum\\log(1 + e^{-y_i z_i})`, ``y`` in {-1, +1}.
* :class:`SquaredHinge` :math:`\\frac1n\\sum\\max(0, 1 - y_i z_i)^2`.
* :class:`SmoothedHinge` :math:`\\frac1n\\sum h_\\delta(y_i z_i)` with the Huberised hinge
  :math:`h_\\delta(m) = 0` for :math:`m \\ge 1`, :math:`(1-m)^2/(2\\delta)` on :math:`[1-\\delta, 1]`,
  :math:`1 - m - \\delta/2` below.

``dual_point`` returns, for the Fenchel-dual candidate :math:`\\theta = -\\nabla_z F` (centred when an
intercept is fitted, so that :math:`\\mathbf 1^\\top\\theta = 0`), the vector :math:`X^\\top\\theta` and
the loss part of the dual objective :math:`\\alpha \\mapsto -F^*(-\\alpha\\theta)` (least squares,
logistic), from quantities the solver already has (no extra product with X).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh
from scipy.special import expit, xlogy

DualPoint = tuple[np.ndarray, Callable[[float], float]]


def _design(X: Any) -> Any:
    """``X`` as a CSR float64 matrix (sparse input; kept as is, not copied, when it already is
    one) or a float64 array; ValueError for a non-2-D, empty or non-finite design."""
    if sp.issparse(X):
        if not (isinstance(X, sp.csr_matrix) and X.dtype == np.float64):
            X = sp.csr_matrix(X, dtype=np.float64)
        if not np.isfinite(X.data.sum()) and not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or infinite values; impute or drop them first")
    else:
        X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D (n_samples, n_features) array, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("X has no samples; pass at least one row")
    if not sp.issparse(X) and not np.isfinite(X.sum()) and not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; impute or drop them first")
    return X


def _largest_eigenvalue(matvec: Callable[[np.ndarray], np.ndarray], dim: int) -> float:
    """Largest eigenvalue of a symmetric PSD operator of size ``dim``.

    Dense eigenvalues for ``dim <= 64`` (``dim`` products with the unit vectors), Lanczos (ARPACK,
    tol 1e-10, seeded random start) above.
    """
    if dim <= 64:
        dense = np.column_stack([matvec(e) for e in np.eye(dim)])
        return float(np.linalg.eigvalsh(0.5 * (dense + dense.T))[-1])
    op = LinearOperator((dim, dim), matvec=matvec, dtype=np.float64)
    v0 = np.random.default_rng(0).uniform(0.5, 1.5, size=dim)
    return float(eigsh(op, k=1, which="LA", tol=1e-10, v0=v0, return_eigenvectors=False)[0])


class _StateLoss:
    """Shared ``value`` / ``gradient`` of the losses, from their cached linear ``state(w, b)``.

    Subclasses define ``state``, ``value_state`` and ``gradient_state``; the solvers call those
    directly to reuse one matrix product per iteration. Least squares ignores ``b`` (its
    intercept is profiled out) and returns a zero intercept gradient.
    """

    def value(self, w: np.ndarray, b: float = 0.0) -> float:
        """:math:`f(w, b)`."""
        w = np.asarray(w, dtype=np.float64)
        return self.value_state(w, b, self.state(w, b))

    def gradient(self, w: np.ndarray, b: float = 0.0) -> tuple[np.ndarray, float]:
        """:math:`(\\nabla_w f, \\partial_b f)` (the second is 0 without a fitted intercept)."""
        w = np.asarray(w, dtype=np.float64)
        return self.gradient_state(self.state(w, b))


@dataclass(frozen=True, eq=False)
class LeastSquares(_StateLoss):
    """Least squares :math:`f(w) = \\frac{1}{2n}\\|y_c - X_c w\\|^2` (centred data when ``fit_intercept``).

    With ``fit_intercept`` the intercept is profiled out exactly: :math:`b^*(w) = \\bar y - \\bar x^\\top w`
    (:meth:`intercept`), so the solver sees no intercept variable. ``gram=True`` (dense ``X``
    only) precomputes :math:`G = X_c^\\top X_c / n` (p x p) and iterates in O(p^2) instead of O(np),
    as scikit-learn's ``lasso_path`` does when n >> p. Lipschitz constant:
    :math:`\\lambda_{max}(X_c^\\top X_c)/n`.
    """

    X: Any = field(repr=False)
    y: np.ndarray = field(repr=False)
    fit_intercept: bool = True
    gram: bool = False
    has_intercept_variable = False

    def __post_init__(self) -> None:
        X = _design(self.X)
        y = np.asarray(self.y, dtype=np.float64).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        n, p = X.shape
        x_mean = np.asarray(X.mean(axis=0)).ravel() if self.fit_intercept else np.zeros(p)
        y_mean = float(y.mean()) if self.fit_intercept else 0.0
        yc = y - y_mean
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        set_("X", X), set_("y", y), set_("x_mean", x_mean), set_("y_mean", y_mean), set_("yc", yc)
        set_("n", n), set_("p", p)
        if self.gram:
            if sp.issparse(X):
                raise ValueError("gram=True needs a dense X; pass X.toarray() or gram=False")
            G = (X.T @ X) / n - np.outer(x_mean, x_mean)
            set_("G", G)
            set_("Xty", (X.T @ yc) / n)
        set_("half_yy", float(yc @ yc) / (2 * n))

    @property
    def lipschitz(self) -> float:
        """:math:`\\lambda_{max}(X_c^\\top X_c)/n`, computed on first use (coordinate descent never asks)."""
        L = self.__dict__.get("_lipschitz")
        if L is None:
            if self.gram:
                L = _largest_eigenvalue(self.G.__matmul__, self.p)
            else:
                L = _largest_eigenvalue(lambda v: self._rmatvec(self._matvec(v)), self.p) / self.n if self.p else 0.0
            L = max(L, 0.0)
            object.__setattr__(self, "_lipschitz", L)
        return L

    def _matvec(self, w: np.ndarray) -> np.ndarray:
        return self.X @ w - float(self.x_mean @ w)

    def _rmatvec(self, r: np.ndarray) -> np.ndarray:
        return self.X.T @ r - self.x_mean * r.sum()

    def intercept(self, w: np.ndarray) -> float:
        """Optimal intercept for ``w``: :math:`\\bar y - \\bar x^\\top w` (0 without intercept)."""
        return self.y_mean - float(self.x_mean @ w) if self.fit_intercept else 0.0

    def state(self, w: np.ndarray, b: float = 0.0) -> np.ndarray:
        """Linear state: :math:`G w` (Gram form) or the centred scores :math:`X_c w`.

        In the Gram form a sparse ``w`` (support below p/4) costs O(p |support|), not O(p^2).
        """
        if not self.gram:
            return self._matvec(w)
        support = np.flatnonzero(w)
        if support.size * 4 < self.p:
            return self.G[:, support] @ w[support] if support.size else np.zeros(self.p)
        return self.G @ w

    def value_state(self, w: np.ndarray, b: float, state: np.ndarray) -> float:
        if self.gram:
            return 0.5 * float(w @ state) - float(self.Xty @ w) + self.half_yy
        r = self.yc - state
        return float(r @ r) / (2 * self.n)

    def gradient_state(self, state: np.ndarray) -> tuple[np.ndarray, float]:
        if self.gram:
            return state - self.Xty, 0.0
        return self._rmatvec(state - self.yc) / self.n, 0.0

    def intercept_at_zero(self) -> float:
        return self.y_mean

    def restrict(self, cols: np.ndarray) -> "LeastSquares":
        """The same loss on the columns ``cols`` only (Gram form: a sub-block of G, no new product).

        In the Gram form the Lipschitz constant of the restriction is the upper bound
        :math:`\\min(L, \\max_i \\sum_j |G_{ij}|)` (interlacing and Gershgorin over ``cols``).
        """
        cols = np.asarray(cols, dtype=np.intp)
        if not self.gram:
            return replace(self, X=self.X[:, cols])
        sub = object.__new__(LeastSquares)
        sub.__dict__.update(self.__dict__)
        G = np.ascontiguousarray(self.G[np.ix_(cols, cols)])
        # Valid upper bound on lambda_max(G_WW) without an eigen-solve: Gershgorin, capped by the
        # parent's constant (interlacing: lambda_max(G_WW) <= lambda_max(G)).
        gershgorin = float(np.abs(G).sum(axis=1).max()) if cols.size else 0.0
        for k, v in (("G", G), ("Xty", self.Xty[cols]), ("x_mean", self.x_mean[cols]), ("p", cols.size),
                     ("X", self.X[:0, cols]), ("_lipschitz", min(self.lipschitz, gershgorin))):
            object.__setattr__(sub, k, v)
        return sub

    def dual_point(self, w: np.ndarray, b: float, state: np.ndarray, value: float,
                   gradient: np.ndarray) -> DualPoint:
        """Dual candidate at ``w`` from its state, value and gradient (no extra matrix product).

        :math:`\\theta = (y_c - X_c w)/n`, so :math:`X^\\top\\theta = -\\nabla f(w)` and
        :math:`-F^*(-\\alpha\\theta) = -\\tfrac n2\\alpha^2\\|\\theta\\|^2 + \\alpha\\theta^\\top y_c`
        with :math:`\\tfrac n2\\|\\theta\\|^2 = f(w)`.
        """
        if self.gram:
            theta_y = 2 * self.half_yy - float(self.Xty @ w)
        else:
            theta_y = float((self.yc - state) @ self.yc) / self.n
        return -gradient, lambda alpha: -alpha * alpha * value + alpha * theta_y


@dataclass(frozen=True, eq=False)
class _MarginLoss(_StateLoss):
    """Shared code of the margin losses :math:`\\frac1n\\sum_i\\phi(y_i z_i)`, :math:`z = Xw + b`."""

    X: Any = field(repr=False)
    y: np.ndarray = field(repr=False)
    fit_intercept: bool = True
    curvature = 1.0  # sup phi''

    def __post_init__(self) -> None:
        X = _design(self.X)
        y = np.asarray(self.y, dtype=np.float64).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        labels = np.unique(y)
        if labels.size > 2 or not np.all(np.isin(labels, (-1.0, 0.0, 1.0))) or (
                labels.size == 2 and not np.isin(1.0, labels)):
            raise ValueError("y must hold two classes coded {-1, +1} or {0, 1}; "
                             "use milpscore.data.validation.validate_xy to convert other labels")
        y = np.where(y > 0, 1.0, -1.0)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "n", X.shape[0])
        object.__setattr__(self, "p", X.shape[1])
        object.__setattr__(self, "column_sums", np.asarray(X.sum(axis=0)).ravel())

    @property
    def lipschitz(self) -> float:
        """``curvature`` times :math:`\\lambda_{max}([X, 1]^\\top[X, 1])/n`, computed on first use
        (proximal Newton never asks; the Lanczos solve costs more than constructing the loss)."""
        L = self.__dict__.get("_lipschitz")
        if L is None:
            X, (n, p), k = self.X, self.X.shape, 1 if self.fit_intercept else 0

            def matvec(v):
                z = X @ v[:p] + (v[p] if k else 0.0)
                return np.concatenate([X.T @ z, [z.sum()]]) if k else X.T @ z

            L = self.curvature * (_largest_eigenvalue(matvec, p + k) / n if p + k else 0.0)
            object.__setattr__(self, "_lipschitz", L)
        return L

    has_intercept_variable = property(lambda self: self.fit_intercept)

    def state(self, w: np.ndarray, b: float = 0.0) -> np.ndarray:
        """Scores :math:`z = Xw + b`, shape (n,)."""
        return self.X @ w + (b if self.fit_intercept else 0.0)

    def value_state(self, w: np.ndarray, b: float, state: np.ndarray) -> float:
        return float(np.mean(self._phi(self.y * state)))

    def gradient_state(self, state: np.ndarray) -> tuple[np.ndarray, float]:
        dz = self.y * self._dphi(self.y * state) / self.n
        return self.X.T @ dz, (float(dz.sum()) if self.fit_intercept else 0.0)

    def fortran_columns(self) -> np.ndarray:
        """X in column-major (Fortran) order, copied once and cached: coordinate methods read columns."""
        cached = self.__dict__.get("_fortran")
        if cached is None:
            cached = np.asfortranarray(self.X)
            object.__setattr__(self, "_fortran", cached)
        return cached

    def restrict(self, cols: np.ndarray) -> "_MarginLoss":
        """The same loss on the columns ``cols`` only (a copy of those columns; L recomputed)."""
        return replace(self, X=self.X[:, np.asarray(cols, dtype=np.intp)])

    def intercept(self, w: np.ndarray) -> float:
        """0 without intercept; with one, the intercept is a solver variable (no closed form)."""
        if self.fit_intercept:
            raise ValueError("margin losses optimise the intercept as a variable; read it from the solver result")
        return 0.0


@dataclass(frozen=True, eq=False)
class Logistic(_MarginLoss):
    """Logistic loss :math:`\\frac1n\\sum_i\\log(1 + e^{-y_i(x_i^\\top w + b)})`; :math:`L = \\lambda_{max}([X, 1]^\\top[X, 1])/(4n)`."""

    curvature = 0.25

    @staticmethod
    def _phi(m: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -m)

    @staticmethod
    def _dphi(m: np.ndarray) -> np.ndarray:
        return -expit(-m)

    def second_derivative(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-sample derivatives of :math:`f` in the scores :math:`z`: :math:`(\\partial_{z_i}f, \\partial^2_{z_i}f)`.

        :math:`\\partial_{z_i}f = -y_i\\sigma(-y_iz_i)/n` and :math:`\\partial^2_{z_i}f = \\sigma(z_i)\\sigma(-z_i)/n`.
        """
        s = expit(-self.y * state)
        return -self.y * s / self.n, s * (1.0 - s) / self.n

    def intercept_at_zero(self) -> float:
        """Minimiser of :math:`f(0, b)`: the log-odds of the positive class (clipped for one class)."""
        if not self.fit_intercept:
            return 0.0
        pos = float(np.clip(np.mean(self.y > 0), 1e-12, 1 - 1e-12))
        return float(np.log(pos / (1 - pos)))

    def dual_point(self, w: np.ndarray, b: float, state: np.ndarray, value: float,
                   gradient: np.ndarray) -> DualPoint:
        """Dual candidate from the state and gradient at ``(w, b)`` (no extra matrix product).

        :math:`\\theta_i = y_i\\sigma(-y_i z_i)/n`, centred when an intercept is fitted (then
        :math:`X^\\top\\theta = -\\nabla_w f - \\bar\\theta X^\\top\\mathbf 1`);
        :math:`-F^*(-\\alpha\\theta) = -\\frac1n\\sum_i H(n\\alpha y_i\\theta_i)` with
        :math:`H(s) = s\\log s + (1-s)\\log(1-s)` on [0, 1] and ``-inf`` outside (a centred point
        may leave [0, 1]: the solver then uses its other criterion).
        """
        theta = self.y * expit(-self.y * state) / self.n
        xt_theta = -gradient
        if self.fit_intercept:
            shift = theta.mean()
            theta = theta - shift
            xt_theta = xt_theta - shift * self.column_sums

        def loss_dual(alpha: float) -> float:
            s = self.n * alpha * self.y * theta
            if np.any(s < 0) or np.any(s > 1):
                return -np.inf
            return -float(np.sum(xlogy(s, s) + xlogy(1 - s, 1 - s))) / self.n

        return xt_theta, loss_dual


@dataclass(frozen=True, eq=False)
class SquaredHinge(_MarginLoss):
    """Squared hinge :math:`\\frac1n\\sum_i\\max(0, 1 - y_i z_i)^2`; :math:`L = 2\\lambda_{max}([X, 1]^\\top[X, 1])/n`."""

    curvature = 2.0

    @staticmethod
    def _phi(m: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - m) ** 2

    @staticmethod
    def _dphi(m: np.ndarray) -> np.ndarray:
        return -2.0 * np.maximum(0.0, 1.0 - m)

    def intercept_at_zero(self) -> float:
        """Minimiser of :math:`f(0, b)`: :math:`\\bar y` (every sample active since :math:`|b| \\le 1`)."""
        return float(self.y.mean()) if self.fit_intercept else 0.0


@dataclass(frozen=True, eq=False)
class SmoothedHinge(_MarginLoss):
    """Huberised hinge with smoothing width ``smoothing`` = :math:`\\delta > 0`; :math:`L = \\lambda_{max}/(\\delta n)`."""

    smoothing: float = 0.5

    def __post_init__(self) -> None:
        if not (float(self.smoothing) > 0):
            raise ValueError(f"smoothing must be positive, got {self.smoothing!r}")
        object.__setattr__(self, "smoothing", float(self.smoothing))
        super().__post_init__()

    @property
    def curvature(self) -> float:  # type: ignore[override]
        return 1.0 / self.smoothing

    def _phi(self, m: np.ndarray) -> np.ndarray:
        d = self.smoothing
        u = 1.0 - m
        return np.where(u <= 0, 0.0, np.where(u <= d, u * u / (2 * d), u - d / 2))

    def _dphi(self, m: np.ndarray) -> np.ndarray:
        return -np.clip((1.0 - m) / self.smoothing, 0.0, 1.0)

    def intercept_at_zero(self) -> float:
        """Minimiser of :math:`f(0, b)` by bisection on the monotone derivative (b in [-1, 1])."""
        if not self.fit_intercept:
            return 0.0
        lo, hi = -1.0 - self.smoothing, 1.0 + self.smoothing
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if np.sum(self.y * self._dphi(self.y * mid)) < 0:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)




# ------------------------------------------------------------------ per-sample 1-D losses
def _softplus_neg(z: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, -z)


def _minus_sigmoid_neg(z: np.ndarray) -> np.ndarray:
    return -expit(-z)


#: Per-sample loss as a convex function ``f(z)`` of one affine argument and its slope ``f'(z)``
#: (a subgradient for the hinge): ``name -> (value, slope)``. The argument is the margin minus
#: the hinge margin ``z = y s - margin`` for ``"hinge"`` (``max(0, -z)``), the margin ``z = y s``
#: for ``"logistic"`` (``log(1 + e^{-z})``) and the residual ``z = s - y`` for ``"least_squares"``
#: (``z^2 / 2``), with ``s`` the score. Used by tangent-cut oracles (outer approximation) and by
#: the objectives of the formulations.
LOSS_1D: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]] = {
    "hinge": (lambda z: np.maximum(0.0, -np.asarray(z, dtype=float)),
              lambda z: -(np.asarray(z, dtype=float) < 0).astype(float)),
    "logistic": (_softplus_neg, _minus_sigmoid_neg),
    "least_squares": (lambda z: 0.5 * np.square(z), lambda z: np.asarray(z, dtype=float)),
}
