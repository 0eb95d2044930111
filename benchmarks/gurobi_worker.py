"""Solve one MPS file with Gurobi (run in the Gurobi environment made by ``peers.py setup``).

``python gurobi_worker.py MODEL.mps SECONDS GAP`` prints one JSON line: status, objective, bound
(Gurobi's own, on the MPS objective), runtime, and every incumbent / bound report of its MIP
callback ``[seconds, incumbent, bound]`` (the bound over time). One thread, no start: the plain
model, as the issue's anchors. The pip wheel's size-limited licence (2000 variables and 2000
constraints) refuses larger models: the error comes back as the status.
"""
import json
import sys

import gurobipy as gp
from gurobipy import GRB

path, seconds, gap = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
trace = []


def report(model, where):
    if where == GRB.Callback.MIP:
        trace.append([model.cbGet(GRB.Callback.RUNTIME), model.cbGet(GRB.Callback.MIP_OBJBST),
                      model.cbGet(GRB.Callback.MIP_OBJBND)])


env = gp.Env(params={"OutputFlag": 0})
model = gp.read(path, env)
model.Params.Threads, model.Params.TimeLimit, model.Params.MIPGap = 1, seconds, gap
try:
    model.optimize(report)
except gp.GurobiError as error:
    print(json.dumps({"status": f"error: {error}"}))
    sys.exit(0)
names = {GRB.OPTIMAL: "optimal", GRB.TIME_LIMIT: "time limit"}
print(json.dumps({"status": names.get(model.Status, str(model.Status)), "runtime": model.Runtime,
                  "objective": model.ObjVal if model.SolCount else float("inf"), "bound": model.ObjBound,
                  "trace": trace, "version": ".".join(map(str, gp.gurobi.version()))}))
