"""Foundations every layer reads: configuration and parameters, errors and checks, files, seeds,
provenance and the version."""
