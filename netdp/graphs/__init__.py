"""Graphs: named topologies, graph files and networkx graphs, time-varying graphs, walk rules
and gossip matrices."""
