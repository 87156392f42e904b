"""rlpanel's own SBX classes, where SBX's lose time to something that changes no number of the run.

SBX sets the learning rate into optax's state as a Python float (a weakly typed scalar to JAX) before each update,
while optax's own state and every jitted update hand back a strongly typed one, so a jitted function that takes the
state sees both types and is traced and compiled twice (``jax_explain_cache_misses``: "at
actor_state.opt_state[1].hyperparams['learning_rate'], now f32[]{weak_type=False} and before
f32[]{weak_type=True}"). PPO compiled its update, its largest program, twice: ~1.4-2.8 s of a 20k-step CartPole run
on the 2-core machine; SAC and TQC their action sampling (bench/measurements/engines-2026-11-29.md). Here the rate
is set as a float32 scalar, the type the state holds anyway: one program each. The arithmetic is float32 either way,
so a run learns bit for bit as with SBX's class (a test compares the parameters), and its ``.zip`` is SBX's (the
policy is SBX's class; the algorithm's class is not saved) and loads with SBX's own class.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sbx


class _Float32Rate:
    """The learning rate set as float32, the type optax's state holds (one compile of what takes the state)."""

    def _update_learning_rate(self, optimizers: Any, learning_rate: float, *args: Any, **kwargs: Any) -> None:
        super()._update_learning_rate(optimizers, np.float32(learning_rate), *args, **kwargs)  # type: ignore[misc]


class PPO(_Float32Rate, sbx.PPO):  # type: ignore[misc]  # SBX overrides it with its own signature too
    """SBX's PPO whose update compiles once, not twice."""


class SAC(_Float32Rate, sbx.SAC):  # type: ignore[misc]
    """SBX's SAC whose action sampling compiles once, not twice."""


class TQC(_Float32Rate, sbx.TQC):  # type: ignore[misc]
    """SBX's TQC whose action sampling compiles once, not twice."""


# the algorithms with a class of rlpanel's, by name (SBX's TD3, DDPG, DQN and CrossQ never set their rate)
OWN: dict[str, type[Any]] = {"PPO": PPO, "SAC": SAC, "TQC": TQC}
