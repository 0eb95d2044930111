"""scikit-learn estimators, one per formulation, sharing :class:`IntegerLinearClassifier`.

=========================  ==========================================================
``SLIMClassifier``         SLIM MILP (0-1 loss, L0 + tiny L1, integer points), HiGHS
``ConvexRoundingClassifier``  convex-rounding / sparse-rounding LP + randomized rounding, or the ILP
``LocalSearchClassifier``  supermodular local search / hill climbing, ternary weights
``FacetsClassifier``       Facets / SCF penalty: proximal path, ECOS, or exact integer MILP
``EYEClassifier``          EYE credible-model penalty (ECOS or proximal path)
``FusedScoreClassifier``   fused-lasso hinge ILP: points table over ordered bins
=========================  ==========================================================
"""
from milpscore.estimators.base import FitOutcome, IntegerLinearClassifier
from milpscore.estimators.eye import EYEClassifier
from milpscore.estimators.facets import FacetsClassifier
from milpscore.estimators.fused import FusedScoreClassifier
from milpscore.estimators.rounding import ConvexRoundingClassifier, LocalSearchClassifier
from milpscore.estimators.slim import SLIMClassifier

__all__ = ["FitOutcome", "IntegerLinearClassifier", "SLIMClassifier", "ConvexRoundingClassifier",
           "LocalSearchClassifier", "FacetsClassifier", "EYEClassifier", "FusedScoreClassifier"]
