"""Structure-aware fuzzing of every reader (issue 39), the seeded default tier: valid
files mutated (tests/fuzz_readers.py), each case checked for exit 0/1/2 without a
traceback, one line with 2, the CPU-time bound and no disclosure of a file's content or
of a file the user did not name. The long run: ``python tests/fuzz_long.py --readers``
(docs/fuzzing.md)."""

from __future__ import annotations

import random

import pytest
from fuzz_readers import READER_NAMES, cases, prepare, run_case

#: Cases per reader in the default tier (a fixed seed).
PER_READER = 12


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-readers")
    prepare(root)
    return root


@pytest.mark.parametrize("reader", [  # the scheduler file starts dask: 20 s
    pytest.param(r, marks=pytest.mark.slow) if r == "scheduler" else r for r in READER_NAMES])
def test_fuzz_reader(reader, seeded):
    """A seeded sample of mutated inputs of one reader."""
    rng = random.Random(f"default-{reader}")
    for case in cases(39, PER_READER, [reader]):
        run_case(case, seeded, rng)
