"""netdp.graphs."""
