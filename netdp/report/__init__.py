"""The result model (typed reports, `types.py`) and its presentation: text rows, HTML pages,
figures."""
