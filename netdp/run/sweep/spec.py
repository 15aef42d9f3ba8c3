"""Sweep specs: a TOML file naming fixed parameters, grid axes and seeds.

A spec expands to the list of runs (one :class:`SimulationConfig` and one seed each).
Every grid point is built as a config, and so validated, before any run starts: a bad
key or value gives the same one-line :class:`~netdp.core.errors.InputError` as ``simulate``,
with the grid point that holds it. The number of runs is counted from the spec before
anything is expanded: at most :data:`MAX_RUNS` runs and :data:`MAX_POINTS` grid points.
See ``docs/sweeps.md`` for the format::

    description = "Figure 1b"        # optional, free text
    seeds = 10                       # N seeds derived from base_seed, or a list [1, 2, 3]
    base_seed = 0                    # optional (default 0), only with seeds = N
    backend = "dask"                 # optional default of --backend: serial or dask
    batch_size = 4                   # optional default of --batch-size

    [fixed]                          # any simulate parameter, one value
    topology = "complete"
    accountants = ["kov", "rdp"]

    [grid]                           # the Cartesian product of the axes, in this order
    nodes = [5, 10, 20, 50]                           # a list
    epsilon = {start = 0.1, stop = 0.4, num = 4}      # linear, both ends included
    steps = {start = 1e3, stop = 1e6, num = 4, logspace = true}   # log-spaced
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from netdp.core.errors import InputError, check, one_line, without_value
from netdp.core.params import Param, coerce
from netdp.core.reading import parse_toml, read_text
from netdp.core.simulation_config import SimulationConfig
from netdp.graphs.topologies import is_graph_object
from netdp.report.config_hash import canonical, config_hash, hashable
from netdp.tasks import make_config, param_specs

TOP_KEYS = ("description", "seeds", "base_seed", "backend", "batch_size", "fixed", "grid")
#: Most runs (grid points x seeds) a spec may hold: counted before anything is expanded.
MAX_RUNS = 1_000_000
#: Most grid points: each is built and validated as a config (about 0.1 ms and 2 kB each).
MAX_POINTS = 100_000
#: The spec file as the usage of ``netdp sweep`` names it (a positional argument).
SPEC = "SPEC.toml"
SCALARS = (str, int, float, bool)
BACKENDS = ("dask", "serial")
RANGE_KEYS = ("start", "stop", "num", "logspace")
RESERVED = {"seed": "a sweep sets each run's seed itself: use seeds = N (and base_seed) "
                    "at the top of the spec",
            "runs": "each row of a sweep is one run: use seeds = N at the top of the spec"}


@dataclass(frozen=True)
class Run:
    """One run of a sweep: a config (``runs = 1``), its seed and its config hash."""

    config: SimulationConfig
    seed: int
    config_hash: str

    @property
    def key(self) -> tuple[str, int]:
        """``(config_hash, seed)``: what the result table is keyed by."""
        return self.config_hash, self.seed


@dataclass(frozen=True)
class SweepSpec:
    """A parsed and validated sweep spec.

    Attributes
    ----------
    path
        The spec file (``""`` when built from a dict).
    text
        The spec's TOML text, kept beside the results.
    fixed, grid
        The fixed parameters and the expanded axes (each a list of values).
    seeds
        The seeds every grid point runs with.
    points
        One validated config per distinct grid point, in grid order (seed unset,
        ``runs = 1``).
    hashes
        :func:`config_hash` of each point.
    """

    path: str
    text: str
    description: str
    fixed: dict
    grid: dict
    seeds: tuple[int, ...]
    backend: str | None
    batch_size: int | None
    points: tuple[SimulationConfig, ...]
    hashes: tuple[str, ...]

    @property
    def runs(self) -> list[Run]:
        """Every run, grid point by grid point, seeds inner."""
        return [Run(cfg, seed, h) for cfg, h in zip(self.points, self.hashes, strict=True)
                for seed in self.seeds]

    @property
    def n_runs(self) -> int:
        """Number of runs (grid points x seeds)."""
        return len(self.points) * len(self.seeds)

    def identity(self) -> dict:
        """What the result table checks on resume: the config hashes and the seeds."""
        return {"configs": sorted(set(self.hashes)), "seeds": sorted(set(self.seeds))}


def load_spec(path: str | Path) -> SweepSpec:
    """Read, expand and validate a spec file; raises :class:`InputError`."""
    path = Path(path)
    text = read_text(path, SPEC, "a UTF-8 text (TOML) file")
    data = parse_toml(text, SPEC, str(path))
    return parse_spec(data, str(path), text)


def parse_spec(data: dict, path: str = "", text: str = "") -> SweepSpec:
    """Expand and validate a spec given as a dict (a parsed TOML document).

    From Python, ``topology`` (in ``fixed``, or the values of its grid axis) may also be
    a networkx graph: each run's config records it as ``networkx:NAME (..., sha256 ...)``
    (:func:`netdp.tasks.make_config`), so the result table keys it by its content."""
    unknown = sorted((k for k in data if k not in TOP_KEYS), key=str)
    for key in unknown:  # named when it reads as a name (as in [fixed]); else never echoed
        if not (isinstance(key, str) and re.fullmatch(r"[a-z][a-z0-9_]*", key)):
            raise InputError(SPEC, "an unknown top-level key (allowed: "
                             f"{', '.join(TOP_KEYS)}; simulation parameters go in [fixed] or "
                             f"[grid]){_at(path)}")
    if unknown:
        raise InputError(unknown[0], f"unknown sweep key; allowed: {', '.join(TOP_KEYS)} "
                         f"(simulation parameters go in [fixed] or [grid]){_at(path)}",
                         positional=False)
    fixed = {k.replace("-", "_"): v for k, v in _table(data, "fixed", path).items()}
    grid_in = {k.replace("-", "_"): v for k, v in _table(data, "grid", path).items()}
    hints = _field_types()
    allowed = set(hints) | {"range"}
    for section, keys in (("[fixed]", fixed), ("[grid]", grid_in)):
        for key in keys:
            if key in RESERVED:
                raise InputError(key, RESERVED[key] + _at(path, section))
            if key not in allowed and not re.fullmatch(r"[a-z][a-z0-9_]*", key):
                raise InputError(SPEC, f"a key of {section} that is no parameter name "
                                 f"(parameters are lower-case words){_at(path, section)}")
            if key not in allowed:
                raise InputError(key, "unknown parameter; allowed: "
                                 f"{', '.join(sorted(set(hints) - set(RESERVED)))}"
                                 f"{_at(path, section)}", positional=False)
    for key, value in fixed.items():
        _check_value(key, value, _at(path, "[fixed]"))
    both = sorted(set(fixed) & set(grid_in))
    check(not both, both[0] if both else "", f"is both in [fixed] and in [grid]{_at(path)}")
    if "range" in fixed:
        fixed.update(_split_range(fixed.pop("range"), path))
    fixed = {k: _coerce(k, v, hints) for k, v in fixed.items()}
    n_seeds = _count_seeds(data, path)
    for axis, spec in grid_in.items():
        _check_axis(axis, spec, hints, path)
    _check_size({axis: _axis_length(spec) for axis, spec in grid_in.items()}, n_seeds,
                path)
    grid = {axis: _axis(axis, spec, hints, path) for axis, spec in grid_in.items()}

    points, hashes = [], []
    cache: dict[str, tuple[SimulationConfig, str]] = {}
    seen: set[str] = set()
    recorded: dict[int, str] = {}  # a graph given from Python: its config's record
    for values in itertools.product(*grid.values()):
        point = dict(zip(grid, values, strict=True))
        if "range" in point:
            point.update(_split_range(point.pop("range"), path))
        params = {**fixed, **point}
        key = canonical({k: hashable(v) for k, v in params.items()})
        if key in cache:
            continue
        label = ", ".join(f"{k} = {_show(v)}" for k, v in zip(grid, values, strict=True))
        cfg = _config(params, _at(path, f"grid point {label}" if grid else "[fixed]"))
        if is_graph_object(params.get("topology")):
            recorded[id(params["topology"])] = cfg.topology
        cache[key] = cfg, config_hash(cfg)
        if cache[key][1] not in seen:  # a repeated grid point runs once
            seen.add(cache[key][1])
            points.append(cfg)
            hashes.append(cache[key][1])
    seeds = _seeds(data, path)
    backend = data.get("backend")
    if backend is not None:
        check(backend in BACKENDS, "backend", f"must be one of {', '.join(BACKENDS)} "
              f"(got {backend!r}){_at(path)}")
    batch_size = data.get("batch_size")
    if batch_size is not None:
        check(_is_int(batch_size) and batch_size >= 1, "batch-size",
              f"must be an integer >= 1 (got {batch_size!r}){_at(path)}")
    description = data.get("description", "")
    check(isinstance(description, str), "description", f"must be a string{_at(path)}")
    if recorded:  # the spec as JSON (the table's manifest): graphs by their records
        fixed = {k: recorded.get(id(v), v) for k, v in fixed.items()}
        grid = {k: [recorded.get(id(v), v) if is_graph_object(v) else v for v in vs]
                for k, vs in grid.items()}
    return SweepSpec(path, text, description, fixed, grid, seeds, backend, batch_size,
                     tuple(points), tuple(hashes))


def derive_seed(base_seed: int, index: int) -> int:
    """The seed of seed index ``index``: 63 bits of ``SeedSequence(base_seed)``'s child
    ``index`` (independent streams; sweeps with other base seeds share none)."""
    seq = np.random.SeedSequence(base_seed, spawn_key=(index,))
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


# --------------------------------------------------------------------------- helpers

def _at(path: str, *where: str) -> str:
    """`` (in spec.toml, [grid])``: where an error is, appended to its message."""
    parts = ([f"in {path}"] if path else []) + [w for w in where if w]
    return f" ({', '.join(parts)})" if parts else ""


def _table(data: dict, name: str, path: str) -> dict:
    value = data.get(name, {})
    check(isinstance(value, dict), name, f"must be a TOML table [{name}]{_at(path)}")
    return value


def _config(params: dict, where: str) -> SimulationConfig:

    try:
        return make_config({**params, "runs": 1})
    except InputError as exc:  # the values are the spec's: never echoed
        raise InputError(exc.param, without_value(exc.message) + where,
                         exc.positional) from None
    except Exception as exc:  # e.g. a list where a name is expected
        raise InputError(SPEC, f"bad value ({type(exc).__name__}: {one_line(exc, 300)})"
                         f"{where}") from None


@functools.cache
def _field_types() -> dict[str, Param]:
    """Every parameter's declaration (common and of every task), by name."""

    return param_specs()


def _coerce(name: str, value, hints: dict):
    """TOML ``1`` for a float parameter becomes ``1.0``, a list a tuple where the parameter
    is a tuple (accountants). Anything else is left for the config to check."""
    return coerce(hints[name], value) if name in hints else value


def _check_value(name: str, value, where: str, kind: str = "value") -> None:
    """A parameter's value is a TOML string, number or boolean, or a list of them (or, for
    ``topology`` given from Python, a networkx graph)."""
    if isinstance(value, SCALARS) or (name == "topology" and is_graph_object(value)):
        return
    if isinstance(value, list):
        bad = [v for v in value if not isinstance(v, SCALARS)
               and not (name == "topology" and is_graph_object(v))]
        if not bad:
            return
        what = f"a list holding {_toml_type(bad[0])}"
    else:
        what = _toml_type(value)
    raise InputError(name, f"a {kind} must be a string, a number, a boolean or a list of "
                     f"them (got {what}: {_brief(value)}){where}")


def _check_axis(name: str, spec, hints: dict, path: str) -> None:
    """A grid axis is a non-empty list of values, or a range ``{start, stop, num}``."""
    where = _at(path, "[grid]")
    if isinstance(spec, dict):
        _check_range(name, spec, hints, where)
        return
    check(isinstance(spec, list), name, "a grid axis takes a list of values or a range "
          f"{{start, stop, num}}; put single values in [fixed]{where}")
    check(len(spec) > 0, name, f"empty grid axis: give at least one value{where}")
    for value in spec:
        _check_value(name, value, where, "grid value")


def _axis_length(spec) -> int:
    """Values of a checked axis, counted without expanding it (a range: at most ``num``)."""
    return spec["num"] if isinstance(spec, dict) else len(spec)


def _check_size(lengths: dict[str, int], n_seeds: int, path: str) -> None:
    """Refuse a spec with more than :data:`MAX_POINTS` grid points or :data:`MAX_RUNS` runs,
    counted from the axis lengths and the seeds alone."""
    points = math.prod(lengths.values())
    runs = points * n_seeds
    axes = " x ".join(f"{k} {n}" for k, n in lengths.items())
    if points > MAX_POINTS:
        biggest = max(reversed(lengths), key=lengths.__getitem__)
        raise InputError(biggest, f"the grid has {points} points ({axes}); at most "
                         f"{MAX_POINTS}{_at(path, '[grid]')}")
    if runs > MAX_RUNS:
        grid = f"{points} grid point{'s' if points != 1 else ''}"
        if lengths:
            grid += f" = {axes}"
        param = "seeds" if n_seeds > 1 or not lengths else max(reversed(lengths),
                                                              key=lengths.__getitem__)
        raise InputError(param, f"the sweep has {runs} runs ({grid} x {n_seeds} seed"
                         f"{'s' if n_seeds != 1 else ''}); at most {MAX_RUNS}{_at(path)}")


def _axis(name: str, spec, hints: dict, path: str) -> list:
    """The values of a checked axis."""
    values = _range(name, spec, hints) if isinstance(spec, dict) else spec
    return [_coerce(name, v, hints) for v in values]


def _check_range(name: str, spec: dict, hints: dict, where: str) -> None:
    bad = sorted(set(spec) - set(RANGE_KEYS))
    check(not bad, name, f"unknown range key {bad[0] if bad else ''!r}; a range is "
          f"{{start, stop, num}} with optional logspace = true{where}")
    missing = [k for k in ("start", "stop", "num") if k not in spec]
    check(not missing, name, f"a range needs start, stop and num (missing "
          f"{', '.join(missing)}){where}")
    kinds = {hints[name].kind} if name in hints else set()
    check(bool(kinds & {int, float}), name, f"a range needs a numeric parameter; give a "
          f"list of values{where}")
    start, stop, num = spec["start"], spec["stop"], spec["num"]
    log = spec.get("logspace", False)
    check(_is_num(start) and _is_num(stop), name,
          f"range start and stop must be finite numbers (got {start!r}, {stop!r}){where}")
    check(_is_int(num) and 1 <= num <= MAX_POINTS, name, f"range num must be an integer "
          f"in 1..{MAX_POINTS} (got {num!r}){where}")
    check(isinstance(log, bool), name, f"range logspace must be true or false{where}")
    if log:
        check(start > 0 and stop > 0, name, f"a log-spaced range needs start, stop > 0 (got "
              f"{start}, {stop}){where}")


def _range(name: str, spec: dict, hints: dict) -> list:
    """The values of a checked range (integer parameters: rounded, duplicates out)."""
    kinds = {hints[name].kind} if name in hints else set()
    start, stop, num = spec["start"], spec["stop"], spec["num"]
    if spec.get("logspace", False):
        values = np.geomspace(start, stop, num)
    else:
        values = np.linspace(start, stop, num)
    if num > 1:  # hit the ends exactly (geomspace can miss by an ulp)
        values[0], values[-1] = start, stop
    if int in kinds:
        return list(dict.fromkeys(int(round(v)) for v in values))  # rounded, duplicates out
    return [float(v) for v in values]


def _split_range(value, path: str) -> dict:
    check(isinstance(value, list) and len(value) == 2, "range",
          f"expects [LOW, HIGH] (got {value!r}){_at(path)}")
    low, high = value
    return {"low": float(low) if _is_int(low) else low,
            "high": float(high) if _is_int(high) else high}


def _count_seeds(data: dict, path: str) -> int:
    """How many seeds the spec asks for, without deriving them (an integral float such as
    ``1e9`` counts as what it says, so that a huge one is reported by its size first)."""
    seeds = data.get("seeds", 1)
    if isinstance(seeds, list):
        return len(seeds)
    if isinstance(seeds, float) and math.isfinite(seeds) and seeds.is_integer() and seeds > 0:
        return int(seeds)
    check(_is_int(seeds) and seeds >= 1, "seeds", f"must be an integer >= 1 or a list of "
          f"integer seeds (got {seeds!r}){_at(path)}")
    return seeds


def _seeds(data: dict, path: str) -> tuple[int, ...]:
    seeds = data.get("seeds", 1)
    base = data.get("base_seed", 0)
    where = _at(path)
    check(_is_int(base) and base >= 0, "base-seed", f"must be an integer >= 0 (got "
          f"{base!r}){where}")
    if isinstance(seeds, list):
        check("base_seed" not in data, "base-seed", f"only with seeds = N; a list of seeds "
              f"is used as given{where}")
        check(len(seeds) > 0 and all(_is_int(s) and s >= 0 for s in seeds), "seeds",
              f"a list of seeds must hold integers >= 0 (got {seeds!r}){where}")
        check(len(set(seeds)) == len(seeds), "seeds", f"seeds must be distinct{where}")
        return tuple(seeds)
    check(_is_int(seeds) and seeds >= 1, "seeds", f"must be an integer >= 1 or a list of "
          f"integer seeds (got {seeds!r}){where}")
    return tuple(derive_seed(base, i) for i in range(seeds))


def _show(value) -> str:
    return json.dumps(hashable(value))


def _brief(value, limit: int = 60) -> str:
    """A TOML value as JSON, cut to ``limit`` characters."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _toml_type(value) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"a TOML {type(value).__name__}"  # datetime, date, time




def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
