"""``milpscore export``: hostile file and column names never become code (the generated Pyomo script
is *run* in a subprocess: no file appears and it solves to the library's optimum), and each file
says what it is (LP / MPS of RiskSLIM: a relaxation with its tangent cuts, named in a header and
in the CLI message; the ``.py`` script: the exact program with the nonlinear loss)."""
import os
import re
import subprocess
import sys

import highspy
import numpy as np
import pandas as pd
import pytest

from milpscore import RiskScoreClassifier
from milpscore.cli import main
from solvers.backends.highs import solve_highs
from solvers.backends.pyomo import write_program

HOSTILE_FILE = 'm""";__import__("os").system("touch PWNED");""".py'
HOSTILE_COLUMNS = ['a"""; __import__("os").system("touch PWNED"); """',
                   "b'\n__import__('os').system('touch PWNED')#",
                   "c\\\"x {y} }}", "d\r\n$x$ <script>"]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


@pytest.fixture
def hostile_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (60, 4))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.8, 60) > 0.5).astype(int)
    frame = pd.DataFrame(X, columns=HOSTILE_COLUMNS)
    frame.insert(0, "label", y)
    path = tmp_path / "data \"'; touch PWNED.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run_script(path, *args):
    done = subprocess.run([sys.executable, path.name, *args], cwd=path.parent, env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not list(path.parent.glob("PWNED*")), "the generated script ran injected code"
    return done.stdout


def objective_of(stdout):
    return float(re.search(r"^objective (\S+)$", stdout, re.M).group(1))


def test_hostile_names_riskscore_script_runs_and_solves_to_the_fit_objective(hostile_csv, capsys):
    path, frame = hostile_csv
    out = path.parent / HOSTILE_FILE
    assert main(["export", str(path), "--formulation", "riskslim", "--to", str(out), "--time-limit", "30"]) == 0
    assert "exact program (Pyomo, nonlinear logistic loss)" in capsys.readouterr().out
    text = out.read_text()
    assert "coef(a___" in text  # the (sanitised) names are there, as data inside one string literal
    compile(text, str(out), "exec")
    stdout = run_script(out, "--time-limit", "60")
    assert "status optimal" in stdout and "round 1:" in stdout  # progress log
    fit = RiskScoreClassifier().fit(frame.drop(columns="label"), frame["label"])
    assert fit.fit_.status.value == "optimal"
    assert objective_of(stdout) == pytest.approx(fit.fit_.objective, rel=1e-6, abs=1e-8)


def test_hostile_names_slim_script_equals_highs(hostile_csv, tmp_path):
    from milpscore import SLIMClassifier

    _, frame = hostile_csv
    est = SLIMClassifier()
    program = est.build_instance(frame.drop(columns="label"), frame["label"]).exact()
    out = tmp_path / HOSTILE_FILE
    assert write_program(program, out, {"coef": HOSTILE_COLUMNS}) == "exact program"
    stdout = run_script(out, "--quiet")
    assert objective_of(stdout) == pytest.approx(solve_highs(program).objective, abs=1e-6)


@pytest.mark.parametrize("suffix, mark", [(".lp", "\\"), (".mps", "*")])
def test_riskscore_lp_mps_is_named_a_relaxation_and_is_a_lower_bound(hostile_csv, capsys, suffix, mark):
    path, frame = hostile_csv
    out = path.parent / f"m'\"x{suffix}"
    assert main(["export", str(path), "--formulation", "riskslim", "--to", str(out)]) == 0
    message = capsys.readouterr().out
    n = int(re.search(r"relaxation \((\d+) tangent cuts of the logistic loss\)", message).group(1))
    head = out.read_text().splitlines()[0]
    assert head.startswith(f"{mark} RELAXATION ({n} TANGENT CUTS OF THE LOGISTIC LOSS)")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(out)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getLp().num_row_ >= n
    fit = RiskScoreClassifier().fit(frame.drop(columns="label"), frame["label"])
    assert h.getInfo().objective_function_value <= fit.fit_.objective + 1e-9  # a relaxation: a lower bound


def test_slim_lp_with_hostile_labels_reads_back_to_the_same_optimum(hostile_csv, tmp_path):
    from milpscore import SLIMClassifier

    _, frame = hostile_csv
    program = SLIMClassifier().build_instance(frame.drop(columns="label"), frame["label"]).exact()
    for suffix in (".lp", ".mps"):
        out = tmp_path / f"slim{suffix}"
        assert write_program(program, out, {"coef": HOSTILE_COLUMNS}) == "exact program"
        assert "RELAXATION" not in out.read_text()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(out))
        h.run()
        assert h.getInfo().objective_function_value == pytest.approx(solve_highs(program).objective, abs=1e-6)


def test_script_time_limit_is_an_option_with_the_exported_default(hostile_csv, tmp_path):
    from milpscore import SLIMClassifier

    _, frame = hostile_csv
    program = SLIMClassifier().build_instance(frame.drop(columns="label"), frame["label"]).exact()
    out = tmp_path / "m.py"
    write_program(program, out, time_limit=7.5)
    help_text = run_script(out, "--help")
    assert "--time-limit" in help_text and "7.5" in help_text
    with pytest.raises(ValueError, match="time_limit must be a positive"):
        write_program(program, out, time_limit=float("nan"))
