"""Named topology specs (TOML), shipped as package data; see netdp.topology.available()."""
