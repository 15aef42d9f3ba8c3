"""Theoretical bounds: the papers' closed forms and the published bounds, by n and by hop
distance (`netdp bounds`)."""
