"""Time-varying graphs through ``simulate``: the compiled router against a plain-Python
oracle, one snapshot against the fixed graph, snapshots from Python, a contact trace and
a folder of graph files from the command line, and the refusals."""

from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from conftest import view_cap_max

import netdp
from netdp.core.errors import InputError
from netdp.engine.routing import TimedRouter
from netdp.graphs.time_varying import from_networkx_sequence


def oracle(tv, walk: str, current: int, u: np.ndarray, first: int) -> list[int]:
    """The rules of :func:`netdp.engine._kernels.timed_walk`, one hop at a time, on each
    snapshot's weighted adjacency: the first neighbour whose cumulative weight passes
    ``u0 · d``."""
    out, h = [], current
    for i, row in enumerate(u):
        snap = tv.snapshots[tv.snapshot_at(first + i)]
        lo, hi = snap.indptr[h], snap.indptr[h + 1]
        w = np.ones(hi - lo) if snap.weights is None else snap.weights[lo:hi]

        def pick(x, lo=lo, w=w, snap=snap):
            cum = np.cumsum(w)
            return int(snap.indices[lo + min(int(np.searchsorted(cum, x * cum[-1], "right")),
                                             w.size - 1)])

        def strength(node, snap=snap):
            a, b = snap.indptr[node], snap.indptr[node + 1]
            return float(b - a) if snap.weights is None else float(snap.weights[a:b].sum())

        if walk == "simple":
            h = pick(row[0])
        elif walk == "metropolis":
            w_ = pick(row[0])
            if row[1] * strength(w_) < strength(h):
                h = w_
        elif row[0] >= 0.5:
            h = pick(row[1])
        out.append(h)
    return out


def snapshots(n: int = 9, seed: int = 0, weighted: bool = False) -> list[nx.Graph]:
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(3):
        g = nx.gnp_random_graph(n, 0.3, seed=int(rng.integers(1 << 30)))
        if weighted:
            for a, b in g.edges:
                g.edges[a, b]["w"] = float(rng.uniform(0.5, 3.0))
        graphs.append(g)
    graphs[0].add_edges_from((i, i + 1) for i in range(n - 1))  # the union is connected
    if weighted:
        for i in range(n - 1):
            graphs[0].edges[i, i + 1].setdefault("w", 1.0)
    return graphs


@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("after", ["cycle", "last"])
def test_the_compiled_router_is_the_oracle(walk, weighted, after):
    tv = from_networkx_sequence(snapshots(weighted=weighted), period=2, after=after,
                                weight="w" if weighted else None)
    router = TimedRouter(tv, walk)
    rng = np.random.default_rng(7)
    u = router.draw(rng, 40)
    for first in (0, 3, 11):
        assert router.route(4, u, first).tolist() == oracle(tv, walk, 4, u, first)


@pytest.mark.parametrize("after", ["cycle", "last"])
def test_a_gapped_contact_trace_walks_as_its_explicit_snapshots(tmp_path, after):
    """Times without contacts share one empty snapshot (a schedule of slots): the walk
    is the one on the same trace with an explicit empty graph per time."""
    from netdp.graphs.time_varying import read_contact_trace

    rows = [(0, i, i + 1) for i in range(7)] + [(3, 0, 4), (3, 2, 6), (7, 1, 5), (9, 3, 7)]
    trace = tmp_path / "gaps.csv"
    trace.write_text("".join(f"{t},{u},{v}\n" for t, u, v in rows))
    tv = read_contact_trace(trace, period=2, after=after)
    graphs = [nx.empty_graph(8) for _ in range(10)]
    for t, u, v in rows:
        graphs[t].add_edge(u, v)
    explicit = from_networkx_sequence(graphs, period=2, after=after)
    assert len(tv.snapshots) == 5 and tv.slots.size == 10  # 4 times + the empty one
    assert [tv.snapshot_at(t) for t in (0, 2, 6, 14, 18, 22)] == [0, 4, 1, 2, 3, (
        4 if after == "cycle" else 3)]
    rng = np.random.default_rng(3)
    for walk in ("simple", "metropolis", "lazy"):
        router, plain = TimedRouter(tv, walk), TimedRouter(explicit, walk)
        u = router.draw(rng, 60)
        for first in (0, 5, 17):
            got = router.route(2, u, first).tolist()
            assert got == plain.route(2, u, first).tolist() == oracle(tv, walk, 2, u, first)


def test_one_snapshot_walks_and_accounts_as_the_fixed_graph():
    g = nx.random_regular_graph(3, 12, seed=1)
    base = {"seed": 5, "steps": 150, "accountants": ["kov"]}
    fixed = netdp.simulate({**base, "topology": g})
    timed = netdp.simulate({**base, "topology": [g]})
    assert timed.utility.estimate == fixed.utility.estimate
    a, b = fixed.privacy.empirical[0], timed.privacy.empirical[0]
    assert b.mean == pytest.approx(a.mean, rel=1e-9)
    assert b.max == pytest.approx(a.max, rel=1e-9)


def test_the_walk_moves_only_along_the_edges_of_its_step():
    graphs = snapshots()
    tv = from_networkx_sequence(graphs, period=3)
    router = TimedRouter(tv, "simple")
    rng = np.random.default_rng(2)
    path = [int(router.start(rng))]
    path += router.route(path[0], router.draw(rng, 200), 0).tolist()
    for t, (a, b) in enumerate(zip(path, path[1:], strict=False)):
        g = graphs[(t // 3) % 3]
        assert g.has_edge(a, b) or (a == b and g.degree(a) == 0), (t, a, b)


def test_snapshots_from_python_keep_their_labels():
    graphs = [nx.relabel_nodes(g, {i: f"n{i}" for i in g}) for g in snapshots()]
    report = netdp.simulate({"topology": graphs, "seed": 1, "steps": 120,
                             "snapshot_period": 2, "after": "last"})
    assert report.labels == tuple(f"n{i}" for i in range(9))
    assert "3 snapshots on 9 nodes" in report.to_dict()["topology"]
    emp = report.privacy.empirical[0]
    assert 0 < emp.mean <= emp.max
    # a pair never passes its view cap (spec Correction 6: not its node's realised LDP loss)
    assert emp.max <= view_cap_max(report.config)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "netdp", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def contacts(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "contacts.csv"
    rows = ["t,u,v"] + [f"{t},{a},{b}" for t in range(5) for a, b in
                        (rng.choice(10, 2, replace=False) for _ in range(8))]
    rows += [f"5,{i},{i + 1}" for i in range(9)]  # the union is connected
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_contact_trace_from_the_command_line(contacts):
    out = cli("simulate", "--topology", str(contacts), "--format", "contacts",
              "--steps", "120", "--seed", "2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["config"]["graph_format"] == "contacts"
    kov = data["privacy"]["empirical"][0]
    assert 0 < kov["mean"] <= kov["max"] < float("inf")  # the view cap: Correction 6


def test_a_folder_of_graph_files(tmp_path):
    folder = tmp_path / "snaps"
    folder.mkdir()
    for k, g in enumerate(snapshots()):
        nx.write_edgelist(g, folder / f"s{k}.edgelist", data=False)
    out = cli("simulate", "--topology", str(folder), "--steps", "90", "--seed", "1",
              "--snapshot-period", "2")
    assert out.returncode == 0, out.stderr
    assert "3 snapshots on 9 nodes" in out.stdout


@pytest.mark.parametrize("args, param", [
    (["--task", "histogram"], "--topology"),
    (["--engine", "event"], "--engine"),
    (["--convention", "reference"], "--convention"),
    (["--mechanism", "laplace"], "--convention"),
    (["--workers", "2"], "--workers"),
])
def test_what_a_time_varying_graph_does_not_run_is_refused(contacts, args, param):
    out = cli("simulate", "--topology", str(contacts), "--format", "contacts",
              "--steps", "60", *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.count("\n") == 1 and param in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("flag, value", [("--snapshot-period", "2"), ("--after", "last")])
def test_the_schedule_on_a_fixed_graph_is_refused(flag, value):
    out = cli("simulate", "--nodes", "10", flag, value)
    assert out.returncode == 2 and flag in out.stderr and out.stderr.count("\n") == 1


def test_a_snapshot_list_with_other_nodes_is_refused():
    with pytest.raises(InputError, match="node set"):
        netdp.simulate({"topology": [nx.path_graph(4), nx.path_graph(5)]})


def test_gossip_on_one_snapshot_is_gossip_on_the_fixed_graph():
    g = nx.random_regular_graph(3, 14, seed=2)
    base = {"protocol": "gossip", "seed": 4, "steps": 6}
    fixed = netdp.simulate({**base, "topology": g})
    timed = netdp.simulate({**base, "topology": [g]})
    assert timed.utility.estimate == pytest.approx(fixed.utility.estimate, rel=1e-12)
    assert timed.utility.theoretical_rmse == pytest.approx(fixed.utility.theoretical_rmse,
                                                           rel=1e-9)
    a, b = fixed.privacy.empirical[0], timed.privacy.empirical[0]
    assert b.mean == pytest.approx(a.mean, rel=1e-9)
    assert b.max == pytest.approx(a.max, rel=1e-9)


def test_gossip_on_a_contact_trace(contacts):
    out = cli("simulate", "--protocol", "gossip", "--topology", str(contacts), "--format",
              "contacts", "--steps", "8", "--seed", "2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rdp = data["privacy"]["empirical"][0]
    assert 0 < rdp["mean"] <= rdp["max"] <= data["privacy"]["ldp"]["max"] + 1e-12
    assert "time-varying" in data["privacy"]["note"]


@pytest.mark.parametrize("args, param", [(["--accelerated"], "--accelerated"),
                                         (["--loss", "0.1"], "--loss")])
def test_what_time_varying_gossip_does_not_run_is_refused(contacts, args, param):
    out = cli("simulate", "--protocol", "gossip", "--topology", str(contacts), "--format",
              "contacts", "--steps", "5", *args)
    assert out.returncode == 2 and param in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.parametrize("protocol, steps", [("walk", "80"), ("gossip", "4")])
def test_account_reproduces_a_time_varying_run(contacts, tmp_path, protocol, steps):
    """``simulate --trace-out`` then ``account`` gives the run's pairwise figures."""
    log = tmp_path / "run.log"
    ran = cli("simulate", "--protocol", protocol, "--topology", str(contacts), "--format",
              "contacts", "--steps", steps, "--seed", "3", "--trace-out", str(log), "--json")
    assert ran.returncode == 0, ran.stderr
    again = cli("account", str(log), "--topology", str(contacts), "--json")  # the user's file
    assert again.returncode == 0, again.stderr
    a = json.loads(ran.stdout)["privacy"]["empirical"][0]
    b = json.loads(again.stdout)["privacy"]["empirical"][0]
    for key in ("mean", "max", "min"):
        assert b[key] == pytest.approx(a[key], rel=1e-12, abs=1e-12)


def test_account_refuses_a_hop_off_its_snapshot(contacts, tmp_path):
    log = tmp_path / "run.log"
    ran = cli("simulate", "--topology", str(contacts), "--format", "contacts", "--steps",
              "30", "--seed", "3", "--trace-out", str(log))
    assert ran.returncode == 0, ran.stderr
    lines = log.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    cells = lines[last].split(",")  # t, token, sender, receiver: the token's last hop
    tick = f"{(int(cells[0]) - 1) % 6},"  # the move from step t - 1: that snapshot
    met = {tuple(r.split(",")[1:3]) for r in contacts.read_text().splitlines()
           if r.startswith(tick)}
    cells[-1] = next(str(v) for v in range(10) if str(v) != cells[-2]
                     and (cells[-2], str(v)) not in met and (str(v), cells[-2]) not in met)
    lines[last] = ",".join(cells)
    log.write_text("\n".join(lines) + "\n")
    out = cli("account", str(log), "--topology", str(contacts))
    assert out.returncode == 2 and "is not a move" in out.stderr, out.stderr


def test_a_time_varying_run_has_its_page_and_pairs(contacts, tmp_path):
    """The report page's figures measure distance on the union of the snapshots."""
    page, pairs = tmp_path / "run.html", tmp_path / "pairs.npy"
    out = cli("simulate", "--topology", str(contacts), "--format", "contacts", "--steps",
              "60", "--seed", "1", "--html", str(page), "--pairs-out", str(pairs), "-q")
    assert out.returncode == 0, out.stderr
    assert page.stat().st_size > 0 and np.load(pairs).shape == (10, 10)
    assert page.read_text().count("<svg") >= 2
