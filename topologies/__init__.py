"""Named topology specs (TOML), shipped as package data; see netdp.graphs.topologies.available()."""
