"""Penalties with exact, vectorised proximal operators.

Every class is a frozen dataclass with ``value(w) -> float`` and ``prox(v, step, out=None) ->
ndarray`` (``prox_{step * Omega}(v)``, ``step > 0`` or ValueError; length-0 and all-zero input
handled; ``out`` a preallocated result array, may be ``v``), and ``zero_gauge(z)`` (the smallest
``s`` with ``z in s * subdifferential(Omega)(0)``: the dual norm for norms, used for lambda_max
and duality gaps). Separable penalties also give ``coordinate_thresholds(p)`` and
``restrict(cols)`` (working sets in :mod:`solvers.proximal.gradient`).
``t`` below is the prox step, :math:`F` the 1-D Facets function of eq. 3 of the Facets paper,
:math:`A = \\|(1-r)\\odot w\\|_1`, :math:`B = \\|r\\odot w\\|_2`.

==============================================  ==========================================================
Constructor                                     ``value(w)``
==============================================  ==========================================================
``L1(lam)``                                     ``lam * ||w||_1``
``L2Squared(lam)``                              ``lam / 2 * ||w||_2^2``
``ElasticNet(lam, l1_ratio)``                   ``lam * (l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||_2^2)``
``WeightedL1(weights)``                         ``sum_j weights_j |w_j|``
``WeightedL2Squared(weights)``                  ``1/2 sum_j weights_j w_j^2``
``OWL(weights)``                                ``sum_i weights_i |w|_(i)`` (weights non-increasing, >= 0)
``Facets(lam, mu=1.0)``                         ``lam * sum_j F(|w_j| / mu)`` (eq. 3; grid unit ``mu``)
``StronglyConvexFacets(lam, mu=1.0, eps=0.01)``  ``lam * sum_j [(1-eps) F(|x_j|) + eps (|x_j| + x_j^2/2)]``,
                                                ``x = w / mu`` (eq. 14)
``Scaled(penalty, gamma)``                      ``penalty.value(w / gamma)`` (eq. 9; prox by eq. 16)
``TotalVariation(weights)``                     ``sum_k weights_k |w_{k+1} - w_k|`` (weights (p-1,) or scalar)
``FusedLasso(lam_tv, lam_l1)``                  ``lam_tv sum_k |w_{k+1} - w_k| + lam_l1 ||w||_1``
``Binarsity(block_sizes, weights=1.0)``         per block weighted TV (``d_j - 1`` weights per block),
                                                ``inf`` unless every block sums to 0;
                                                ``Binarsity.from_data(X_binary, block_sizes, strength)``
``EYE(r, lam=1.0)``                             ``lam * (A + sqrt(A^2 + B^2))`` (EYE paper eq. 2)
``NaiveQ(r, lam=1.0, beta=0.5)``                ``lam * ((1-beta) B^2 + 2 beta A)`` (EYE paper, section 3.1)
==============================================  ==========================================================

Facets' ``mu`` is the grid unit (the gamma of eq. 9), not the prox parameter of eq. 12; see
:mod:`formulations.penalties.facets` for the exact LP-epigraph form of ``value``.
"""
from .base import Penalty
from .eye import EYE, NaiveQ
from .facets import Facets, Scaled, StronglyConvexFacets, facets_1d
from .separable import L1, ElasticNet, L2Squared, WeightedL1, WeightedL2Squared
from .sorted import OWL
from .total_variation import Binarsity, FusedLasso, TotalVariation

__all__ = ["Penalty", "L1", "L2Squared", "ElasticNet", "WeightedL1", "WeightedL2Squared", "OWL",
           "Facets", "StronglyConvexFacets", "Scaled", "facets_1d", "TotalVariation", "FusedLasso",
           "Binarsity", "EYE", "NaiveQ"]
