"""Seconds per observer of the per-observer trackers, and a cost model fitted to them.

Usage: python experiments/observer_cost.py [--observers 4] [--quick]
       python experiments/observer_cost.py --workers-check 2 [--nodes 256] [--topology torus]

Grid: the graph-walk tracker (``--convention sound``, kov; and ``reference``, the
taboo-chain rates), the exact gossip loss (``--protocol gossip``) and the exact
accountant of the sound walk tracker (``--accountant exact``) on a fast-mixing graph (the
hypercube), a slow one (the torus) and a random geometric graph, over n and T. Each cell
times ``--observers`` observers after a warm-up (numba compiled), in this process with
numba on one thread (what a dask worker runs). Each graph's relaxation time
``t_rel = 1 / (1 - lambda_2)`` of its walk is printed beside it.

The model (docs/performance.md, "Every observer on a cluster"): seconds per observer =
``c x work``, ``work`` the tracker's own count of its flops per observer:

* sound: :func:`netdp.tracking.walk_views.law_work` of the observer's views (above
  ``LAW_WORK`` the views are not amplified and cost almost nothing);
* reference: ``deg x L x nnz + C x L x n``, ``L = min(30 t_rel, T)`` the rows kept
  until they settle, ``C = T / n`` cycles;
* gossip: ``(T + 1) deg x m^2``, ``m`` the ball within ``T + 1`` hops (the SVD);
* exact: ``views x n`` PLD compositions.

``c`` is the median of seconds / work over the cells; the spread (max / min of the ratio)
says how far the model is from the cells. Then the projection: seconds per observer on
the hypercube of n = 1e5 and 1e6 at T = 100 n, the worker-hours of every observer, the
workers for one hour, and their price at ``--price`` dollars a worker-hour.

``--workers-check K``: every observer of one run (the reference tracker on ``--topology``
of ``--nodes``, T = 100 n) in this process, then on a local dask cluster of 1 and of K
workers, all in one process: the speed-up of the run and of the observers' map.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time

import numba
import numpy as np

from netdp.core.setup import Streams
from netdp.run.api import simulate
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed
from netdp.tracking import gossip, taboo, walk_views
from netdp.tracking.cycle_entries import observer_views
from netdp.tracking.graph_observers import transition

EPS0, DELTA = 1.0, 1e-6


def relaxation(P) -> float:
    """``1 / (1 - lambda_2)`` of the walk's symmetrised transition matrix."""
    from scipy.sparse import linalg

    if P.shape[0] <= 600:
        vals = np.sort(np.linalg.eigvals(P.toarray()).real)[::-1]
    else:
        vals = np.sort(linalg.eigs(P, k=3, which="LR", return_eigenvectors=False).real)[::-1]
    return float(1.0 / max(1.0 - vals[1], 1e-12))


def prepared(params: dict):
    config = with_seed(make_config(params))
    task = task_of(config)
    setup = task.prepare(config)
    return setup, task.trace(setup, Streams(setup.seed, 0))


def walk_cell(topology: str, n: int, per_node: int, tracker: str, observers: int,
              accountant: str = "kov") -> dict:
    setup, trace = prepared({"topology": topology, "nodes": n, "steps": per_node * n,
                             "seed": 0})
    P = transition(setup)
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    obs = np.sort(np.random.default_rng(0).choice(n, observers, replace=False))
    t_rel = relaxation(P)
    steps, deg = setup.steps, float(np.mean(setup.topology.degrees))

    def run(ids):
        if tracker == "reference":
            return taboo.graph_walk_losses(trace, P, EPS0, DELTA, z, "kov", None, ids)
        return walk_views.sound_graph_losses(trace, P, EPS0, DELTA, z, accountant, None, ids)

    run(obs[:1])  # warm up
    start = time.perf_counter()
    table = run(obs)
    seconds = (time.perf_counter() - start) / observers
    holders, _, _, begin, pos = walk_views.observer_setup(trace, None, None)
    rows = None
    if tracker == "reference":
        rows = settled_rows(trace, P, int(obs[0]))
        work = deg * rows * P.nnz + (steps / n) * rows * n
    else:
        views = [observer_views(holders, trace.steps, pos[begin[v]:begin[v + 1]])
                 for v in obs]
        if accountant == "exact":
            work = float(np.mean([v.size for v in views])) * n
        else:
            works = [walk_views.law_work(v, n, P.nnz) for v in views]
            work = float(np.mean([w if w <= walk_views.LAW_WORK else 0.0 for w in works]))
    return {"tracker": tracker if accountant == "kov" else accountant, "graph": topology,
            "n": n, "T": steps, "t_rel": t_rel, "s_per_observer": seconds, "work": work,
            "rows": rows,
            "unamplified": int(table.unamplified)}


def settled_rows(trace, P, v: int) -> float:
    """The taboo-chain rows the reference tracker computes for observer ``v``: until
    they settle (the taboo chain's mixing time), or the rows kept."""
    holders, _, _, begin, pos = walk_views.observer_setup(trace, None, None)
    blocked = np.zeros(P.shape[0], bool)
    blocked[v] = True
    cyc = taboo.observer_cycles(holders, trace.steps, begin, pos, v)
    rows = taboo.cycle_rows(P, taboo.reversible_measure(P), blocked, cyc)
    settled = rows.arrays[2]
    limit = rows.arrays[0].shape[1] - 1
    return float(np.max(np.where(settled >= 0, settled, limit), initial=1))


def gossip_cell(topology: str, n: int, observers: int) -> dict:
    setup, _ = prepared({"topology": topology, "nodes": n, "protocol": "gossip", "seed": 0})
    plan, steps = setup.plan, setup.steps
    obs = np.sort(np.random.default_rng(0).choice(n, observers, replace=False))
    gossip.joint(plan.W, plan.adj, steps, observers=obs[:1])
    start = time.perf_counter()
    gossip.joint(plan.W, plan.adj, steps, observers=obs)
    seconds = (time.perf_counter() - start) / observers
    from scipy.sparse import csgraph

    hops = csgraph.shortest_path(plan.adj, unweighted=True, indices=obs)
    m = float(np.mean((hops <= steps + 1).sum(axis=1)))
    deg = float(np.mean(np.diff(plan.adj.indptr)))
    P = transition(setup) if not setup.topology.walk_kind.implicit else None
    return {"tracker": "gossip", "graph": topology, "n": n, "T": steps,
            "t_rel": relaxation(P) if P is not None else math.nan,
            "s_per_observer": seconds, "work": ((steps + 1) * deg + 1) * m * min(
                (steps + 1) * deg + 1, m), "unamplified": 0}


def fit(rows: list[dict]) -> dict[str, dict]:
    """Per tracker: ``s = a + c x work`` by least squares on the relative error (each
    cell weighs alike), and the largest relative error of a cell."""
    out = {}
    for tracker in dict.fromkeys(r["tracker"] for r in rows):
        cells = [r for r in rows if r["tracker"] == tracker and r["work"] > 0]
        if len(cells) < 2:
            continue
        s = np.array([r["s_per_observer"] for r in cells])
        w = np.array([r["work"] for r in cells])
        (a, c), *_ = np.linalg.lstsq(np.stack([1 / s, w / s], axis=1), np.ones(s.size),
                                     rcond=None)
        if a < 0:  # no overhead: the slope alone
            a, c = 0.0, float(np.sum(w / s) / np.sum((w / s) ** 2))
        err = np.abs((a + c * w) / s - 1)
        out[tracker] = {"a": float(a), "c": float(c), "max_rel_error": float(err.max()),
                        "median_rel_error": float(statistics.median(err)),
                        "cells": len(cells)}
    return out


def projection(models: dict[str, dict], rows: list[dict], price: float) -> list[dict]:
    """Every observer of the hypercube of n nodes at T = 100 n with the reference
    tracker: its rows settle after ``L = k d`` steps, ``k`` fitted on the hypercube
    cells (``L / d`` grows slowly with n: the largest measured ratio is taken)."""
    model = models.get("reference")
    cells = [r for r in rows if r["tracker"] == "reference" and r["graph"] == "hypercube"]
    if model is None or not cells:
        return []
    k = max(r["rows"] / math.log2(r["n"]) for r in cells)
    out = []
    for n in (10**4, 10**5, 10**6):
        d = math.log2(n)
        L = k * d
        work = d * L * n * (d + 1) + 100 * L * n
        per = model["a"] + model["c"] * work
        hours = per * n / 3600
        out.append({"n": n, "T": 100 * n, "rows": L, "s_per_observer": per,
                    "worker_hours": hours, "workers_for_1h": math.ceil(hours),
                    "price_usd": hours * price,
                    "rows_memory_GiB": 8 * 2 * d * L * n / 2**30})
    return out


def _spin(_: int) -> float:
    start, x = time.perf_counter(), 0
    for i in range(10_000_000):
        x += i
    return time.perf_counter() - start


def ceiling(workers: int) -> float:
    """The throughput of ``workers`` processes over one's, now, on a pure Python loop:
    what a busy shared machine lets any speed-up reach."""
    from multiprocessing import Pool

    one = _spin(0)
    with Pool(workers) as pool:
        start = time.perf_counter()
        pool.map(_spin, range(workers))
        many = time.perf_counter() - start
    return workers * one / many


def workers_check(workers: int, nodes: int, topology: str) -> None:
    """Every observer of one run (reference tracker, T = 100 n) in this process (numba's
    own threads), then on local clusters of 1 and ``workers`` workers: the whole run's
    seconds and the observers' map alone (the engine, the theory and the summary stay in
    this process)."""
    from netdp.run.dask_client import DaskClient

    params = {"topology": topology, "nodes": nodes, "steps": 100 * nodes,
              "convention": "reference", "seed": 0}
    mapped = [0.0]
    inner = walk_views.map_observers

    def timed(*a, **k):
        start = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            mapped[0] += time.perf_counter() - start

    walk_views.map_observers = timed
    times = {}
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for k in (0, 1, workers):
        mapped[0] = 0.0
        if k == 0:
            start = time.perf_counter()
            simulate({**params, "sources": nodes}, progress=False)
            times[k] = (time.perf_counter() - start, mapped[0])
        else:
            with DaskClient(None, k, None) as client:
                simulate({**params, "nodes": 64, "steps": 640}, progress=False,
                         client=client)  # warm the workers up
                mapped[0] = 0.0
                start = time.perf_counter()
                simulate(params, progress=False, client=client)
                times[k] = (time.perf_counter() - start, mapped[0])
        print(json.dumps({"workers": k or f"none (numba {numba.get_num_threads()} threads)",
                          "seconds": round(times[k][0], 2),
                          "observers_seconds": round(times[k][1], 2)}), flush=True)
    print(json.dumps({"machine_ceiling": round(ceiling(workers), 3),
                      "speedup_run": round(times[1][0] / times[workers][0], 3),
                      "speedup_observers": round(times[1][1] / times[workers][1], 3),
                      "one_worker_vs_this_process": round(times[0][1] / times[1][1], 3)}),
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--price", type=float, default=0.04,
                        help="dollars per worker-hour (one core)")
    parser.add_argument("--quick", action="store_true", help="the smallest cells only")
    parser.add_argument("--workers-check", type=int, default=None)
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--topology", default="torus")
    args = parser.parse_args()
    print(json.dumps({"machine": platform.processor() or platform.machine(),
                      "python": platform.python_version(), "numba_threads": 1}), flush=True)
    if args.workers_check is not None:
        workers_check(args.workers_check, args.nodes, args.topology)
        return
    numba.set_num_threads(1)
    sizes = (64,) if args.quick else (64, 256)
    exact_sizes = {"hypercube": 16, "torus": 16, "random-geometric": 16}
    rows = []

    def emit(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    for topology in ("hypercube", "torus", "random-geometric"):
        for n in sizes:
            for per_node in (1, 3):  # the sound tracker amplifies short walks only
                emit(walk_cell(topology, n, per_node, "sound", args.observers))
            for per_node in (10, 100):
                emit(walk_cell(topology, n, per_node, "reference", args.observers))
            emit(gossip_cell(topology, n, max(2, args.observers // 2)))
        if topology == "hypercube" and not args.quick:  # towards the projection's n
            for n in (1024, 4096):
                emit(walk_cell(topology, n, 100, "reference", 2))
        emit(walk_cell(topology, exact_sizes[topology], 4, "sound", 1, accountant="exact"))
    models = fit(rows)
    print(json.dumps({"model": models}), flush=True)
    for row in projection(models, rows, args.price):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
