"""What the holders do with the token along a trace: the vectorized protocols of the tasks
(:mod:`netdp.tasks` declares which applies where)."""
