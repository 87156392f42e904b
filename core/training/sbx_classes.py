"""rlpanel's own SBX classes, where SBX's lose time to something that changes no number of the run.

SBX's PPO sets each epoch's learning rate into optax's state as a Python float (a weakly typed scalar to JAX), and its
jitted update hands the state back with a strongly typed one: the update is traced and compiled twice, once for each
(``jax_explain_cache_misses``: "at actor_state.opt_state[1].hyperparams['learning_rate'], now f32[]{weak_type=False}
and before f32[]{weak_type=True}"). That second compile of PPO's largest program cost ~1.4-2.8 s of a 20k-step
CartPole run on the 2-core machine (bench/measurements/engines-2026-11-29.md). Here the rate is set as a float32
scalar, the type the update returns: one program. The arithmetic is the same float32 either way, so the run learns
bit for bit as with SBX's class (a test compares the parameters after training), and its ``.zip`` loads in either.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sbx


class PPO(sbx.PPO):
    """SBX's PPO with its learning rate set in the type its update returns (one compile of the update, not two)."""

    def _update_learning_rate(self, optimizers: Any, learning_rate: float) -> None:  # type: ignore[override]
        super()._update_learning_rate(optimizers, np.float32(learning_rate))  # type: ignore[arg-type]


OWN: dict[str, type[sbx.PPO]] = {"PPO": PPO}  # the algorithms with a class of rlpanel's, by name
