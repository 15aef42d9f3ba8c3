"""netdp.data.values."""
