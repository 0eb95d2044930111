"""Small generated sequence-labelling data (a hidden Markov chain), for tests and examples.

Labels follow a Markov chain with a random sticky transition matrix; each token has two columns,
a word drawn from a label-dependent distribution over ``n_words`` words and a coarse tag
(``word id mod 3``), so unigram and bigram templates both carry signal.
"""
from __future__ import annotations

import numpy as np


def markov_sentences(n_sentences: int, n_labels: int = 3, n_words: int = 8, min_length: int = 1,
                     max_length: int = 6, seed: int = 0):
    """``(sentences, labels)``: lists of sentences, each a list of ``(word, tag)`` tuples, and the
    matching lists of label strings ``"L0"``, ``"L1"``, ..."""
    if n_sentences < 1 or n_labels < 1 or n_words < 1 or not 1 <= min_length <= max_length:
        raise ValueError("markov_sentences: need n_sentences, n_labels, n_words >= 1 and "
                         "1 <= min_length <= max_length")
    rng = np.random.default_rng(seed)
    transition = rng.dirichlet(np.ones(n_labels), size=n_labels) + 2 * np.eye(n_labels)
    transition /= transition.sum(1, keepdims=True)
    emission = rng.dirichlet(0.3 * np.ones(n_words), size=n_labels)
    lengths = rng.integers(min_length, max_length + 1, size=n_sentences)
    sentences, labels = [], []
    for length in lengths:
        states = [int(rng.integers(n_labels))]
        for _ in range(length - 1):
            states.append(int(rng.choice(n_labels, p=transition[states[-1]])))
        words = [int(rng.choice(n_words, p=emission[s])) for s in states]
        sentences.append([(f"w{w}", f"T{w % 3}") for w in words])
        labels.append([f"L{s}" for s in states])
    return sentences, labels
