"""``milpscore crf train.txt [test.txt]``: train the sparse CRF on CoNLL / Wapiti column files.

Prints the fit (solver status, objective, active weights, seconds), the token accuracy and the
CoNLL chunk F1 on the test file when one is given, and the active weights per label;
``--output model.json`` saves the model (``milpscore.crf.estimator.SparseCRF.load`` reads it).
"""
from __future__ import annotations

import argparse
import json

from milpscore.crf.conll import read_conll
from milpscore.crf.estimator import SparseCRF


def add_parser(sub) -> None:
    """Register the ``crf`` subcommand on ``milpscore``'s subparsers."""
    p = sub.add_parser("crf", help="train the elastic-net linear-chain CRF on CoNLL column files (Wapiti format)")
    p.add_argument("train", help="training file: one token per line, label last, blank line between sentences")
    p.add_argument("test", nargs="?", help="test file in the same format (scored: token accuracy, chunk F1)")
    p.add_argument("--rho1", type=float, default=0.5, help="L1 weight (Wapiti -1; default 0.5)")
    p.add_argument("--rho2", type=float, default=0.01, help="squared-L2 weight (Wapiti -2; default 0.01)")
    p.add_argument("--template", help="Wapiti pattern file (default: every column at offsets -1..1 and '*')")
    p.add_argument("--solver", choices=("owlqn", "bcd", "fista"), default="owlqn",
                   help="OWL-QN (default, Wapiti's l-bfgs), blockwise coordinate descent, or FISTA")
    p.add_argument("--max-iter", type=int, default=1000)
    p.add_argument("--tol", type=float, default=1e-6, help="KKT tolerance relative to rho1_max")
    p.add_argument("--stop-eps", type=float, default=0.02,
                   help="stop when F fell by less than this fraction over the last --stop-window iterations "
                        "(Wapiti's -e with its objective window -o; default 0.02); 0 turns the rule off")
    p.add_argument("--stop-window", type=int, default=5, help="Wapiti's -o (default 5)")
    p.add_argument("--time-limit", type=float, default=None, help="wall seconds of the fit")
    p.add_argument("--sparse", choices=("auto", "yes", "no"), default="auto", nargs="?", const="yes",
                   help="the slides' sparse forward-backward in full passes (auto: from 10 labels on)")
    p.add_argument("--output", help="save the model as JSON here")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--top", type=int, default=20, help="active weights listed in the text output")


def run(args: argparse.Namespace) -> int:
    sentences, labels = read_conll(args.train)
    model = SparseCRF(rho1=args.rho1, rho2=args.rho2, templates=args.template, solver=args.solver,
                      max_iter=args.max_iter, tol=args.tol, time_limit=args.time_limit,
                      stop_eps=args.stop_eps or None, stop_window=args.stop_window,
                      sparse={"auto": None, "yes": True, "no": False}[args.sparse])
    model.fit(sentences, labels)
    report = {"status": model.status_, "objective": model.objective_, "active": model.n_active_,
              "iterations": model.fit_.n_iter, "seconds": round(model.fit_.seconds, 2),
              "train_accuracy": model.score(sentences, labels)}
    if args.test:
        test_sentences, test_labels = read_conll(args.test)
        report["test_accuracy"] = model.score(test_sentences, test_labels)
        report.update({f"test_chunk_{k}": v for k, v in model.chunk_scores(test_sentences, test_labels).items()})
    if args.output:
        model.save(args.output)
        report["model"] = args.output
    if args.format == "json":
        print(json.dumps(report))
        return 0
    for key, value in report.items():
        print(f"{key:>24}: {value:.4f}" if isinstance(value, float) else f"{key:>24}: {value}")
    print()
    print("active weights per label:")
    print(model.active_counts().to_string())
    print()
    print(f"largest {args.top} weights:")
    print(model.active_features().head(args.top).to_string(index=False))
    return 0
