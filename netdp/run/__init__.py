"""netdp.run."""
