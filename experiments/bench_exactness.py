"""netdp's default accountant beside the exact loss, run as users run it (issue 38).

Usage: NETDP_TIME_LIMIT=300 nice -n 10 python experiments/bench_exactness.py
       [--cells ring:100 complete:100 ... karate graphml:florentine contacts:100]
       [--eps0 0.1 1] [--sources 2] [--seed 0] [--run-timeout 900] [--pld-seconds 30]
       [--out docs/figures/accounting_exactness_target.csv]
       python experiments/bench_exactness.py --markdown docs/figures/accounting_exactness_target.csv

Each cell is one ``netdp.simulate(config)`` (``--task sum``, ``T = 100 n`` steps, on the
ring 100 turns, ``delta = 1e-6`` and so every pairwise figure at the one target δ 1e-6,
spec Correction 7) with the accountants: the task's default for that topology (what
``make_config`` resolves when ``accountants`` is not given, read from the prepared
setup and named in the row), ``exact``, and ``pld`` where its tracker composes it and
netdp's own estimate of the run with it is below ``--pld-seconds``. All accountants of
one call see the same walk and the same observers. On graphs other than the ring and the
complete graph the tracker accounts ``--sources`` sampled observers; the ring and the
complete graph account every observer.

Where netdp refuses the one call, the script does what the refusal allows and says so in
the row's ``call`` and ``status``:

* a time (or memory) refusal naming an accountant (``NETDP_TIME_LIMIT``): that accountant
  is recorded as ``refused: <netdp's line>`` and the call is made again without it;
* any other refusal of the call (a time refusal whose largest part is no accountant, such
  as the time-varying tracker's laws; sampled observers beside ``exact``, whose per-pair
  ratios keep the pairs, which a sampled graph tracker refuses as ``pairs-out``): one call
  per accountant, each with the same config and seed (so the same walk and the same
  sampled observers; the row's ``same_walk`` checks the estimate and the observers match);
* a call still running after ``--run-timeout`` seconds is stopped (the accountants it
  held recorded ``stopped after ...``) and those other than ``exact`` are run again alone.

Each call runs in a fresh process. Per row: the accountant's mean and q99 over the
accounted pairs (``report.privacy.empirical``), ``mean_ratio`` and ``q99_ratio`` (its
mean and q99 over exact's), the report's per-pair ratio to exact where the call held
both, and the seconds of accounting per observer: the report gives the accounting
seconds of a call, not per accountant, so in a call with several accountants that is
the call's accounting seconds over its observers, for all of them together
(``seconds_basis``). Rows are appended to the CSV cell by cell.

A cell is ``topology[:n]``: ``ring``, ``complete``, ``complete-noself`` (the complete graph
without self-moves), a named topology (``hypercube:128``, ``karate``), ``graphml:NAME``
(networkx's ``NAME`` graph, e.g. ``karate`` or ``les-miserables``, written to a temporary
GraphML file whose path is the topology) or ``contacts:n`` (a random-waypoint contact
trace of ``n`` walkers, 200 ticks, contact radius 0.15, written by
``experiments/mobility_contacts.py``'s model to a temporary CSV, ``--format contacts``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DELTA, T_PER_NODE, TICKS, RADIUS = 1e-6, 100, 200, 0.15
FIELDS = ["cell", "topology", "n", "T", "eps0", "target_delta", "observers", "accountant",
          "role", "call", "status", "mean", "q99", "max", "mean_ratio", "q99_ratio",
          "pair_ratio_mean", "seconds_per_observer", "seconds_basis", "call_wall_s",
          "same_walk", "time_limit"]
DEFAULT_CELLS = ["ring:100", "complete:100", "complete-noself:100", "hypercube:128",
                 "grid:100", "random-geometric:100", "karate", "graphml:florentine",
                 "contacts:100"]
NETWORKX_GRAPHS = {"karate": "karate_club_graph", "les-miserables": "les_miserables_graph",
                   "florentine": "florentine_families_graph",
                   "davis": "davis_southern_women_graph"}


# --------------------------------------------------------------------------- one call

def _child(config: dict[str, Any]) -> dict[str, Any]:
    """One ``netdp.simulate(config)`` as a JSON-ready summary, or its refusal."""
    import netdp
    from netdp.core.errors import InputError

    start = time.perf_counter()
    try:
        report = netdp.simulate(config)
    except InputError as exc:
        return {"refused": str(exc), "param": getattr(exc, "param", None),
                "wall_s": time.perf_counter() - start}
    privacy = report.privacy.to_dict()
    n = report.topology.n
    first = privacy["empirical"][0] if privacy.get("empirical") else {"pairs": 0}
    # the observers record of a per-observer map; else every pair of an observer counted
    accounted = (report.observers.accounted if report.observers is not None
                 else round(first["pairs"] / (n - 1)))
    return {"empirical": [{k: v for k, v in e.items() if k != "by_distance"}
                          for e in privacy.get("empirical", [])],
            "target_delta": privacy.get("target_delta"), "note": privacy.get("note"),
            "timing": report.timing.to_dict(), "n": n,
            "steps": report.runs[0].hops, "accounted": accounted,
            "estimate": report.utility.to_dict()["estimate"],
            "accountants": list(report.config.accountants or ()),
            "wall_s": time.perf_counter() - start}


def simulate(config: dict[str, Any], timeout: float) -> dict[str, Any]:
    """:func:`_child` in a fresh process, stopped after ``timeout`` seconds."""
    cmd = [sys.executable, __file__, "--child", json.dumps(config)]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"stopped": f"stopped after {timeout:.0f} s (--run-timeout)",
                "wall_s": time.perf_counter() - start}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"failed": f"failed (rc {done.returncode}): {tail}",
                "wall_s": time.perf_counter() - start}
    return dict(json.loads(lines[-1]))


# --------------------------------------------------------------------------- cells

def _graphml(name: str, folder: Path) -> str:
    import networkx as nx

    graph = getattr(nx, NETWORKX_GRAPHS.get(name, name))()
    path = folder / f"{name}.graphml"
    nx.write_graphml(graph, path)
    return str(path)


def _contacts(n: int, seed: int, folder: Path) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np
    from mobility_contacts import connected, random_waypoint, write

    radius = RADIUS
    while True:  # as mobility_contacts.main: the union of the contacts connected
        contacts, _ = random_waypoint(n, TICKS, radius, 0.005, 0.02, 5,
                                      np.random.default_rng(seed))
        if connected(n, contacts):
            break
        radius *= 1.1
    path = folder / f"contacts-{n}.csv"
    write(path, contacts)
    return str(path)


def base_config(spec: str, eps0: float, sources: int, seed: int,
                folder: Path) -> tuple[dict[str, Any], str]:
    """The cell's config (without accountants) and its topology, as the row names it."""
    name, _, n_text = spec.partition(":")
    n = int(n_text) if n_text.isdigit() else None
    common: dict[str, Any] = {"task": "sum", "epsilon": eps0, "delta": DELTA, "seed": seed}
    if name == "ring":
        return {**common, "topology": "ring", "nodes": n, "rounds": T_PER_NODE}, "ring"
    if name in ("complete", "complete-noself"):
        return ({**common, "topology": "complete", "nodes": n,
                 "self_moves": name == "complete"},
                "complete" if name == "complete" else "complete, no self-moves")
    if name == "graphml":
        path = _graphml(n_text or "karate", folder)
        return ({**common, "topology": path, "sources": sources},
                f"GraphML file ({n_text or 'karate'})")
    if name == "contacts":
        path = _contacts(n or 100, seed, folder)
        return ({**common, "topology": path, "graph_format": "contacts", "sources": sources},
                f"contact trace ({TICKS} ticks)")
    out = {**common, "topology": name, "sources": sources}
    if n is not None:
        out["nodes"] = n
    return out, name


def resolved(config: dict[str, Any]) -> tuple[str, int, str, tuple[str, ...]]:
    """The default accountant netdp picks for ``config`` (no ``accountants`` given), the
    number of nodes, the walk kind and the accountants its tracker composes with."""
    from netdp.accounting import registry
    from netdp.tasks import make_config, task_of

    cfg = make_config(config)
    setup = task_of(cfg).prepare(cfg)
    kind = setup.topology.kind
    assert setup.config.accountants
    return (setup.config.accountants[0], setup.topology.n, kind,
            registry.names(kind=kind, task="sum"))


def estimate_seconds(config: dict[str, Any]) -> float:
    """netdp's own estimate of the run's seconds (:func:`netdp.tasks.base.work`)."""
    from netdp.run.resources import planned_size
    from netdp.tasks import make_config, task_of
    from netdp.tasks.base import work

    cfg = make_config(config)
    task = task_of(cfg)
    n, steps = planned_size(task, cfg)
    return sum(seconds for seconds, _ in work(task, cfg, n, steps).values())


def _named(refusal: str, accountants: list[str]) -> str | None:
    """The accountant a time or memory refusal names as its largest part, if any."""
    if "NETDP_TIME_LIMIT" not in refusal and "memory" not in refusal:
        return None
    return next((a for a in accountants if f"the {a} accountant" in refusal), None)


def measure(spec: str, eps0: float, sources: int, seed: int, timeout: float,
            pld_seconds: float, folder: Path) -> list[dict[str, Any]]:
    """The rows of one cell: one per accountant (default, exact, pld where it runs)."""
    config, topo = base_config(spec, eps0, sources, seed, folder)
    default, n, kind, composes = resolved(config)
    if kind != "ring":
        config["steps"] = T_PER_NODE * n
    wanted = [default] + [a for a in ("exact",) if a in composes and a != default]
    # beside the default, the other of rdp and pld: rdp where pld is the default (the
    # fast bound it replaced), pld where netdp estimates it below --pld-seconds
    other = "rdp" if default == "pld" else "pld"
    if other in composes and other not in wanted and (other == "rdp" or estimate_seconds(
            {**config, "accountants": ["pld"]}) <= pld_seconds):
        wanted.append(other)
    results: dict[str, dict[str, Any]] = {}  # accountant -> its summary and how it ran
    status: dict[str, str] = {}

    def record(out: dict[str, Any], accountants: list[str], call: str) -> None:
        for e in out["empirical"]:
            if e["accountant"] in accountants:
                results[e["accountant"]] = {**e, "out": out, "call": call}

    calls = list(wanted)
    while calls:
        out = simulate({**config, "accountants": calls}, timeout)
        if "empirical" in out:
            record(out, calls, "one call" if len(calls) > 1 else "own call")
            break
        if "refused" in out:
            named = _named(out["refused"], calls)
            if named is not None and len(calls) > 1:
                status[named] = f"refused: {out['refused']}"
                calls.remove(named)
                continue
            if len(calls) > 1:  # refused for another reason: one call per accountant
                why = out["refused"]
                for acc in calls:
                    alone = simulate({**config, "accountants": [acc]}, timeout)
                    if "empirical" in alone:
                        record(alone, [acc], f"own call (one call refused: {why})")
                    else:
                        status[acc] = _why(alone)
                break
            status[calls[0]] = _why(out)
            break
        # stopped or failed: the accountants other than exact again, alone
        for acc in calls:
            status[acc] = _why(out)
        for acc in [a for a in calls if a != "exact" and len(calls) > 1]:
            alone = simulate({**config, "accountants": [acc]}, timeout)
            if "empirical" in alone:
                record(alone, [acc], "own call (the call with exact stopped)")
                status.pop(acc, None)
            else:
                status[acc] = _why(alone)
        break
    return _rows(spec, topo, eps0, n, wanted, default, results, status)


def _why(out: dict[str, Any]) -> str:
    if "refused" in out:
        return f"refused: {out['refused']}"
    return str(out.get("stopped") or out.get("failed"))


def _rows(spec: str, topo: str, eps0: float, n: int, wanted: list[str], default: str,
          results: dict[str, dict[str, Any]], status: dict[str, str]) -> list[dict[str, Any]]:
    exact = results.get("exact")
    estimates = {(r["out"]["estimate"], r["out"]["accounted"]) for r in results.values()}
    rows = []
    for acc in wanted:
        role = "default" if acc == default else ("exact" if acc == "exact" else "other")
        r = results.get(acc)
        row: dict[str, Any] = {"cell": spec, "topology": topo, "n": n, "eps0": eps0,
                               "accountant": acc, "role": role,
                               "time_limit": os.environ.get("NETDP_TIME_LIMIT", ""),
                               "status": status.get(acc, "ok" if r else "not run")}
        if r is None:
            rows.append(row)
            continue
        out = r["out"]
        accounted = out["accounted"]
        several = len(out["accountants"]) > 1
        row.update(
            T=out["steps"], target_delta=r["delta"], call=r["call"],
            observers=f"all {accounted}" if accounted >= out["n"] else
            f"{accounted} of {out['n']}", mean=r["mean"], q99=r["q99"], max=r["max"],
            pair_ratio_mean=(r.get("ratio_to_exact") or {}).get("mean", ""),
            seconds_per_observer=out["timing"]["accounting_s"] / max(accounted, 1),
            seconds_basis="the call's accounting s / observers (all its accountants: "
            + ", ".join(out["accountants"]) + ")" if several
            else "its own call's accounting s / observers",
            call_wall_s=out["wall_s"],
            same_walk="" if len(results) < 2 else ("yes" if len(estimates) == 1 else "NO"))
        if exact is not None and r is not exact:
            row["mean_ratio"] = _ratio(r["mean"], exact["mean"])
            row["q99_ratio"] = _ratio(r["q99"], exact["q99"])
        rows.append(row)
    return rows


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.inf if a > 0 else 1.0


def markdown(path: str) -> str:
    """The CSV's rows as the markdown table of docs/accounting-exactness.md: a line per
    cell and ε0 (default, exact and pld side by side)."""
    cells: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            cells.setdefault((row["cell"], row["eps0"]), {})[row["role"]] = row
    lines = ["| graph | n | ε0 | observers | default | default mean | default q99 | exact mean "
             "| exact q99 | mean ratio | q99 ratio | other: mean / q99 | s / observer "
             "(default; exact) |", "|" + "---|" * 13]
    for rows in cells.values():
        d, e, p = rows.get("default", {}), rows.get("exact", {}), rows.get("other", {})
        ok = e.get("status") == "ok"
        exact = ([_num(e["mean"]), _num(e["q99"])] if ok
                 else [_short(e.get("status", "not run")), "–"])
        pld = (f"{p['accountant']}: {_num(p['mean'])} / {_num(p['q99'])}"
               if p.get("status") == "ok" else "–")
        secs = "; ".join(_num(r["seconds_per_observer"]) if r.get("status") == "ok"
                         else "–" for r in (d, e))
        lines.append("| " + " | ".join([
            d.get("topology", "?"), d.get("n", "?"), d.get("eps0", "?"),
            d.get("observers", "?"), d.get("accountant", "?"), _num(d.get("mean", "")),
            _num(d.get("q99", "")), *exact,
            _num(d.get("mean_ratio", "")) if ok else "–",
            _num(d.get("q99_ratio", "")) if ok else "–", pld, secs]) + " |")
    return "\n".join(lines)


def _num(text: str) -> str:
    try:
        x = float(text)
    except ValueError:
        return text or "–"
    return f"{x:#.3g}".rstrip(".") if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _short(status: str) -> str:
    """A refusal or a stop as a table cell: netdp's estimate, or the stop."""
    if status.startswith("refused:") and "would take about" in status:
        return "refused (est. " + status.split("would take about ")[1].split(" (")[0] + ")"
    return status.split(" (")[0]


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(json.loads(sys.argv[2]))))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--markdown":
        print(markdown(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=DEFAULT_CELLS)
    parser.add_argument("--eps0", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--sources", type=int, default=2,
                        help="sampled observers on graphs other than the ring and complete")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-timeout", type=float, default=900,
                        help="seconds one simulate call may take before it is stopped")
    parser.add_argument("--pld-seconds", type=float, default=30,
                        help="add pld where netdp estimates the run with it below this")
    parser.add_argument("--out", default="docs/figures/accounting_exactness_target.csv")
    args = parser.parse_args()
    new = not os.path.exists(args.out)
    with (open(args.out, "a", newline="") as fh,
          tempfile.TemporaryDirectory() as tmp):
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        for spec in args.cells:
            for eps0 in args.eps0:
                t0 = time.perf_counter()
                for row in measure(spec, eps0, args.sources, args.seed, args.run_timeout,
                                   args.pld_seconds, Path(tmp)):
                    writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                                     for k, v in row.items()})
                    print(row, flush=True)
                fh.flush()
                print(f"# {spec} eps0={eps0}: {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
