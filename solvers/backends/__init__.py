"""Adapters to external solvers: a Program in, a :class:`solvers.result.Result` out."""
