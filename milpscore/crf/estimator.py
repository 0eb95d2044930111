"""``SparseCRF``: the elastic-net linear-chain CRF of the fused-lasso slides (Sokolovska et al. 2010).

``SparseCRF(rho1, rho2, templates=..., solver="owlqn" | "bcd" | "fista")`` learns
``min l(D; theta) + rho1 ||theta||_1 + rho2 / 2 ||theta||^2`` (``formulations/crf/criterion.py``)
over Wapiti-like feature templates, by OWL-QN (``solvers/proximal/crf_owlqn.py``, Andrew & Gao
2007, Wapiti's ``-a l-bfgs``; the default: it reaches every level of the objective and the test
chunk F1 first, ``docs/benchmarks.md``), blockwise coordinate descent (``crf_bcd.py``) or FISTA
(``crf_fista.py``), and labels by Viterbi.

Stopping: the fit ends at the first of ``max_iter`` outer iterations, ``time_limit`` seconds
(``status_ == "out_of_time"``), the KKT rule ``max_k kkt_k <= tol * rho1_max`` (``status_ ==
"converged"``) and, with ``stop_eps`` set, Wapiti's objective-window rule: ``F`` fell by less than
``stop_eps`` relatively over the last ``stop_window`` iterations (``status_ == "small_decrease"``).
The defaults ``stop_eps=0.02, stop_window=5`` are Wapiti's ``-e 0.02 -o 5`` (Wapiti also stops when
its training error rate is stable over ``-w 5`` iterations): a model as accurate on held-out text as
Wapiti's default one (``docs/benchmarks.md``), whose objective can still be a few percent above the
minimum and which keeps more weights; ``stop_eps=None`` runs to the KKT tolerance.

Input: a list of sentences, each a list of tokens, a token a tuple / list of column values (or a
single string, one column), with a list of label lists; or a DataFrame with one row per token, a
sentence-id column (``sentence_column``, rows of a sentence contiguous) and the label column
(``label_column``) or ``y``. ``active_features()`` is the table of non-zero weights per label —
what the L1 penalty keeps, the slides' interpretable output. ``save`` / ``load`` write and read a
versioned JSON file holding the templates, labels and non-zero weights only.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from formulations.crf.templates import FeatureSpace, Template, parse_templates, read_templates
from milpscore.crf.conll import chunk_scores
from solvers.limits import Limits
from solvers.proximal.crf_bcd import solve_bcd
from solvers.proximal.crf_fista import solve_fista
from solvers.proximal.crf_forward_backward import SPARSE_DEFAULT, decode, marginals
from solvers.proximal.crf_owlqn import solve_owlqn

FORMAT = "milpscore-crf"
FORMAT_VERSION = 1
SOLVERS = {"owlqn": solve_owlqn, "bcd": solve_bcd, "fista": solve_fista}


def default_templates(n_columns: int) -> tuple[Template, ...]:
    """Every column at offsets -1, 0, +1 as unigram observations, the current token's columns as
    bigram observations too, and ``*`` (label bias and label transitions)."""
    lines = ["*"]
    for c in range(n_columns):
        lines += [f"U:c{c}[-1]=%x[-1,{c}]", f"*:c{c}[0]=%x[0,{c}]", f"U:c{c}[+1]=%x[1,{c}]"]
    return parse_templates("\n".join(lines))


def _as_templates(templates, n_columns):
    if templates is None:
        return default_templates(n_columns)
    if isinstance(templates, Path) or (isinstance(templates, str) and "\n" not in templates
                                       and Path(templates).is_file()):
        return read_templates(templates)
    if isinstance(templates, str):
        return parse_templates(templates)
    if all(isinstance(t, Template) for t in templates):
        return tuple(templates)
    if all(isinstance(t, str) for t in templates):
        return parse_templates("\n".join(templates))
    raise TypeError("templates: give a pattern file path, the text of one, or a list of template strings "
                    "such as ['U:w=%x[0,0]', '*']")


class SparseCRF:
    """Elastic-net linear-chain CRF (see the module docstring).

    Parameters
    ----------
    rho1, rho2 : float
        L1 and squared-L2 weights of the penalty ``rho1 ||theta||_1 + rho2 / 2 ||theta||^2``
        (Wapiti's ``-1`` and ``-2``), in units of the summed (not averaged) log-likelihood.
    templates : path, str, list of str or None
        Wapiti pattern file, its text, or template lines; None: :func:`default_templates`.
    solver : "owlqn" (default), "bcd" or "fista"
    max_iter, tol, time_limit :
        Outer iterations, KKT tolerance relative to ``rho1_max`` (the solvers' stopping rule),
        wall seconds of the fit.
    stop_eps, stop_window :
        Wapiti's relative-decrease rule (module docstring); ``stop_eps=None`` turns it off.
    sparse : bool or None
        The slides' sparse forward-backward (True) or the dense one (False) in the full passes;
        None (default): sparse from 10 labels on, where it is the faster
        (``crf_forward_backward.use_sparse``).
    sentence_column, label_column : str
        Column names used with DataFrame input.
    """

    def __init__(self, rho1=0.5, rho2=0.01, templates=None, solver="owlqn", max_iter=1000, tol=1e-6, time_limit=None,
                 stop_eps=0.02, stop_window=5, sparse=SPARSE_DEFAULT, sentence_column="sentence",
                 label_column="label"):
        self.rho1 = rho1
        self.rho2 = rho2
        self.templates = templates
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.time_limit = time_limit
        self.stop_eps = stop_eps
        self.stop_window = stop_window
        self.sparse = sparse
        self.sentence_column = sentence_column
        self.label_column = label_column

    # ---------------------------------------------------------------- input
    def _tokens(self, X, y=None, need_labels=False):
        """``(columns[n, c], sentence_ptr, labels[n] or None, lengths, frame_index or None)``."""
        if isinstance(X, pd.DataFrame):
            if self.sentence_column not in X.columns:
                raise ValueError(f"DataFrame input needs the sentence-id column {self.sentence_column!r} "
                                 f"(set sentence_column=...)")
            ids = X[self.sentence_column].to_numpy()
            change = np.flatnonzero(ids[1:] != ids[:-1]) + 1
            if len(np.unique(ids)) != len(change) + (len(ids) > 0):
                raise ValueError(f"column {self.sentence_column!r}: the rows of each sentence must be contiguous; "
                                 f"sort the frame by sentence first")
            drop = [self.sentence_column]
            if y is None and self.label_column in X.columns:
                y = X[self.label_column].to_numpy()
                drop.append(self.label_column)
            columns = X.drop(columns=drop).astype(str).to_numpy(dtype=object)
            lengths = np.diff(np.concatenate([[0], change, [len(ids)]])) if len(ids) else np.zeros(0, int)
            labels = None if y is None else np.asarray(y).astype(str)
            if labels is not None and len(labels) != len(columns):
                raise ValueError(f"y has {len(labels)} labels for {len(columns)} token rows")
        else:
            sentences = list(X)
            if not sentences:
                raise ValueError("X: no sentence given")
            rows = [[tok] if isinstance(tok, str) else list(tok) for s in sentences for tok in s]
            widths = {len(r) for r in rows}
            if len(widths) > 1:
                raise ValueError(f"X: tokens have different numbers of columns {sorted(widths)}; give every token "
                                 f"the same columns")
            columns = np.array(rows, dtype=object).astype(str).astype(object)
            lengths = np.array([len(s) for s in sentences])
            labels = None
            if y is not None:
                y = list(y)
                if len(y) != len(sentences) or any(len(a) != len(b) for a, b in zip(y, sentences)):
                    raise ValueError("y must hold one label list per sentence, as long as the sentence")
                labels = np.array([str(v) for s in y for v in s], dtype=object)
        if need_labels and labels is None:
            raise ValueError(f"fit needs labels: pass y, or a {self.label_column!r} column in the DataFrame")
        if np.any(lengths == 0):
            raise ValueError("X: empty sentences are not allowed")
        ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return columns, ptr, labels, lengths, isinstance(X, pd.DataFrame)

    def _check(self):
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {sorted(SOLVERS)}, got {self.solver!r}")
        for name in ("rho1", "rho2"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.floating)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        if not self.tol > 0:
            raise ValueError(f"tol must be > 0, got {self.tol!r}")
        if self.stop_eps is not None and not (isinstance(self.stop_eps, (int, float, np.floating)) and self.stop_eps > 0):
            raise ValueError(f"stop_eps must be a number > 0 or None (no relative-decrease rule), got {self.stop_eps!r}")
        if not isinstance(self.stop_window, (int, np.integer)) or self.stop_window < 1:
            raise ValueError(f"stop_window must be an integer >= 1, got {self.stop_window!r}")

    # ---------------------------------------------------------------- fit / predict
    def fit(self, X, y=None, theta=None):
        """Learn the weights; ``theta`` warm-starts from a previous fit's ``coef_`` (same data)."""
        self._check()
        limits = Limits(time_limit=self.time_limit).started()  # the fit's one budget: encoding and solve
        columns, ptr, labels, _, _ = self._tokens(X, y, need_labels=True)
        templates = _as_templates(self.templates, columns.shape[1])
        self.space_, data = FeatureSpace.fit_encode(templates, columns, ptr, labels)
        fit = SOLVERS[self.solver](data, self.rho1, self.rho2, theta=theta, max_iter=self.max_iter, tol=self.tol,
                                   limits=limits, sparse=self.sparse, stop_eps=self.stop_eps,
                                   stop_window=self.stop_window)
        self.fit_ = fit
        self.coef_ = fit.theta
        self.classes_ = np.array(self.space_.labels)
        self.status_ = fit.status
        self.n_active_ = fit.n_active
        self.objective_ = fit.objective
        return self

    def _fitted(self):
        if not hasattr(self, "coef_"):
            raise ValueError("this SparseCRF is not fitted; call fit (or SparseCRF.load) first")

    def _encode(self, X):
        self._fitted()
        columns, ptr, _, lengths, frame = self._tokens(X)
        return self.space_.encode(columns, ptr), lengths, frame

    def predict(self, X):
        """Viterbi labels: a list of label lists, or one label per row for DataFrame input."""
        data, lengths, frame = self._encode(X)
        labels = self.classes_[decode(self.coef_, data)]
        return labels if frame else [list(p) for p in np.split(labels, np.cumsum(lengths)[:-1])]

    def predict_marginals(self, X):
        """``p(y_t = label | sentence)``: a list of ``(T, n_labels)`` arrays, or a DataFrame with one
        column per label for DataFrame input."""
        data, lengths, frame = self._encode(X)
        _, marg = marginals(self.coef_, data)
        if frame:
            return pd.DataFrame(marg, columns=self.classes_, index=X.index)
        return np.split(marg, np.cumsum(lengths)[:-1])

    def score(self, X, y=None):
        """Token accuracy."""
        columns, ptr, labels, _, frame = self._tokens(X, y, need_labels=True)
        predicted = self.predict(X)
        flat = np.asarray(predicted) if frame else np.array([v for s in predicted for v in s])
        return float(np.mean(flat == labels))

    def chunk_scores(self, X, y=None):
        """CoNLL phrase-level precision, recall and F1 (percent) of the predicted BIO tags."""
        columns, ptr, labels, lengths, frame = self._tokens(X, y, need_labels=True)
        predicted = self.predict(X)
        flat = np.asarray(predicted) if frame else np.array([v for s in predicted for v in s])
        cut = np.cumsum(lengths)[:-1]
        return chunk_scores([list(s) for s in np.split(labels, cut)], [list(s) for s in np.split(flat, cut)])

    # ---------------------------------------------------------------- reading the model
    def active_features(self) -> pd.DataFrame:
        """Non-zero weights: ``observation``, ``kind`` (unigram / bigram), ``previous`` (bigram's
        previous label, empty for unigrams), ``label``, ``weight``; largest ``|weight|`` first."""
        self._fitted()
        space, theta = self.space_, self.coef_
        n_labels = space.n_labels
        rows = []
        for kind, offsets, width in (("unigram", space.uni_offset, n_labels), ("bigram", space.bi_offset,
                                                                                n_labels * n_labels)):
            have = np.flatnonzero(offsets >= 0)
            if not len(have):
                continue
            block = theta[offsets[have][:, None] + np.arange(width)]
            obs, local = np.nonzero(block)
            previous = [""] * len(local) if kind == "unigram" else list(self.classes_[local // n_labels])
            rows.append(pd.DataFrame({"observation": np.array(space.observations, dtype=object)[have[obs]],
                                      "kind": kind, "previous": previous,
                                      "label": self.classes_[local % n_labels], "weight": block[obs, local]}))
        if not rows:
            return pd.DataFrame(columns=["observation", "kind", "previous", "label", "weight"])
        table = pd.concat(rows, ignore_index=True)
        return table.iloc[np.argsort(-np.abs(table["weight"].to_numpy()), kind="stable")].reset_index(drop=True)

    def active_counts(self) -> pd.DataFrame:
        """Per label: how many unigram and bigram weights are non-zero."""
        table = self.active_features()
        counts = pd.crosstab(table["label"], table["kind"]) if len(table) else pd.DataFrame()
        return counts.reindex(index=self.classes_, columns=["unigram", "bigram"], fill_value=0)

    # ---------------------------------------------------------------- persistence
    def to_dict(self) -> dict:
        self._fitted()
        space, theta = self.space_, self.coef_
        keep = [o for o in range(len(space.observations))
                if np.any(theta[self._block(o)] != 0)]
        weights = []
        for o in keep:
            block = theta[self._block(o)]
            nz = np.flatnonzero(block)
            weights.append([space.observations[o], nz.tolist(), block[nz].tolist()])
        params = {k: getattr(self, k) for k in ("rho1", "rho2", "solver", "max_iter", "tol", "time_limit", "stop_eps",
                                                 "stop_window", "sparse", "sentence_column", "label_column")}
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "params": params,
                "templates": [t.source for t in space.templates], "labels": list(space.labels), "weights": weights,
                "fit": {"status": self.status_, "objective": self.objective_, "n_active": self.n_active_}}

    def _block(self, o):
        space = self.space_
        start = space.uni_offset[o] if space.uni_offset[o] >= 0 else space.bi_offset[o]
        size = (space.n_labels if space.kind[o] & 1 else 0) + (space.n_labels ** 2 if space.kind[o] & 2 else 0)
        return slice(int(start), int(start + size))

    def save(self, path):
        """Write the model as JSON (templates, labels, non-zero weights, the fit's status)."""
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def from_dict(cls, doc: dict) -> SparseCRF:
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file (its 'format' field should be {FORMAT!r})")
        version = doc.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ValueError(f"{FORMAT} format version {version!r}: this library reads versions <= {FORMAT_VERSION}")
        for key in ("params", "templates", "labels", "weights"):
            if key not in doc:
                raise ValueError(f"{FORMAT} file: missing field {key!r}")
        labels = doc["labels"]
        if not labels or len(set(labels)) != len(labels) or not all(isinstance(v, str) for v in labels):
            raise ValueError(f"{FORMAT} file: 'labels' must be distinct strings")
        model = cls(**doc["params"])
        templates = parse_templates("\n".join(doc["templates"]))
        observations = [w[0] for w in doc["weights"]]
        if len(set(observations)) != len(observations):
            raise ValueError(f"{FORMAT} file: an observation appears twice in 'weights'")
        try:
            space = FeatureSpace.from_observations(templates, labels, observations)
        except KeyError as exc:
            raise ValueError(f"{FORMAT} file: observation kind {exc} is not 'u', 'b' or '*'") from None
        theta = np.zeros(space.n_params)
        model.space_ = space
        for o, (_, index, values) in enumerate(doc["weights"]):
            block = model._block(o)
            index, values = np.asarray(index, dtype=np.int64), np.asarray(values, dtype=float)
            if len(index) != len(values) or np.any(index < 0) or np.any(index >= block.stop - block.start) \
                    or not np.isfinite(values).all():
                raise ValueError(f"{FORMAT} file: weights of observation {observations[o]!r} are malformed")
            theta[block.start + index] = values
        fit = doc.get("fit", {})
        model.coef_ = theta
        model.classes_ = np.array(labels)
        model.status_ = fit.get("status", "loaded")
        model.objective_ = fit.get("objective")
        model.n_active_ = int(np.count_nonzero(theta))
        return model

    @classmethod
    def load(cls, path) -> SparseCRF:
        """Read a model written by :meth:`save` (validated; a clear error names what is wrong)."""
        try:
            doc = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc})") from None
        return cls.from_dict(doc)
