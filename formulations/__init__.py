"""What to solve: the Program IR, coefficient sets, losses, penalties and formulation builders.

Imports numpy and scipy only; never imports :mod:`solvers` or :mod:`milpscore`.
"""
from formulations.program import Program, ProgramBuilder, Cone
from formulations.coefficients import CoefficientSet
from formulations.errors import NotRepresentableError

__all__ = ["Program", "ProgramBuilder", "Cone", "CoefficientSet", "NotRepresentableError"]
