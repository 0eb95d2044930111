"""EYE-penalised risk: credible sparse models that prefer the expert's known factors.

Wang, Fujimaki & Motohashi, "Learning Credible Models" (KDD 2018), eq. 2:

.. math::

    \\min_{\\theta, b}\\; \\frac{1}{n}\\sum_i s_i\\, \\ell(y_i, x_i^\\top\\theta + b)
        + \\lambda\\, \\mathrm{eye}(\\theta),\\qquad
    \\mathrm{eye}(\\theta) = \\|(1-r)\\odot\\theta\\|_1
        + \\sqrt{\\|(1-r)\\odot\\theta\\|_1^2 + \\|r\\odot\\theta\\|_2^2}

with ``r`` the known-factor mask (1: a risk factor the expert already trusts; fractions allowed,
section 3.4). ``r = 0`` makes EYE twice the lasso. The program is the family of
:mod:`formulations.penalized` with the EYE epigraph (linear rows + one SOC); the relaxed program
is the model (there is nothing integer), solved by ECOS, and the proximal path uses the EYE prox.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from formulations.penalized import PenalizedInstance, bind, check_loss_choice
from formulations.penalties import EYE
from formulations.validation import check_number


@dataclass(frozen=True)
class EYEPenalized:
    """Modelling choices of the EYE-penalised risk (Wang et al. 2018, eq. 2; module docstring).

    Parameters
    ----------
    lam : penalty weight ``lambda`` (the paper's, since the loss is averaged over rows).
    known : the mask ``r``, one value in [0, 1] per feature; None: no known factor.
    loss : ``"logistic"``, ``"hinge"`` or ``"least_squares"``.
    fit_intercept : fit an unpenalised intercept.
    margin : hinge margin.
    """

    lam: float = 0.01
    known: Sequence[float] | None = None
    loss: str = "logistic"
    fit_intercept: bool = True
    margin: float = 1.0

    def __post_init__(self) -> None:
        check_number("lam", self.lam, strict=False)
        check_loss_choice(self.loss, self.margin)
        if self.known is not None:
            r = np.asarray(self.known, dtype=float).reshape(-1)
            if not np.all(np.isfinite(r)) or np.any(r < 0) or np.any(r > 1):
                raise ValueError(f"known must hold one value in [0, 1] per feature, got {list(self.known)}")
            object.__setattr__(self, "known", tuple(r.tolist()))

    def mask(self, d: int) -> np.ndarray:
        """``r`` for ``d`` features (zeros without known factors)."""
        if self.known is None:
            return np.zeros(d)
        if len(self.known) != d:
            raise ValueError(f"known has {len(self.known)} entries but X has {d} features; give one per feature")
        return np.asarray(self.known, dtype=float)

    def instance(self, X: Any, y: Any, sample_weight: Any = None) -> PenalizedInstance:
        d = np.shape(X)[1] if np.ndim(X) == 2 else 0
        return bind(self, EYE(self.mask(d), float(self.lam)), X, y, sample_weight)


__all__ = ["EYEPenalized"]
