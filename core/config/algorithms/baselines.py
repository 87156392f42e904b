"""The baselines' names: they play a fixed policy (random actions, or the zero action) for ``budget.episodes`` episodes
through the same worker and run folder, so they sit in tables and plots like any run. A module of its own: a reader of
a run folder asks without loading the algorithms' tables (and pydantic with them)."""

BASELINES = ("random", "constant")
