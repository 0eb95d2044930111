"""Exceptions that callers of the formulation builders may want to catch."""


class NotRepresentableError(ValueError):
    """A modelling choice cannot be encoded for the requested target.

    Raised before anything is built, with the alternatives in the message (for example an
    L2-squared penalty in a HiGHS MILP: HiGHS has no MIQP; use L1, or the conic relaxation).
    """


class OverMemoryBudgetError(ValueError):
    """A step would allocate more than the memory budget (``memory_limit``).

    Raised before anything is allocated, with the size, the budget and the fix in the message --
    never Python's ``MemoryError``, which a caller cannot tell from a real exhaustion.
    """
