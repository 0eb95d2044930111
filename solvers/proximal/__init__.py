"""Proximal methods: FISTA, prox-Newton, Gram coordinate descent, warm-started paths."""
