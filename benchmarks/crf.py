"""Sparse CRF on the CoNLL-2000 excerpt: our OWL-QN, BCD (and FISTA) against Wapiti 1.5.0 and python-crfsuite.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/crf.py [--tasks np,ch] [--budget 180] [--ours owlqn,bcd]``.

Tasks (``../shared/data/sequences``, templates ``chpattern.txt`` for every CRF):
``np``: ``nptrain`` / ``nptest`` (3 labels), ``rho1 = 0.5``, ``rho2 = 1e-4``; ``ch``: ``chtrain`` /
``chtest`` (17 labels), ``rho1 = 0.5``, ``rho2 = 0.01`` (``--np-rho`` / ``--ch-rho`` change them).

**Wapiti** (Lavergne, Cappé & Yvon 2010) is located or built, in this order: ``--wapiti PATH`` or
the environment variable ``WAPITI`` (a binary); ``/tmp/crf_wapiti/wapiti``; else built by ``make``
in ``--wapiti-src DIR`` / ``$WAPITI_SRC`` (a Wapiti source tree), or in ``/tmp/crf_wapiti`` after
``git clone https://github.com/Jekub/Wapiti /tmp/crf_wapiti`` (network). If none of these gives a
working binary the script exits with status 2 and says why: the Wapiti rows are never skipped.
**python-crfsuite** runs in its own venv (``--crfsuite-python``, default
``/tmp/crf_peers/bin/python``, created with ``python -m venv /tmp/crf_peers &&
/tmp/crf_peers/bin/pip install python-crfsuite`` when absent); if that install fails its row
says so. Neither is a project dependency.

What is compared, per task:

1. **Defaults**: Wapiti's ``train -a l-bfgs`` with its default stopping rules (the whole process:
   reading, feature generation, training, saving) against ``SparseCRF(rho1, rho2,
   templates).fit(sentences, labels)`` with its defaults (the whole call from token lists:
   template expansion, training; after a 20-sentence warm-up fit has loaded the numba kernels
   from their cache); wall seconds, their ratio, test chunk F1.
2. **Time to F*(1 + eps)**, ``eps`` in {1e-2, 1e-3, 1e-4}: one criterion,
   ``F = l + rho1 |theta|_1 + rho2/2 |theta|^2`` computed by our code, for every run. Wapiti's
   models are read back into our parameter layout (by observation string and label name) and
   their ``F`` computed by our criterion; its per-iteration trace is its printed ``obj`` (the same
   function: the printed value at its last iteration is shown beside ours on its saved model) and
   cumulative optimiser seconds (which include its per-iteration labelling of the training set).
   Wapiti bcd prints no objective: separate runs of ``-i k`` sweeps are evaluated (a run still in
   a sweep at ``--budget`` finishes that sweep), and its time to a level is the time of the first
   such run at or below it. ``F*`` is the least ``F`` any run
   reached. The long runs are Wapiti l-bfgs with ``-e 0`` (no window rules) interrupted by SIGINT
   after ``--budget`` seconds (Wapiti then saves its model), ours with ``time_limit = --budget``
   and ``tol = 1e-9``. When Wapiti l-bfgs ends above ``F*(1 + 1e-4)``, the seconds every run took
   to reach Wapiti's final ``F`` are printed too. Optimiser seconds exclude reading and template expansion for every run.
3. **BCD sweeps**: median wall seconds per sweep, our BCD against Wapiti's ``-a bcd``.
4. **Sparse forward-backward** (the slides' variant) against the dense one: one full loss and
   gradient pass at ``theta = 0`` and at our OWL-QN's final (sparse) weights, median of 5 rounds.

python-crfsuite cannot express observation-dependent bigram features (its transitions are label
pairs only), so it gets the unigram observations of the same templates plus label transitions,
``c1 = rho1``, ``c2 = rho2 / 2``, its default stopping: its ``F`` is another function, and only its
accuracy, F1, active weights and time are comparable. Test scores: token accuracy and conlleval
chunk F1 on the test file, by our Viterbi on each run's weights (crfsuite: its own tagger).
Timings are wall seconds on a shared machine: the load average is printed before every task.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from formulations.crf.templates import FeatureSpace, read_templates  # noqa: E402
from milpscore.crf.conll import chunk_scores, read_conll  # noqa: E402
from milpscore.crf.estimator import SparseCRF  # noqa: E402
from solvers.limits import Limits  # noqa: E402
from solvers.proximal.crf_bcd import solve_bcd  # noqa: E402
from solvers.proximal.crf_fista import solve_fista  # noqa: E402
from solvers.proximal.crf_forward_backward import decode, loss_and_gradient  # noqa: E402
from timing import load  # noqa: E402
from solvers.proximal.crf_owlqn import solve_owlqn  # noqa: E402
from solvers.proximal.crf_problem import objective_value  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "sequences"
WAPITI_DIR = Path("/tmp/crf_wapiti")
WAPITI_GIT = "https://github.com/Jekub/Wapiti"
EPS = (1e-2, 1e-3, 1e-4)
OURS = {"owlqn": solve_owlqn, "bcd": solve_bcd, "fista": solve_fista}
TASKS = {"np": ("nptrain.txt", "nptest.txt", (0.5, 1e-4)), "ch": ("chtrain.txt", "chtest.txt", (0.5, 0.01))}
ITERATION = re.compile(r"\[\s*(\d+)\]\s+obj=(\S+)\s+act=\d+\s+err=.*?time=([\d.]+)s/([\d.]+)s")
CRFSUITE_WORKER = r'''
import json, sys, time
import pycrfsuite
job = json.load(open(sys.argv[1]))
trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
for xseq, yseq in zip(job["train_x"], job["train_y"]):
    trainer.append(xseq, yseq)
trainer.set_params({"c1": job["c1"], "c2": job["c2"], "feature.possible_states": True,
                    "feature.possible_transitions": True})
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


def fail(message: str) -> None:
    print(f"benchmarks/crf.py: {message}", file=sys.stderr)
    sys.exit(2)


def _works(binary: Path) -> bool:
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Wapiti" in done.stdout + done.stderr


def locate_wapiti(explicit: str | None, source: str | None) -> Path:
    """The Wapiti binary, by the order of the module docstring; exits (status 2) when there is none."""
    tried = []
    if explicit:
        if _works(Path(explicit)):
            return Path(explicit)
        fail(f"--wapiti / $WAPITI = {explicit} is not a working Wapiti binary ('{explicit} --version' failed)")
    if _works(WAPITI_DIR / "wapiti"):
        return WAPITI_DIR / "wapiti"
    tried.append(f"{WAPITI_DIR / 'wapiti'}: absent or not working")
    if source:
        tree = Path(source)
    else:
        tree = WAPITI_DIR
        if not (tree / "Makefile").exists():
            if shutil.which("git") is None:
                fail("no Wapiti binary and no git to fetch its source; " + "; ".join(tried)
                     + f"; give --wapiti BINARY or --wapiti-src DIR (a clone of {WAPITI_GIT})")
            shutil.rmtree(tree, ignore_errors=True)
            print(f"building Wapiti: git clone {WAPITI_GIT} {tree}", file=sys.stderr)
            done = subprocess.run(["git", "clone", "--depth", "1", WAPITI_GIT, str(tree)], capture_output=True,
                                  text=True)
            if done.returncode:
                fail(f"git clone {WAPITI_GIT} failed ({done.stderr.strip()[-300:]}); " + "; ".join(tried)
                     + "; give --wapiti BINARY or --wapiti-src DIR")
    if not (tree / "Makefile").exists():
        fail(f"--wapiti-src / $WAPITI_SRC = {tree} has no Makefile (expected a Wapiti source tree)")
    print(f"building Wapiti: make -C {tree}", file=sys.stderr)
    done = subprocess.run(["make", "-C", str(tree)], capture_output=True, text=True)
    if done.returncode or not _works(tree / "wapiti"):
        fail(f"make in {tree} did not give a working wapiti binary: {done.stderr.strip()[-500:]}")
    return tree / "wapiti"


def flat(sentences, labels):
    columns = np.array([t for s in sentences for t in s], dtype=object)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in sentences])]).astype(np.int64)
    return columns, ptr, np.array([v for s in labels for v in s])


def test_scores(pred_flat, test_labels, ptr):
    """Token accuracy and conlleval chunk F1, both in percent."""
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


def run_wapiti(binary, algorithm, rho, pattern, train, workdir, iterations, options=(), budget=None):
    """One ``wapiti train`` process: ``(model path, trace [(iteration, obj or None, cumulative s)],
    process wall seconds)``; interrupted by SIGINT after ``budget`` seconds (it then saves)."""
    model = Path(workdir) / f"{algorithm}-{iterations}-{len(options)}.mdl"
    cmd = [str(binary), "train", "-a", algorithm, "-1", str(rho[0]), "-2", str(rho[1]), "-p", str(pattern), "-t",
           "1", "-i", str(iterations), *options, str(train), str(model)]
    start = time.perf_counter()
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = process.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate()
    wall = time.perf_counter() - start
    if process.returncode or not model.exists():
        fail(f"wapiti {' '.join(cmd[1:])} failed (status {process.returncode}): {err.strip()[-500:]}")
    trace = [(int(m.group(1)), None if m.group(2) == "NA" else float(m.group(2)), float(m.group(4)))
             for m in ITERATION.finditer(err)]
    return model, trace, wall


def crfsuite_python(path: str) -> tuple[str | None, str]:
    """The crfsuite venv's python, created on first use; ``(None, reason)`` when it cannot be."""
    python = Path(path)
    if python.exists():
        return str(python), ""
    venv = python.parents[1]
    done = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if done.returncode == 0:
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "python-crfsuite"], capture_output=True,
                              text=True)
    if done.returncode:
        return None, f"python-crfsuite did not install into {venv}: {done.stderr.strip()[-300:]}"
    return str(python), ""


def run_crfsuite(python, space, data, test_data, rho, workdir):
    observations = np.array(space.observations, dtype=object)

    def attributes(d):
        return [[[str(o) for o in observations[d.uni_obs[d.uni_ptr[i]:d.uni_ptr[i + 1]]]] for i in range(a, b)]
                for a, b in zip(d.sentence_ptr[:-1], d.sentence_ptr[1:])]

    labels = np.array(space.labels)
    train_y = [list(labels[data.y[a:b]]) for a, b in zip(data.sentence_ptr[:-1], data.sentence_ptr[1:])]
    job = {"train_x": attributes(data), "train_y": train_y, "test_x": attributes(test_data), "c1": rho[0],
           "c2": rho[1] / 2, "model": str(Path(workdir) / "crfsuite.model")}
    (Path(workdir) / "job.json").write_text(json.dumps(job))
    (Path(workdir) / "worker.py").write_text(CRFSUITE_WORKER)
    done = subprocess.run([python, str(Path(workdir) / "worker.py"), str(Path(workdir) / "job.json")],
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if done.returncode:
        return None, f"python-crfsuite failed: {done.stderr.strip()[-300:]}"
    return json.loads(done.stdout), ""


def time_to(trace, level):
    """First cumulative second at which the trace's ``F`` is ``<= level`` (None: never)."""
    for seconds, value in trace:
        if value is not None and value <= level:
            return seconds
    return None


def fmt(value, spec=".2f"):
    return "-" if value is None else format(value, spec)


def run_task(name, args, binary, crfsuite, workdir):
    train_file, test_file, rho = TASKS[name]
    rho = tuple(float(v) for v in getattr(args, f"{name}_rho").split(",")) if getattr(args, f"{name}_rho") else rho
    train, test, pattern = args.data / train_file, args.data / test_file, args.data / "chpattern.txt"
    sentences, labels = read_conll(train)
    test_sentences, test_labels = read_conll(test)
    templates = read_templates(pattern)
    space, data = FeatureSpace.fit_encode(templates, *flat(sentences, labels))
    test_columns, test_ptr, _ = flat(test_sentences, test_labels)
    test_data = space.encode(test_columns, test_ptr)
    print(f"\n## {train_file}: {data.n_sentences} sentences, {data.n_tokens} tokens, {space.n_labels} labels, "
          f"{len(space.observations)} observations, {space.n_params} weights; rho1 = {rho[0]}, rho2 = {rho[1]}")
    print(f"load average {load()} before the task")

    def F(theta):
        return objective_value(loss_and_gradient(theta, data)[0], theta, *rho)

    def scores(theta):
        return test_scores(np.array(space.labels)[decode(theta, test_data)], test_labels, test_ptr)

    rows = {}  # name -> dict(theta, trace [(s, F)], wall, iterations, note)
    # 1. defaults, whole calls
    model, trace, wall = run_wapiti(binary, "l-bfgs", rho, pattern, train, workdir, 10000)
    rows["wapiti l-bfgs, defaults"] = dict(theta=read_wapiti_model(model, space), wall=wall,
                                           trace=[(t, f) for _, f, t in trace], iterations=trace[-1][0],
                                           printed=trace[-1][1])
    SparseCRF(rho1=rho[0], rho2=rho[1], templates=str(pattern), max_iter=2).fit(sentences[:20], labels[:20])  # warm-up
    start = time.perf_counter()
    default = SparseCRF(rho1=rho[0], rho2=rho[1], templates=str(pattern)).fit(sentences, labels)
    wall = time.perf_counter() - start
    rows["ours SparseCRF(), defaults"] = dict(theta=default.coef_, wall=wall, iterations=default.fit_.n_iter,
                                              trace=[(h[0], h[1]) for h in default.fit_.history],
                                              note=f"{default.fit_.solver}, {default.status_}")
    # 2. long runs, interleaved: Wapiti l-bfgs, ours, Wapiti bcd
    model, trace, wall = run_wapiti(binary, "l-bfgs", rho, pattern, train, workdir, 100000, ("-e", "0"),
                                    budget=args.budget)
    rows["wapiti l-bfgs (owl-qn), long"] = dict(theta=read_wapiti_model(model, space), wall=wall,
                                                trace=[(t, f) for _, f, t in trace], iterations=trace[-1][0],
                                                printed=trace[-1][1])
    fits = {}
    for solver in args.ours.split(","):
        fit = OURS[solver](data, *rho, max_iter=10 ** 6, tol=1e-9, limits=Limits(time_limit=args.budget))
        fits[solver] = fit
        rows[f"ours {solver}, long"] = dict(theta=fit.theta, wall=fit.seconds, iterations=fit.n_iter,
                                            trace=[(h[0], h[1]) for h in fit.history], note=fit.status)
    wapiti_bcd = []
    for k in [int(v) for v in args.wapiti_bcd_iter.split(",") if v]:
        model, trace, wall = run_wapiti(binary, "bcd", rho, pattern, train, workdir, k, budget=args.budget)
        theta = read_wapiti_model(model, space)
        wapiti_bcd.append((trace, theta))
        rows[f"wapiti bcd -i {k}, {trace[-1][0]} sweeps"] = dict(theta=theta, wall=wall, iterations=trace[-1][0],
                                                          trace=[], seconds=trace[-1][2])
    for row in rows.values():
        row["F"] = F(row["theta"])
        row["acc"], row["f1"] = scores(row["theta"])
        if row.get("printed") is not None:  # Wapiti prints obj to 2 decimals: its last point gets our F
            row["trace"][-1] = (row["trace"][-1][0], row["F"])
    # Wapiti bcd's trace: (optimiser seconds of each separate run, F of its model)
    bcd_trace = sorted((row["seconds"], row["F"]) for key, row in rows.items() if key.startswith("wapiti bcd"))
    best = min(row["F"] for row in rows.values())

    print(f"\nF* = {best:.6f} (least F of any run, our criterion)\n")
    print("| run | iterations | wall s | F | (F - F*)/F* | active weights | token acc % | chunk F1 % | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for key, row in rows.items():
        print(f"| {key} | {row['iterations']} | {row['wall']:.2f} | {row['F']:.4f} | {(row['F'] - best) / best:.1e} | "
              f"{np.count_nonzero(row['theta'])} | {row['acc']:.2f} | {row['f1']:.2f} | {row.get('note', '')} |")
    if crfsuite is not None:
        result, why = run_crfsuite(crfsuite, space, data, test_data, rho, workdir)
        if result is None:
            print(f"| python-crfsuite lbfgs, defaults | - | - | - | - | - | - | - | {why} |")
        else:
            acc, f1 = test_scores(np.array([v for s in result["pred"] for v in s]), test_labels, test_ptr)
            print(f"| python-crfsuite lbfgs, defaults | {result['iterations']} | {result['seconds']:.2f} | - | - | "
                  f"{result['active']} | {acc:.2f} | {f1:.2f} | unigram observations + label transitions: "
                  f"another F |")
    else:
        print(f"| python-crfsuite lbfgs, defaults | - | - | - | - | - | - | - | {args.crfsuite_why} |")
    for key in ("wapiti l-bfgs, defaults", "wapiti l-bfgs (owl-qn), long"):
        row = rows[key]
        print(f"\n{key}: printed obj {row['printed']:.4f} at its last iteration; our criterion on its saved model "
              f"{row['F']:.4f}")
    ours_default, wapiti_default = rows["ours SparseCRF(), defaults"], rows["wapiti l-bfgs, defaults"]
    print(f"\ndefault fits, whole calls: ours {ours_default['wall']:.2f} s / Wapiti {wapiti_default['wall']:.2f} s = "
          f"{ours_default['wall'] / wapiti_default['wall']:.2f}; chunk F1 {ours_default['f1']:.2f} vs "
          f"{wapiti_default['f1']:.2f} (difference {ours_default['f1'] - wapiti_default['f1']:+.2f} points)")

    print("\nOptimiser seconds to F*(1 + eps) (- : not reached):\n")
    traced = {key: row["trace"] for key, row in rows.items() if "long" in key}
    if wapiti_bcd:
        traced["wapiti bcd (separate runs)"] = bcd_trace
    wapiti_keys = [k for k in traced if k.startswith("wapiti")]
    print("| level | " + " | ".join(traced) + " | best ours / best Wapiti |")
    print("|---" * (len(traced) + 2) + "|")
    levels = [(f"F*(1 + {eps:g}) = {best * (1 + eps):.4f}", best * (1 + eps)) for eps in EPS]
    levels += [(f"final F of {key} = {rows[key]['F']:.4f}", rows[key]["F"]) for key in traced
               if key.startswith("wapiti l-bfgs") and rows[key]["F"] > best * (1 + EPS[-1])]
    for label, level in levels:
        times = {key: time_to(trace, level) for key, trace in traced.items()}
        ours_best = min((t for k, t in times.items() if k.startswith("ours") and t is not None), default=None)
        theirs = min((times[k] for k in wapiti_keys if times[k] is not None), default=None)
        if ours_best is not None and theirs:
            ratio = fmt(ours_best / theirs)
        elif ours_best is not None:
            ratio = f"< {ours_best / args.budget:.2f} (Wapiti: not within its {args.budget:g} s)"
        else:
            ratio = "-"
        print(f"| {label} | " + " | ".join(fmt(t, ".1f") for t in times.values())
              + f" | {ratio} |")

    if "bcd" in fits and wapiti_bcd:
        ours_sweeps = np.diff([h[0] for h in fits["bcd"].history])
        longest = max(wapiti_bcd, key=lambda item: item[0][-1][0])[0]
        theirs_sweeps = np.diff([0.0] + [t for _, _, t in longest])
        print(f"\nBCD sweep, median wall seconds: ours {np.median(ours_sweeps):.3f} (each with its exact-gradient "
              f"pass; {len(ours_sweeps)} sweeps) / Wapiti {np.median(theirs_sweeps):.3f} ({len(theirs_sweeps)} "
              f"sweeps) = {np.median(ours_sweeps) / np.median(theirs_sweeps):.2f}")
    sparse_point = fits.get("owlqn", next(iter(fits.values()))).theta if fits else default.coef_
    print(f"\nSparse forward-backward (slides) / dense, one full loss-and-gradient pass, median of 5 rounds "
          f"({space.n_labels} labels):")
    for label, theta in (("theta = 0", np.zeros(data.n_params)),
                         (f"final weights ({np.count_nonzero(sparse_point)} non-zero)", sparse_point)):
        seconds = {True: [], False: []}
        for _ in range(5):
            for sparse in (False, True):
                clock = time.perf_counter()
                loss_and_gradient(theta, data, sparse=sparse)
                seconds[sparse].append(time.perf_counter() - clock)
        dense_s, sparse_s = np.median(seconds[False]), np.median(seconds[True])
        print(f"  {label}: dense {dense_s:.3f} s, sparse {sparse_s:.3f} s, sparse / dense = {sparse_s / dense_s:.2f}")
    print(f"load average {load()} after the task")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="np,ch")
    parser.add_argument("--np-rho", default=None, help="rho1,rho2 of the np task (default 0.5,1e-4)")
    parser.add_argument("--ch-rho", default=None, help="rho1,rho2 of the ch task (default 0.5,0.01)")
    parser.add_argument("--budget", type=float, default=180.0, help="wall seconds of every long run")
    parser.add_argument("--ours", default="owlqn,bcd", help="our solvers in the long runs: owlqn,bcd,fista")
    parser.add_argument("--wapiti-bcd-iter", default="3,10", help="sweep counts of the separate Wapiti bcd runs")
    parser.add_argument("--wapiti", default=os.environ.get("WAPITI"))
    parser.add_argument("--wapiti-src", default=os.environ.get("WAPITI_SRC"))
    parser.add_argument("--crfsuite-python", default="/tmp/crf_peers/bin/python", help="'none': no crfsuite row")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.data.exists():
        fail(f"{args.data} is absent: this benchmark reads the CoNLL-2000 excerpt from ../shared/data/sequences")
    for name in args.tasks.split(","):
        if name not in TASKS:
            fail(f"--tasks: unknown task {name!r}; choose from {sorted(TASKS)}")
    for name in args.ours.split(","):
        if name not in OURS:
            fail(f"--ours: unknown solver {name!r}; choose from {sorted(OURS)}")
    binary = locate_wapiti(args.wapiti, args.wapiti_src)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    if args.crfsuite_python == "none":
        crfsuite, args.crfsuite_why = None, "not run (--crfsuite-python none)"
    else:
        crfsuite, args.crfsuite_why = crfsuite_python(args.crfsuite_python)
    print(f"Wapiti: {binary} ({(version.stdout + version.stderr).strip().splitlines()[0]}); python-crfsuite: "
          f"{crfsuite or args.crfsuite_why}")
    print(f"{os.cpu_count()} cores; one thread per run (OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, Wapiti -t 1); the machine is shared")
    workdir = tempfile.mkdtemp(prefix="crf_bench_")
    for name in args.tasks.split(","):
        run_task(name, args, binary, crfsuite, workdir)


if __name__ == "__main__":
    main()
