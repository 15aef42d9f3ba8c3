"""netdp.tracking._kernels."""
