"""The env processes of the lean subprocess vectorised env: what runs in each child.

``worker`` (the command loop), ``recipe`` (``EnvRecipe``: the env, its seed, Monitor file and wrappers as data),
``monitor`` (``EpisodeMonitor``: SB3's Monitor without SB3). Imports only the standard library, numpy, gymnasium,
cloudpickle and ``core.util.power_throttling`` (never torch, SB3, pydantic or the config: a contract), so an env
process holds the env and little else. The parent side is ``core.worker.lean_vec_env``; docs/processes.md."""
