"""Wapiti feature templates, compiled once into sparse integer arrays.

A template file (Wapiti's ``-p pattern`` format; Lavergne, Cappé & Yvon 2010) holds one template
per line, ``#`` starts a comment. The first character is the kind: ``U`` a unigram observation
(parameters ``mu[y, x]``, one per label), ``B`` a bigram observation (parameters
``lambda[y', y, x]``, one per label pair, active from the second token on), ``*`` both. The rest
of the line is text with commands that read the token at a relative offset and a column:

- ``%x[off,col]`` the value; ``%X[off,col]`` the value in lower case;
- ``%t[off,col,"re"]`` ``true`` / ``false``: does the regular expression match somewhere;
- ``%m[off,col,"re"]`` the first (leftmost) match, empty if none.

Outside the sentence the value is ``_x-1``, ``_x-2``, ... before and ``_x+1``, ... after.
Regular expressions are Wapiti's small dialect: ``.``, ``\\d`` digit, ``\\u`` / ``\\l`` upper /
lower case letter, ``\\a`` letter, ``\\w`` letter or digit, ``\\p`` punctuation, ``\\s`` space
(capitals negate), ``x?`` (greedy), ``x*`` (lazy: the shortest repetition that lets the rest
match), ``^`` and ``$`` anchors; they are translated to Python's ``re`` with the same
backtracking order, so the strings are the ones Wapiti builds.

The expanded string is the *observation* ``x`` (its first character lower-cased, as Wapiti stores
it). The parameter vector lays out, for each observation in order of first appearance, its
``Y`` unigram parameters and then its ``Y * Y`` bigram parameters (``y' * Y + y``), Wapiti's own
layout, so a Wapiti model file maps onto it by observation string.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

_COMMAND = re.compile(r'%([xXtTmM])\[\s*(@?)(-?\d+)\s*,\s*(\d+)\s*(?:,\s*"((?:[^"\\]|\\.)*)")?\s*\]')
_CLASSES = {"a": "[A-Za-z]", "d": "[0-9]", "l": "[a-z]", "p": r"[!-/:-@\[-`{-~]", "s": r"[ \t\n\r\f\v]",
            "u": "[A-Z]", "w": "[A-Za-z0-9]"}


def _translate(regex: str) -> re.Pattern:
    """Wapiti's regular-expression dialect as a Python pattern (see the module docstring)."""
    out, i = [], 0
    if regex.startswith("^"):
        out.append(r"\A")
        i = 1
    while i < len(regex):
        ch = regex[i]
        if ch == "$" and i == len(regex) - 1:
            out.append(r"\Z")
            i += 1
            continue
        if ch in "*?":
            raise ValueError(f"template regular expression {regex!r}: unescaped {ch!r} at position {i}; "
                             f"escape it as '\\{ch}'")
        if ch == "\\" and i + 1 < len(regex):
            code = regex[i + 1]
            if code.lower() in _CLASSES:
                atom = _CLASSES[code.lower()]
                atom = atom if code.islower() else "[^" + atom[1:]
            else:
                atom = re.escape(code)
            i += 2
        else:
            atom = r"[\s\S]" if ch == "." else re.escape(ch)
            i += 1
        if i < len(regex) and regex[i] == "*":
            atom += "*?"
            i += 1
        elif i < len(regex) and regex[i] == "?":
            atom += "?"
            i += 1
        out.append(atom)
    return re.compile("".join(out))


@dataclass(frozen=True)
class Template:
    """One template line: kind ``"u"``, ``"b"`` or ``"*"``, and its source text."""

    source: str

    @property
    def kind(self) -> str:
        return self.source[0].lower()

    @cached_property
    def items(self) -> tuple:
        """Literal strings and commands ``(type, lower, offset, column, regex)`` in order."""
        items, pos = [], 0
        text = self.kind + self.source[1:]
        for match in _COMMAND.finditer(text):
            if match.start() > pos:
                items.append(text[pos:match.start()])
            letter, absolute, offset, column, regex = match.groups()
            if absolute:
                raise ValueError(f"template {self.source!r}: absolute offsets '%x[@..]' are not supported; "
                                 f"use relative offsets")
            if letter.lower() in "tm" and regex is None:
                raise ValueError(f"template {self.source!r}: %{letter} needs a regular expression argument")
            items.append((letter.lower(), letter.isupper(), int(offset), int(column),
                          None if regex is None else _translate(regex)))
            pos = match.end()
        if "%" in text[pos:] or any(isinstance(i, str) and "%" in i for i in items):
            raise ValueError(f"template {self.source!r}: malformed command; expected %x[off,col], "
                             f"%t[off,col,\"re\"] or %m[off,col,\"re\"]")
        if pos < len(text):
            items.append(text[pos:])
        return tuple(items)

    @property
    def max_column(self) -> int:
        return max((i[3] for i in self.items if not isinstance(i, str)), default=-1)


def parse_templates(text: str) -> tuple[Template, ...]:
    """Templates from the text of a Wapiti pattern file (comments and blank lines dropped)."""
    templates = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].rstrip()
        if not line:
            continue
        if line[0].lower() not in "ub*":
            raise ValueError(f"template line {number} {line!r}: must start with 'U' (unigram), 'B' (bigram) "
                             f"or '*' (both)")
        template = Template(line)
        template.items  # noqa: B018 -- parse now so errors name the line
        templates.append(template)
    if not templates:
        raise ValueError("templates: no template found; give at least one line such as 'U:w=%x[0,0]'")
    return tuple(templates)


def read_templates(path: str | Path) -> tuple[Template, ...]:
    """Templates from a Wapiti pattern file."""
    return parse_templates(Path(path).read_text())


def _column_values(columns: np.ndarray, sentence_ptr: np.ndarray, offset: int, column: int) -> np.ndarray:
    """The column's value at token ``t + offset`` for every token, ``_x-k`` / ``_x+k`` outside."""
    n = columns.shape[0]
    starts = np.repeat(sentence_ptr[:-1], np.diff(sentence_ptr))
    ends = np.repeat(sentence_ptr[1:], np.diff(sentence_ptr))
    target = np.arange(n) + offset
    values = np.empty(n, dtype=object)
    values[:] = [str(v) for v in columns[np.clip(target, 0, max(n - 1, 0)), column].tolist()]
    before, after = target < starts, target >= ends
    values[before] = np.array([f"_x-{k}" if k <= 4 else "_x-#" for k in (starts - target)[before]], dtype=object)
    values[after] = np.array([f"_x+{k}" if k <= 4 else "_x+#" for k in (target - ends + 1)[after]], dtype=object)
    return values


def _map_unique(values: np.ndarray, function) -> np.ndarray:
    """``function`` applied once per distinct value of an object array (a dict, no sort)."""
    table = {v: function(v) for v in dict.fromkeys(values.tolist())}
    out = np.empty(len(values), dtype=object)
    out[:] = [table[v] for v in values.tolist()]
    return out


def _apply(item, columns: np.ndarray, sentence_ptr: np.ndarray, cache: dict) -> np.ndarray:
    kind, lower, offset, column, regex = item
    key = (offset, column)
    if key not in cache:
        cache[key] = _column_values(columns, sentence_ptr, offset, column)
    values = cache[key]
    if kind == "t":
        values = _map_unique(values, lambda v: "true" if regex.search(v) else "false")
    elif kind == "m":
        values = _map_unique(values, lambda v: m.group(0) if (m := regex.search(v)) else "")
    if lower:
        values = _map_unique(values, str.lower)
    return values


def expand(templates: tuple[Template, ...], columns: np.ndarray, sentence_ptr: np.ndarray) -> np.ndarray:
    """Observation strings, shape ``(n_tokens, n_templates)``, Wapiti's ``pat_exec``."""
    n = columns.shape[0]
    width = columns.shape[1] if columns.ndim == 2 else 0
    need = max(t.max_column for t in templates)
    if need >= width:
        raise ValueError(f"templates read column {need} but the tokens have {width} column(s) "
                         f"(labels excluded); fix the template or the data")
    out = np.empty((n, len(templates)), dtype=object)
    cache: dict = {}
    for j, template in enumerate(templates):
        text = np.full(n, "", dtype=object)
        for item in template.items:
            text = text + (item if isinstance(item, str) else _apply(item, columns, sentence_ptr, cache))
        out[:, j] = text
    return out


def _first_appearance(values) -> tuple[dict, np.ndarray]:
    """``(index, ids)``: distinct values numbered in order of first appearance, and each value's id."""
    index = dict(zip(dict.fromkeys(values), range(len(values))))
    ids = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    return index, ids


@dataclass(frozen=True)
class FeatureSpace:
    """Labels, observations and the parameter layout learned from training data.

    ``observations[o]`` is the observation string, ``kind[o]`` 1 (unigram), 2 (bigram) or 3
    (both); ``uni_offset[o]`` / ``bi_offset[o]`` the first parameter of its unigram (``Y``) /
    bigram (``Y * Y``) block, ``-1`` when it has none; ``n_params`` the length of ``theta``.
    """

    templates: tuple[Template, ...]
    labels: tuple[str, ...]
    observations: tuple[str, ...]
    kind: np.ndarray
    uni_offset: np.ndarray
    bi_offset: np.ndarray
    n_params: int

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @cached_property
    def index(self) -> dict[str, int]:
        return {o: i for i, o in enumerate(self.observations)}

    @classmethod
    def from_observations(cls, templates, labels, observations) -> FeatureSpace:
        kind = np.array([{"u": 1, "b": 2, "*": 3}[o[0]] for o in observations], dtype=np.int8)
        n_labels = len(labels)
        kind64 = kind.astype(np.int64)
        sizes = (kind64 & 1) * n_labels + ((kind64 & 2) >> 1) * n_labels * n_labels
        start = np.concatenate([[0], np.cumsum(sizes)])
        uni_offset = np.where(kind64 & 1, start[:-1], -1).astype(np.int64)
        bi_offset = np.where(kind64 & 2, start[:-1] + (kind64 & 1) * n_labels, -1).astype(np.int64)
        return cls(tuple(templates), tuple(labels), tuple(observations), kind, uni_offset, bi_offset,
                   int(start[-1]))

    @classmethod
    def fit(cls, templates, columns: np.ndarray, sentence_ptr: np.ndarray, labels: np.ndarray) -> FeatureSpace:
        """Observations and labels in order of first appearance in the training data."""
        return cls.fit_encode(templates, columns, sentence_ptr, labels)[0]

    @classmethod
    def fit_encode(cls, templates, columns: np.ndarray, sentence_ptr: np.ndarray,
                   labels: np.ndarray) -> tuple[FeatureSpace, Sequences]:
        """:meth:`fit` and :meth:`encode` of the same training data, the templates expanded once."""
        strings = expand(templates, columns, sentence_ptr)
        index, ids = _first_appearance(strings.ravel().tolist())
        label_index, y = _first_appearance([str(v) for v in np.asarray(labels).tolist()])
        space = cls.from_observations(templates, tuple(label_index), tuple(index))
        space.__dict__["index"] = index  # the cached_property, already built
        data = Sequences.build(space, ids.reshape(strings.shape), np.asarray(sentence_ptr, dtype=np.int64), y)
        return space, data

    def encode(self, columns: np.ndarray, sentence_ptr: np.ndarray, labels=None) -> Sequences:
        """The compiled sequences; observations unseen in training are dropped (as Wapiti does)."""
        strings = expand(self.templates, columns, sentence_ptr)
        n = strings.shape[0]
        index = self.index
        ids = np.fromiter(map(index.get, strings.ravel().tolist(), itertools.repeat(-1)), dtype=np.int64,
                          count=strings.size).reshape(strings.shape)
        if labels is None:
            y = np.full(n, -1, dtype=np.int64)
        else:
            label_index = {name: i for i, name in enumerate(self.labels)}
            labels = [str(v) for v in np.asarray(labels).tolist()]
            unknown = sorted(set(labels) - set(label_index))
            if unknown:
                raise ValueError(f"labels {unknown[:5]} were not seen in training; the model knows {list(self.labels)}")
            y = np.array([label_index[v] for v in labels], dtype=np.int64)
        return Sequences.build(self, ids, np.asarray(sentence_ptr, dtype=np.int64), y)


@dataclass(frozen=True)
class Sequences:
    """Compiled sentences: for token ``i``, ``uni_off[uni_ptr[i]:uni_ptr[i+1]]`` are the first
    parameters of its unigram blocks (``bi_*`` likewise, empty on the first token of a sentence,
    where no bigram feature fires), ``*_obs`` the observation ids; ``y`` label ids (-1 unknown)."""

    n_labels: int
    n_params: int
    sentence_ptr: np.ndarray
    y: np.ndarray
    uni_ptr: np.ndarray
    uni_obs: np.ndarray
    uni_off: np.ndarray
    bi_ptr: np.ndarray
    bi_obs: np.ndarray
    bi_off: np.ndarray
    n_observations: int

    @classmethod
    def build(cls, space: FeatureSpace, ids: np.ndarray, sentence_ptr: np.ndarray, y: np.ndarray) -> Sequences:
        n = ids.shape[0]
        first = np.zeros(n, dtype=bool)
        first[sentence_ptr[:-1][np.diff(sentence_ptr) > 0]] = True
        safe = np.where(ids >= 0, ids, 0)
        kind = np.where(ids >= 0, space.kind[safe], 0)
        uni_mask = (kind & 1) > 0
        bi_mask = ((kind & 2) > 0) & ~first[:, None]
        uni_ptr = np.concatenate([[0], np.cumsum(uni_mask.sum(1))]).astype(np.int64)
        bi_ptr = np.concatenate([[0], np.cumsum(bi_mask.sum(1))]).astype(np.int64)
        uni_obs, bi_obs = ids[uni_mask].astype(np.int64), ids[bi_mask].astype(np.int64)
        return cls(space.n_labels, space.n_params, sentence_ptr, y, uni_ptr, uni_obs,
                   space.uni_offset[uni_obs], bi_ptr, bi_obs, space.bi_offset[bi_obs], len(space.observations))

    @property
    def n_tokens(self) -> int:
        return int(self.sentence_ptr[-1])

    @property
    def n_sentences(self) -> int:
        return len(self.sentence_ptr) - 1

    def matrices(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Token-by-observation incidence matrices ``(unigram, bigram)``, shape ``(n_tokens, n_obs)``."""
        shape = (self.n_tokens, self.n_observations)
        uni = sp.csr_matrix((np.ones(len(self.uni_obs)), self.uni_obs, self.uni_ptr), shape=shape)
        bi = sp.csr_matrix((np.ones(len(self.bi_obs)), self.bi_obs, self.bi_ptr), shape=shape)
        return uni, bi
