"""CoNLL / Wapiti column files and the CoNLL phrase-level chunk F1 (``conlleval``).

A column file holds one token per line, columns separated by white space, the label last, and a
blank line between sentences (the CoNLL-2000 shared task format, which Wapiti reads).

Chunks follow ``conlleval`` (Tjong Kim Sang & Buchholz 2000): a tag is ``B-T``, ``I-T`` or ``O``
(also bare ``B`` / ``I``, of empty type); a chunk of type ``T`` starts at ``B-T``, or at ``I-T``
after ``O`` or after a tag of another type, and ends before the next start or ``O``. A predicted
chunk is correct when a true chunk has the same type, first token and last token.
Precision = correct / predicted chunks, recall = correct / true chunks, F1 their harmonic mean
(in percent, as ``conlleval`` prints them).
"""
from __future__ import annotations

from pathlib import Path


def read_conll(path: str | Path, labelled: bool = True) -> tuple[list[list[tuple[str, ...]]], list[list[str]] | None]:
    """``(sentences, labels)`` of a column file; tokens are tuples of the non-label columns.
    With ``labelled=False`` every column is a token column and ``labels`` is None."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file")
    sentences, labels, tokens, tags = [], [], [], []
    width = None
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        fields = line.split()
        if not fields:
            if tokens:
                sentences.append(tokens)
                labels.append(tags)
                tokens, tags = [], []
            continue
        if width is None:
            width = len(fields)
        if len(fields) != width:
            raise ValueError(f"{path}, line {number}: {len(fields)} columns where the file's first token has "
                             f"{width}; every token needs the same columns")
        if labelled:
            if width < 2:
                raise ValueError(f"{path}, line {number}: a labelled file needs at least one token column and the "
                                 f"label column")
            tokens.append(tuple(fields[:-1]))
            tags.append(fields[-1])
        else:
            tokens.append(tuple(fields))
    if tokens:
        sentences.append(tokens)
        labels.append(tags)
    if not sentences:
        raise ValueError(f"{path}: no token found (expected one token per line, a blank line between sentences)")
    return sentences, (labels if labelled else None)


def _split(tag: str) -> tuple[str, str]:
    if tag == "O":
        return "O", ""
    head, _, kind = tag.partition("-")
    return head, kind


def chunks(tags: list[str]) -> set[tuple[int, int, str]]:
    """``(first, last, type)`` of every chunk of one sentence's tags, by ``conlleval``'s rules."""
    out, start, prev_tag, prev_type = set(), None, "O", ""
    for i, tag in enumerate(list(tags) + ["O"]):
        head, kind = _split(tag)
        ends = prev_tag != "O" and (head in ("B", "O") or kind != prev_type)
        starts = head != "O" and (head == "B" or prev_tag == "O" or kind != prev_type)
        if ends and start is not None:
            out.add((start, i - 1, prev_type))
            start = None
        if starts:
            start = i
        prev_tag, prev_type = head, kind
    return out


def chunk_scores(true: list[list[str]], predicted: list[list[str]]) -> dict[str, float]:
    """``precision``, ``recall``, ``f1`` (percent) and chunk counts over sentences of tags."""
    if len(true) != len(predicted) or any(len(a) != len(b) for a, b in zip(true, predicted)):
        raise ValueError("chunk_scores: true and predicted must have the same sentences and lengths")
    n_true = n_pred = n_correct = 0
    for a, b in zip(true, predicted):
        ca, cb = chunks(a), chunks(b)
        n_true += len(ca)
        n_pred += len(cb)
        n_correct += len(ca & cb)
    precision = 100.0 * n_correct / n_pred if n_pred else 0.0
    recall = 100.0 * n_correct / n_true if n_true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "true_chunks": n_true, "predicted_chunks": n_pred,
            "correct_chunks": n_correct}

