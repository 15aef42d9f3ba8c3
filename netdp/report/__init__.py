"""netdp.report."""
