"""The users' data: values drawn from distributions, read from files and datasets, and their
attributes."""
