"""Tables of mixed numeric and categorical attributes for multidimensional collection.

``fair`` is Fair's extramarital affairs survey (Redbook 1974, 6366 women), shipped inside
the ``statsmodels`` wheel (``statsmodels/datasets/fair/fair.csv``): read from the
installed package, no download. Its schema here: five numeric attributes (``age``,
``yrs_married``, ``children``, ``educ``, ``affairs``) and four categorical ones
(``rate_marriage`` 5 levels, ``religious`` 4, ``occupation`` 6, ``occupation_husb`` 6).
``fair-numeric`` takes all nine columns as numeric (they are all ordinal), the setting of
Wang et al. (ICDE 2019) §6's numeric experiments. Numeric columns are scaled to
``[-1, 1]`` by their min and max; categorical columns are coded ``0..c-1`` in the order
of their sorted values. :func:`synthetic` draws a table of any schema.
"""

from __future__ import annotations

import numpy as np

from netdp.core.errors import check
from netdp.data.values import read_numeric_csv, statsmodels_file
from netdp.mechanisms.multidim import Table

TABLES = ("fair", "fair-numeric")
FAIR_NUMERIC = ("age", "yrs_married", "children", "educ", "affairs")
FAIR_CATEGORICAL = ("rate_marriage", "religious", "occupation", "occupation_husb")


def scale_columns(X: np.ndarray) -> np.ndarray:
    """Each column mapped affinely onto ``[-1, 1]`` by its min and max (a constant column
    to 0)."""
    X = np.asarray(X, dtype=float)
    low, high = X.min(axis=0), X.max(axis=0)
    width = np.where(high > low, high - low, 1.0)
    return np.clip(np.where(high > low, 2 * (X - low) / width - 1, 0.0), -1.0, 1.0)


def code_columns(X: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """Each column coded ``0..c-1`` by its sorted distinct values, and the sizes ``c``."""
    X = np.asarray(X)
    codes = np.empty(X.shape, dtype=np.int64)
    sizes = []
    for j in range(X.shape[1]):
        levels, codes[:, j] = np.unique(X[:, j], return_inverse=True)
        sizes.append(int(levels.size))
    return codes, tuple(sizes)


def load_table(name: str) -> Table:
    """A public table shipped in an installed package (:data:`TABLES`)."""

    check(name in TABLES, "dataset", f"must be synthetic or one of {', '.join(TABLES)} "
          f"(got {name!r})")
    table, header = read_numeric_csv(statsmodels_file("fair/fair.csv", "fair"), "dataset")
    columns = {h: table[:, j] for j, h in enumerate(header)}
    numeric_names = FAIR_NUMERIC if name == "fair" else FAIR_CATEGORICAL + FAIR_NUMERIC
    categorical_names = FAIR_CATEGORICAL if name == "fair" else ()
    numeric = scale_columns(np.stack([columns[c] for c in numeric_names], axis=1))
    raw = np.stack([columns[c] for c in categorical_names], axis=1) if categorical_names \
        else np.empty((numeric.shape[0], 0))
    codes, domains = code_columns(raw)
    return Table(numeric, codes, domains, numeric_names + categorical_names,
                 f"{name} (Fair 1978, statsmodels)")


def synthetic(n: int, attributes: int, categorical: int, domain: int | tuple[int, ...],
              rng: np.random.Generator) -> Table:
    """``n`` rows of ``attributes - categorical`` numeric attributes (a normal of random
    centre in ``[-0.5, 0.5]`` and spread 0.4, clipped to ``[-1, 1]``) and ``categorical``
    ones of sizes ``domain`` (one size for all, or one each) with Zipf(1.1)-like
    frequencies over a random order of the categories."""
    check(0 <= categorical <= attributes, "categorical",
          f"must lie in 0..{attributes} (the attributes) (got {categorical})")
    domains = (domain,) * categorical if isinstance(domain, int) else tuple(domain)
    check(len(domains) == categorical, "domain", f"needs {categorical} sizes (got "
          f"{len(domains)})")
    m = attributes - categorical
    centres = rng.uniform(-0.5, 0.5, m)
    numeric = np.clip(centres + 0.4 * rng.standard_normal((n, m)), -1.0, 1.0)
    codes = np.empty((n, categorical), dtype=np.int64)
    for j, c in enumerate(domains):
        weights = 1.0 / np.arange(1, c + 1) ** 1.1
        codes[:, j] = rng.permutation(c)[rng.choice(c, n, p=weights / weights.sum())]
    names = tuple(f"x{j}" for j in range(m)) + tuple(f"c{j}" for j in range(categorical))
    return Table(numeric, codes, domains, names, "synthetic")

