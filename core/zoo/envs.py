"""Which pip package provides an env rl_zoo3 has settings for, when it cannot be made here."""

from __future__ import annotations

import importlib.util
import re

# (pattern on the env id, what to install, the module it provides), first match wins
EXTRAS: tuple[tuple[str, str, str], ...] = (
    (r"Bullet", "pybullet", "pybullet"),
    (r"^MiniGrid-", "minigrid", "minigrid"),
    (r"NoFrameskip|^ALE/", "ale-py", "ale_py"),
    (r"^(LunarLander|BipedalWalker|CarRacing)", "gymnasium[box2d]", "Box2D"),
    (r"^(Ant|HalfCheetah|Hopper|Walker2d|Humanoid|HumanoidStandup|Swimmer|Reacher|Pusher|InvertedPendulum|"
     r"InvertedDoublePendulum)-v\d+$", "gymnasium[mujoco]", "mujoco"),
    (r"^(Fetch|Hand|Adroit)", "gymnasium-robotics", "gymnasium_robotics"),
    (r"^parking", "highway-env", "highway_env"),
    (r"^Panda", "panda-gym", "panda_gym"),
    (r"^donkey", "gym-donkeycar", "gym_donkeycar"),
)
# rl_zoo3's entries that apply to a family of envs rather than one
GENERIC = {"atari": "any Atari env (pip install ale-py), e.g. BreakoutNoFrameskip-v4",
           "default": "any env without an entry of its own"}


def extra_for(env_id: str) -> tuple[str, str] | None:
    """``(pip package, module it provides)`` for an env id rl_zoo3 knows, or ``None``."""
    for pattern, extra, module in EXTRAS:
        if re.search(pattern, env_id):
            return extra, module
    return None


def missing_env_warning(env_id: str) -> str | None:
    """A warning naming what to install for an env that cannot be made here (``None`` when it can).

    gymnasium registers its box2d and mujoco envs whether or not their libraries are installed, so
    a registered id still needs its package; ids it keeps only to say they are gone (the mujoco-py
    ``-v2``/``-v3`` envs) are named as such.
    """
    import gymnasium

    if env_id in GENERIC:
        return None
    registered = gymnasium.envs.registry.get(env_id)
    if registered is not None and not isinstance(registered.entry_point, str):
        return (f"env {env_id}: gymnasium {gymnasium.__version__} no longer makes it (mujoco-py is gone); "
                "use a newer version of the env (e.g. -v5) with pip install gymnasium[mujoco] (the preset is kept)")
    extra = extra_for(env_id)
    if registered is not None and (extra is None or importlib.util.find_spec(extra[1]) is not None):
        return None
    how = f"pip install {extra[0]}" if extra else "install the package that registers it"
    return f"env {env_id} is not installed here: {how} before training (the preset is kept)"
