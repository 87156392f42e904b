"""The ``rlpanel`` command: ``main`` builds the parser from an explicit list of command modules, one module per
command, sharing ``common`` (``CliError``, ``emit``, config options) and ``follow`` (train's progress line).

Commands: ``presets``, ``train`` (train/resume/stop; --seeds: a group), ``runs``, ``tensorboard``, ``doctor``,
``monitor``, ``estimate``, ``calibrate``, ``evaluate``, ``export``, ``export_policy``, ``report``, ``queue``,
``sweep``, ``zoo``, ``shortcut``, ``tune``, ``notify``, ``record``, ``watch`` (starts the window's Watch by module
name: the command line imports no Qt); ``ray_options`` (--ray, --ray-python, --ray-runs).
To add one: ARCHITECTURE.md, "Where do I add ..."."""
