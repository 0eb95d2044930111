"""One generic scikit-learn estimator over (formulation, pipeline options); the named classifiers
are thin presets of it (skglm's ``GeneralizedLinearEstimator`` pattern).

:class:`IntegerLinearClassifier` validates the data, builds the formulation's instance, runs one
method of :func:`solvers.pipeline.run` within one wall-clock budget and keeps the result:
``coef_``, ``intercept_`` (the model), ``fit_`` (the pipeline's :class:`~solvers.pipeline.Fit`),
``result_`` (the backend's own account), ``status_`` / ``gap_`` / ``objective_`` / ``bound_``
(the certificate on the true objective), ``projection_`` (an unproven exact fit: when its proof would
end, :attr:`solvers.pipeline.Fit.projection`; else None), ``program_`` (the program solved) and
``scorecard_``.
Prediction (``predict``) is scikit-learn's ``LinearClassifierMixin``: the positive class where
``decision_function(X) = X . coef_ + intercept_ > 0``.

A preset overrides :meth:`_formulation` (its spec from its own parameters) and, where it needs
to, :meth:`_method` (which pipeline method and backend), :meth:`_design` (features the
formulation sees, e.g. one-hot bins) and :meth:`_make_scorecard`.
"""
from __future__ import annotations

import textwrap
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted

from formulations.base import Formulation, Instance, Model
from formulations.coefficients import CoefficientSet
from milpscore.data.validation import LabelMap, feature_names, validate_features, validate_sample_weight, validate_xy
from milpscore.cards.scorecard import ScoreCard
from solvers.catalog import get_entry
from solvers.limits import Limits
from solvers.feasibility import FEASIBILITY_TOL
from solvers.pipeline import Fit, run


#: characters per line of a long note on the card (the score card's own width, about)
NOTE_WIDTH = 80


class IntegerLinearClassifier(LinearClassifierMixin, BaseEstimator):
    """Linear classifier ``sign(x . coef + intercept)`` learned by any catalog formulation.

    Parameters
    ----------
    formulation : str or formulation spec
        A name of :data:`solvers.catalog.CATALOG` (``"slim"``, ``"facets"``, ...) or a frozen
        spec (e.g. ``SLIM(c0=0.01, max_size=5)``).
    params : dict or None
        Keyword arguments of the spec when ``formulation`` is a name.
    method : str
        ``"exact"``, ``"relaxed"``, ``"rounding"``, ``"heuristic"`` or a catalog method.
    backend : str or None
        Registry backend of the exact / relaxed solve (None: the formulation's default).
    time_limit : float or None
        Wall-clock seconds of the whole fit (heuristics, relaxation and exact solve together).
        Time-limited branch and bound can return different models from run to run; for
        reproducible fits set ``time_limit=None`` and a ``node_limit``.
    node_limit, mip_rel_gap, threads, seed : see :class:`solvers.limits.Limits`.
    verbose : print the solver's log.
    memory_limit : MiB one step of the exact solve may allocate (None: half the memory available
        when the fit starts); a step over it is skipped, with its reason in ``fit_.steps``. A
        sparse ``X`` (scipy.sparse, pandas sparse columns) is densified within it, with a
        :class:`milpscore.data.validation.DensifiedWarning` (the programs read dense rows).

    Every preset also takes ``pos_label``: the class the points score for (predicted when
    ``total points + base score > 0``); default the larger label (``1`` of ``0/1``) or the later
    of two sorted strings, as scikit-learn's ``classes_``.
    """

    #: title printed on the score card
    _card_title = "Score card"

    def __init__(self, formulation: Any = "slim", params: dict | None = None, method: str = "exact",
                 backend: str | None = None, time_limit: float | None = 60.0, node_limit: int | None = None,
                 mip_rel_gap: float = 1e-6, threads: int = 1, seed: int = 0, verbose: bool = False,
                 memory_limit: float | None = None):
        self.formulation = formulation
        self.params = params
        self.method = method
        self.backend = backend
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.mip_rel_gap = mip_rel_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.memory_limit = memory_limit

    # ------------------------------------------------------------------ hooks of presets
    def _formulation(self, y: np.ndarray, names: list[str]) -> Formulation:
        """The formulation spec to fit (presets build it from their own parameters)."""
        if isinstance(self.formulation, str):
            return get_entry(self.formulation).spec_class(**dict(self.params or {}))
        if self.params:
            raise ValueError("params are only used when formulation is a catalog name; pass the spec alone")
        return self.formulation

    def _method(self) -> tuple[str, str | None, dict]:
        """``(method, backend, backend options)`` for :func:`solvers.pipeline.run`."""
        return self.method, self.backend, {}

    def _limits(self) -> Limits:
        """The budget of a fit with these parameters (not started: :meth:`fit` starts it)."""
        memory = getattr(self, "memory_limit", None)
        return Limits(time_limit=self.time_limit, node_limit=self.node_limit, mip_rel_gap=self.mip_rel_gap,
                      threads=self.threads, seed=self.seed, memory=None if memory is None else int(memory * 2**20),
                      n_jobs=getattr(self, "n_jobs", 1))

    def _budget(self, limits: Limits | None) -> Limits:
        """The started budget of a fit: ``limits`` (a larger call's, passed down unchanged) or the
        parameters' (:meth:`_limits`), started now."""
        return (self._limits() if limits is None else limits).started()

    def _design(self, X: np.ndarray, names: list[str], *, fitting: bool) -> np.ndarray:
        """Features the formulation sees (identity; the fused table bins them)."""
        return X

    def _coefficient_set(self, names: list[str]) -> CoefficientSet:
        """The preset's ``coefficients`` aligned to the columns by name, or the uniform set
        ``{-coef_bound..coef_bound}`` named after the columns (constraints refer to those names)."""
        if getattr(self, "coefficients", None) is not None:
            return self.coefficients.aligned(names)
        return CoefficientSet.uniform(names, self.coef_bound)

    def _start(self, instance: Instance, limits: Limits) -> Fit | None:
        """A start for the exact solve (a :class:`~solvers.pipeline.Fit`; None: the pipeline's own).

        The pipeline checks it with ``violations`` before using it, so a preset may offer any model.
        """
        return None

    def _model_coefficients(self, model: Model) -> tuple[np.ndarray, float]:
        """``(coef_, intercept_)`` of a model (identity; presets may change units)."""
        return model.coef, model.intercept

    # ------------------------------------------------------------------------- fitting
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True  # densified within memory_limit, with a warning (milpscore.data.validation)
        return tags

    def _prepare_input(self, X: Any) -> Any:
        """Hook: the table the generic fit validates (the fused table bins raw columns here)."""
        return X

    def build_instance(self, X: Any, y: Any, sample_weight: Any = None) -> Instance:
        """The instance :meth:`fit` would solve on ``(X, y)``, without solving (for ``export``)."""
        return self._instance(X, y, sample_weight)[0]

    def _instance(self, X: Any, y: Any, sample_weight: Any) -> tuple[Instance, list[str], LabelMap]:
        Xd, y_pm1, w, names, labels = self._rows(X, y, sample_weight)
        return self._formulation(y_pm1, names).instance(Xd, y_pm1, w), names, labels

    def _rows(self, X: Any, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, Any, list[str], LabelMap]:
        """The validated rows the formulation sees: ``(features, labels in {-1, 1}, weights, names,
        label map)``; sets ``feature_names_in_``, ``n_features_in_``, ``labels_`` and ``classes_``."""
        X = self._prepare_input(X)
        Xa, y_pm1, names, labels = validate_xy(X, y, getattr(self, "pos_label", None), owner=type(self).__name__,
                                               memory_limit=getattr(self, "memory_limit", None))
        w = validate_sample_weight(sample_weight, Xa.shape[0])
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.array(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_features_in_ = Xa.shape[1]
        self.labels_ = labels
        self.classes_ = np.array([labels.negative, labels.positive])
        return self._design(Xa, names, fitting=True), y_pm1, w, names, labels

    def fit(self, X: Any, y: Any, sample_weight: Any = None, *, limits: Limits | None = None) -> "IntegerLinearClassifier":
        """Validate ``X`` and ``y``, solve the formulation by the pipeline, build the score card.

        ``limits``: the started budget (:class:`solvers.limits.Limits`) of a larger call this fit is
        a part of (the command line's cross-validation folds), used unchanged; None: the budget of
        the parameters, started now (one deadline for the whole fit, passed down unchanged)."""
        limits = self._budget(limits)
        method, backend, options = self._method()
        instance, names, labels = self._instance(X, y, sample_weight)
        start = self._start(instance, limits) if method == "exact" else None
        if getattr(self, "relaxed", False) is True and method != "relaxed":
            # the relaxation first, on at most a fifth of the fit's budget: after an exact solve that ran
            # to the time limit it would find nothing left
            self.relaxed_fit_ = run(instance, "relaxed", backend, limits=limits.share(0.2), verbose=self.verbose,
                                    options=options)
        fit = run(instance, method, backend, limits=limits, source=start, verbose=self.verbose, options=options)
        return self._adopt(instance, fit, method, names, labels)

    def _adopt(self, instance: Instance, fit: Fit, method: str, names: list[str],
               labels: LabelMap) -> "IntegerLinearClassifier":
        """Keep ``fit`` (of ``method`` on ``instance``) as the fitted model, or raise when it has no
        model or breaks the program's constraints."""
        if method != "relaxed" and fit.model is not None and fit.violation > FEASIBILITY_TOL:
            raise RuntimeError(f"{type(self).__name__}: the {method} model breaks the program's constraints (largest "
                               f"violation {fit.violation:.3g}: {fit.message}); use method='exact' to get a model "
                               "that obeys them, or relax the constraints")
        if fit.model is None:
            raise RuntimeError(f"{type(self).__name__} found no model: {fit.status.value} ({fit.message}). "
                               + ("The specification is infeasible: relax the coefficient set or the constraints."
                                  if fit.status.value.startswith("infeasible") else "Raise time_limit."))
        self._keep(instance, fit)
        coef, intercept = self._model_coefficients(fit.model)
        self.coef_ = np.asarray(coef, dtype=float)
        self.intercept_ = float(intercept)
        self._warn_if_untrustworthy(method)
        self.scorecard_ = self._make_scorecard(names, labels)
        return self

    def _keep(self, instance: Instance, fit: Fit) -> None:
        self.instance_ = instance
        self.fit_ = fit
        self.result_ = fit.result
        self.status_ = fit.status.value
        self.gap_ = fit.gap
        self.objective_ = fit.objective
        self.bound_ = fit.bound
        self.fit_info_ = dict(getattr(instance, "info", {}), times=dict(fit.times), message=fit.message)
        self.projection_ = fit.projection

    @property
    def program_(self):
        """The program the fit solved (exact, or the relaxation for relaxed methods)."""
        check_is_fitted(self, "fit_")
        return self.instance_.exact() if self.fit_.method == "exact" else self.instance_.relaxed()

    def write_program(self, path: str) -> str:
        """Write :attr:`program_` as an LP / MPS file or a Pyomo script (by suffix: ``.lp``, ``.mps``,
        ``.py``), the points named after the features (``coef(age_ge_60)``)."""
        from solvers.backends.highs import write_model
        from solvers.backends.pyomo import write_pyomo_script

        program = self.program_
        names = self._coef_names()
        size = program.blocks["coef"].stop - program.blocks["coef"].start
        labels = {"coef": names} if len(names) == size else None
        writer = write_pyomo_script if str(path).lower().endswith(".py") else write_model
        return str(writer(program, path, labels))

    def _coef_names(self) -> list[str]:
        """Names of the program's ``coef`` entries (the features; the fused table names its bins)."""
        return self._feature_names(self.n_features_in_)

    def _warn_if_untrustworthy(self, method: str) -> None:
        if not np.any(self.coef_):
            warnings.warn(f"{type(self).__name__} returned a constant model (no feature has points): every row "
                          "gets the same class. Lower the L0 / penalty cost or check the data.", ConvergenceWarning,
                          stacklevel=3)
        if method == "relaxed" and self.status_ != "optimal":
            warnings.warn(f"{type(self).__name__}: the relaxation stopped before convergence (status "
                          f"{self.status_}: {self.fit_.message}); raise the iteration or time limit",
                          ConvergenceWarning, stacklevel=3)

    def _feature_names(self, n_features: int) -> list[str]:
        """Column names seen in fit (``x0 .. x{d-1}`` for arrays)."""
        return list(getattr(self, "feature_names_in_", feature_names(None, n_features)))

    def _notes(self) -> list[str]:
        """Card notes: how the model was found, and the operational constraints it obeys (checked)."""
        notes = [f"{self.fit_.method} ({self.result_.backend if self.result_ is not None else 'heuristic'}): "
                 f"status={self.status_} objective={self.objective_:.6g} bound={self.bound_:.6g} gap={self.gap_:.3g}"]
        if self.projection_ is not None:  # (in lines as wide as the card's)
            notes.extend(textwrap.wrap(self.projection_.sentence(), NOTE_WIDTH, subsequent_indent="  "))
        constraints = getattr(self.instance_.spec, "constraints", ())
        if constraints:
            check = getattr(self.instance_, "constraint_violation", None)
            obeyed = check is None or check(self.fit_.model) <= FEASIBILITY_TOL
            notes.append(("obeys" if obeyed else "BREAKS") + " the operational constraints:")
            notes.extend(f"  - {c.describe()}" for c in constraints)
        return notes

    def _make_scorecard(self, names: list[str], labels: LabelMap) -> ScoreCard:
        notes = self._notes()
        return ScoreCard.from_coefficients(self.coef_, self.intercept_, names, positive_label=labels.positive,
                                           negative_label=labels.negative, title=self._card_title, notes=notes,
                                           X=getattr(self.instance_, "X", None))

    # ---------------------------------------------------------------------- prediction
    def _validated(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "coef_")
        columns = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") and hasattr(X, "columns") else None
        Xa = validate_features(X, n_features=self.n_features_in_, columns=columns, owner=type(self).__name__,
                               memory_limit=getattr(self, "memory_limit", None))
        return self._design(Xa, self._feature_names(self.n_features_in_), fitting=False)

    def decision_function(self, X: Any) -> np.ndarray:
        """``x . coef_ + intercept_`` per row: the card's SCORE (sum of its points) plus its base score;
        ``> 0`` predicts ``classes_[1]`` (``pos_label``)."""
        return np.asarray(self._validated(X) @ self.coef_, dtype=float).reshape(-1) + self.intercept_

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where :meth:`decision_function` ``> 0``, else ``classes_[0]`` (0 rows give 0 labels)."""
        positive = self.decision_function(X) > 0  # first: an unfitted model raises NotFittedError
        return self.classes_[positive.astype(int)]
