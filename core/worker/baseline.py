"""Baseline runs: a fixed policy (random actions, or the zero action) played for N episodes.

They go through the same worker and write the same records and summary as a training run, so
a night's table compares the agents against "doing nothing" and "doing anything".
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from core.config.errors import ConfigError, FieldIssue
from core.config.schema import RunConfig
from core.config.spaces import check_spaces, space_kind
from core.run import records
from core.run.episodes import EpisodeLimiter
from core.run.layout import RunDir
from core.run.status import write_status
from core.run.summary import summarize
from core.util.files import write_json_atomic
from core.util.jsonl import JsonlWriter
from core.worker.callbacks import StopFlag
from core.worker.factory import build_vec_env


def zero_action(space: spaces.Box, label: str) -> np.ndarray:
    """The Box action closest to zero; refuses a space whose bounds exclude zero."""
    low, high = np.broadcast_to(space.low, space.shape), np.broadcast_to(space.high, space.shape)
    if np.any(low > 0) or np.any(high < 0):
        raise ConfigError([FieldIssue("algo", f"the action space of {label} does not contain zero "
                                              f"(bounds {low.min()}..{high.max()}): use the random baseline")])
    return np.zeros(space.shape, dtype=space.dtype)


def run_baseline(run_dir: Path, cfg: RunConfig, out: JsonlWriter, resume: bool) -> tuple[str, str]:
    layout = RunDir(run_dir)
    env, notes = build_vec_env(cfg, monitor_dir=layout.monitor, append_monitor=resume)
    try:
        issues = check_spaces(cfg, space_kind(env.action_space))
        if issues:
            raise ConfigError(issues)
        space = env.action_space
        if cfg.algo == "constant":
            assert isinstance(space, spaces.Box), "check_spaces refuses the constant baseline on other spaces"
            const = zero_action(space, cfg.env.label)
            act = lambda: np.stack([const] * env.num_envs)  # noqa: E731
        else:
            if cfg.runtime.seed is not None:
                space.seed(cfg.runtime.seed)
            act = lambda: np.stack([space.sample() for _ in range(env.num_envs)])  # noqa: E731
        stop = StopFlag(run_dir)
        stop.install_signal_handler()
        wanted = cfg.budget.episodes
        write_status(run_dir, state="running")
        env.reset()
        step = episodes = 0
        pending: list[dict[str, Any]] = []
        limiter = EpisodeLimiter()  # a fast env's thousands of episodes: aggregates past its rate
        started = last_flush = time.monotonic()
        last_step = 0
        while episodes < wanted:
            _, _, dones, infos = env.step(act())
            step += env.num_envs
            for i in np.flatnonzero(dones):
                ep = infos[i].get("episode")
                if ep is not None and episodes < wanted:
                    episodes += 1
                    pending.append(records.episode(step, ep["r"], ep["l"], measures=records.measures_of(ep, cfg.env.info_keys)))
            now = time.monotonic()
            if now - last_flush >= 1.0 or episodes >= wanted:
                fps = (step - last_step) / max(now - last_flush, 1e-9)
                pending = limiter.take(pending, now) if pending else []
                pending.append(records.progress(step, fps, None, episodes=episodes, episodes_total=wanted))
                out.write(pending)
                pending, last_flush, last_step = [], now, step
                if stop.check():
                    break
        write_status(run_dir, train_time_s=time.monotonic() - started)
    finally:
        env.close()
    stopped = episodes < wanted
    state = "stopped" if stopped else "finished"
    reason = f"{cfg.algo} baseline played {episodes} of {wanted} episodes" + (f" ({stop.reason})" if stopped else "")
    out.write([records.event(reason)])
    out.close()
    summary = summarize(run_dir)
    summary.update(exit_reason=reason, state=state)
    write_json_atomic(layout.summary, summary)
    return state, reason
