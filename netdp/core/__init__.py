"""netdp.core."""
