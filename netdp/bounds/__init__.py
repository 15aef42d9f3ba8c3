"""netdp.bounds."""
