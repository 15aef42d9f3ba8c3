"""Parameter sweeps: a TOML spec, serial or dask execution, a resumable result table.

    from netdp.run.sweep import load_spec, run_sweep, read_table
    spec = load_spec("experiments/sweeps/figure1b_quick.toml")
    run_sweep(spec, "out/fig1b_quick", backend="dask")
    frame = read_table("out/fig1b_quick")      # one row per (config, seed)

Plots of a table live in :mod:`netdp.run.sweep.plots`; the CLI in
:mod:`netdp.run.sweep.commands` (``netdp sweep``, ``netdp results``).
"""

from __future__ import annotations

from netdp.run.sweep.runner import plan_batches, run_batch, run_sweep
from netdp.run.sweep.spec import Run, SweepSpec, config_hash, derive_seed, load_spec, parse_spec
from netdp.run.sweep.table import ResultTable, export_csv, export_parquet, flatten, read_table

__all__ = ["ResultTable", "Run", "SweepSpec", "config_hash", "derive_seed", "export_csv",
           "export_parquet", "flatten", "load_spec", "parse_spec", "plan_batches",
           "read_table", "run_batch", "run_sweep"]
