"""Where a simulation's wall time went (the ``timing`` object of its report)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Where a simulation's wall time went, in seconds (the ``timing`` object).

    Attributes
    ----------
    setup_s
        The config checked and the run prepared: graph, gossip matrix, data.
    engine_s
        The protocol itself: the engine's walk or gossip rounds and each run's
        computation along them (the noisy estimate, sgd's gradient steps).
    accounting_s
        The privacy tracker: every observer's losses, their conversion and summary.
    report_s
        The utility, the report's sections and, with faults, the fault-free runs beside.
    total_s
        From the call to the report; the parts add up to at most this.
    """

    setup_s: float = 0.0
    engine_s: float = 0.0
    accounting_s: float = 0.0
    report_s: float = 0.0
    total_s: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """The five figures, by name."""
        return dict(self.__dict__)

    def line(self, engine: str = "walk") -> str:
        """``time: setup 0.1 s, walk 2 s, accounting 30 s, report 0.01 s`` (``engine``:
        what the engine did, ``walk`` or ``gossip``)."""
        parts = (("setup", self.setup_s), (engine, self.engine_s),
                 ("accounting", self.accounting_s), ("report", self.report_s))
        return "time: " + ", ".join(f"{name} {seconds:.3g} s" for name, seconds in parts)
