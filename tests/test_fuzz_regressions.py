"""The fuzzer's regression corpus: every command line that once gave a traceback, a
second stderr line or a run without end, kept as an explicit case (issue 29).

``{name}`` in a case is one of the generated files of tests/test_fuzz_cli.py. A refusal
may state, third, the parameter its one line must name (``--topology``, ``DIR``): the
cases of messages that once named the wrong one (tests/fuzz_names.py has the rule every
case is checked with).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from fuzz_names import named
from test_fuzz_cli import check_case, make_inputs

SIM = ["simulate", "-n", "6", "--steps", "30"]
#: User topology specs whose edges grow as n²: generator, then its [params].
SPECS = {"turan": ("turan_graph", "r = 2"), "gnm": ("gnm_random_graph", 'm = "n * n / 4"'),
         "dense-gnm": ("dense_gnm_random_graph", 'm = "n * n / 4"'),
         "lollipop": ("lollipop_graph", "n = 10"), "barbell": ("barbell_graph", "m2 = 10")}
GOSSIP = ["simulate", "--protocol", "gossip", "-n", "6"]
#: Config files of the cases, by name.
CONFIGS = {"steps-200.0.toml": "steps = 200.0\n", "steps-200.5.toml": "steps = 200.5\n",
           "low-5.toml": "low = 5\n"}

CASES: list[tuple[str, list[str]] | tuple[str, list[str], str]] = [
    # numbers out of any meaning: refused by their declared range
    ("gossip-sigma-1e300", [*GOSSIP, "--sigma", "1e300"]),
    ("gossip-sigma-1e-300", [*GOSSIP, "--sigma", "1e-300"]),
    ("sgd-gossip-sigma-1e300", [*GOSSIP, "--task", "sgd", "--sigma", "1e300"]),
    ("range-1e300-1e301", [*SIM, "--range", "1e300", "1e301"]),
    ("range-pm-1e300", [*SIM, "--range", "-1e300", "1e300"]),
    ("gossip-range-pm-1e300", [*GOSSIP, "--range", "-1e300", "1e300"]),
    ("laplace-eps-1e-300", [*SIM, "--mechanism", "laplace", "--epsilon", "1e-300"]),
    ("histogram-eps-1e-300", [*SIM, "--task", "histogram", "--epsilon", "1e-300"]),
    ("olh-eps-1e-300", [*SIM, "--task", "itemsets", "--oracle", "olh", "--epsilon", "1e-300"]),
    ("multidim-eps-1e-300", [*SIM, "--task", "multidim", "--epsilon", "1e-300"]),
    ("sgd-eps-1e300", [*SIM, "--task", "sgd", "--epsilon", "1e300"]),
    ("rdp-pld-eps-1e300", [*SIM, "--epsilon", "1e300", "--accountant", "rdp",
                           "--accountant", "pld"]),
    ("sgd-lipschitz-1e300", [*SIM, "--task", "sgd", "--lipschitz", "1e300"]),
    ("sgd-max-contributions-1e300", [*SIM, "--task", "sgd", "--max-contributions", "1e300"]),
    ("audit-domain-1e300", ["audit", "--mechanism", "olh", "--domain", "1e300"]),
    ("audit-steps-1e300", ["audit", "--task", "sum", "--steps", "1e300", "--trials", "100"]),
    ("audit-rounds-1e300", ["audit", "--task", "sum", "--topology", "ring", "--rounds",
                            "1e300", "--trials", "100"]),
    ("audit-eps-1e12", ["audit", "--epsilon", "1e12", "--trials", "100"]),
    ("attack-eps-1e12", ["attack", "--epsilon", "1e12", "--trials", "2", "--users", "2000"]),
    # bad files: one line naming the flag
    ("gossip-matrix-empty-npy", [*GOSSIP, "--gossip-matrix", "{empty.npy}"]),
    ("plot-pairs-empty-npy", ["plot", "--preset", "pairs", "--pairs", "{empty.npy}",
                              "--out", "x.png"]),
    # the 20,016-case run of session 6: a warning as a second line, a line break echoed
    ("plot-pairs-complex-npy", ["plot", "--preset", "heatmap", "--pairs", "{complex.npy}",
                                "--out", "x.png"]),
    # a simulate flag whose field has another name (--after: after_snapshots), named as given
    ("plot-after-on-a-table", ["plot", "{sweep}", "--preset", "privacy-vs-n", "--out",
                               "fig.png", "--after", ""], "--after"),
    ("plot-accountant-line-break", ["plot", "{sweep}", "--preset", "privacy-vs-n", "--out",
                                    "x.png", "--accountant", "a\x1cb\u2028c"]),
    ("loss-binary", [*SIM, "--loss", "file:{binary.bin}"]),
    ("churn-binary", [*SIM, "--churn", "file:{binary.bin}"]),
    ("loss-huge-cell", [*SIM, "--loss", "file:{huge-cell.csv}"]),
    ("data-file-huge-cell", [*SIM, "--data-file", "{huge-cell.csv}"]),
    ("config-deep", [*SIM, "--config", "{deep.toml}"]),
    ("config-deep-closed", [*SIM, "--config", "{deep-closed.toml}"]),
    ("sweep-spec-deep", ["sweep", "{deep.toml}", "--out", "o", "--backend", "serial"]),
    ("sweep-spec-deep-closed", ["sweep", "{deep-closed.toml}", "--out", "o"]),
    ("plot-result-deep-json", ["plot", "--preset", "by-distance", "--result", "{deep.json}",
                               "--out", "x.png"]),
    ("plot-result-deep-object", ["plot", "--preset", "by-distance", "--result",
                                 "{deep-object.json}", "--out", "x.png"]),
    ("account-binary", ["account", "{binary.bin}"]),
    ("account-deep-json", ["account", "{deep.json}"]),
    # runaways: refused up front by the memory and time estimates (netdp.run.resources;
    # check_case runs them under the fuzzer's NETDP_TIME_LIMIT)
    ("runs-1e5", ["simulate", "--runs", "100000"]),
    *[(f"histogram-{m}-domain-{d}", ["simulate", "--task", "histogram", "--mechanism", m,
                                     "--domain", d, "-n", "20"])
      for m, d in (("olh", "1e8"), ("oue", "1e8"), ("rappor", "1e7"), ("cms", "1e7"),
                   ("hcms", "1e7"))],
    ("itemsets-domain-1e5-nodes-1e4", ["simulate", "--task", "itemsets", "--domain",
                                       "100000", "--nodes", "10000"]),
    ("event-tokens-1e6", ["simulate", "--engine", "event", "--tokens", "1000000"]),
    ("event-timeout-retries", ["simulate", "--engine", "event", "--loss", "0.5", "--timeout",
                               "1e-300", "--retries", "1000000"]),
    ("pld-nodes-1e4", ["simulate", "--nodes", "10000", "--accountant", "pld"]),
    ("pld-eps-700", ["simulate", "--accountant", "pld", "--epsilon", "700", "-n", "20"]),
    # 16.6 s in the long run of session 6 (-n 6): no estimate covered the exact accountant;
    # since session 18 exact takes about 2 s there, and -n 20 (estimated 6 s) is the case
    ("exact-n-20", ["simulate", "-n", "20", "--accountant", "exact"], "--accountant"),
    ("exact-hypercube", ["simulate", "--topology", "hypercube", "-n", "16", "--steps", "256",
                         "--accountant", "exact"], "--accountant"),
    ("gossip-tokens-1", GOSSIP + ["--tokens", "1"], "--tokens"),
    ("gossip-steps-1e9", ["simulate", "--protocol", "gossip", "--steps", "1e9"]),
    ("erdos-renyi-1e5", ["simulate", "--topology", "erdos-renyi", "-n", "100000",
                         "--no-tracking"]),
    *[(f"spec-{name}-1e5", ["simulate", "--topology", f"{{{name}.toml}}", "-n", "100000",
                            "--no-tracking"]) for name in SPECS],
    ("audit-heavy-hitters", ["audit", "--trials", "200", "--task", "heavy-hitters"]),
    ("audit-empty-mechanism", ["audit", "--trials", "200", "--mechanism", ""]),
    ("account-nodes-1e6", ["account", "{log}", "-n", "1e6", "--epsilon", "11"]),
    # absurd values, flags given twice
    ("service-time-1e300", [*SIM, "--service-time", "1e300"]),
    ("timeout-1e300", [*SIM, "--timeout", "1e300"]),
    ("audit-claim-epsilon-1e300", ["audit", "--trials", "200", "--claim-epsilon", "1e300"]),
    ("seed-30-digits", [*SIM, "--seed", "1" + "0" * 29]),
    ("nodes-twice", [*SIM, "-n", "7"]),
    ("nodes-and-n", ["simulate", "--nodes", "6", "-n", "7"]),
    ("trials-twice", ["audit", "--trials", "200", "--trials", "300"]),
    # found by the long run (docs/fuzzing.md)
    ("attack-trials-dashdash", ["attack", "--users", "2000", "--trials=--"]),
    ("attack-users-3.4e7", ["attack", "--users", "33554433", "--trials", "2", "--domain",
                            "16"]),
    ("nodes-1.4e6", ["simulate", "-n", "1391287"]),
    ("account-nodes-2.7e6", ["account", "{log}", "-n", "2680415"]),
    ("runs-321-of-6-nodes", ["simulate", "-n", "6", "-r", "321"]),
    ("audit-multidim-200-trials", ["audit", "--trials", "200", "--task", "multidim",
                                   "--seed", "177580"]),
    ("account-nodes-400-digits", ["account", "{log}", "-n", "9" * 400]),
    ("account-sigma-3e-239", ["account", "{log}", "-n", "6", "--sigma", "2.98e-239"]),
    ("pairs-out-empty", [*SIM, "--pairs-out", "", "--json"]),
    ("tokens-400-digits", [*SIM, "--data-file", "{truncated.csv}", "--tokens", "9" * 400]),
    ("report-path-too-long", ["report", "a" * 5000, "--html", "page.html"]),
    ("topology-name-too-long", [*SIM, "--topology", "a" * 300]),
    ("contacts-workers", [*SIM[:1], "--topology", "{contacts.csv}", "--format", "contacts",
                          "--workers", "2"]),
    # session 18's check of issue 39: Weibull churn of a tiny shape (an OverflowError of
    # Γ(1 + 1/k), and sessions drawn without end)
    ("churn-weibull-0.005", ["simulate", "--topology", "cycle", "-n", "6", "--steps", "10",
                             "--churn", "weibull:0.005:10:10"]),
    ("churn-weibull-0.01", ["simulate", "--topology", "cycle", "-n", "6", "--steps", "10",
                            "--churn", "weibull:0.01:10:10"]),
    # tracebacks found by session 18's check of issue 39 (a numba compile error, an
    # OverflowError): --snapshot-period had no upper bound
    *[(f"snapshot-period-{name}", [*SIM[:1], *protocol, "--topology", "{contacts.csv}",
                                   "--format", "contacts", "--snapshot-period", value])
      for name, value, protocol in (("1e300", "1e300", []),
                                    ("2-63", "9223372036854775808", []),
                                    ("1e300-gossip", "1e300", ["--protocol", "gossip"]))],
    # messages that named a parameter not given (tests/fuzz_names.py), with the one named
    # now; the examples first
    ("nodes-1e9-names-nodes", ["simulate", "--nodes", "1e9"], "--nodes"),
    ("range-5-1", [*SIM, "--range", "5", "1"], "--range"),
    ("range-high-1e300", [*SIM, "--range", "0", "1e300"], "--range"),
    ("range-low-minus-1e300", [*SIM, "--range", "-1e300", "0"], "--range"),
    ("config-low-above-high", [*SIM[:3], "--config", "{low-5.toml}"], "--range"),
    ("config-steps-200.5", [*SIM[:3], "--config", "{steps-200.5.toml}"], "--steps"),
    ("sgd-gossip-crash", [*SIM, "--task", "sgd", "--protocol", "gossip", "--crash", "0.1"],
     "--crash"),
    ("topology-npy", [*SIM, "--topology", "{3d.npy}"], "--topology"),  # was --format
    ("account-topology-npy", ["account", "{log}", "-n", "6", "--topology", "{one.npy}"],
     "--topology"),  # was --format
    ("malicious-alone", [*SIM, "--malicious", "1"], "--malicious"),  # was --attack
    ("attack-alone", [*SIM, "--attack", "max"], "--attack"),
    ("attack-users-7", ["attack", "--users", "7", "--trials", "2", "--domain", "16"],
     "--users"),  # was --beta
    ("attack-beta-1e-9", ["attack", "--beta", "1e-9", "--trials", "2", "--domain", "16"],
     "--beta"),
    ("attack-domain-3", ["attack", "--users", "2000", "--trials", "2", "--domain", "3"],
     "--domain"),  # was --targets
    ("attack-targets-5-domain-3", ["attack", "--users", "2000", "--trials", "2", "--domain",
                                   "3", "--targets", "5"], "--targets"),
    ("itemsets-domain-3", [*SIM, "--task", "itemsets", "--domain", "3"],
     "--domain"),  # was --mean-size
    ("plot-distance-nan-pairs", ["plot", "--preset", "distance", "--pairs", "{nan.npy}",
                                 "--out", "x.png"], "--pairs"),  # was --node
    ("plot-preset-table-without-x", ["plot", "{one-column.csv}", "--preset", "privacy-vs-n",
                                     "--out", "x.png"], "DIR"),  # was --x
    # tracebacks found with the new bases (a matrix file, a run's JSON, a table file)
    ("plot-json-list-table", ["plot", "{list.json}", "--preset", "privacy-vs-n", "--out",
                              "x.png"], "DIR"),  # a TypeError: the table's columns 0, 1, 2
    ("report-pairs-zero-bytes", ["report", "{run}", "--pairs", "{empty.txt}", "--html",
                                 "page.html"], "--pairs"),  # an EOFError
    ("plot-pairs-zero-bytes", ["plot", "--preset", "pairs", "--pairs", "{zero-bytes.npy}",
                               "--out", "x.png"], "--pairs"),  # an EOFError
    ("gossip-matrix-zero-bytes", [*GOSSIP, "--gossip-matrix", "{zero-bytes.npy}"],
     "--gossip-matrix"),  # an EOFError
    ("sgd-skew-1e308", [*SIM, "--task", "sgd", "--skew", "1e308"], "--skew"),  # NaN shares
    ("sgd-format-contacts", [*SIM, "--task", "sgd", "--format", "contacts"],
     "--format"),  # was --topology (complete, the default)
    ("sgd-gossip-steps-5304", ["simulate", "-n", "6", "--task", "sgd", "--protocol", "gossip",
                               "--gossip-steps", "5304"], "--gossip-steps"),  # over 30 s
    ("bounds-n-min-above-default-n-max", ["bounds", "--points", "5", "--n-min", "240143887036"],
     "--n-min"),  # was --n-max
    # session 7: the label column is the last one unless --target is given
    # session 7: the steps a log's lines make were named as --steps, which account lacks
    ("account-time-varying-nodes-6e26", ["account", "{log}", "--nodes", "5.8e+26",
                                         "--topology", "{sweep}", "--json"]),
    ("format-contacts-named", ["simulate", "-n", "6", "--format", "contacts"],
     "--format"),  # was --topology (complete, the default)
    ("format-contacts-named-no-n", ["simulate", "--format", "contacts"],
     "--format"),  # a FileNotFoundError (the size counted before the file was checked)
    ("format-contacts-missing", ["simulate", "--topology", "no-such.csv", "--format",
                                 "contacts"], "--topology"),  # a FileNotFoundError
    ("account-observer-plot", ["account", "{log}", "-n", "6", "--observer", "3", "--plot",
                               "x.png", "--json"], "--plot"),  # was --pairs-out
    ("range-width-subnormal", ["simulate", "-n", "6", "--task", "sum", "--range", "0",
                               "5e-324"], "--range"),  # a ZeroDivisionError (calibration)
    ("gossip-range-width-subnormal", [*GOSSIP, "--range", "0", "5e-324"], "--range"),
    ("audit-trials-56e6", ["audit", "--trials", "55972385", "--domain", "13", "--json"],
     "--trials"),  # 17-20 s: mechanism audits had no time estimate
    ("audit-rappor-domain-1e5", ["audit", "--mechanism", "rappor", "--trials", "1000000",
                                 "--domain", "100000"], "--domain"),
    ("multidim-attributes-1", ["simulate", "-n", "6", "--task", "multidim", "--attributes",
                               "1", "--json"], "--attributes"),  # was --categorical (2)
    ("sgd-dataset-five-labels", ["simulate", "-n", "6", "--task", "sgd", "--dataset",
                                 "{contacts.csv}", "--json"], "--dataset"),  # was --target
    # issue 39: two outputs at one file, an output name that reads as a folder
    ("out-and-pairs-out-one-file", [*SIM, "--out", "x.json", "--pairs-out", "x.json"],
     "--pairs-out"),
    ("out-and-html-dot-slash", [*SIM, "--out", "./x.json", "--html", "x.json"], "--html"),
    ("out-newdir-slash", [*SIM, "--out", "newdir/"], "--out"),  # wrote a file 'newdir'
    ("trace-out-newdir-dot", [*SIM, "--trace-out", "newdir/."], "--trace-out"),
    ("account-out-newdir-slash", ["account", "{log}", "--out", "newdir/"], "--out"),
    ("results-csv-parquet-one-file", ["results", "{sweep}", "--csv", "t", "--parquet", "t"],
     "--parquet"),
    ("plot-out-png-slash", ["plot", "{sweep}", "--preset", "privacy-vs-n", "--out",
                            "x.png/"], "--out"),
    # issue 39: a scheduler address of another protocol (a TypeError from inside dask)
    *[(f"scheduler-{scheme}", [*SIM[:3], "--topology", "cycle", "--steps", "30",
                               "--scheduler", f"{scheme}://127.0.0.1:1"], "--scheduler")
      for scheme in ("ucx", "tls")],
    ("sweep-scheduler-ucx", ["sweep", "{spec}", "--out", "o", "--backend", "dask",
                             "--scheduler", "ucx://127.0.0.1:1"], "--scheduler"),
]

#: A gossip run with DECOR's secrets on the 6-cycle (the correlated-noise readers).
DECOR = ["simulate", "--protocol", "gossip", "-n", "6", "--topology", "cycle", "--sigma", "1",
         "--steps", "3", "--correlated-noise", "1"]

#: Cases found by the long run that must run (exit 0 or 1): each was once a traceback.
RUNS: list[tuple[str, list[str]]] = [
    ("audit-seed", ["audit", "--trials", "200", "--seed", "8"]),
    ("audit-node-0", ["audit", "--trials", "200", "--node", "0"]),  # once over 30 s
    ("audit-epsilon-16-json", ["audit", "--trials", "200", "--epsilon", "16", "--json"]),
    ("config-steps-200.0", [*SIM[:3], "--config", "{steps-200.0.toml}"]),  # the issue's
]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    """The fuzzer's generated files, and the topology specs of :data:`SPECS`, by name."""
    root = tmp_path_factory.mktemp("fuzz-regressions")
    files = make_inputs(root)
    for name, (generator, params) in SPECS.items():
        path = root / f"{name}.toml"
        path.write_text(f'description = "{name}"\ngenerator = "{generator}"\nsize = "n"\n'
                        f"random = {'true' if 'gnm' in name else 'false'}\n[params]\n{params}\n")
        files[f"{name}.toml"] = str(path)
    for name, text in CONFIGS.items():
        (root / name).write_text(text)
        files[name] = str(root / name)
    return files


def _argv(argv: list[str], inputs: dict[str, str]) -> list[str]:
    return [re.sub(r"\{([^}]+)\}", lambda m: inputs[m.group(1)], word) for word in argv]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_regression(case, inputs):
    """Each case is a refusal: exit 2 and one line naming a parameter given (or the one
    the case states), within the fuzzer's limit (in a fresh folder, under the fuzzer's
    NETDP_TIME_LIMIT: see check_case)."""
    _, argv, *name = case
    argv = _argv(argv, inputs)
    lines: list[str] = []
    assert check_case(argv, lines) == 2
    if name:
        assert named(lines[0], argv[0]) == name[0], lines[0]


@pytest.mark.parametrize(("label", "argv"), RUNS, ids=[c[0] for c in RUNS])
def test_regression_runs(label, argv, inputs):
    """Each case runs: exit 0 or 1 (a refuted claim), no traceback, within the limit."""
    assert check_case(_argv(argv, inputs)) in (0, 1)


#: Issue 39: a file whose offending text would be quoted: (name, files, argv, the one
#: line's words). ``{x}`` is the file ``x`` of the case; its text holds the secret.
SECRET = "SECRET7c2e"
LOG_HEAD = "# netdp trace log 1\n# topology = \"complete\"\n# nodes = 4\n"
QUOTED: list[tuple[str, dict[str, str], list[str], str]] = [
    ("log-column-line", {"l.csv": LOG_HEAD + f"t,{SECRET},sender,receiver\n1,0,0,1\n"},
     ["account", "{l.csv}"], "line 4: expected the column line"),
    ("log-field", {"l.csv": LOG_HEAD + f"t,token,sender,receiver\n1,0,{SECRET},1\n"},
     ["account", "{l.csv}"], "line 5: the sender field is not a whole number"),
    ("log-header-value", {"l.csv": LOG_HEAD + f"# epsilon = {SECRET}\nt,token,sender,"
                          "receiver\n1,0,0,1\n"}, ["account", "{l.csv}"],
     "line 4: the value of a '# key = value' header line is not a TOML value"),
    ("log-header-key", {"l.csv": LOG_HEAD + f"# {SECRET} = 1\nt,token,sender,receiver\n"
                        "1,0,0,1\n"}, ["account", "{l.csv}"],
     "line 4: a header key that is not a parameter"),
    ("log-header-epsilon", {"l.csv": LOG_HEAD + f'# epsilon = "{SECRET}"\nt,token,sender,'
                            "receiver\n1,0,0,1\n"}, ["account", "{l.csv}"],
     "line 4: epsilon: must be a finite number"),
    ("log-header-sigma", {"l.csv": LOG_HEAD + f'# sigma = "{SECRET}"\nt,token,sender,'
                          "receiver\n1,0,0,1\n"}, ["account", "{l.csv}"],
     "line 4: sigma: must be a finite number"),
    ("log-header-protocol", {"l.csv": LOG_HEAD + f'# protocol = "{SECRET}"\nt,token,sender,'
                             "receiver\n1,0,0,1\n"}, ["account", "{l.csv}"],
     "line 4: the protocol is not that of the column line (line 5), a walk log"),
    ("contacts-time", {"c.csv": f"0,1,2\n{SECRET},2,3\n"},
     ["simulate", "--topology", "{c.csv}", "--format", "contacts"],
     "line 2: time (the first field) must be an integer >= 0"),
    ("contacts-weight", {"c.csv": f"0,1,2,{SECRET}\n"},
     ["simulate", "--topology", "{c.csv}", "--format", "contacts"],
     "line 1: weight (the fourth field) must be a finite number in [1e-300, 1e+300]"),
    ("gossip-matrix-line", {"w.txt": f"0 1 {SECRET}\n"},
     ["simulate", "--protocol", "gossip", "--topology", "complete", "-n", "3",
      "--gossip-matrix", "{w.txt}"], "w.txt line 1: expected two whole node numbers"),
    ("data-file-cell", {"d.csv": f"x\n1\n{SECRET}\n"},
     ["simulate", "--data-file", "{d.csv}"], "d.csv line 3, column 0: not a number"),
    ("data-file-columns", {"d.csv": f"{SECRET}\n1\n2\n"},
     ["simulate", "--data-file", "{d.csv}", "--column", "nope"],
     "d.csv has no column 'nope'; give a name from its header row or an index 0..0"),
    ("itemsets-cell", {"s.csv": f"items\n1 2\n1 {SECRET}\n"},
     ["simulate", "--task", "itemsets", "--data-file", "{s.csv}"],
     "line 3: items must be distinct integers in 0..2**63-1 separated by spaces"),
    ("graphml-unknown-node", {"g.graphml": '<graphml xmlns="http://graphml.graphdrawing.org/'
                              'xmlns"><graph edgedefault="undirected">\n<node id="a"/>\n'
                              f'<edge source="a" target="{SECRET}"/>\n</graph></graphml>\n'},
     ["simulate", "--topology", "{g.graphml}"],
     "line 3: an <edge> names a node that no <node> element declares"),
    # issue 39, the remaining quotes: a graph's labels, a topology spec, a file's values
    ("graph-connectivity-labels", {"g.txt": f"a b\n{SECRET} c\n"},
     ["simulate", "--topology", "{g.txt}"],
     "node(s) #2, #3 cannot be reached from node #0 (nodes numbered from 0 in the file's"),
    ("topology-spec-generator", {"t.toml": f'description = "x"\ngenerator = "{SECRET}"\n'
                                 'size = "n"\n'}, ["simulate", "--topology", "{t.toml}"],
     "the generator is not a graph generator of networkx.generators"),
    ("topology-spec-expression", {"t.toml": 'description = "x"\ngenerator = "erdos_renyi_'
                                  f'graph"\nsize = "n"\n[params]\np = "{SECRET} + n"\n'},
     ["simulate", "--topology", "{t.toml}", "-n", "10"],
     "parameter p of [params] is not an expression in n: an unknown name"),
    ("topology-spec-size", {"t.toml": 'description = "x"\ngenerator = "cycle_graph"\n'
                            f'size = "{SECRET}"\n'}, ["simulate", "--topology", "{t.toml}"],
     "size must be one of n, log2, sqrt, fixed"),
    ("config-value", {"c.toml": f'nodes = "{SECRET}"\n'}, ["simulate", "--config", "{c.toml}"],
     "--nodes: must be an integer >= 2"),
    ("plot-config-value", {"c.toml": f'nodes = "{SECRET}"\n'},
     ["plot", "--preset", "distance", "--config", "{c.toml}"], "--nodes: must be an integer"),
    ("sweep-spec-value", {"s.toml": f'seeds = 1\n[fixed]\nsteps = "{SECRET}"\n[grid]\n'
                          "nodes = [4]\n"}, ["sweep", "{s.toml}", "--out", "o"],
     "--steps: must be an integer >= 1 (in "),
    # the readers' long run of session 17: a contact trace's labels in the connectivity
    # error (a node that no contact links to the first)
    ("contacts-connectivity-labels", {"c.csv": f"0,0,1\n0,1,2\n1,{SECRET},3\n"},
     ["simulate", "--topology", "{c.csv}", "--format", "contacts", "--steps", "30"],
     "cannot be reached from node #0 (nodes numbered from 0 in the file's order)"),
]


@pytest.mark.parametrize(("label", "files", "argv", "says"), QUOTED,
                         ids=[c[0] for c in QUOTED])
def test_error_lines_never_quote_a_file(label, files, argv, says, tmp_path, capsys):
    """Issue 39: a reader's error names the file, the line and what was wrong in netdp's
    words; the offending text itself (here a secret) never reaches the line."""
    from netdp.run.cli import main

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code = main([re.sub(r"\{([^}]+)\}", lambda m: str(tmp_path / m.group(1)), word)
                 for word in argv])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert says in err and SECRET not in err + out, err


#: Issue 39: (name, argv, the parameter named): ``{fifo}`` a named pipe, ``{rows}`` a
#: sweep folder whose first batch of rows is one. Each once blocked for ever (or, on
#: /dev/zero, read until memory ran out); now refused before anything is opened.
SPECIAL = [
    ("account-fifo", ["account", "{fifo}"], "LOG"),
    ("account-dev-zero", ["account", "/dev/zero"], "LOG"),
    ("account-folder", ["account", "{folder}"], "LOG"),
    ("report-fifo", ["report", "{fifo}", "--html", "page.html"], "PATH"),
    ("sweep-spec-fifo", ["sweep", "{fifo}", "--out", "swept"], "SPEC.toml"),
    ("config-fifo", [*SIM, "--config", "{fifo}"], "--config"),
    ("data-file-fifo", [*SIM, "--data-file", "{fifo}"], "--data-file"),
    ("pairs-fifo", ["plot", "--preset", "pairs", "--pairs", "{fifo}", "--out", "f.png"],
     "--pairs"),
    ("sweep-rows-fifo", ["results", "{rows}"], "DIR"),
]


@pytest.mark.parametrize(("label", "argv", "param"), SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_files_are_refused_before_reading(label, argv, param, inputs, tmp_path,
                                                  capsys, monkeypatch):
    """Issue 39: a FIFO, a device or a folder where a file is read is one line naming the
    flag or argument, before the file is opened (an alarm stops a read that blocks)."""
    import os
    import shutil
    import signal

    from netdp.run.cli import main

    def alarm(*_):
        raise TimeoutError(f"blocked: netdp {' '.join(argv)}")

    fifo, rows, folder = tmp_path / "pipe", tmp_path / "sweep", tmp_path / "folder"
    os.mkfifo(fifo)
    folder.mkdir()
    shutil.copytree(inputs["sweep"], rows)
    part = sorted((rows / "rows").glob("part-*.jsonl"))[0]
    part.unlink()
    os.mkfifo(part)
    paths = {"fifo": str(fifo), "rows": str(rows), "folder": str(folder)}
    monkeypatch.chdir(tmp_path)
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    try:
        code = main(_argv(argv, paths))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and out == "", err
    assert f" {param}: cannot read " in lines[0] and "not a regular file" in lines[0], lines


#: Issue 39, found by the structure-aware fuzzer (tests/fuzz_readers.py): (name, files of
#: the case, argv, the parameter the one line names, or ``None`` for a case that must
#: run). ``{x}`` is the case's file ``x``; ``{log}``, ``{run}``, ``{pairs}`` the fuzzer's
#: valid inputs.
NEST = "[" * 1000 + "1" + "]" * 1000
READERS: list[tuple[str, dict[str, str], list[str], str | None]] = [
    ("log-header-nested-1000", {"l.csv": LOG_HEAD + f"# epsilon = {NEST}\nt,token,sender,"
                                "receiver\n1,0,0,1\n"}, ["account", "{l.csv}"], "{l.csv}"),
    ("log-header-int-5001-digits", {"l.csv": LOG_HEAD + "# epsilon = 1" + "0" * 5000
                                    + "\nt,token,sender,receiver\n1,0,0,1\n"},
     ["account", "{l.csv}"], "{l.csv}"),
    ("set-nested-1000", {}, ["account", "{log}", "-n", "6", "--set", f"epsilon={NEST}"],
     "--epsilon"),  # a --set key is named by its flag
    ("npy-header-shape-1e20", {}, ["plot", "--preset", "pairs", "--pairs", "{lying.npy}",
                                   "--out", "f.png"], "--pairs"),  # an OverflowError
    ("gml-4-mb", {}, ["simulate", "--topology", "{big.gml}", "--steps", "30"],
     "--topology"),  # 7-10 s of parsing under the 3 s limit
    ("topology-spec-int-5001-digits", {"t.toml": 'description = "c"\ngenerator = '
                                       '"cycle_graph"\nsize = "n"\ndefault_nodes = 1'
                                       + "0" * 5000 + "\n"},
     ["simulate", "--topology", "{t.toml}", "-n", "6"], "--topology"),
    ("config-int-5001-digits", {"c.toml": "steps = 1" + "0" * 5000 + "\n"},
     ["simulate", "--config", "{c.toml}"], "--config"),
    ("adjlist-label-5001-digits", {"g.adjlist": "0 1\n1 1" + "0" * 5000 + "\n"},
     ["simulate", "--topology", "{g.adjlist}", "--steps", "30"], None),  # a ValueError
    ("graphml-declared-nodes-5001-digits", {"g.graphml": '<graphml><graph edgedefault="undir'
                                            'ected" parse.nodes="1' + "0" * 5000 + '">'
                                            '<node id="a"/><node id="b"/><edge source="a" '
                                            'target="b"/></graph></graphml>'},
     ["simulate", "--topology", "{g.graphml}"], "--topology"),
    ("contacts-150k-rows", {"c.csv": "t,u,v\n" + "0,1,2\n" * 150_000 + "1,2,3\n"},
     ["simulate", "--topology", "{c.csv}", "--format", "contacts", "-n", "6"],
     "--topology"),  # 4 s of reading under the 3 s limit
    ("topology-spec-default-nodes-1e30", {"t.toml": 'description = "c"\ngenerator = "cycle_'
                                          'graph"\nsize = "n"\ndefault_nodes = 1' + "0" * 30
                                          + "\n"}, ["simulate", "--topology", "{t.toml}"],
     "--topology"),  # named --nodes, not given
    ("data-file-outside-range", {"d.csv": f"x,{SECRET}\n0,1\n5,2\n"},
     ["simulate", "--data-file", "{d.csv}"], "--data-file"),  # named --range, not given
    ("graphml-encoding-unknown", {"g.graphml": '<?xml version="1.0" encoding="UTF-2147483647"'
                                  '?>\n<graphml><graph edgedefault="undirected"><node id="a"/>'
                                  '<node id="b"/><edge source="a" target="b"/></graph>'
                                  "</graphml>\n"}, ["simulate", "--topology", "{g.graphml}"],
     "--topology"),  # a LookupError
    ("config-range-400-digits", {"c.toml": "range = [1" + "0" * 400 + ", 1.0]\n"},
     ["simulate", "--config", "{c.toml}"], "--range"),  # an OverflowError
    ("topology-spec-default-nodes-2e53", {"t.toml": 'description = "c"\ngenerator = "cycle_'
                                          'graph"\nsize = "n"\ndefault_nodes = '
                                          "9007199254740993\n"},
     ["simulate", "--topology", "{t.toml}"], "--topology"),  # named --nodes, not given
    *[(f"pairs-1e308-{preset}", {}, ["plot", "--preset", preset, "--pairs", "{huge.npy}",
                                     "--out", "f.png"], "--pairs")
      for preset in ("pairs", "heatmap", "distance")],  # a ValueError in matplotlib's ticks
    ("gossip-matrix-1e308", {}, ["simulate", "--protocol", "gossip", "-n", "6",
                                 "--gossip-matrix", "{huge.npy}"], "--gossip-matrix"),
    ("report-config-text", {}, ["report", "{text-config.json}", "--pairs", "{pairs}",
                                "--html", "page.html"], "PATH"),  # an AttributeError
    ("itemsets-int64-beyond", {"s.csv": "items\n1 2\n1 -9223372036854775809\n"},
     ["simulate", "-n", "6", "--task", "itemsets", "--data-file", "{s.csv}"], "--data-file"),
    ("account-repair-no-topology", {"l.csv": '# netdp trace log 1\n# nodes = 4\nt,token,'
                                    "sender,receiver\n1,0,0,1\n"},
     ["account", "{l.csv}", "-n", "4", "--repair"], "--topology"),  # named, not asked for
    ("config-key-not-a-name", {"c.toml": f"{SECRET}-X = 1\n"},
     ["plot", "--preset", "distance", "--config", "{c.toml}"], "--config"),
    ("itemsets-negative-item", {"s.csv": "items\n1 2\n1 -1\n"},
     ["simulate", "-n", "6", "--task", "itemsets", "--data-file", "{s.csv}"],
     "--data-file"),  # named --domain, not given
    ("itemsets-item-beyond-domain", {"s.csv": "items\n1 2\n1 99\n"},
     ["simulate", "-n", "6", "--task", "itemsets", "--data-file", "{s.csv}"],
     "--data-file"),  # named --domain, not given
    ("log-1e6-lines", {"l.csv": LOG_HEAD + "t,token,sender,receiver\n" + "".join(
        f"{t},0,{t % 4},{(t + 1) % 4}\n" for t in range(1, 1_000_001))},
     ["account", "{l.csv}"], "LOG"),  # 4.3 s of parsing under the 3 s limit
    ("sweep-steps-400-digits", {"s.toml": 'seeds = 1\n[fixed]\ntask = "sum"\nsteps = 1'
                                + "0" * 400 + "\n[grid]\nnodes = [4, 5]\n"},
     ["sweep", "{s.toml}", "--out", "o", "--backend", "serial"], None),  # an OverflowError
    ("sweep-nodes-1e30", {"s.toml": 'seeds = 1\n[fixed]\ntask = "sum"\nsteps = 20\n[grid]\n'
                          "nodes = [4, 1" + "0" * 30 + "]\n"},
     ["sweep", "{s.toml}", "--out", "o", "--backend", "serial"], None),  # its own row refused
    ("result-by-distance-1e40", {}, ["plot", "--preset", "by-distance", "--result",
                                     "{far.json}", "--out", "f.png"], "--result"),
    ("report-theory-by-distance-inf", {}, ["report", "{inf-theory.json}", "--html",
                                           "page.html"], None),  # a figure's note now
    ("report-config-directed-a-list", {}, ["report", "{directed-list.json}", "--pairs",
                                           "{pairs}", "--html", "page.html"], "PATH"),
    ("report-by-distance-row-text", {}, ["report", "{row-text.json}", "--html", "page.html"],
     "PATH"),  # an AttributeError
    # the readers' long run of session 20: a weight on the complete graph named --weight
    ("report-config-weight-on-complete", {}, ["report", "{weight-text.json}", "--pairs",
                                              "{pairs}", "--html", "page.html"], "PATH"),
    ("sweep-spec-key-not-a-name", {"s.toml": f"seeds = 1\n[fixed]\n{SECRET}-X = 1\n[grid]\n"
                                   "nodes = [4]\n"},
     ["sweep", "{s.toml}", "--out", "o", "--dry-run"], "SPEC.toml"),  # echoed as a name
    ("sweep-spec-top-key-not-a-name", {"s.toml": f"seeds = 1\n{SECRET}-X = 1\n[fixed]\n"
                                       "steps = 20\n[grid]\nnodes = [4]\n"},
     ["sweep", "{s.toml}", "--out", "o", "--dry-run"], "SPEC.toml"),  # echoed as a name
    ("result-delta-an-object", {}, ["plot", "--preset", "pairs", "--pairs", "{pairs}",
                                    "--result", "{bad-delta.json}", "--out", "f.png"],
     "--result"),
    ("result-nodes-text", {}, ["plot", "--preset", "pairs", "--pairs", "{pairs}",
                               "--result", "{text-nodes.json}", "--out", "f.png"], "--result"),
    ("result-theory-huge", {}, ["plot", "--preset", "by-distance", "--result",
                                "{huge-theory.json}", "--out", "f.png"], "--result"),
    # session 23's readers: a pair's id beyond int()'s digit limit, a Unicode digit, and a
    # covariance of subnormal entries (their inverses overflowed to a NaN traceback)
    ("secret-pairs-5000-digits", {"p.txt": "1" + "0" * 5000 + " 1\n"},
     [*DECOR, "--secret-pairs", "{p.txt}"], "--secret-pairs"),
    ("secret-pairs-unicode-digit", {"p.txt": "\u00b2 1\n"},
     [*DECOR, "--secret-pairs", "{p.txt}"], "--secret-pairs"),
    ("covariance-subnormal", {}, [*DECOR[:-2], "--noise-covariance", "{tiny.npy}"], None),
]


def _edited_run(run: str, path: tuple, value) -> str:
    """The fuzzer's run JSON with the field at ``path`` set to ``value`` (as JSON text)."""
    import json

    doc = json.loads(Path(run).read_text())
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = "\x00V\x00"
    return json.dumps(doc).replace(json.dumps("\x00V\x00"), value)


@pytest.mark.parametrize(("label", "files", "argv", "param"), READERS,
                         ids=[c[0] for c in READERS])
def test_reader_regression(label, files, argv, param, inputs, tmp_path):
    """Each once gave a traceback: now one line naming the file or flag (or a run)."""
    files = {**files, "bad-delta.json": _edited_run(
        inputs["run"], ("privacy", "empirical", 0, "delta"), '{"a": ["b", 1]}'),
        "text-nodes.json": _edited_run(inputs["run"], ("config", "nodes"), f'"{SECRET}"'),
        "text-config.json": _edited_run(inputs["run"], ("config",), '"secret.npy"'),
        "weight-text.json": _edited_run(inputs["run"], ("config", "weight"), f'"{SECRET}"'),
        "directed-list.json": _edited_run(inputs["run"], ("config", "directed"),
                                          f'["{SECRET}", 1]'),
        "row-text.json": _edited_run(inputs["run"], ("privacy", "empirical", 0, "by_distance",
                                                     1), f'"{SECRET}"'),
        "far.json": _edited_run(inputs["run"], ("privacy", "empirical", 0, "by_distance", 1,
                                                "distance"), "1" + "0" * 40),
        "inf-theory.json": _edited_run(inputs["run"], ("privacy", "empirical", 0,
                                                       "by_distance", 1, "distance"), "1e999"),
        "huge-theory.json": _edited_run(inputs["run"], ("privacy", "theory"),
                                        '{"x": 1' + "0" * 400 + "}")}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    header = Path(inputs["pairs"]).read_bytes()
    (tmp_path / "lying.npy").write_bytes(header.replace(b"(6, 6)", b"(10**20, 1)".replace(
        b"10**20", b"1" + b"0" * 20), 1))
    edges = "".join(f"  edge [ source {u} target {(u + 1) % 6} ]\n" for u in range(6))
    (tmp_path / "big.gml").write_text("graph [\n" + "".join(
        f"  node [ id {u} ]\n" for u in range(6)) + edges * 110_000 + "]\n")
    np.save(tmp_path / "huge.npy", np.full((6, 6), 1e308))
    np.save(tmp_path / "tiny.npy", np.full((6, 6), 5e-324))
    files = {**files, "lying.npy": "", "big.gml": "", "huge.npy": "", "tiny.npy": ""}
    paths = {**inputs, **{name: str(tmp_path / name) for name in files}}
    argv = _argv(argv, paths)
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    code = check_case(argv, lines, workdir=work)
    if param is None:
        assert code in (0, 1)
        return
    assert code == 2 and SECRET not in lines[0], lines
    assert named(lines[0], argv[0]) == _argv([param], paths)[0], lines[0]


@pytest.mark.parametrize("value", ["ucx", "nope", "module://missing", ""])
def test_a_bad_matplotlib_backend_is_ignored(value, inputs, tmp_path):
    """MPLBACKEND=ucx made matplotlib's import fail with a traceback; netdp's figures need
    no backend, so the command line ignores it (a fresh process: matplotlib reads it when
    first imported)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MPLBACKEND": value}
    done = subprocess.run([sys.executable, "-m", "netdp", "plot", "--preset", "pairs",
                           "--pairs", inputs["pairs"], "--out", str(tmp_path / "f.png")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "f.png").is_file()


@pytest.mark.parametrize("argv", [["account", "{loop}"], ["report", "{loop}", "--html", "p.html"],
                                  ["results", "{loop}"], ["simulate", "--config", "{loop}"],
                                  ["simulate", "--topology", "{loop}"],
                                  ["plot", "--preset", "pairs", "--pairs", "{loop}"]])
def test_a_loop_of_links_is_one_line(argv, tmp_path):
    """A symbolic link that names itself through another, given where a file is read: one
    line naming the argument, no traceback (the readers' fuzzer's ``link-loop``)."""
    loop = tmp_path / "loop.csv"
    loop.symlink_to("loop2.csv")
    (tmp_path / "loop2.csv").symlink_to("loop.csv")
    argv = _argv(argv, {"loop": str(loop)})
    assert check_case(argv) == 2


def test_cycle_of_100_nodes_is_estimated():
    """The readers' long run's runaway (issue 39): a topology spec of a cycle at its
    default 100 nodes, 30 steps, spent 19 s of a 24 s run on the pn-f-dp theory line (470
    PLD self-compositions per pair, 31 pairs) under a 3 s limit. The line's work is now
    estimated before it is composed (beyond 2 s it is left out, saying why:
    tests/privacy/test_published_bounds.py), the run's estimate counts those 2 s, and a
    pair the walk seldom reaches is composed by its hits (1 s for the line)."""
    captured: dict[str, str] = {}
    assert check_case(["simulate", "--topology", "cycle", "-n", "100", "--steps", "30",
                       "--seed", "1"], captured=captured) == 0
    assert "pn-f-dp mean" in captured["stdout"] and "not evaluated" not in captured["stdout"]


#: Issue 39, the readers' long run: a row of a sweep folder edited (field -> JSON text).
ROW_EDITS = [("eps0-an-object", {"eps0": '{"a": ["b", 1]}'}),  # report DIR: a TypeError
             ("seed-text", {"seed": '"x"'}), ("seed-10e30", {"seed": "1" + "0" * 30}),
             ("a-list", None),
             # issue 39's open causes: pandas' aggregation (agg function failed,
             # OverflowError) and a grid axis of text (report's TypeError)
             ("runtime-s-text", {"runtime_s": f'"{SECRET}"'}),
             ("runtime-s-400-digits", {"runtime_s": "1" + "0" * 400}),
             ("nodes-text", {"nodes": '"../secret.csv"'})]


@pytest.mark.parametrize(("label", "edit"), ROW_EDITS, ids=[e[0] for e in ROW_EDITS])
@pytest.mark.parametrize("argv", [["results", "{sweep}"],
                                  ["report", "{sweep}", "--html", "page.html"],
                                  ["plot", "{sweep}", "--preset", "privacy-vs-n", "--out",
                                   "f.png"],
                                  ["sweep", "{spec}", "--out", "{sweep}", "--backend",
                                   "serial"]], ids=["results", "report", "plot", "resume"])
def test_a_sweep_row_of_another_shape(label, edit, argv, inputs, tmp_path):
    """A row that is no table row is one line naming the folder, for every command that
    reads the folder."""
    import json
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(inputs["sweep"], sweep)
    part = sorted((sweep / "rows").glob("part-*.jsonl"))[0]
    row = json.loads(part.read_text().splitlines()[0])
    if edit is None:
        text = json.dumps(list(row.values()))
    else:
        text = json.dumps({**row, **{k: "\x00V\x00" for k in edit}})
        for value in edit.values():
            text = text.replace(json.dumps("\x00V\x00"), value, 1)
    part.write_text(text + "\n")
    argv = _argv(argv, {**inputs, "sweep": str(sweep)})
    lines: list[str] = []
    assert check_case(argv, lines) == 2
    assert "not a row of a netdp table" in lines[0] and SECRET not in lines[0], lines


def test_a_tiny_time_limit_names_itself():
    """NETDP_TIME_LIMIT=1e-320: every run is over it, and the line named --runs, not given;
    a run under a second has no size to lower, so the variable is named."""
    lines: list[str] = []
    argv = ["simulate", "-n", "6", "--steps", "30"]
    assert check_case(argv, lines, env={"NETDP_TIME_LIMIT": "1e-320"}) == 2
    assert named(lines[0], "simulate") == "NETDP_TIME_LIMIT", lines


@pytest.mark.parametrize("call", [
    lambda netdp: netdp.attack(beta=10**400, users=2000, trials=2, domain=16),
    lambda netdp: netdp.simulate([[[[1]]]]),
    lambda netdp: netdp.make_config([1, 2]),
], ids=["attack-beta-400-digits", "simulate-config-a-list", "make-config-a-list"])
def test_the_library_refuses_what_the_fuzzer_found(call):
    """The readers' fuzzer's library cases (tests/fuzz_readers.py): an OverflowError and a
    TypeError, now an InputError each."""
    import netdp
    from netdp.core.errors import InputError

    with pytest.raises(InputError):
        call(netdp)


@pytest.mark.parametrize(("key", "value"), [("configs", "1e999"), ("seeds", "null"),
                                            ("configs", "[1, 2]"), ("seeds", '["a"]'),
                                            ("configs", '["a", {"b": 1}]')])
def test_a_sweep_manifest_identity_of_another_shape(key, value, inputs, tmp_path):
    """The readers' long run of session 17: the manifest's identity with a number or null
    for its list of config hashes or seeds raised ``TypeError`` on resume."""
    import json
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(inputs["sweep"], sweep)
    manifest = sweep / "sweep.json"
    data = json.loads(manifest.read_text())
    data["identity"][key] = "\x00V\x00"
    manifest.write_text(json.dumps(data).replace(json.dumps("\x00V\x00"), value))
    lines: list[str] = []
    assert check_case(["sweep", inputs["spec"], "--out", str(sweep), "--backend",
                       "serial", "--no-progress"], lines) == 2
    assert "is not a netdp sweep manifest" in lines[0], lines


def _manifest_with(inputs, tmp_path, key: str, raw: str) -> Path:
    """A copy of the fuzzer's sweep folder whose manifest has ``key`` set to the JSON text
    ``raw`` (a value json.dumps would not write: -0.0 as read, 10^400)."""
    import json
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(inputs["sweep"], sweep)
    manifest = sweep / "sweep.json"
    text = json.dumps({**json.loads(manifest.read_text()), key: "\x00X\x00"})
    manifest.write_text(text.replace(json.dumps("\x00X\x00"), raw))
    return sweep


@pytest.mark.parametrize("runs", ['"text"', "-1", "true", "1.5"])
def test_a_sweep_manifest_whose_count_of_runs_is_no_count(runs, inputs, tmp_path):
    """The readers' long run of session 17: ``runs`` a string made ``report DIR`` compare
    it with an integer (``TypeError``)."""
    sweep = _manifest_with(inputs, tmp_path, "runs", runs)
    lines: list[str] = []
    assert check_case(["report", str(sweep), "--html", "page.html"], lines) == 2
    assert "is not a netdp sweep manifest" in lines[0], lines


def test_a_report_page_names_the_json_when_its_graph_is_not_the_matrix_s(inputs, tmp_path):
    """The readers' long run of session 17: a run JSON without its node count and a
    matrix of 6 nodes: the refusal named --topology, not given; it names --pairs now."""
    import json

    run = json.loads(Path(inputs["run"]).read_text())
    del run["config"]["nodes"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    lines: list[str] = []
    assert check_case(["report", str(path), "--pairs", inputs["pairs"], "--html",
                       "page.html"], lines) == 2
    assert lines[0].startswith("netdp report: error: --pairs: the run's JSON describes"), lines


@pytest.mark.parametrize("grid", ['[[[1]]]', '"../secret.csv"', '{"nodes": [[1]]}'])
def test_a_sweep_manifest_of_another_shape(grid, inputs, tmp_path):
    """A manifest whose grid is no table of value lists (report DIR raised TypeError or
    AttributeError): one line naming the folder."""
    sweep = _manifest_with(inputs, tmp_path, "grid", grid)
    lines: list[str] = []
    assert check_case(["report", str(sweep), "--html", "page.html"], lines) == 2
    assert "is not a netdp sweep manifest" in lines[0], lines


@pytest.mark.parametrize("kind", ["dangling", "loop"])
@pytest.mark.parametrize("argv", [["simulate", "--topology", "{dir}", "--steps", "30"],
                                  ["account", "{log}", "-n", "6", "--topology", "{dir}"]])
def test_a_link_to_nothing_among_snapshots_is_one_line(kind, argv, inputs, tmp_path):
    """A dangling link (or a loop of links) among a folder's snapshot files raised
    FileNotFoundError (the readers' fuzzer's ``snapshot-folder``): now one line naming
    --topology, before any file is read."""
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    for k, edges in enumerate([[(0, 1), (1, 2), (2, 3)], [(3, 4), (4, 5), (5, 0)]]):
        (snaps / f"{k}.txt").write_text("".join(f"{u} {v}\n" for u, v in edges))
    if kind == "dangling":
        (snaps / "2.txt").symlink_to("nowhere.txt")
    else:
        (snaps / "2.txt").symlink_to("3.txt")
        (snaps / "3.txt").symlink_to("2.txt")
    argv = _argv(argv, {**inputs, "dir": str(snaps)})
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    assert check_case(argv, lines, workdir=work) == 2
    assert named(lines[0], argv[0]) == "--topology" and "a link to nothing" in lines[0], lines


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:99999", "127.0.0.1:65536",
                                     "tcp://127.0.0.1:0", "tcp://127.0.0.1:-1",
                                     "tcp://[::1]:" + "9" * 30, "tcp://127.0.0.1:\u0663"])
@pytest.mark.parametrize("command", ["simulate", "sweep"])
def test_a_scheduler_port_out_of_range_is_refused_up_front(address, command, inputs,
                                                           tmp_path):
    """``--scheduler tcp://host:99999`` waited dask's 10 s connect timeout before its
    refusal: a port outside [1, 65535] (or not ASCII digits) is refused before any
    connection is tried, naming --scheduler (the readers' fuzzer's ``scheduler``)."""
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{u} {(u + 1) % 6}\n" for u in range(6)) + "0 3\n")
    argv = (["simulate", "--topology", str(edges), "--steps", "30", "--scheduler", address]
            if command == "simulate" else
            ["sweep", inputs["spec"], "--out", str(tmp_path / "o"), "--backend", "dask",
             "--no-progress", "--scheduler", address])
    if command == "sweep":
        pytest.importorskip("distributed")
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    assert check_case(argv, lines, workdir=work) == 2
    assert named(lines[0], argv[0]) == "--scheduler", lines
    assert "[1, 65535]" in lines[0], lines


def test_a_server_that_is_not_a_scheduler_is_one_line(tmp_path):
    """What answers at ``--scheduler`` with another protocol (an HTTP server) made dask
    allocate exabytes for its reply (MemoryError, shown as "ran out of memory; lower the
    sizes"): now one line naming --scheduler."""
    import socket
    import threading

    pytest.importorskip("distributed")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer() -> None:
        with server:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{u} {(u + 1) % 6}\n" for u in range(6)) + "0 3\n")
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    try:
        code = check_case(["simulate", "--topology", str(edges), "--steps", "30",
                           "--scheduler", f"tcp://127.0.0.1:{port}"], lines, workdir=work)
    finally:
        server.close()
    assert code == 2 and named(lines[0], "simulate") == "--scheduler", lines
    assert "not a dask scheduler" in lines[0], lines


@pytest.mark.parametrize("folder", [False, True])
def test_gossip_on_a_graph_that_mixes_too_slowly_is_one_line(folder, tmp_path):
    """Gossip on a 5,001-node path (alone, or as one snapshot of a folder: the readers'
    fuzzer's ``snapshot-folder``, "other nodes") ran ARPACK for its 50,010 iterations
    (45 s) and raised ArpackNoConvergence: the iterations are now bounded by the time
    limit and a gap that does not converge is one line naming --topology."""
    path = "".join(f"{k} {k + 1}\n" for k in range(5000))
    if folder:
        topology = tmp_path / "snaps"
        topology.mkdir()
        (topology / "0.txt").write_text("0 1\n1 2\n2 3\n")
        (topology / "1.txt").write_text("3 4\n4 5\n5 0\n")
        (topology / "2.txt").write_text(path)
    else:
        topology = tmp_path / "path.txt"
        topology.write_text(path)
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    argv = ["simulate", "--topology", str(topology), "--protocol", "gossip", "--steps", "30"]
    assert check_case(argv, lines, workdir=work) == 2
    assert named(lines[0], "simulate") == "--topology" and "mixes too slowly" in lines[0], lines


def test_a_folders_largest_snapshot_sets_the_estimate(tmp_path, monkeypatch):
    """Run 12's open runaway: a walk on a folder whose first file has 6 nodes and another
    5,001 (`--steps 30 --after last --seed 6`) ran over 60 s under a 3 s limit, the
    estimate taking the first file's nodes. It takes the largest file's now: refused up
    front, naming --steps, with n = 5,001."""
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / "a.txt").write_text("0 1\n1 2\n2 3\n3 4\n4 5\n")
    (snaps / "b.txt").write_text("".join(f"{k} {k + 1}\n" for k in range(5000)))
    monkeypatch.setenv("NETDP_TIME_LIMIT", "3")
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    argv = ["simulate", "--topology", str(snaps), "--steps", "30", "--after", "last",
            "--seed", "6"]
    assert check_case(argv, lines, workdir=work) == 2
    assert named(lines[0], "simulate") == "--steps" and "n = 5,001" in lines[0], lines


def test_a_subnormal_weight_is_refused_up_front(tmp_path):
    """The readers' long run of session 19: a snapshot folder whose third file weighs an
    edge 5e-324 (a subnormal double) ran until the time-varying tracker found "a view's
    hidden path is impossible" (named --trace, not given: the walk took the edge, the
    tracker's transition matrix, 1 / strength overflowing, gave it 0). Weights are now
    refused outside [1e-300, 1e300], in every reader, naming --topology."""
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / "0.txt").write_text("0 1 1\n1 2 2\n2 3 3\n")
    (snaps / "1.txt").write_text("3 4 4\n4 5 5\n5 0 6\n")
    (snaps / "2.txt").write_text("0 3 5e-324\n1 4 2\n2 5 3\n")
    work = tmp_path / "work"
    work.mkdir()
    for seed in ("4", "5"):  # the seeds whose walk took the edge
        lines: list[str] = []
        argv = ["simulate", "--topology", str(snaps), "--steps", "30", "--snapshot-period",
                "3", "--seed", seed]
        assert check_case(argv, lines, workdir=work) == 2
        assert named(lines[0], "simulate") == "--topology", lines
        assert "2.txt line 1: the weight (third column) must be a finite number in " \
               "[1e-300, 1e+300]" in lines[0], lines


@pytest.mark.parametrize("where", ["result", "row", "manifest"])
def test_an_integer_beyond_any_float_is_one_line(where, inputs, tmp_path):
    """The readers' long run of session 20: a result JSON whose mean was an integer of
    401 digits broke the page's headline (``float()``: OverflowError). Every JSON netdp
    reads refuses integers that no float holds (beyond 1.8e308); a sweep's rows,
    whose every value is checked for its column's kind, refuse them as before."""
    import json
    import shutil

    huge = "1" + "0" * 400  # below Python's own limit of int(str) (4,300 digits)
    sweep = tmp_path / "sweep"
    shutil.copytree(inputs["sweep"], sweep)
    if where == "result":
        doc = json.loads(Path(inputs["run"]).read_text())
        doc["privacy"]["empirical"][0]["mean"] = "\x00N\x00"
        path = tmp_path / "run.json"
        path.write_text(json.dumps(doc).replace(json.dumps("\x00N\x00"), huge))
        argv, expect = ["report", str(path), "--html", "page.html"], "an integer beyond any float"
    elif where == "row":
        part = sorted((sweep / "rows").glob("part-*.jsonl"))[0]
        row = json.loads(part.read_text().splitlines()[0])
        part.write_text(json.dumps({**row, "seed": "\x00N\x00"}).replace(
            json.dumps("\x00N\x00"), huge) + "\n")
        argv, expect = ["results", str(sweep)], "not a row of a netdp table"  # its own check
    else:
        manifest = sweep / "sweep.json"
        doc = json.loads(manifest.read_text())
        doc["identity"]["seeds"][0] = "\x00N\x00"
        manifest.write_text(json.dumps(doc).replace(json.dumps("\x00N\x00"), huge))
        argv, expect = ["results", str(sweep)], "is not a netdp sweep manifest"
    lines: list[str] = []
    assert check_case(argv, lines) == 2
    assert expect in lines[0] and len(lines) == 1, lines


def test_a_client_whose_event_loop_does_not_start_is_one_line(tmp_path, monkeypatch):
    """The readers' long run of session 20 (a load of 5 on 2 cores): distributed's client
    asserts when its event loop has not started within 10 s (``assert loop is not None``);
    that bare AssertionError is now one line naming --scheduler."""
    distributed = pytest.importorskip("distributed")

    def stalled(*args, **kwargs):
        raise AssertionError

    monkeypatch.setattr(distributed, "Client", stalled)
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{u} {(u + 1) % 6}\n" for u in range(6)) + "0 3\n")
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    code = check_case(["simulate", "--topology", str(edges), "--steps", "30",
                       "--scheduler", "tcp://127.0.0.1:9"], lines, workdir=work)
    assert code == 2 and named(lines[0], "simulate") == "--scheduler", lines
    assert "could not start its event loop" in lines[0] and len(lines) == 1, lines


@pytest.mark.parametrize("address", ["inproc://", "inproc://x", "inproc://h//1"])
def test_a_malformed_inproc_address_is_refused_up_front(address, tmp_path):
    """The readers' long run of session 20: ``--scheduler inproc://`` went to distributed,
    whose client failed to parse it and, in the fuzzer's long-lived process, stalled in its
    teardown past the case's bound. An in-process address not of the form
    ``inproc://HOST/PID/N`` is refused before distributed is called."""
    from netdp.core.errors import InputError
    from netdp.run.dask_client import check_scheduler

    with pytest.raises(InputError) as err:
        check_scheduler(address)
    assert err.value.param == "scheduler" and "inproc://HOST/PID/N" in err.value.message
    check_scheduler("inproc://192.0.2.2/8938/1")  # a well-formed one passes
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{u} {(u + 1) % 6}\n" for u in range(6)) + "0 3\n")
    work = tmp_path / "work"
    work.mkdir()
    lines: list[str] = []
    assert check_case(["simulate", "--topology", str(edges), "--steps", "30",
                       "--scheduler", address], lines, workdir=work) == 2
    assert named(lines[0], "simulate") == "--scheduler" and len(lines) == 1, lines


@pytest.mark.parametrize("field", ["empirical", "by_distance", "theory"])
def test_a_null_item_of_a_results_list_is_one_line(field, inputs, tmp_path):
    """The readers' long run of session 21: a result JSON whose ``privacy.empirical[0]``
    was ``null`` broke ``plot --preset pairs --result`` ('NoneType' object has no
    attribute 'get'). ``null`` stands for an absent field, not for an item of a list or
    of an object's values: such an item is refused, named by its place."""
    import json

    doc = json.loads(Path(inputs["run"]).read_text())
    priv = doc["privacy"]
    if field == "empirical":
        priv["empirical"][0], where = None, "privacy.empirical.0"
    elif field == "by_distance":
        priv["empirical"][0]["by_distance"] = [None]
        where = "privacy.empirical.0.by_distance.0"
    else:
        priv["theory"] = {"x": None}
        where = "privacy.theory.*"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    lines: list[str] = []
    assert check_case(["plot", "--preset", "pairs", "--pairs", inputs["pairs"], "--result",
                       str(path), "--out", "fig.png"], lines) == 2
    assert f"the result's {where} is not" in lines[0] and len(lines) == 1, lines


@pytest.mark.parametrize("history", ["-0.0", '"x"', "[1, 2]", '{"a": 1}', "null"])
def test_a_sweep_manifest_whose_history_is_no_list(history, inputs, tmp_path):
    """The readers' long run of session 21: a manifest whose ``history`` was ``-0.0``
    broke resuming the sweep ('float' object is not iterable). A history that is no list
    of objects is refused, one line naming the folder's manifest; ``null`` is taken as
    absent (the resume writes a new one)."""
    import json

    sweep = _manifest_with(inputs, tmp_path, "history", history)
    manifest = sweep / "sweep.json"
    lines: list[str] = []
    code = check_case(["sweep", inputs["spec"], "--out", str(sweep), "--backend", "serial",
                       "--no-progress"], lines)
    if history == "null":
        assert code == 0, lines
        assert isinstance(json.loads(manifest.read_text())["history"], list)
    else:
        assert code == 2 and "is not a netdp sweep manifest" in lines[0], lines
