"""The env processes of the lean subprocess vectorised env: what runs in each child.

Imports only the standard library, numpy, gymnasium and cloudpickle (never torch or
stable-baselines3), so an env process holds the env and little else. See ARCHITECTURE.md,
"Processes". The parent side is ``core.training.lean_vec_env``.
"""
