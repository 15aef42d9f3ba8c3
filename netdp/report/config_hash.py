"""The key of a configuration: a short hash of the parameters that differ from the
defaults (the sweep table's ``config_hash`` column)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from netdp.core.params import coerce, params_of
from netdp.core.simulation_config import SimulationConfig
from netdp.graphs.graph_files import is_graph_object


def config_hash(config: SimulationConfig) -> str:
    """Hex sha256 prefix (16 digits) of the canonical JSON of the parameters that differ
    from :class:`SimulationConfig`'s defaults, without ``seed`` (and ``runs``).

    Leaving defaults out keeps hashes stable when a new parameter (with a default) is
    added to the config; ``epsilon = 1`` and ``epsilon = 1.0`` hash alike.
    """

    out = {}
    assert config.section is not None
    for record in (config, config.section):
        for name, spec, default in params_of(record):
            if name in ("seed", "runs"):
                continue
            value = hashable(coerce(spec, getattr(record, name)))
            if value != hashable(coerce(spec, default)):
                out[name] = value
    return hashlib.sha256(canonical(out).encode()).hexdigest()[:16]


def hashable(value: Any) -> Any:
    """JSON-ready and canonical: tuples become lists, infinite floats strings."""
    if isinstance(value, tuple | list):
        return [hashable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if is_graph_object(value):  # one object given from Python: its identity in this spec
        return f"networkx graph {id(value)}"
    return str(value)


def canonical(obj: Any) -> str:
    """Canonical JSON: keys sorted, no spaces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))
