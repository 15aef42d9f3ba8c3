"""What the results of ``attack`` and ``audit`` share with a simulation's report: a JSON
document with ``schema``, ``version``, ``seed``, ``config`` and ``provenance`` keys, a
one-row DataFrame and a one-line ``repr``."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from netdp.core.jsonable import jsonable
from netdp.core.provenance import provenance
from netdp.core.table_rows import frame, result_row
from netdp.core.version import __version__


class Documented:
    """A mixin for frozen result dataclasses with ``seed`` and ``config`` fields (the
    parameters of the command that made them, as the command line names them). Declare the
    dataclass with ``repr=False`` so that :meth:`__repr__` stays the short one."""

    #: Numbers the JSON layout of these results (1: ``schema``, ``config`` and
    #: ``provenance`` added around the figures).
    SCHEMA: ClassVar[int] = 1
    seed: int | None
    config: Mapping[str, Any]

    @abstractmethod
    def figures(self) -> dict[str, Any]:
        """The result's own objects of the JSON document."""

    @abstractmethod
    def summary(self) -> str:
        """The headline figures, for :meth:`__repr__`."""

    def to_dict(self) -> dict[str, Any]:
        """``{schema, version, seed, config, <figures>, provenance}`` (plain Python)."""
        return {"schema": self.SCHEMA, "version": __version__, "seed": self.seed,
                "config": dict(self.config), **self.figures(), "provenance": provenance()}

    def to_json(self) -> dict[str, Any]:
        """The same, strict JSON (``inf`` as ``"inf"``)."""
        return jsonable(self.to_dict())

    def to_frame(self):
        """The result as a one-row pandas DataFrame
        (:func:`netdp.core.table_rows.result_row`)."""
        return frame([result_row(self.to_dict())])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary()}>"
