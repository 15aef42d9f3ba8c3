"""The shell around the library: the run loop (`netdp.simulate`, `account`, `attack`), the
command line, sweeps, report pages and the cluster."""
