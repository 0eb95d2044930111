"""Sparse CRF on the CoNLL-2000 excerpt: our BCD and FISTA against Wapiti 1.5.0 and python-crfsuite.

Run: ``python benchmarks/crf.py [--rho1 0.5 --rho2 0.01 --bcd-time 420 --fista-time 420 --wapiti-bcd-iter 1,3]``.
Needs ``../shared/data/sequences`` and a Wapiti binary (``--wapiti``, default
``/tmp/crf_wapiti/wapiti``: ``fetch`` Jekub/Wapiti, ``git archive`` it into /tmp, ``make``);
python-crfsuite is run from its own venv (``--crfsuite-python``, default ``/tmp/crf_peers/bin/python``;
``python -m venv /tmp/crf_peers && /tmp/crf_peers/bin/pip install python-crfsuite``), skipped
when absent. Peers are never project dependencies.

Same data, templates (``chpattern.txt``), ``rho1``, ``rho2`` for every CRF. Wapiti's models are
read back into our parameter layout (by observation string and label name) and their objective
``F = l + rho1 |theta|_1 + rho2/2 |theta|^2`` is computed by our criterion, so every row's ``F`` is
the same function. ``F*`` is the least ``F`` any run reached; "time to F*(1+1e-4)" is read from
each run's per-iteration trace (ours: our histories; Wapiti l-bfgs: its printed ``obj`` and
cumulative times, checked against our criterion on its final model; Wapiti bcd prints no
objective, so models after a few iteration counts are evaluated and its time is bracketed).
A second table gives every run's time to common levels, ``F*(1 + eps)`` and the ``F`` of Wapiti
bcd's models; our BCD and FISTA get the same wall-time budget. The sparse forward-backward of
the slides is timed against the dense one on full passes (loss and gradient) at ``theta = 0`` and
at our BCD's final weights, in interleaved rounds.
python-crfsuite cannot express observation-dependent bigram features (its transitions are label
pairs only), so it gets the unigram observations of the same templates plus label transitions,
with ``c1 = rho1``, ``c2 = rho2 / 2``: its ``F`` is another function and only its accuracy, F1,
active weights and time are comparable. Test scores: token accuracy and conlleval chunk F1 on
``chtest`` (Wapiti's own ``label`` output for Wapiti). Timings are wall seconds on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from formulations.crf.templates import FeatureSpace, read_templates  # noqa: E402
from milpscore.conll import chunk_scores, read_conll  # noqa: E402
from solvers.proximal.crf_bcd import solve_bcd  # noqa: E402
from solvers.proximal.crf_fista import solve_fista  # noqa: E402
from solvers.proximal.crf_forward_backward import decode, loss_and_gradient  # noqa: E402
from solvers.proximal.crf_problem import objective_value  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "sequences"
CRFSUITE_WORKER = r'''
import json, sys, time
import pycrfsuite
job = json.load(open(sys.argv[1]))
trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
for xseq, yseq in zip(job["train_x"], job["train_y"]):
    trainer.append(xseq, yseq)
trainer.set_params({"c1": job["c1"], "c2": job["c2"], "max_iterations": job["max_iter"],
                    "feature.possible_states": True, "feature.possible_transitions": True, "epsilon": 1e-7,
                    "period": 10, "delta": 1e-7})
start = time.perf_counter()
trainer.train(job["model"])
seconds = time.perf_counter() - start
tagger = pycrfsuite.Tagger()
tagger.open(job["model"])
info = tagger.info()
active = len(info.state_features) + len(info.transitions)
pred = [tagger.tag(x) for x in job["test_x"]]
print(json.dumps({"seconds": seconds, "active": active, "pred": pred,
                  "iterations": trainer.logparser.iterations[-1]["num"] if trainer.logparser.iterations else None}))
'''


def compile_data(train_path, test_path, pattern):
    train, train_labels = read_conll(train_path)
    test, test_labels = read_conll(test_path)

    def flat(sentences, labels):
        columns = np.array([t for s in sentences for t in s], dtype=object)
        ptr = np.concatenate([[0], np.cumsum([len(s) for s in sentences])]).astype(np.int64)
        return columns, ptr, np.array([v for s in labels for v in s])

    tr, te = flat(train, train_labels), flat(test, test_labels)
    space = FeatureSpace.fit(read_templates(pattern), *tr)
    return space, space.encode(*tr), space.encode(te[0], te[1]), test_labels, te[1]


def scores(space, theta, test_data, test_labels, ptr):
    pred = np.array(space.labels)[decode(theta, test_data)]
    return _scores(pred, test_labels, ptr)


def _scores(pred_flat, test_labels, ptr):
    true_flat = np.array([v for s in test_labels for v in s])
    split = [list(pred_flat[a:b]) for a, b in zip(ptr[:-1], ptr[1:])]
    return 100 * float(np.mean(np.asarray(pred_flat) == true_flat)), chunk_scores(test_labels, split)["f1"]


def read_wapiti_model(path, space):
    """Wapiti's model file -> ``theta`` in our layout (``#mdl#``, reader, label and observation
    quarks, then ``index=hexfloat`` lines; Wapiti's layout is ours up to the observation and label
    orders, matched by name)."""
    lines = Path(path).read_text().splitlines()
    pos = 0

    def quark():
        nonlocal pos
        count = int(lines[pos].split("#")[2])
        pos += 1
        keys = []
        for _ in range(count):
            length, rest = lines[pos].split(":", 1)
            keys.append(rest[:int(length)])
            pos += 1
        return keys

    n_patterns = int(lines[1].split("#")[2].split("/")[0])
    pos = 2 + n_patterns
    labels, observations = quark(), quark()
    n_labels = len(labels)
    perm = np.array([space.labels.index(lab) for lab in labels])
    offsets, size = [], 0
    for obs in observations:
        kind = {"u": 1, "b": 2, "*": 3}[obs[0]]
        u = size if kind & 1 else -1
        size += n_labels if kind & 1 else 0
        b = size if kind & 2 else -1
        size += n_labels * n_labels if kind & 2 else 0
        offsets.append((u, b))
    starts = np.array([o[0] if o[0] >= 0 else o[1] for o in offsets])
    index = space.index
    theta = np.zeros(space.n_params)
    for line in lines[pos:]:
        if "=" not in line:
            continue
        f, value = line.split("=")
        f, value = int(f), float.fromhex(value)
        o = int(np.searchsorted(starts, f, side="right") - 1)
        u, b = offsets[o]
        ours = index[observations[o]]
        if u >= 0 and u <= f < u + n_labels:
            theta[space.uni_offset[ours] + perm[f - u]] = value
        else:
            d = f - b
            theta[space.bi_offset[ours] + perm[d // n_labels] * n_labels + perm[d % n_labels]] = value
    return theta


def run_wapiti(binary, algorithm, rho1, rho2, pattern, train, test, iterations, workdir, extra=()):
    model = Path(workdir) / f"{algorithm}-{iterations}.mdl"
    cmd = [binary, "train", "-a", algorithm, "-1", str(rho1), "-2", str(rho2), "-p", str(pattern), "-t", "1",
           "-i", str(iterations), "-w", "0", *extra, str(train), str(model)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"wapiti failed: {done.stderr[-500:]}")
    trace = [(float(m.group(3)), None if m.group(2) == "NA" else float(m.group(2)), int(m.group(1)))
             for m in re.finditer(r"\[\s*(\d+)\]\s+obj=(\S+)\s+act=\d+\s+err=.*?time=[\d.]+s/([\d.]+)s", done.stderr)]
    out = Path(workdir) / f"{algorithm}-{iterations}.out"
    subprocess.run([binary, "label", "-m", str(model), str(test), str(out)], capture_output=True, check=True)
    pred = [line.split()[-1] for line in out.read_text().splitlines() if line.split()]
    return model, trace, wall, pred


def time_to(history, target):
    """First time at which the trace's F is <= target (None if never)."""
    for seconds, value, *_ in history:
        if value is not None and value <= target:
            return seconds
    return None


def fmt(value, spec=".1f"):
    return "-" if value is None else format(value, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rho1", type=float, default=0.5)
    parser.add_argument("--rho2", type=float, default=0.01)
    parser.add_argument("--bcd-time", type=float, default=420.0)
    parser.add_argument("--fista-time", type=float, default=420.0)
    parser.add_argument("--wapiti-bcd-iter", default="1,3")
    parser.add_argument("--lbfgs-iter", type=int, default=300)
    parser.add_argument("--wapiti", default="/tmp/crf_wapiti/wapiti")
    parser.add_argument("--crfsuite-python", default="/tmp/crf_peers/bin/python")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"{args.data} is absent: this benchmark reads the CoNLL-2000 excerpt from ../shared/data/sequences")
    train, test, pattern = args.data / "chtrain.txt", args.data / "chtest.txt", args.data / "chpattern.txt"
    rho1, rho2 = args.rho1, args.rho2
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores; one thread per run "
          f"(OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}); the machine is shared")
    start = time.perf_counter()
    space, data, test_data, test_labels, test_ptr = compile_data(train, test, pattern)
    compile_seconds = time.perf_counter() - start
    print(f"chtrain: {data.n_sentences} sentences, {data.n_tokens} tokens, {space.n_labels} labels, "
          f"{len(space.observations)} observations, {space.n_params} weights; templates compiled in "
          f"{compile_seconds:.1f} s; rho1 = {rho1}, rho2 = {rho2}")
    rows = {}
    work = tempfile.mkdtemp(prefix="crf_bench_")
    have_wapiti = Path(args.wapiti).exists()

    # rounds interleaved: Wapiti bcd, ours bcd, Wapiti l-bfgs, ours fista, Wapiti bcd longer
    wapiti_bcd = []
    bcd_iters = [int(k) for k in args.wapiti_bcd_iter.split(",") if k]
    if have_wapiti and bcd_iters:
        wapiti_bcd.append(run_wapiti(args.wapiti, "bcd", rho1, rho2, pattern, train, test, bcd_iters[0], work))
    bcd = solve_bcd(data, rho1, rho2, max_iter=100000, tol=1e-7, time_limit=args.bcd_time)
    rows["ours bcd"] = dict(fit=bcd, theta=bcd.theta, history=bcd.history)
    if have_wapiti:
        model, trace, wall, pred = run_wapiti(args.wapiti, "l-bfgs", rho1, rho2, pattern, train, test,
                                              args.lbfgs_iter, work, extra=("-e", "1e-8"))
        theta = read_wapiti_model(model, space)
        rows["wapiti l-bfgs (owl-qn)"] = dict(theta=theta, history=[(t, f) for t, f, _ in trace], pred=pred,
                                              printed=trace[-1][1], iterations=trace[-1][2])
    fista = solve_fista(data, rho1, rho2, max_iter=100000, tol=1e-7, time_limit=args.fista_time)
    rows["ours fista"] = dict(fit=fista, theta=fista.theta, history=fista.history)
    if have_wapiti:
        for k in bcd_iters[1:]:
            wapiti_bcd.append(run_wapiti(args.wapiti, "bcd", rho1, rho2, pattern, train, test, k, work))
        for model, trace, wall, pred in wapiti_bcd:
            theta = read_wapiti_model(model, space)
            loss, _ = loss_and_gradient(theta, data)
            rows[f"wapiti bcd, {trace[-1][2]} iterations"] = dict(wapiti_bcd=True,
                theta=theta, history=[(trace[-1][0], objective_value(loss, theta, rho1, rho2))], pred=pred,
                iterations=trace[-1][2])
    for row in rows.values():
        loss, _ = loss_and_gradient(row["theta"], data)
        row["F"] = objective_value(loss, row["theta"], rho1, rho2)
    best = min(row["F"] for row in rows.values())
    target = best * (1 + 1e-4)

    print()
    print(f"F* = {best:.4f} (least F reached); target F*(1+1e-4) = {target:.4f}")
    print()
    print("| run | iterations | final F | (F - F*)/F* | seconds to F*(1+1e-4) | total seconds | active weights "
          "| token accuracy % | chunk F1 % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, row in rows.items():
        if "pred" in row:
            acc, f1 = _scores(np.array(row["pred"]), test_labels, test_ptr)
        else:
            acc, f1 = scores(space, row["theta"], test_data, test_labels, test_ptr)
        fit = row.get("fit")
        iterations = fit.n_iter if fit else row.get("iterations")
        total = fit.seconds if fit else row["history"][-1][0]
        print(f"| {name} | {iterations} | {row['F']:.4f} | {(row['F'] - best) / best:.1e} | "
              f"{fmt(time_to(row['history'], target))} | {total:.1f} | {np.count_nonzero(row['theta'])} | "
              f"{acc:.2f} | {f1:.2f} |")
    if "wapiti l-bfgs (owl-qn)" in rows:
        row = rows["wapiti l-bfgs (owl-qn)"]
        print()
        print(f"Wapiti l-bfgs printed obj = {row['printed']:.2f} at its last iteration; our criterion on its "
              f"saved model: F = {row['F']:.2f} (the same function).")
    crfsuite = run_crfsuite(args, space, data, test_data, test_labels, test_ptr, rho1, rho2, work)
    if crfsuite:
        print()
        print("python-crfsuite (L-BFGS / OWL-QN, unigram observations of the same templates + label transitions; "
              "c1 = rho1, c2 = rho2/2; a different objective, so no F column):")
        print()
        print("| run | iterations | seconds | active weights | token accuracy % | chunk F1 % |")
        print("|---|---:|---:|---:|---:|---:|")
        print(f"| python-crfsuite lbfgs | {crfsuite['iterations']} | {crfsuite['seconds']:.1f} | "
              f"{crfsuite['active']} | {crfsuite['acc']:.2f} | {crfsuite['f1']:.2f} |")
    level_table(rows, best)
    print()
    print("Sparse forward-backward (slides) vs dense: one full pass (loss and gradient), median of 5 "
          "interleaved rounds:")
    for name, theta in (("theta = 0", np.zeros(data.n_params)), ("our BCD's final theta", bcd.theta)):
        seconds = {True: [], False: []}
        for _ in range(5):
            for sparse in (False, True):
                clock = time.perf_counter()
                loss_and_gradient(theta, data, sparse=sparse)
                seconds[sparse].append(time.perf_counter() - clock)
        dense_s, sparse_s = np.median(seconds[False]), np.median(seconds[True])
        print(f"{name}: dense {dense_s:.3f} s, sparse {sparse_s:.3f} s, sparse / dense = {sparse_s / dense_s:.2f}")
    step = max(1, len(bcd.history) // 15)
    per_sweep = [f"{h[0]:.0f} s F={h[1]:.1f}" for h in bcd.history[::step]]
    print()
    print(f"Our BCD trace (cumulative seconds, F after every {step} sweeps of {bcd.n_iter}): " + "; ".join(per_sweep))
    for model, trace, wall, pred in wapiti_bcd:
        print(f"Wapiti bcd -i {trace[-1][2]}: cumulative seconds per iteration "
              + ", ".join(f"{t:.0f}" for t, _, _ in trace))


def level_table(rows, best):
    """Seconds each run took to reach ``F*(1 + eps)`` and the ``F`` of Wapiti bcd's evaluated
    iteration counts (Wapiti bcd: the first of those models at or below the level), with the
    targets' ratios (our BCD against our FISTA and against Wapiti bcd)."""
    levels = [(f"F*(1 + {eps:g})", best * (1 + eps)) for eps in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 1e-4)]
    traces = {name: row["history"] for name, row in rows.items() if not row.get("wapiti_bcd")}
    wapiti_bcd = sorted((row["history"][-1][0], row["F"], row["iterations"]) for row in rows.values()
                        if row.get("wapiti_bcd"))
    if wapiti_bcd:
        traces["wapiti bcd"] = [(t, f) for t, f, _ in wapiti_bcd]
        levels += [(f"{f:.1f} (wapiti bcd, {k} iterations)", f) for _, f, k in wapiti_bcd]
    print()
    print("Seconds to reach each level of F (- : not reached within the run):")
    print()
    print("| level | " + " | ".join(traces) + " | ours bcd / ours fista | ours bcd / wapiti bcd |")
    print("|---" * (len(traces) + 3) + "|")
    for label, level in levels:
        times = {name: time_to(trace, level) for name, trace in traces.items()}
        ratios = [(times.get("ours bcd"), times.get(other)) for other in ("ours fista", "wapiti bcd")]
        print(f"| {label} | " + " | ".join(fmt(t) for t in times.values()) + " | "
              + " | ".join(fmt(a / b if a is not None and b else None, ".2f") for a, b in ratios) + " |")


def run_crfsuite(args, space, data, test_data, test_labels, test_ptr, rho1, rho2, work):
    if not Path(args.crfsuite_python).exists():
        print("\npython-crfsuite: no venv at", args.crfsuite_python, "- skipped")
        return None
    observations = np.array(space.observations, dtype=object)

    def attributes(d):
        out = []
        for a, b in zip(d.sentence_ptr[:-1], d.sentence_ptr[1:]):
            out.append([[str(o) for o in observations[d.uni_obs[d.uni_ptr[i]:d.uni_ptr[i + 1]]]] for i in range(a, b)])
        return out

    labels = np.array(space.labels)
    train_y = [list(labels[data.y[a:b]]) for a, b in zip(data.sentence_ptr[:-1], data.sentence_ptr[1:])]
    job = {"train_x": attributes(data), "train_y": train_y, "test_x": attributes(test_data), "c1": rho1,
           "c2": rho2 / 2, "max_iter": args.lbfgs_iter, "model": str(Path(work) / "crfsuite.model")}
    (Path(work) / "job.json").write_text(json.dumps(job))
    (Path(work) / "worker.py").write_text(CRFSUITE_WORKER)
    done = subprocess.run([args.crfsuite_python, str(Path(work) / "worker.py"), str(Path(work) / "job.json")],
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if done.returncode:
        print("\npython-crfsuite failed:", done.stderr[-300:])
        return None
    result = json.loads(done.stdout)
    pred = np.array([v for s in result["pred"] for v in s])
    result["acc"], result["f1"] = _scores(pred, test_labels, test_ptr)
    return result


if __name__ == "__main__":
    main()
