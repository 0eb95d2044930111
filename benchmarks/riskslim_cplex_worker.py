"""Runs inside risk-slim's own environment (``benchmarks/.peers-riskslim``): one RiskSLIM fit by
risk-slim's lattice cutting-plane algorithm on CPLEX, timed around the whole user call.

``python riskslim_cplex_worker.py DATA.npz SECONDS LO HI C0 BOUND SIZE GAP`` reads ``X`` (0/1,
no intercept column) and ``y`` (+-1), builds risk-slim's data dictionary (the intercept column
inserted as its loader does), its coefficient set (points in ``-BOUND..BOUND``, the intercept in
``LO..HI``), and runs ``riskslim.run_lattice_cpa`` with ``c0_value=C0``, ``L0_max=SIZE``,
``max_tolerance=GAP``, ``max_runtime=SECONDS`` (its initialisation procedure gets a quarter of it),
one CPLEX thread, CPLEX's display off. The last line printed is one JSON object: wall seconds of
all of that, peak resident memory, the model (intercept first), risk-slim's objective, its lower
bound and gap, CPLEX's status. It imports neither milpscore nor the benchmarks' helpers.
"""
from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np


def main() -> None:
    path, seconds, lo, hi, c0, bound, size, gap = sys.argv[1:9]
    arrays = np.load(path)
    X0, y0 = arrays["X"], arrays["y"]
    import riskslim

    started = time.perf_counter()
    X = np.insert(X0, 0, 1.0, axis=1)
    names = ["(Intercept)"] + [f"x{j}" for j in range(X0.shape[1])]
    data = {"X": X, "Y": y0.reshape(-1, 1).astype(float), "variable_names": names, "outcome_name": "y",
            "sample_weights": np.ones(X.shape[0])}
    coef_set = riskslim.CoefficientSet(variable_names=names, lb=-float(bound), ub=float(bound), sign=0)
    coef_set["(Intercept)"].lb, coef_set["(Intercept)"].ub = float(lo), float(hi)
    constraints = {"L0_min": 0, "L0_max": int(size), "coef_set": coef_set}
    settings = {"c0_value": float(c0), "max_runtime": float(seconds), "max_tolerance": float(gap),
                "display_cplex_progress": False, "loss_computation": "fast", "round_flag": True,
                "polish_flag": True, "chained_updates_flag": True, "add_cuts_at_heuristic_solutions": True,
                "initialization_flag": True, "init_max_runtime": float(seconds) / 4, "cplex_randomseed": 0,
                "cplex_mipemphasis": 0, "cplex_n_cores": 1}
    model_info, mip_info, lcpa_info = riskslim.run_lattice_cpa(data, constraints, settings)
    wall = time.perf_counter() - started
    print(json.dumps({"wall": wall, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      "solution": np.asarray(model_info["solution"], float).tolist(),
                      "objective": float(model_info["objective_value"]), "bound": float(lcpa_info["lowerbound"]),
                      "gap": float(model_info["optimality_gap"]), "cplex_status": str(lcpa_info["cplex_status"]),
                      "nodes": int(model_info["nodes_processed"])}))


if __name__ == "__main__":
    main()
