"""Incumbents for the exact solves: beam searches, local search, rounding, polishing."""
