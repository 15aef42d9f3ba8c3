"""netdp.tracking."""
