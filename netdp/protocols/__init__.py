"""What a holder does with the token: one module per task."""

TASKS = ("sum", "histogram", "sgd")
