"""A flag the chosen task, protocol and topology do not read is refused (issue 29): the
refusals follow the one table of netdp.tasks.readers, for every declared reader and a set
of combinations."""

from __future__ import annotations

import contextlib
import io

import pytest

from netdp.core.errors import InputError
from netdp.run.cli import main
from netdp.tasks import make_config, param_specs
from netdp.tasks.readers import READERS, check_read

#: A valid value, not the default, of each parameter the table declares.
VALUES = {"timeout": 8.0, "retries": 3, "on_loss": "skip", "sources": 5}

COMBINATIONS = [
    {"nodes": 20},
    {"nodes": 20, "loss": "0.1"},
    {"nodes": 20, "engine": "event", "churn": "exp:50:5"},
    {"nodes": 16, "protocol": "gossip", "topology": "hypercube"},
    {"nodes": 16, "protocol": "gossip", "topology": "hypercube", "loss": "0.1"},
    {"nodes": 16, "task": "sgd", "protocol": "gossip", "topology": "hypercube"},
    {"nodes": 64, "topology": "hypercube"},
    {"nodes": 4, "topology": "hypercube"},
    {"nodes": 64, "topology": "hypercube", "coalition": "1,2"},
    {"nodes": 20, "topology": "ring"},
    {"nodes": 20, "task": "histogram"},
    {"nodes": 64, "task": "histogram", "topology": "hypercube"},
]


def test_every_reader_is_a_declared_parameter():
    assert set(READERS) <= set(param_specs()) and set(READERS) == set(VALUES)


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("base", COMBINATIONS, ids=lambda b: ",".join(f"{k}={v}" for k, v
                                                                        in b.items()))
def test_refusals_follow_the_table(name, base):
    """Given explicitly, the parameter is refused exactly where the table says the run
    does not read it (combinations that refuse it for another reason are left out)."""
    params = {**base, name: VALUES[name]}
    try:
        config = make_config(params)
    except InputError:
        pytest.skip("the combination refuses the parameter for its own reason")
    reads = READERS[name].reads(config)
    if reads:
        check_read(config, params)
    else:
        with pytest.raises(InputError, match="it does nothing here") as err:
            check_read(config, params)
        assert err.value.param == name.replace("_", "-")
    check_read(config, base)  # not given: never refused


@pytest.mark.parametrize(("argv", "refused"), [
    (["--task", "sgd", "--protocol", "gossip", "--timeout", "8"], True),
    (["--protocol", "gossip", "--retries", "3"], True),
    (["--timeout", "8"], True),
    (["--loss", "0.1", "--timeout", "8"], False),
    (["--sources", "5"], True),
    (["--topology", "hypercube", "--sources", "5"], False),
    (["--topology", "hypercube", "--sources", "5", "--coalition", "1,2"], True),
])
def test_the_issue_examples(argv, refused):
    """The issue's examples, through the command line: one line, exit 2, naming the
    flag; or a run."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "-n", "16", "--steps", "40", "--seed", "1", *argv])
    if refused:
        flag = next(w for w in reversed(argv) if w.startswith("--") and w not in
                    ("--coalition", "--topology", "--protocol", "--task", "--loss"))
        assert code == 2 and err.getvalue().count("\n") == 1
        assert f"{flag}: is read only by" in err.getvalue()
    else:
        assert code == 0, err.getvalue()


def test_every_observer_beyond_the_dense_size_is_a_sources_that_reads():
    """``--sources n`` makes a walk's tracker account every observer where it samples 32
    by default (beyond 200 nodes): read there; up to 200 nodes every observer is
    accounted anyway, and ``--sources n`` does nothing."""
    big = make_config({"topology": "hypercube", "nodes": 256, "sources": 256})
    check_read(big, ["sources"])
    small = make_config({"topology": "hypercube", "nodes": 64, "sources": 64})
    with pytest.raises(InputError, match="every observer beyond 200 nodes"):
        check_read(small, ["sources"])
