"""Which simulate parameters does a run ignore? (issue 29, item 5)

For small valid base runs of every task and protocol, both engines and a few topologies,
and for each simulate parameter with a valid non-default value (every choice of a
choice parameter), run :func:`netdp.simulate` with and without the parameter, same seed,
and compare the reports (without the echoed config, provenance and timing). A parameter
that never changes the report of a base run, where the run accepts it, is a candidate
no-op there; each candidate was then read in the code before it went into
:data:`netdp.tasks.readers.READERS`.

    PYTHONPATH=. nice -n 19 python experiments/readers_noops.py [--out FILE.json] [-j 2]

Prints, per parameter, the bases where it changed the report (read), where it did not
(candidate), and where make_config refused it; and the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

DROP = {"config", "provenance", "timing", "runtime_s", "version", "schema", "seed",
        "shuffle_bound"}  # what echoes the input (the privacy section names --shuffle)
SKIP = {"task", "protocol", "topology", "seed", "nodes", "runs", "malicious", "attack"}


def files(folder: Path) -> dict[str, str]:
    """The graph and data files the bases and values use."""
    edges = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (4, 5), (5, 6), (6, 7), (7, 4), (1, 8),
             (8, 9), (9, 10), (10, 11), (11, 8), (2, 12), (12, 13), (13, 14), (14, 15),
             (15, 12), (3, 13)]
    out = {}
    path = folder / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in edges))
    out["edges"] = str(path)
    path = folder / "gw.txt"
    path.write_text("".join(f"{u} {v} {1 + (u * 7 + v) % 5}\n" for u, v in edges))
    out["weighted"] = str(path)
    path = folder / "g.graphml"
    import networkx as nx

    graph = nx.Graph()
    for u, v in edges:
        graph.add_edge(u, v, weight=float(1 + (u * 7 + v) % 5), cost=float(1 + (u + v) % 3))
    nx.write_graphml(graph, path)
    out["graphml"] = str(path)
    path = folder / "data.csv"
    path.write_text("a,b\n" + "".join(f"{i % 2},{(i * 3) % 5}\n" for i in range(16)))
    out["data"] = str(path)
    path = folder / "w.npy"
    import numpy as np

    from netdp.graphs.topologies import build

    topo = build("hypercube", 16)
    w = np.zeros((16, 16))
    assert topo.indptr is not None and topo.indices is not None
    for u in range(16):
        for v in topo.indices[topo.indptr[u]:topo.indptr[u + 1]]:
            w[u, v] = 1 / 5
        w[u, u] = 1 - w[u].sum()
    np.save(path, w)
    out["matrix"] = str(path)
    return out


def bases(f: dict[str, str]) -> list[dict[str, Any]]:
    """The base runs: every task and protocol, both engines, a few topologies."""
    small = {"nodes": 16, "steps": 48, "seed": 3}
    hyper = {"topology": "hypercube"}
    walk_sum = [
        {}, {"topology": "ring", "steps": None}, hyper, {"topology": f["edges"]},
        {"topology": f["weighted"], "graph_format": "weighted-edgelist"},
        {"topology": f["graphml"]}, {"engine": "event"},
        {"engine": "event", "tokens": 2, "service_time": 0.5},
        {"loss": "0.1"}, {**hyper, "loss": "0.1", "on_loss": "skip"},
        {**hyper, "coalition": "1,2"}, {"topology": "ring", "steps": None, "loss": "0.1"},
        {"mechanism": "laplace"}, {"mechanism": "piecewise", "low": -1.0},
        {"topology": "ring", "steps": None, "noise_every_hop": True},
        {**hyper, "sources": 4}, {"churn": "exp:20:5"}, {**hyper, "churn": "exp:20:5"},
        {"accountants": ()}, {**hyper, "accountants": ()},
        {"topology": "ring", "steps": None, "accountants": ()},
    ]
    out = [{"task": "sum", **b} for b in walk_sum]
    out += [{"task": "sum", "protocol": "gossip", "steps": 6, **b} for b in (
        hyper, {"topology": f["edges"]}, {"topology": "complete"}, {"topology": "cycle"},
        {**hyper, "loss": "0.1"}, {**hyper, "accelerated": True},
        {"topology": f["graphml"], "weight": "weight"}, {**hyper, "engine": "event"},
        {**hyper, "churn": "exp:20:5"}, {**hyper, "engine": "event", "churn": "exp:20:5"},
        {"topology": f["edges"], "accountants": ()},
        {"topology": f["edges"], "coalition": "1,2"})]
    for task, extra in (("histogram", {}), ("fraction", {}), ("itemsets", {}),
                        ("multidim", {}), ("heavy-hitters", {"domain_bits": 8,
                                                             "support": 50}),
                        ("one-bit", {})):
        for b in ({}, {"topology": "ring", "steps": None}, hyper, {"engine": "event"},
                  {**hyper, "accountants": ()}):
            out.append({"task": task, **extra, **b})
    out += [{"task": "histogram", "mechanism": "olh"},
            {"task": "histogram", "topology": "ring", "steps": None, "mechanism": "grr",
             "gamma": 0.5},
            {"task": "histogram", "malicious": "1,2", "attack": "rpa"},
            {"task": "histogram", "malicious": "1,2", "attack": "mga"},
            {"task": "itemsets", "mining": "svsm"}]
    sgd = {"task": "sgd", "dataset": "synthetic", "evals": 4}
    out += [{**sgd, **b} for b in ({}, {"topology": "ring", "steps": None}, hyper,
                                   {"engine": "event"})]
    out += [{**sgd, "protocol": "gossip", "steps": 5, **b} for b in (
        hyper, {"topology": f["edges"]}, {**hyper, "gossip_steps": 2})]
    return [{**small, **b} for b in out]


def values(f: dict[str, str]) -> dict[str, list[Any]]:
    """Valid values, not the defaults, of the parameters (every choice of a choice)."""
    return {
        "steps": [30], "rounds": [2], "tokens": [2], "self_moves": [False],
        "walk": ["simple", "lazy", "metropolis"], "directed": [True],
        "graph_format": ["adjlist", "edgelist"], "weight": ["weight", "cost"],
        "snapshot_period": [2], "after_snapshots": ["last"], "epsilon": [2.0],
        "delta": [1e-3], "accountants": [("rdp",), ("pld",), ("kov", "rdp")],
        "convention": ["reference"], "coalition": ["1,2"], "engine": ["event", "vector"],
        "latency": ["exp:2"], "service_time": [0.5], "loss": ["0.1"],
        "churn": ["exp:50:5"], "crash": [200.0], "slow": ["0.3:3"],
        "on_loss": ["skip", "regenerate"], "timeout": [8.0], "retries": [1],
        # sections
        "records_per_node": [3], "bound": [2], "mechanism": None, "calibration": ["classic"],
        "noise_every_hop": [True], "data": None, "data_file": [f["data"]], "column": ["b"],
        "low": [-1.0], "high": [2.0], "sources": [4, 16], "sigma": [3.0],
        "gossip_matrix": ["lazy", f["matrix"]], "accelerated": [True], "rdp_order": [4.0],
        "gamma": [0.3], "domain": [5], "shuffle": None, "dummies": [3], "project": [True],
        "targets": [3], "target_choice": ["least"], "dataset": ["randhie"], "target": ["a"],
        "model": ["linear"], "lipschitz": [0.9], "lr": [0.03], "lr_schedule": None,
        "radius": [0.5], "l2": [0.5], "skew": [0.5], "test_fraction": [0.4],
        "max_contributions": [1], "regimes": [("network", "local")], "evals": [7],
        "gossip_steps": [3], "share": [0.7], "set_size": [2], "mean_size": [2.0],
        "top": [3], "oracle": None, "mining": None, "itemset_size": [3], "attributes": [3],
        "categorical": [1], "split": None, "domain_bits": [6], "candidates": [3],
        "start_bits": [2], "step_bits": [1], "groups": [3], "zipf_exponent": [0.8],
        "support": [20],
    }


def strip(obj: Any) -> Any:
    """The report without what echoes the input or the machine."""
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in DROP}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


_BEFORE: dict[str, Any] = {}


def report(params: dict[str, Any]) -> Any:
    """The stripped report of one run, and its trace as ``--trace-out`` writes it."""
    from netdp.engine.faults import from_config
    from netdp.run.api import simulate
    from netdp.tasks import make_config

    config = make_config(params)
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.csv"  # not offered with faults
        out = strip(simulate(config, progress=False, trace_out=None if from_config(config)
                             else trace).to_json())
        lines = trace.read_text().splitlines() if trace.exists() else []
        return out, [line for line in lines if not line.startswith("#")]  # not the echo


def outcome(job: tuple[dict[str, Any], str, Any]) -> tuple[str, str]:
    """``refused`` (with the message), ``changed``, ``same`` or ``error``."""
    from netdp.core.errors import InputError
    from netdp.tasks import make_config

    base, name, value = job
    key = json.dumps(base, sort_keys=True)
    try:
        if key not in _BEFORE:
            _BEFORE[key] = report(base)
        before = _BEFORE[key]
        make_config({**base, name: value})
        after = report({**base, name: value})
    except InputError as exc:
        return "refused", str(exc)
    except Exception as exc:  # noqa: BLE001 - a discovery tool reports everything
        return "error", f"{type(exc).__name__}: {exc}"
    return ("same" if json.dumps(before, sort_keys=True, default=str)
            == json.dumps(after, sort_keys=True, default=str) else "changed"), ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="readers_noops.json")
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--only", help="comma-separated parameters")
    args = parser.parse_args()
    from netdp.core.params import params_of
    from netdp.core.simulation_config import SimulationConfig
    from netdp.tasks import get_task, make_config

    folder = Path(tempfile.mkdtemp(prefix="readers-"))
    f = files(folder)
    vals = values(f)
    jobs = []
    for base in bases(f):
        make_config(base)  # a base must run
        task = get_task(base["task"], base.get("protocol", "walk"))
        specs = [*params_of(SimulationConfig), *params_of(task.section)]
        for name, spec, default in specs:
            if name in SKIP or (args.only and name not in args.only.split(",")):
                continue
            options = vals[name] if vals.get(name) is not None else [
                c for c in spec.choices or () if c != default]
            for value in options:
                if value != default and value != base.get(name):
                    jobs.append((base, name, value))
    print(f"{len(bases(f))} bases, {len(jobs)} runs", file=sys.stderr)
    with ProcessPoolExecutor(args.j) as pool:
        results = list(pool.map(outcome, jobs, chunksize=4))
    rows = [{"base": {k: (Path(v).name if isinstance(v, str) and os.sep in v else v)
                      for k, v in b.items() if k not in ("nodes", "seed")},
             "name": n, "value": (Path(v).name if isinstance(v, str) and os.sep in v else v),
             "outcome": o, "why": w} for (b, n, v), (o, w) in zip(jobs, results, strict=True)]
    Path(args.out).write_text(json.dumps(rows, indent=1, default=str) + "\n")
    by: dict[str, dict[str, int]] = {}
    for row in rows:
        by.setdefault(row["name"], {}).setdefault(row["outcome"], 0)
        by[row["name"]][row["outcome"]] += 1
    for name, counts in sorted(by.items()):
        print(f"{name:18} {counts}")
    total = {o: sum(1 for r in rows if r["outcome"] == o) for o in
             ("changed", "same", "refused", "error")}
    print(f"total {len(rows)} runs: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
