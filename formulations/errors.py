"""Exceptions that callers of the formulation builders may want to catch."""


class NotRepresentableError(ValueError):
    """A modelling choice cannot be encoded for the requested target.

    Raised before anything is built, with the alternatives in the message (for example an
    L2-squared penalty in a HiGHS MILP: HiGHS has no MIQP; use L1, or the conic relaxation).
    """
