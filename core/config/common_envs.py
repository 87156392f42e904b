"""The env picker's list of common gymnasium ids, with the pip extra each needs: plain data, importing nothing heavy
(the window shows it in its first frame, before ``core.config.spaces`` and gymnasium load)."""

from __future__ import annotations

from dataclasses import dataclass

from core.util.imports import installed


@dataclass(frozen=True)
class CommonEnv:
    """A gymnasium id for the GUI's env picker; ``extra`` names the pip extra it needs."""

    id: str
    action_kind: str  # one of core.config.algorithms.spec.SPACE_KINDS
    description: str
    extra: str | None = None
    module: str | None = None  # the import that tells whether ``extra`` is installed

    @property
    def available(self) -> bool:
        return self.module is None or installed(self.module)


COMMON_ENVS: tuple[CommonEnv, ...] = (
    CommonEnv("CartPole-v1", "discrete", "balance a pole on a cart (4 obs, 2 actions)"),
    CommonEnv("Acrobot-v1", "discrete", "swing a two-link arm up (6 obs, 3 actions)"),
    CommonEnv("MountainCar-v0", "discrete", "drive an underpowered car up a hill (2 obs, 3 actions)"),
    CommonEnv("MountainCarContinuous-v0", "box", "mountain car with a continuous throttle (2 obs, 1 action)"),
    CommonEnv("Pendulum-v1", "box", "swing a pendulum up and hold it (3 obs, 1 torque)"),
    CommonEnv("FrozenLake-v1", "discrete", "walk a slippery grid (16 states, 4 actions)"),
    CommonEnv("CliffWalking-v1", "discrete", "walk along a cliff (48 states, 4 actions)"),
    CommonEnv("LunarLander-v3", "discrete", "land a lander (8 obs, 4 actions)", "gymnasium[box2d]", "Box2D"),
    CommonEnv("BipedalWalker-v3", "box", "walk a 2D biped (24 obs, 4 actions)", "gymnasium[box2d]", "Box2D"),
    CommonEnv("HalfCheetah-v5", "box", "MuJoCo running cheetah (17 obs, 6 actions)", "gymnasium[mujoco]", "mujoco"),
)


def default_envs() -> list[CommonEnv]:
    """The picker's entries that work with plain gymnasium."""
    return [e for e in COMMON_ENVS if e.extra is None]
