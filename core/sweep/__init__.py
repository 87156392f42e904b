"""Sweeps: an Optuna study over a search space, each trial a normal run launched like a queue job.

``spec`` (the sweep file: space over schema paths, objective, pruner), ``folder`` (``SweepFolder``, a RunnerFolder:
<runs>/.sweeps/NAME), ``study`` (the Optuna study, what a run reports, trials, importances), ``control`` (start,
stop, resume, status), ``runner`` (the detached process). Not here: throughput tuning (``rlpanel tune``).
docs/sweeps.md."""
