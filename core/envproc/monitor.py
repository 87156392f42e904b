"""``EpisodeMonitor``: stable-baselines3's ``Monitor`` for an env process that must not import SB3.

Same behaviour and file as ``stable_baselines3.common.monitor.Monitor`` (SB3 2.x): ``info["episode"]``
= ``{"r", "l", "t"}`` at the end of each episode, and ``<path>.monitor.csv`` with a ``#{json}``
header line then ``r,l,t`` rows that SB3's ``load_results`` reads. Importing SB3's own would load
torch in every env process (its package imports every algorithm).
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from typing import Any, SupportsFloat

import gymnasium as gym

EXT = "monitor.csv"


class MonitorCsv:
    """The CSV SB3's ``ResultsWriter`` writes: a ``#``-JSON header (unless appending), then one row per episode."""

    def __init__(self, filename: str, header: dict[str, Any], extra_keys: tuple[str, ...] = (),
                 override_existing: bool = True) -> None:
        if not filename.endswith(EXT):
            filename = os.path.join(filename, EXT) if os.path.isdir(filename) else f"{filename}.{EXT}"
        filename = os.path.realpath(filename)
        os.makedirs(os.path.dirname(filename), exist_ok=True)
        self.file_handler = open(filename, "wt" if override_existing else "at", newline="\n")  # noqa: SIM115 - kept open
        self.logger = csv.DictWriter(self.file_handler, fieldnames=("r", "l", "t", *extra_keys))
        if override_existing:
            self.file_handler.write(f"#{json.dumps(header)}\n")
            self.logger.writeheader()
        self.file_handler.flush()

    def write_row(self, epinfo: dict[str, Any]) -> None:
        self.logger.writerow(epinfo)
        self.file_handler.flush()

    def close(self) -> None:
        self.file_handler.close()


class EpisodeMonitor(gym.Wrapper[Any, Any, Any, Any]):
    """Episode return, length and time into ``info["episode"]`` and an optional CSV (SB3's ``Monitor``)."""

    def __init__(self, env: gym.Env[Any, Any], filename: str | None = None, allow_early_resets: bool = True,
                 reset_keywords: tuple[str, ...] = (), info_keywords: tuple[str, ...] = (),
                 override_existing: bool = True) -> None:
        super().__init__(env)
        self.t_start = time.time()
        self.results_writer: MonitorCsv | None = None
        if filename is not None:
            env_id = env.spec.id if env.spec is not None else None
            self.results_writer = MonitorCsv(filename, {"t_start": self.t_start, "env_id": str(env_id)},
                                             reset_keywords + info_keywords, override_existing)
        self.reset_keywords = reset_keywords
        self.info_keywords = info_keywords
        self.allow_early_resets = allow_early_resets
        self.rewards: list[float] = []
        self.needs_reset = True
        self.episode_returns: list[float] = []
        self.episode_lengths: list[int] = []
        self.episode_times: list[float] = []
        self.total_steps = 0
        self.current_reset_info: dict[str, Any] = {}

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        if not self.allow_early_resets and not self.needs_reset:
            raise RuntimeError("Tried to reset an environment before done. If you want to allow early resets, "
                               "wrap your env with Monitor(env, path, allow_early_resets=True)")
        self.rewards = []
        self.needs_reset = False
        for key in self.reset_keywords:
            value = kwargs.get(key)
            if value is None:
                raise ValueError(f"Expected you to pass keyword argument {key} into reset")
            self.current_reset_info[key] = value
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.needs_reset:
            raise RuntimeError("Tried to step environment that needs reset")
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.rewards.append(float(reward))
        if terminated or truncated:
            self.needs_reset = True
            ep_rew = sum(self.rewards)
            ep_len = len(self.rewards)
            ep_info: dict[str, Any] = {"r": round(ep_rew, 6), "l": ep_len, "t": round(time.time() - self.t_start, 6)}
            for key in self.info_keywords:
                ep_info[key] = info.get(key, math.nan)  # a measure the env did not report: NaN, left out of the record
            self.episode_returns.append(ep_rew)
            self.episode_lengths.append(ep_len)
            self.episode_times.append(time.time() - self.t_start)
            ep_info.update(self.current_reset_info)
            if self.results_writer:
                self.results_writer.write_row(ep_info)
            info["episode"] = ep_info
        self.total_steps += 1
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        super().close()
        if self.results_writer is not None:
            self.results_writer.close()

    def get_total_steps(self) -> int:
        return self.total_steps

    def get_episode_rewards(self) -> list[float]:
        return self.episode_returns

    def get_episode_lengths(self) -> list[int]:
        return self.episode_lengths

    def get_episode_times(self) -> list[float]:
        return self.episode_times
