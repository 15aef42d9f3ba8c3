"""Tabular datasets for decentralized SGD: load, scale, split across nodes.

``randhie`` (the default) is the RAND Health Insurance Experiment table (20 190 people, 9
features, public domain; statsmodels' copy), shipped inside netdp as
``netdp/data/randhie.csv.gz`` (``netdp/data/DATASETS.md``): logistic regression predicts
whether a person saw a physician at all during the year (``mdvis > 0``); least squares
predicts ``log(1 + mdvis)``. No network is needed. ``synthetic`` draws a Gaussian design
with a planted model; any CSV file with a header row works too (``--target`` names the
label column, default the last).

Features are standardized with the training split's statistics, a constant 1 is
appended (the intercept), and every row is divided by the largest training row norm, so
``||x|| <= 1`` on the training set: the logistic loss is then 1-Lipschitz.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from netdp.core.errors import InputError, check
from netdp.data.values import packaged_table, read_numeric_csv

DATASETS = ("randhie", "synthetic")
RANDHIE = "randhie.csv.gz"  # in netdp/data
SYNTHETIC_ROWS = 20_000
SYNTHETIC_FEATURES = 10
CANARY = 1e6  # the scale of an audit's canary row (see canary)


@dataclass(frozen=True, eq=False)
class Split:
    """A dataset split for a run: training rows grouped by node, and a test set.

    Attributes
    ----------
    X, y
        Training rows sorted by owner node; node ``u`` owns rows
        ``indptr[u]:indptr[u + 1]``.
    indptr
        ``(n + 1,)`` row offsets per node.
    X_test, y_test
        Held-out rows.
    name
        Where the data came from.
    """

    X: np.ndarray
    y: np.ndarray
    indptr: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str

    @property
    def n(self) -> int:
        """Number of nodes."""
        return self.indptr.size - 1

    @property
    def dim(self) -> int:
        """Model dimension (features + intercept)."""
        return self.X.shape[1]

    def describe(self) -> dict:
        """Shape of the split, for the report."""
        sizes = np.diff(self.indptr)
        return {"name": self.name, "train_rows": int(self.y.size),
                "test_rows": int(self.y_test.size), "dim": self.dim,
                "rows_per_node": {"min": int(sizes.min()), "mean": float(sizes.mean()),
                                  "max": int(sizes.max())}}


def load(name: str, model: str, rng: np.random.Generator,
         target: str | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Raw features and labels: ``y`` in ``{-1, +1}`` for logistic, real for linear."""
    if name == "randhie":
        table, header = packaged_table(RANDHIE, "dataset")
        visits, X = table[:, 0], table[:, 1:]
        y = np.where(visits > 0, 1.0, -1.0) if model == "logistic" else np.log1p(visits)
        return X, y, "randhie (RAND HIE)"
    if name == "synthetic":
        X = rng.standard_normal((SYNTHETIC_ROWS, SYNTHETIC_FEATURES))
        w = rng.standard_normal(SYNTHETIC_FEATURES) / np.sqrt(SYNTHETIC_FEATURES)
        margin = X @ w
        if model == "logistic":
            y = np.where(rng.random(margin.size) < 1 / (1 + np.exp(-2 * margin)), 1.0, -1.0)
        else:
            y = margin + 0.5 * rng.standard_normal(margin.size)
        return X, y, "synthetic"
    path = Path(name)
    check(path.suffix.lower() == ".csv" or path.exists(), "dataset",
          f"must be one of {', '.join(DATASETS)} or a CSV file (got {name!r})")
    table, header = read_numeric_csv(path, "dataset")
    col = len(header) - 1 if target is None else _column(header, target, path)
    X = np.delete(table, col, axis=1)
    check(X.shape[1] >= 1, "dataset", f"{path.name} needs at least one feature column")
    y = table[:, col]
    if model == "logistic":
        labels = np.unique(y)
        which = "" if target is not None else " (the last; --target names another)"
        check(labels.size == 2, "dataset" if target is None else "target",
              f"logistic regression needs exactly two label values in column "
              f"{header[col]!r}{which} (found {labels.size})")
        y = np.where(y == labels[1], 1.0, -1.0)
    return X, y, str(path)


def split(X: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator, name: str,
          test_fraction: float = 0.2, skew: float | None = None) -> Split:
    """Scale, hold out a test set and deal the training rows to ``n`` nodes.

    ``skew = None`` deals the shuffled rows round-robin (sizes differ by at most one);
    ``skew = a`` gives every node one random row, then deals the others label by label
    with shares over the nodes drawn from ``Dirichlet(a)`` (small ``a``: skewed labels).
    """
    rows = y.size
    order = rng.permutation(rows)
    n_test = int(round(test_fraction * rows))
    test, train = order[:n_test], order[n_test:]
    check(train.size >= n, "nodes", f"{name} leaves {train.size} training rows: at most "
          f"that many nodes (got {n})")
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    std[std == 0] = 1.0
    scale = lambda A: np.hstack([(A - mean) / std, np.ones((len(A), 1))])  # noqa: E731
    Xtr, Xte = scale(X[train]), scale(X[test])
    norm = np.linalg.norm(Xtr, axis=1).max()
    Xtr, Xte = Xtr / norm, Xte / norm
    ytr, yte = y[train], y[test]
    if y.dtype.kind == "f" and np.unique(y).size > 2:  # regression: centre and scale target
        mu, sd = ytr.mean(), ytr.std() or 1.0
        ytr, yte = (ytr - mu) / sd, (yte - mu) / sd
    owner = _owners(ytr, n, rng, skew)
    by_node = np.argsort(owner, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))])
    return Split(Xtr[by_node], ytr[by_node], indptr, Xte, yte, name)


def canary(data: Split, node: int, model: str, side: int) -> Split:
    """The split with every row of ``node`` replaced by one canary row, for audits.

    The row is ``x = C e_0`` with label ``±1`` (logistic) or ``±C`` (linear), ``C = 1e6``,
    the sign given by ``side`` (0: minus, 1: plus). Its gradient dwarfs every clip norm,
    so ``node``'s clipped update points along ``-e_0`` in one world and ``+e_0`` in the
    other (linear: exactly ``∓L e_0``, the largest change a clipped update can make;
    logistic: ``L`` in one world and up to ``L`` in the other). The other nodes' rows are
    untouched.
    """
    lo, hi = int(data.indptr[node]), int(data.indptr[node + 1])
    X, y = data.X.copy(), data.y.copy()
    X[lo:hi] = 0.0
    X[lo:hi, 0] = CANARY
    label = 1.0 if side else -1.0
    y[lo:hi] = label if model == "logistic" else -label * CANARY
    return dataclasses.replace(data, X=X, y=y)


def canary_worlds(data: Any, node: int) -> tuple[Any, Any]:
    """``data`` (a learning task's prepared problem, with ``split`` and ``model``) with
    ``node``'s rows replaced by the canary row of either sign: an audit's two worlds."""
    low, high = (dataclasses.replace(data, split=canary(data.split, node, data.model.name,
                                                        side)) for side in (0, 1))
    return low, high


def _owners(y: np.ndarray, n: int, rng: np.random.Generator, skew: float | None) -> np.ndarray:
    rows = y.size
    if skew is None:
        return np.arange(rows) % n
    owner = np.empty(rows, dtype=np.int64)
    first = rng.permutation(rows)[:n]  # one row per node, so that no node is empty
    owner[first] = np.arange(n)
    rest = np.ones(rows, bool)
    rest[first] = False
    for label in np.unique(y):
        idx = np.flatnonzero(rest & (y == label))
        owner[idx] = rng.choice(n, size=idx.size, p=rng.dirichlet(np.full(n, skew)))
    return owner


def _column(header: list[str], target: str, path: Path) -> int:
    if target in header:
        return header.index(target)
    raise InputError("target", f"{path.name} has no column {target!r}; its columns are "
                     f"{', '.join(header)}")
