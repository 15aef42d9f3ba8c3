"""Multidimensional collection (Wang et al., "Collecting and Analyzing Multidimensional
Data with Local Differential Privacy", ICDE 2019, §4), and the two baselines it is
compared with.

Each user holds ``d`` attributes: ``m`` numeric ones in ``[-1, 1]`` (first) and
categorical ones with domain sizes ``c_1, ..., c_C`` (after them). Three ways to spend ε
on a row:

* **sample** (§4, Algorithm 4 and its extension to categorical attributes): the user
  samples ``k = max(1, min(d, floor(ε / 2.5)))`` of the ``d`` attributes uniformly
  without replacement and reports each at ``ε / k`` (numeric by Duchi, Piecewise or Hybrid
  from :mod:`netdp.mechanisms.bounded`, categorical by a pure frequency oracle, OUE by
  default); the aggregator scales every report by ``d / k``. By composition the row's
  report is ε-LDP.
* **naive**: every attribute at ``ε / d`` (the same code with ``k = d``, scale 1).
* **joint**: Duchi et al.'s multidimensional solution (Wang et al. 2019 §3, Algorithm 3;
  Duchi, Jordan and Wainwright, JASA 2018) for numeric rows: one ε-LDP report
  ``B s`` with ``s ∈ {-1, 1}^d``.

Every row's report is turned into its *contribution*, a vector of length
``m + Σ c_j`` (an unbiased estimate of the row's numeric values and of the one-hot
codes of its categories); the mean of the contributions estimates the numeric means and
the category frequencies, and the sum is what a walking token carries. Variances
(derived here; the paper states worst-case bounds): for a numeric attribute with value
``t`` reported by a mechanism ``M`` at ``ε/k``, the contribution ``x = (d/k) B y`` with
``B ~ Bernoulli(k/d)`` has ``E x = t`` and

    ``Var x = (d/k) (Var_M(t) + t²) - t²``,

the sampling's own term being ``(d/k - 1) t²``. For a category ``c`` of an attribute with
value ``v`` reported by a pure oracle (``p*``, ``q*``), the per-report estimate
``z = (1[report supports c] - q*) / (p* - q*)`` has ``Var z = s (1 - s) / (p* - q*)²`` with
``s = p*`` if ``v = c`` else ``q*``, and the same formula holds with ``Var_M`` replaced by
``Var z`` and ``t`` by ``1[v = c]``. Joint Duchi: ``Var x_j = B² - t_j²``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp import mechanisms
from netdp.core.errors import check
from netdp.mechanisms import registry
from netdp.mechanisms._oracle import check_epsilon

#: The numeric randomizers of :mod:`netdp.mechanisms.bounded`, by their CLI names.
NUMERIC = registry.names("bounded", first="hybrid")
#: Pure frequency oracles whose reports show their support (``report_scores``).
ORACLES = registry.names(trait="multidim", first="oue")
SPLITS = ("sample", "naive", "joint")
#: The paper's rule: one attribute per 2.5 units of ε (Wang et al. 2019, §4.1).
EPS_PER_ATTRIBUTE = 2.5
MAX_ATTRIBUTES = 1000


def sample_size(epsilon: float, d: int) -> int:
    """``k = max(1, min(d, floor(ε / 2.5)))``, the number of attributes a user reports
    (Wang et al. 2019, §4.1, Algorithm 4, line 1)."""
    return max(1, min(d, int(math.floor(epsilon / EPS_PER_ATTRIBUTE))))


@dataclass(frozen=True, eq=False)
class Table:
    """Rows of mixed attributes: ``numeric`` ``(n, m)`` in ``[-1, 1]``, ``categorical``
    ``(n, C)`` codes ``0..c_j - 1`` with ``domains = (c_1, ..., c_C)``."""

    numeric: np.ndarray
    categorical: np.ndarray
    domains: tuple[int, ...]
    names: tuple[str, ...] = ()
    name: str = "table"

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.numeric.shape[0])

    @property
    def attributes(self) -> int:
        """``d``: numeric plus categorical attributes."""
        return int(self.numeric.shape[1]) + len(self.domains)

    @property
    def width(self) -> int:
        """Length of a contribution: ``m + Σ c_j``."""
        return int(self.numeric.shape[1]) + int(sum(self.domains))

    def take(self, rows: np.ndarray) -> Table:
        """The table of these rows (repeats allowed)."""
        return Table(self.numeric[rows], self.categorical[rows], self.domains, self.names,
                     self.name)

    def truth(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Each row's exact contribution ``(n, width)``: its numeric values, then the
        one-hot codes of its categories."""
        table = self if rows is None else self.take(rows)
        parts = [table.numeric.astype(float)]
        for j, c in enumerate(table.domains):
            parts.append(np.eye(c)[table.categorical[:, j]])
        return np.concatenate(parts, axis=1) if parts else np.empty((table.n, 0))

    def with_row(self, node: int, numeric: float, category: int) -> Table:
        """A copy with row ``node`` set to ``numeric`` everywhere and ``category`` in
        every categorical attribute."""
        num, cat = self.numeric.copy(), self.categorical.copy()
        num[node] = numeric
        cat[node] = category
        return Table(num, cat, self.domains, self.names, self.name)


@dataclass(frozen=True)
class DuchiMultidim:
    """Duchi et al.'s multidimensional solution (Wang et al. 2019 §3.1, Algorithm 3).

    For ``t ∈ [-1, 1]^d``: draw ``v_j = ±1`` with ``P[v_j = 1] = (1 + t_j)/2``; with
    probability ``e^ε / (e^ε + 1)`` report uniformly from ``{B s : s ∈ {±1}^d, s·v >= 0}``,
    else from ``{B s : s·v <= 0}`` (ties in both when ``d`` is even), with
    ``B = (e^ε + 1)/(e^ε - 1) · C_d``, ``C_d = 2^{d-1} / binom(d-1, (d-1)/2)`` for odd
    ``d`` and ``(2^{d-1} + binom(d, d/2)/2) / binom(d-1, d/2)`` for even ``d``.
    Unbiased, ε-LDP, ``Var x_j = B² - t_j²``.
    """

    epsilon: float
    d: int
    B: float = field(init=False)
    name = "duchi-joint"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check(isinstance(self.d, int) and 1 <= self.d <= MAX_ATTRIBUTES, "attributes",
              f"must lie in 1..{MAX_ATTRIBUTES} (got {self.d})")
        d = self.d
        if d % 2:
            cd = 2 ** (d - 1) / math.comb(d - 1, (d - 1) // 2)
        else:
            cd = (2**d + math.comb(d, d // 2)) / (2 * math.comb(d - 1, d // 2))
        object.__setattr__(self, "B", cd / math.tanh(self.epsilon / 2))

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(n, d)`` reports ``±B`` for ``(n, d)`` rows in ``[-1, 1]``."""
        t = _in_range(values)
        n, d = t.shape
        check(d == self.d, "values", f"rows must have {self.d} attributes (got {d})")
        v = np.where(rng.random((n, d)) < (1 + t) / 2, 1.0, -1.0)
        positive = rng.random(n) < 1 / (1 + math.exp(-self.epsilon))
        # w = s * v is uniform on {Σw >= 0} (or {Σw <= 0}): its number of +1s m follows
        # binom(d, m) restricted to the half, then the +1s sit on a uniform subset
        m = np.arange(d + 1)
        logw = np.array([_log_comb(d, int(i)) for i in m])
        upper, lower = 2 * m >= d, 2 * m <= d
        plus = _draw(np.where(upper, logw, -np.inf), np.asarray(rng.random(n)))
        minus = _draw(np.where(lower, logw, -np.inf), np.asarray(rng.random(n)))
        ones = np.where(positive, plus, minus)
        rank = np.argsort(np.argsort(rng.random((n, d)), axis=1), axis=1)
        w = np.where(rank < ones[:, None], 1.0, -1.0)
        return self.B * w * v

    def variance(self, values: np.ndarray) -> np.ndarray:
        """``B² - t²`` per entry."""
        return self.B**2 - np.asarray(values, dtype=float) ** 2

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "epsilon": float(self.epsilon), "attributes": self.d,
                "B": self.B}


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _draw(logw: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from the weights ``exp(logw)`` for uniforms ``u``."""
    p = np.exp(logw - np.max(logw))
    cdf = np.cumsum(p / p.sum())
    return np.minimum(np.searchsorted(cdf, u, side="right"), logw.size - 1)


def _in_range(values: np.ndarray) -> np.ndarray:
    t = np.asarray(values, dtype=float)
    check(t.ndim == 2 and bool(np.all(np.abs(t) <= 1)), "values",
          "numeric attributes must be an (n, d) array in [-1, 1]")
    return t


@dataclass(frozen=True)
class Multidim:
    """One ε-LDP report of a mixed row (Wang et al. 2019, §4).

    ``Multidim(epsilon, numeric, domains, mechanism="hybrid", oracle="oue",
    split="sample")``: ``numeric`` attributes in ``[-1, 1]`` and categorical ones of sizes
    ``domains``. ``split`` is ``sample`` (``k`` of ``d`` at ``ε/k``, scaled by ``d/k``),
    ``naive`` (all ``d`` at ``ε/d``) or ``joint`` (Duchi's multidimensional solution;
    numeric attributes only). See the module docstring for the variances.
    """

    epsilon: float
    numeric: int
    domains: tuple[int, ...] = ()
    mechanism: str = "hybrid"
    oracle: str = "oue"
    split: str = "sample"
    k: int = field(init=False)
    numeric_mechanism: Any = field(init=False, repr=False)
    oracles: tuple[Any, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:

        check_epsilon(self.epsilon)
        object.__setattr__(self, "domains", tuple(int(c) for c in self.domains))
        mech = registry.canonical(self.mechanism)
        check(mech in NUMERIC, "mechanism", f"must be one of {', '.join(NUMERIC)}, "
              f"{' or '.join(registry.aliases('bounded'))} (got {self.mechanism!r})")
        check(self.oracle in ORACLES, "oracle", f"must be one of {', '.join(ORACLES)} "
              f"(got {self.oracle!r})")
        check(self.split in SPLITS, "split", f"must be one of {', '.join(SPLITS)} "
              f"(got {self.split!r})")
        d = self.attributes
        check(1 <= d <= MAX_ATTRIBUTES, "attributes",
              f"must lie in 1..{MAX_ATTRIBUTES} (got {d})")
        check(self.numeric >= 0, "attributes", f"numeric attributes must be >= 0 "
              f"(got {self.numeric})")
        check(all(c >= 2 for c in self.domains), "domain", "every categorical attribute "
              f"needs at least 2 categories (got {list(self.domains)})")
        if self.split == "joint":
            check(not self.domains, "split", "joint is Duchi et al.'s multidimensional "
                  "solution, for numeric attributes only (give --categorical 0)")
            check(mech == "duchi", "mechanism", "--split joint is Duchi's multidimensional "
                  "solution: give --mechanism duchi")
            object.__setattr__(self, "k", d)
            object.__setattr__(self, "numeric_mechanism", DuchiMultidim(self.epsilon, d))
            object.__setattr__(self, "oracles", ())
            return
        k = sample_size(self.epsilon, d) if self.split == "sample" else d
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "numeric_mechanism",
                           mechanisms.numeric(mech, self.epsilon / k))
        object.__setattr__(self, "oracles", tuple(
            mechanisms.frequency_oracle(self.oracle, self.epsilon / k, c)
            for c in self.domains))

    @property
    def attributes(self) -> int:
        """``d``."""
        return self.numeric + len(self.domains)

    @property
    def scale(self) -> float:
        """``d / k``: the aggregator's factor for a sampled report."""
        return self.attributes / self.k

    def check_table(self, table: Table) -> None:
        """Refuse a table of another schema."""
        check(table.numeric.shape[1] == self.numeric and table.domains == self.domains,
              "values", f"the table has {table.numeric.shape[1]} numeric attributes and "
              f"domains {list(table.domains)}; the mechanism expects {self.numeric} and "
              f"{list(self.domains)}")

    def sampled(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """bool ``(n, d)``: the ``k`` attributes each user reports, uniform without
        replacement (all of them for ``naive`` and ``joint``)."""
        d = self.attributes
        if self.k == d:
            return np.ones((n, d), dtype=bool)
        rank = np.argsort(np.argsort(rng.random((n, d)), axis=1), axis=1)
        return rank < self.k

    def contributions(self, table: Table, rng: np.random.Generator) -> np.ndarray:
        """``(n, width)``: each row's report turned into its unbiased contribution (the
        numeric estimates, then each categorical attribute's count estimates).

        Draws, in order: the sampled attributes, the numeric reports of every row and
        attribute (kept where sampled), then each categorical attribute's reports."""
        self.check_table(table)
        n, m = table.n, self.numeric
        if self.split == "joint":
            return self.numeric_mechanism.perturb(table.numeric, rng)
        keep = self.sampled(n, rng)
        out = np.zeros((n, table.width))
        if m:
            y = self.numeric_mechanism.perturb(table.numeric, rng)
            out[:, :m] = np.where(keep[:, :m], self.scale * y, 0.0)
        start = m
        for j, (oracle, c) in enumerate(zip(self.oracles, self.domains, strict=True)):
            reports = oracle.perturb(table.categorical[:, j], rng)
            support = oracle.report_scores(reports, range(c)) > 0
            z = (support - oracle.q_star) / (oracle.p_star - oracle.q_star)
            out[:, start:start + c] = np.where(keep[:, m + j, None], self.scale * z, 0.0)
            start += c
        return out

    def row_variance(self, table: Table) -> np.ndarray:
        """``(n, width)``: the closed-form variance of each row's contribution,
        ``(d/k)(Var_M(t) + t²) - t²`` (module docstring)."""
        self.check_table(table)
        t = table.truth()
        if self.split == "joint":
            return self.numeric_mechanism.variance(t)
        base = np.empty_like(t)
        m = self.numeric
        base[:, :m] = self.numeric_mechanism.variance(table.numeric)
        start = m
        for oracle, c in zip(self.oracles, self.domains, strict=True):
            p, q = oracle.p_star, oracle.q_star
            s = np.where(t[:, start:start + c] > 0, p, q)
            base[:, start:start + c] = s * (1 - s) / (p - q) ** 2
            start += c
        return self.scale * (base + t**2) - t**2

    def variance(self, table: Table) -> np.ndarray:
        """``(width,)``: the variance of the mean contribution when every row reports once
        (central collection): ``Σ_u Var x_u / n²``."""
        return self.row_variance(table).sum(axis=0) / table.n**2

    def sampled_variance(self, table: Table, reports: int) -> np.ndarray:
        """``(width,)``: the variance of the mean of ``reports`` contributions of rows drawn
        uniformly with replacement (a walk on the complete graph with self-moves):
        ``(mean_u E[x_u²] - μ²) / reports``."""
        t = table.truth()
        second = (self.row_variance(table) + t**2).mean(axis=0)
        return (second - t.mean(axis=0) ** 2) / reports

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": f"multidim-{self.split}", "epsilon": float(self.epsilon), "delta": 0.0,
            "attributes": self.attributes, "numeric": self.numeric,
            "domains": list(self.domains), "k": self.k, "scale": self.scale,
            "numeric_mechanism": self.numeric_mechanism.describe()}
        if self.oracles:
            out["oracle"] = self.oracles[0].describe()
        return out
