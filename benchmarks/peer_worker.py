"""Runs inside a peer's own virtual environment: loads data once, times calls of the peer's code.

Started by :class:`benchmarks.peers.Peer`; reads one JSON request per line on stdin, answers one
JSON line on stdout. Requests: ``{"op": "load", "path": npz}`` (the arrays become the keyword
arguments of later calls), ``{"op": "call", "function": name, "kwargs": {...}}`` (times
``FUNCTIONS[name](**arrays, **kwargs)`` with ``time.perf_counter`` around the call only and saves
its array result to a ``.npy`` file), ``{"op": "versions"}``. It imports neither milpscore nor the
benchmarks' helpers: only numpy, threadpoolctl and the peer. BLAS is capped at one thread.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits


def skglm_logistic_path(X, y, lambdas, tol):
    """skglm's ProxNewton (working sets, warm starts) along ``lambdas``; coefficients (p, k)."""
    from skglm.datafits import Logistic
    from skglm.penalties import L1
    from skglm.solvers import ProxNewton

    solver = ProxNewton(tol=float(tol), fit_intercept=False, warm_start=True, max_iter=100)
    w, coefs = np.zeros(X.shape[1]), []
    for lam in lambdas:
        w = solver.solve(X, y, Logistic(), L1(float(lam)), w_init=w, Xw_init=X @ w)[0]
        coefs.append(w.copy())
    return np.column_stack(coefs)


def celer_logistic_path(X, y, lambdas, tol):
    """celer's working-set solver for L1 logistic regression (its C = 1 / (n lambda)), warm-started."""
    from celer import LogisticRegression

    model = LogisticRegression(C=1.0, tol=float(tol), fit_intercept=False, warm_start=True, max_iter=100)
    coefs = []
    for lam in lambdas:
        model.set_params(C=1.0 / (float(lam) * X.shape[0]))
        coefs.append(model.fit(X, y).coef_.ravel().copy())
    return np.column_stack(coefs)


def proxtv_tv1w(y, weights, out):
    """prox-tv's C routine for weighted 1-D TV (``tautString_TV1_Weighted``, the taut string that its
    ``tv1w_1d`` calls) into a preallocated ``out``: no argument checks, no allocation."""
    from _prox_tv import ffi, lib

    lib.tautString_TV1_Weighted(ffi.cast("double *", y.ctypes.data), ffi.cast("double *", weights.ctypes.data),
                                ffi.cast("double *", out.ctypes.data), y.size)
    return out


FUNCTIONS = {f.__name__: f for f in (skglm_logistic_path, celer_logistic_path, proxtv_tv1w)}


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("numpy", "scikit-learn", "skglm", "celer", "prox-tv", "numba"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def main() -> None:
    arrays: dict = {}
    out_dir = Path(tempfile.mkdtemp(prefix="peer-"))
    with threadpool_limits(1):
        for line in sys.stdin:
            request = json.loads(line)
            try:
                if request["op"] == "load":
                    with np.load(request["path"]) as data:
                        arrays = {k: np.asfortranarray(v) if v.ndim == 2 else v for k, v in data.items()}
                    reply = {"ok": True}
                elif request["op"] == "versions":
                    reply = {"ok": True, "versions": versions()}
                else:
                    function = FUNCTIONS[request["function"]]
                    names = function.__code__.co_varnames[:function.__code__.co_argcount]
                    args = {k: v for k, v in arrays.items() if k in names}
                    t0 = time.perf_counter()
                    value = function(**args, **request.get("kwargs", {}))
                    seconds = time.perf_counter() - t0
                    path = out_dir / f"{request['function']}.npy"
                    np.save(path, np.asarray(value))
                    reply = {"ok": True, "seconds": seconds, "path": str(path)}
            except Exception as error:  # noqa: BLE001 - reported to the parent, which raises
                reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
