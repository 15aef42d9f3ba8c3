"""Trackers: the pairwise privacy loss of each run's trace, observer by observer, and its
summaries."""
