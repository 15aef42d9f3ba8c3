"""Empirical lower bounds on ε (spec accounting.md §5): the top layer of the privacy side.

- :mod:`~netdp.audit.lower_bounds`: Clopper-Pearson bounds on a fixed test's errors, the
  ε they prove, the ceiling of an audit of a given size, one-run audits.
- :mod:`~netdp.audit.auditor`: one class built from the scores of a test statistic in two
  worlds (threshold fitted on one split, errors counted on the other).
- :mod:`~netdp.audit.mechanism`: audits of one randomizer; :mod:`~netdp.audit.curve`: the
  audit curve against the number of trials.
- :mod:`~netdp.audit.protocol`: audits of a whole protocol for one pair, replaying the
  task's run (the only privacy module that imports :mod:`netdp.tasks`, which is why this
  folder sits above it).
"""
