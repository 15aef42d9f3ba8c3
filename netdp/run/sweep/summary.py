"""The mean of a sweep's main figures per grid point: what ``netdp results`` prints and
the sweep's report page tabulates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def grid_means(frame: Any, manifest: Mapping[str, Any] | None) -> Any:
    """Per grid point (the manifest's axes; the config hash without axes), the number of
    seeds and the mean over the finished runs of the utility error, the LDP loss, up to
    three accountants' mean pairwise loss and the runtime; ``None`` when no run finished.
    """
    manifest = manifest or {}
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return None
    axes = [a for a in manifest.get("grid", {}) if a in frame.columns]
    if "range" in manifest.get("grid", {}):
        axes += ["low", "high"]
    metrics = [c for c in ("abs_error", "mse", "ldp_mean") if c in ok.columns]
    metrics += [c for c in ok.columns if c.endswith("_mean") and c not in metrics
                and c not in ("ldp_mean",) and not c.startswith("theory")][:3]
    metrics.append("runtime_s")
    grouped = ok.groupby(axes or ["config_hash"], sort=True, dropna=False)
    table = grouped[metrics].mean()
    table.insert(0, "seeds", grouped.size())
    return table
