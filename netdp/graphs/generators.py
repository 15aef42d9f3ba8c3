"""Graphs from networkx generators, as a topology spec names them: the plan (generator,
arguments evaluated at the size, seeded or not), its checks before anything is built
(argument types and ranges, the expected number of edges against the limits), and the
generation itself."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from netdp.core.errors import InputError, check, shorten
from netdp.core.reading import loads_toml
from netdp.graphs.spec_expressions import evaluate, toml_type

if TYPE_CHECKING:
    import networkx as nx


# generators whose parameters are checked against n, and whose size is known
_LATTICE = {"watts_strogatz_graph", "connected_watts_strogatz_graph",
            "newman_watts_strogatz_graph"}
_GNP = {"erdos_renyi_graph", "gnp_random_graph", "binomial_graph"}  # quadratic time
_ANY_GNP = _GNP | {"fast_gnp_random_graph"}


def _generator(name: str, label: str):
    """The networkx graph generator called ``name``; nothing else of networkx."""
    import networkx as nx

    gen = getattr(nx.generators, name, None) if name.isidentifier() else None
    module = getattr(gen, "__module__", None) or ""
    ok = (not name.startswith("_") and callable(gen) and not isinstance(gen, type)
          and module.startswith("networkx.generators"))
    check(ok, "topology",
          f"{label}: the generator is not a graph generator of networkx.generators")
    return gen


@dataclass(frozen=True)
class Plan:
    """A spec resolved for one n, before its generator runs."""

    spec: dict
    name: str  # the topology's name (spec name, or the file's stem)
    label: str  # for messages (spec name, or the file's name)
    named: bool  # shipped with netdp (so only n can be wrong)
    n: int | None  # None: a fixed-size graph
    args: tuple = ()
    params: dict | None = None  # None: not evaluated (n beyond the limits)
    edges: int | None = None


def make_plan(source, name: str, label: str, named: bool, n: int | None) -> Plan:
    """Read a spec and work out the generator's arguments and the graph's size for n."""
    spec = read_spec(source, label)
    size = spec["size"]
    if size == "fixed":
        return Plan(spec, name, label, named, None)
    n = check_nodes(spec.get("default_nodes", 100)) if n is None else n
    low = spec.get("min_nodes", 2)
    check(n >= low, "nodes", f"{label} needs --nodes >= {low} (got {n})")
    if size == "log2":
        d = n.bit_length() - 1
        check(n == 1 << d, "nodes", f"{label} needs a power of two, got {n}")
        args: tuple = (d,)
    elif size == "sqrt":
        side = math.isqrt(n)
        check(side * side == n, "nodes", f"{label} needs a perfect square, got {n}")
        args = (side, side)
    else:
        args = (n,)
    try:
        params = {k: evaluate(v, n, label, k) for k, v in spec.get("params", {}).items()}
    except InputError:
        if n <= MAX_GRAPH_NODES:
            raise
        params = None  # refused for its size anyway: say that first
    edges = None if params is None else _expected_edges(spec["generator"], args, params)
    return Plan(spec, name, label, named, n, args, params, edges)


def check_plan(plan: Plan) -> None:
    """Refuse a plan beyond the limits, or whose parameters the generator would refuse."""
    if plan.n is None:
        return
    n, edges, gen = plan.n, plan.edges, plan.spec["generator"]
    if n > MAX_GRAPH_NODES or (edges is not None and edges > MAX_GRAPH_EDGES):
        about = "about " if plan.spec.get("random") else ""
        has = "" if edges is None else f" has {about}{edges} edges"
        raise InputError("nodes", f"{plan.label} with n = {n} nodes{has}; {limits()}")
    assert plan.params is not None  # evaluated for every n within the limits
    _check_params(plan)
    prob = plan.params.get("p")
    if gen in _GNP and _is_real(prob) and 0 < prob < 1:
        pairs = n * (n - 1) // (1 if plan.params.get("directed") else 2)
        check(pairs <= MAX_GNP_PAIRS, "nodes",
              f"{plan.label} with n = {n} nodes: networkx's G(n, p) draws a coin for each "
              f"of its {pairs} node pairs; it is limited to {MAX_GNP_PAIRS} pairs")


def _check_params(plan: Plan) -> None:
    """Check the parameters of the generators networkx would refuse, against n."""
    gen, n, params, raw = plan.spec["generator"], plan.n, plan.params, plan.spec.get("params", {})
    assert params is not None  # see check_plan

    def shown(key: str) -> str:  # a user's spec: the key alone (its text never echoed)
        if not plan.named:
            return f"{key} of [params]"
        value = raw[key]
        return f"{key} = {value!r} = {params[key]}" if isinstance(value, str) else \
            f"{key} = {params[key]}"

    def need(ok: bool, key: str, what: str) -> None:
        check(ok, "topology", f"{plan.label}: parameter {shown(key)} at n = {n}: {what}")

    if gen in _LATTICE and "k" in params:
        k = params["k"]
        need(_is_int(k) and k >= 2, "k", "the lattice degree must be an integer >= 2")
        check(k < n, "nodes", f"{plan.label} needs --nodes >= {k + 1} for {shown('k')} "
              f"(got {n}; the ring lattice needs k < n)")
    if gen == "barabasi_albert_graph" and "m" in params:
        m = params["m"]
        need(_is_int(m) and m >= 1, "m", "must be an integer >= 1")
        check(m < n, "nodes", f"{plan.label} needs --nodes >= {m + 1} for {shown('m')} "
              f"(got {n}; networkx needs m < n)")
    if (gen in _LATTICE | _ANY_GNP) and "p" in params:
        p = params["p"]
        need(_is_real(p) and 0 <= p <= 1, "p", "a probability must lie in [0, 1]")
    if gen == "random_geometric_graph":
        if "radius" in params:
            need(_is_real(params["radius"]) and params["radius"] >= 0, "radius",
                 "must be a number >= 0")
        if "dim" in params:
            need(_is_int(params["dim"]) and params["dim"] >= 1, "dim",
                 "must be an integer >= 1")


def _is_int(x) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_real(x) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _expected_edges(gen: str, args: tuple, params: dict) -> int | None:
    """Edges (expected, for random generators) of ``gen(*args, **params)``; None: unknown."""
    get: Callable[..., Any] = params.get  # a missing key gives None: TypeError below
    try:
        if gen == "hypercube_graph":
            (d,) = args
            return d * 2 ** (d - 1)
        if gen == "grid_2d_graph":
            a, b = args
            return 2 * a * b if get("periodic") else a * (b - 1) + b * (a - 1)
        if len(args) != 1:
            return None
        (n,) = args
        pairs = n * (n - 1) // 2
        if gen in _SIZED:
            return _SIZED[gen](n, get)
        if gen == "complete_graph":
            return pairs
        if gen == "cycle_graph":
            return n
        if gen == "path_graph":
            return n - 1
        if gen in _LATTICE:
            k = int(get("k"))
            if k >= n:
                return pairs
            extra = float(get("p", 0)) if gen == "newman_watts_strogatz_graph" else 0.0
            return math.ceil(n * (k // 2) * (1 + extra))
        if gen == "barabasi_albert_graph":
            m = int(get("m"))
            return m * (n - m)
        if gen in _ANY_GNP:
            p = min(1.0, max(0.0, float(get("p"))))
            return round(p * pairs * (2 if get("directed") else 1))
        if gen == "random_geometric_graph" and get("dim", 2) == 2 and get("p", 2) == 2:
            return round(pairs * _close_pair_probability(float(get("radius"))))
    except (TypeError, ValueError, OverflowError):  # parameters _check_params refuses
        return None
    return None


def _turan_edges(n: int, r: int) -> int:
    """Edges of the complete r-partite graph on n nodes with parts as equal as they go."""
    r = max(1, min(int(r), n))
    big, small = n % r, r - n % r
    size = n // r
    return (n * n - big * (size + 1) ** 2 - small * size**2) // 2


#: Edges of generators of one size argument ``n`` (the spec's ``size = "n"``) from ``n`` and
#: the spec's keyword parameters (``get``); what the graph holds besides ``n`` nodes counts
#: too (a lollipop's path, a barbell's bridge).
_SIZED: dict[str, Callable[[int, Callable[..., Any]], int]] = {
    "turan_graph": lambda n, get: _turan_edges(n, int(get("r"))),
    "gnm_random_graph": lambda n, get: min(int(get("m")), n * (n - 1) // (
        1 if get("directed") else 2)),
    "dense_gnm_random_graph": lambda n, get: min(int(get("m")), n * (n - 1) // 2),
    "lollipop_graph": lambda n, get: n * (n - 1) // 2 + int(get("n")),
    "barbell_graph": lambda n, get: n * (n - 1) + int(get("m2", 0)) + 1,
    "star_graph": lambda n, get: n,
    "wheel_graph": lambda n, get: 2 * (n - 1),
    "ladder_graph": lambda n, get: 3 * n - 2,
    "circular_ladder_graph": lambda n, get: 3 * n,
}


def _close_pair_probability(r: float) -> float:
    """Probability that two uniform points of the unit square lie within ``r``."""
    if r <= 0:
        return 0.0
    if r >= 1:  # exact up to 1, then an upper bound
        return 1.0
    return math.pi * r**2 - 8 * r**3 / 3 + r**4 / 2


def generate(plan: Plan, seed: np.random.SeedSequence | int | None) -> nx.Graph:
    """Run the spec's generator; any failure of networkx becomes an :class:`InputError`."""
    import networkx as nx

    name = plan.spec["generator"]
    gen = _generator(name, plan.label)
    params = dict(plan.params or {})
    if plan.spec.get("random"):
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        params["seed"] = int(ss.generate_state(1)[0])
    try:
        graph = gen(*plan.args, **params)
    except Exception as exc:  # noqa: BLE001 - NetworkXError, ValueError, TypeError, ...
        at = "" if plan.n is None else f" with n = {plan.n}"
        why = re.sub(r"'[^']*'", "'...'", str(exc))  # networkx's words, not quoted text
        raise InputError("nodes" if plan.named else "topology",
                         f"{plan.label}{at}: networkx {name}() failed: "
                         f"{type(exc).__name__}: {shorten(why, 200)}") from None
    check(isinstance(graph, nx.Graph), "topology",
          f"{plan.label}: networkx {name}() returned {type(graph).__name__}, not a graph")
    return graph


MAX_GRAPH_NODES = 5_000_000
"""Most nodes of an explicit (CSR) graph: about 1.5 GiB of networkx nodes at the peak."""
MAX_GRAPH_EDGES = 10_000_000
"""Most edges of an explicit (CSR) graph: about 6.5 GiB of peak memory while building."""
MAX_GNP_PAIRS = 2_000_000_000
"""Most node pairs networkx's quadratic G(n, p) may visit (about 2 minutes; n <= 63246)."""
_SPEC_KEYS = {"description": str, "generator": str, "size": str, "random": bool,
              "default_nodes": int, "min_nodes": int, "params": dict}
_SIZES = ("n", "log2", "sqrt", "fixed")
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", dict: "a table"}


def check_nodes(n: int, param: str = "nodes", what: str | None = None) -> int:
    """``n`` as an int, if it is an integer in ``[2, MAX_IMPLICIT_NODES]``."""
    check(isinstance(n, int | np.integer) and not isinstance(n, bool), param,
          f"must be an integer >= 2 (got {shorten(repr(n))})")
    check(n >= 2, param, f"{what or f'got {n!r}'}; a walk needs at least 2 nodes")
    check(n <= MAX_IMPLICIT_NODES, param,
          f"{what or f'got {n}'}; node ids are limited to n <= 2**62 = {MAX_IMPLICIT_NODES}")
    return int(n)


def limits() -> str:
    return f"explicit graphs are limited to {MAX_GRAPH_NODES} nodes and {MAX_GRAPH_EDGES} edges"


def read_spec(source, label: str) -> dict:
    """A topology spec's keys, with their types and values checked."""
    try:
        with source.open("rb") as handle:
            data = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise InputError("topology", f"cannot read topology spec {label}: "
                         f"{exc.strerror or exc}") from None
    check(len(data) <= MAX_SPEC_BYTES, "topology",
          f"{label}: larger than {MAX_SPEC_BYTES} bytes; not a topology spec")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_text(source) from None
    try:
        spec = loads_toml(text)
    except ValueError as exc:  # not TOML, nested too deep, an integer too long
        raise InputError("topology", f"cannot read topology spec {label}: {exc}") from None
    for key in ("description", "generator", "size"):
        check(key in spec, "topology", f"topology spec {label} lacks the key {key!r}")
    for key, value in spec.items():
        check(key in _SPEC_KEYS, "topology", f"{label}: an unknown key; a topology spec "
              f"has the keys {', '.join(_SPEC_KEYS)}")
        want = _SPEC_KEYS[key]
        ok = isinstance(value, want) and not (want is int and isinstance(value, bool))
        check(ok, "topology", f"{label}: {key} must be {_TYPE_NAMES[want]} "
              f"(got {toml_type(value)})")
    check(spec["size"] in _SIZES, "topology",
          f"{label}: size must be one of {', '.join(_SIZES)}")
    _generator(spec["generator"], label)
    low = spec.get("min_nodes", 2)
    check(low >= 2, "topology", f"{label}: min_nodes must be >= 2")
    default = spec.get("default_nodes", 100)
    check(default >= low, "topology",
          f"{label}: default_nodes must be >= min_nodes")
    check(default <= MAX_GRAPH_NODES, "topology",
          f"{label}: default_nodes must be at most {MAX_GRAPH_NODES} (explicit graphs' "
          "limit)")
    for key in spec.get("params", {}):
        check(key.isidentifier(), "topology", f"{label}: a key of [params] is not a "
              "parameter name")
    return spec


MAX_IMPLICIT_NODES = 2**62
"""Most nodes of the implicit ring and complete graph (node ids fit int64 with room)."""
MAX_SPEC_BYTES = 1 << 16  # a topology spec is a few lines


def not_text(path) -> InputError:
    return InputError("topology", f"cannot read {shorten(repr(str(path)), 200)}: "
                      "not a UTF-8 text file")
