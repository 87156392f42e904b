"""``EnvRecipe``: how an env process builds its env, as plain data (what SB3's ``make_vec_env`` does per rank).

A recipe is pickled into the env process by reference to this module, so the child imports only
this package, gymnasium and the user's env module: never the worker's torch or SB3.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from core.envproc.monitor import EpisodeMonitor
from core.util.imports import load_object


@dataclass(frozen=True)
class EnvRecipe:
    """One env of a vectorised env: a gymnasium id or a ``module:Class`` entry point, wrapped as ``make_vec_env`` does.

    Order as in SB3: the env, its action space seeded with ``seed + rank``, the Monitor (CSV
    ``monitor_dir/<rank>.monitor.csv``), then the wrappers (``(module.Class, kwargs)``, innermost first).
    """

    env_id: str | None = None
    entry_point: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    wrappers: tuple[tuple[str, dict[str, Any]], ...] = ()
    rank: int = 0
    seed: int | None = None
    monitor_dir: str | None = None
    monitor_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The env as a user named it, for messages."""
        return self.env_id or self.entry_point or "env"

    def __call__(self) -> gym.Env[Any, Any]:
        if self.entry_point:
            env = load_object(self.entry_point)(**self.kwargs)
        else:
            env = gym.make(self.env_id or "", **self.kwargs)
        if not isinstance(env, gym.Env):
            raise TypeError(f"{self.name} made a {type(env).__name__}, not a gymnasium.Env: only gymnasium envs "
                            "run in env processes (wrap an old gym env with shimmy)")
        if self.seed is not None:
            env.action_space.seed(self.seed + self.rank)
        filename = None
        if self.monitor_dir is not None:
            os.makedirs(self.monitor_dir, exist_ok=True)
            filename = os.path.join(self.monitor_dir, str(self.rank))
        env = EpisodeMonitor(env, filename=filename, **self.monitor_kwargs)
        for name, kwargs in self.wrappers:
            module, _, cls = name.rpartition(".")
            env = load_object(f"{module}:{cls}")(env, **kwargs)
        made: gym.Env[Any, Any] = env
        return made
