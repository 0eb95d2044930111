"""The combinatorial exact engine for sparse integer scores: route tables and their steps."""
