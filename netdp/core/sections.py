"""Section parts that several tasks share, declared once: the data file, and user-level DP.

**The data file** (``--data-file``, ``--column``): the nodes' data from a CSV file with a
header row, one row per node (:func:`data_file_param`, :func:`column_param`,
:func:`check_data_file`).

**User-level DP with bounded contributions**: the two parameters.

Each node holds ``K`` records (``--records-per-node``) and contributes at most ``T`` of
them (``--bound``), so that its whole contribution, not one record's, is the unit of
privacy (Wilson et al., PETS 2020, "Differentially Private SQL with Bounded User
Contribution", as presented in the DP query-processing tutorial). The threshold is a
parameter, fixed without looking at the data. The tasks that offer the mode (``sum``,
``histogram``) subclass :class:`UserLevelSection`; the maths is in
:mod:`netdp.tasks.user_level`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from netdp.core.errors import check
from netdp.core.params import MIN_WIDTH, Section, param

USER_LEVEL = "user-level DP (several records per node)"
DATA_GROUP = "summation and histograms"


DATA_FILE, COLUMN = "data_file", "column"
"""The names of the parts :func:`data_file_param` and :func:`column_param` declare (shared by
several sections: read by name, ``config.get(DATA_FILE)``)."""


def data_file_param(holds: str, rows: str = "one row per node") -> Any:
    """``--data-file``: ``holds`` (the values, the categories...) from a CSV file with a
    header row (``rows``: how the file is laid out)."""
    return param(None, f"take {holds} from a CSV file with a header row ({rows})", kind=str,
                 metavar="CSV", group=DATA_GROUP)


def column_param() -> Any:
    """``--column``: the column of ``--data-file`` to read."""
    return param(None, "the CSV column, by name or 0-based index", kind=str,
                 metavar="NAME|INDEX", group=DATA_GROUP, default_text="the first")


def check_value_range(low: float, high: float) -> None:
    """Refuse a ``--range`` that is not ``LOW < HIGH`` with a finite width of at least
    :data:`~netdp.core.params.MIN_WIDTH` (the width is the sensitivity)."""
    check(low < high, "range", f"needs LOW < HIGH (got {low:g} {high:g})")
    check(math.isfinite(high - low), "range", f"the width HIGH - LOW must be finite (got "
          f"{low:g} {high:g})")
    check(high - low >= MIN_WIDTH, "range", f"the width HIGH - LOW (the sensitivity) must "
          f"be at least {MIN_WIDTH:g} (got {high - low:g})")


def check_data_file(section: Any) -> None:
    """Refuse ``--column`` without ``--data-file``."""
    check(section.column is None or section.data_file is not None, "column",
          "picks a column of --data-file; give the file")
MAX_RECORDS = 10**4


@dataclass(frozen=True)
class UserLevelSection(Section):
    """The user-level parameters of a task's section: ``K`` records per node, bound ``T``.

    ``K = T = 1`` (the default) is the record-level task, with the same numbers.
    """

    records_per_node: int = param(1, "synthetic data: records each node holds (user-level "
                                  "DP: a node's whole contribution is the unit)", low=1,
                                  high=MAX_RECORDS, metavar="K", group=USER_LEVEL)
    bound: int = param(1, "contribution bound: a node keeps at most T of its K records, "
                       "drawn uniformly without replacement (the bounding stream); fixed "
                       "without looking at the data", low=1, high=MAX_RECORDS, metavar="T",
                       group=USER_LEVEL)

    def __post_init__(self) -> None:
        super().__post_init__()
        check(self.bound <= self.records_per_node, "bound",
              f"must lie in 1..{self.records_per_node} (--records-per-node K; a larger bound "
              f"only adds noise) (got {self.bound})")

    @property
    def user_level(self) -> bool:
        """Whether the mode is on (``K > 1``)."""
        return self.records_per_node > 1

    def validate(self, config: Any) -> None:
        if not self.user_level:
            return
        check(getattr(self, "data_file", None) is None, "records-per-node",
              "draws K synthetic records per node; a --data-file holds one value per node "
              "(leave --records-per-node out)")
        check(config.attack is None, "records-per-node",
              "attacks are modelled on one record per node (leave --records-per-node out)")
