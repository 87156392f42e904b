"""The run config: one typed schema, one table per algorithm, presets, env spaces (no torch, no Qt).

Read top-down: ``errors`` and ``fields`` (``Section``, ``hp`` and its ``FieldMeta``: one typed field per setting,
``sb3=`` naming SB3's keyword) -> ``algorithms/`` -> ``schema`` (``RunConfig``, ``AlgoParams``; ``resolved``: the
'auto' values) -> ``validate`` (the single entry for user data and ``--set``) -> ``presets`` (+ ``preset_env``: a
preset whose algorithm cannot train the env shown). ``sb3_args`` (SB3's keyword arguments and policy_kwargs as
data: the worker's factory's and the zoo export's), ``dotted`` (raw data by dotted path), ``spaces`` and
``space_probe`` (an env's spaces and info keys, read in a subprocess: user code), ``trust`` (the modules the user
trusted), ``engines`` (runtime.engine sb3 | sbx: SBX's table, what it cannot run), ``steps`` (the steps a run
really trains: whole rollouts), ``seeds`` (a group's seeds: the one reader), ``common_envs`` (the env picker's
list), ``field_index`` (the schema's fields as plain data for the window's forms: ``field_index.json``, written by
``python -m core.config.field_scan --write``; a test fails when it is stale).

Not here: what a setting does to memory (the estimate), how SB3 is called (the worker's factory). The detail:
docs/config.md."""
