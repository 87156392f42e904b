"""The agent playing, frame by frame: what Watch streams and Record encodes.

A checkpoint is loaded with ``render_mode="rgb_array"`` and plays in its VecEnv (the run's wrappers, frame
stack and the checkpoint's own frozen VecNormalize); the picture is the underlying env's ``render()``,
reached through the wrappers with ``get_images()``. The frames of ``episodes`` episodes are the one after
the reset, then one after each step: ``1 + sum(episode lengths)``. The VecEnv resets an env as soon as its
episode ends, so the frame after an episode's last step already shows the next episode's start (it is also
that episode's first frame; after the last episode, a start that is not played).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

from core.agent.load import LoadedPolicy, load_policy
from core.run.frame_stream import CANNOT_RENDER

DEFAULT_FPS = 30.0  # an env whose metadata names no render_fps

# rgb_array frames need no display and no sound; left to itself pygame (the classic-control envs' renderer)
# probes the display and prints "XDG_RUNTIME_DIR is invalid" on a desktop-less machine, greets on import, and
# SDL takes SIGTERM for a quit event of its own: the Watch window's terminate then did nothing (measured: the
# player lived on until killed).
os.environ.setdefault("SDL_NO_SIGNAL_HANDLERS", "1")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


class CannotRender(ValueError):
    """The env gives no pictures: the message is one line, ``ENV cannot render frames: why`` (``CANNOT_RENDER``)."""


@dataclass(frozen=True)
class Frame:
    """One picture (height x width x 3, uint8) and where the agent is; ``step`` 0 is the frame after a reset."""

    episode: int
    step: int
    reward: float
    last_reward: float
    done: bool
    image: np.ndarray


def open_for_frames(run_dir: Path, which: str = "last", seed: int | None = None, device: str = "cpu") -> LoadedPolicy:
    """The checkpoint with an env that renders ``rgb_array`` frames; ``CannotRender`` when it cannot."""
    try:
        return load_policy(run_dir, which, seed=seed, render_mode="rgb_array", device=device)
    except TypeError as exc:  # an env class whose constructor takes no render_mode
        if "render_mode" not in str(exc):
            raise
        from core.run.store import load_run_config

        env = load_run_config(Path(run_dir)).env
        raise CannotRender(f"{env.id or env.entry_point} {CANNOT_RENDER}: its constructor takes no render_mode "
                           "(an env renders for Watch and Record with render_mode='rgb_array')") from None


def env_name(loaded: LoadedPolicy) -> str:
    return loaded.cfg.env.id or loaded.cfg.env.entry_point or "the env"


def env_fps(loaded: LoadedPolicy) -> float:
    """The env's own frame rate (``metadata["render_fps"]``), else ``DEFAULT_FPS``."""
    metadata = loaded.env.get_attr("metadata", [0])[0]
    fps = metadata.get("render_fps") if isinstance(metadata, dict) else None
    return float(fps) if isinstance(fps, (int, float)) and not isinstance(fps, bool) and fps > 0 else DEFAULT_FPS


def picture(loaded: LoadedPolicy) -> np.ndarray:
    """The env's frame now, as height x width x 3 uint8; ``CannotRender`` when it gives none."""
    try:
        images = loaded.env.get_images()
    except (ImportError, DependencyNotInstalled) as exc:  # gymnasium's: pygame draws the classic-control envs
        raise CannotRender(f"{env_name(loaded)} {CANNOT_RENDER}: {exc}") from None
    image: Any = images[0] if images else None
    if image is None:
        mode = loaded.env.get_attr("render_mode", [0])[0]
        raise CannotRender(f"{env_name(loaded)} {CANNOT_RENDER}: render() gave no picture "
                           f"(its render_mode is {mode!r}; Watch and Record need 'rgb_array')")
    array = np.asarray(image)
    if array.ndim == 2:
        array = np.repeat(array[:, :, None], 3, axis=2)
    if array.ndim != 3 or array.shape[2] not in (3, 4) or min(array.shape[:2]) < 1:
        raise CannotRender(f"{env_name(loaded)} {CANNOT_RENDER}: render() gave an array of shape {array.shape}, "
                           "not height x width x 3 (RGB)")
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array[:, :, :3])


def play_frames(loaded: LoadedPolicy, episodes: int, deterministic: bool = True) -> Iterator[Frame]:
    """The frames of ``episodes`` episodes (0: until the caller stops), as the module docstring says."""
    env, model = loaded.env, loaded.model
    obs: Any = env.reset()
    yield Frame(1, 0, 0.0, 0.0, False, picture(loaded))
    state: Any = None
    starts = np.ones((env.num_envs,), dtype=bool)
    episode, step, total = 1, 0, 0.0
    while episodes <= 0 or episode <= episodes:
        action, state = model.predict(obs, state=state, episode_start=starts, deterministic=deterministic)
        obs, rewards, dones, _infos = env.step(action)
        step += 1
        reward = float(rewards[0])
        total += reward
        done = bool(dones[0])
        yield Frame(episode, step, total, reward, done, picture(loaded))
        starts = dones
        if done:
            episode, step, total = episode + 1, 0, 0.0
