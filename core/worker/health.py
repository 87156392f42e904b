"""Training health: a loss that turns NaN or infinite ends the run as ``failed``; a policy that
stops exploring (entropy or action noise collapsed) is a warning. Both are events in the run's
records (the window's Log tab, ``rlpanel train``'s output) and notes in its status.

The check reads the values SB3's logger dumps (one ``train`` record each); the recorder stops
training at its next step once a failure is known, and the checkpointer refuses to save a model
whose losses went NaN, so the last good checkpoint stays the one a resume starts from.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from core.run import records
from core.util.jsonl import JsonlWriter

ENTROPY_FLOOR = 0.01  # nats: a discrete policy this sure of itself has stopped exploring
STD_FLOOR = 1e-3      # a Gaussian policy's action noise this small has too
ENT_COEF_FLOOR = 1e-5  # SAC's entropy coefficient: exploration is worth nothing any more


def _non_finite(key: str, value: Any) -> bool:
    watched = "loss" in key or key.endswith(("/std", "/ent_coef"))
    return watched and isinstance(value, float) and not math.isfinite(value)


class TrainingHealth:
    """Watches the dumped training values of one attempt; ``failure`` says why it must end."""

    def __init__(self, out: JsonlWriter | None, discrete_actions: bool, algo: str):
        self.out = out
        self.discrete = discrete_actions
        self.section = algo.lower()
        self.failure: str | None = None
        self.notes: list[str] = []
        self._warned: set[str] = set()

    def check(self, step: int, values: dict[str, Any]) -> None:
        """Look at one dump of SB3's logger (raw values, before NaN becomes null in the record)."""
        if self.failure is None:
            bad = sorted(k for k, v in values.items() if _non_finite(k, v))
            if bad:
                shown = ", ".join(f"{k} = {values[k]}" for k in bad[:3])
                self.fail(step, f"training diverged at step {step:,}: {shown}")
        self._collapse(step, values)

    def fail(self, step: int, message: str, fix: str = "") -> None:
        fix = fix or (f"lower {self.section}.learning_rate (or {self.section}.max_grad_norm where it has one) and resume "
                      "or start again")
        self.failure = f"{message}; nothing was saved over the last good checkpoint: {fix}"
        if self.out is not None:
            self.out.write([records.event(self.failure, "error", step)])

    def check_rewards(self, step: int, rewards: list[float]) -> None:
        """A NaN or infinite reward from the env poisons every loss after it: fail before the update.

        Called every step with the step's rewards as Python numbers: their sum is finite unless one of them is not
        (or finite ones overflowed it), one check instead of one per env (~0.5 against ~7 us a step of 8 envs)."""
        if self.failure is None and not math.isfinite(sum(rewards)):
            bad = [float(r) for r in rewards if not math.isfinite(float(r))]
            if bad:
                self.fail(step, f"the env returned a non-finite reward ({bad[0]}) at step {step:,}",
                          "fix the env's reward (or clip it with a wrapper) and start again")

    def _collapse(self, step: int, values: dict[str, Any]) -> None:
        entropy_loss = values.get("train/entropy_loss")
        std = values.get("train/std")
        ent_coef = values.get("train/ent_coef")
        if self.discrete and _finite(entropy_loss) and -entropy_loss < ENTROPY_FLOOR:
            self._warn("entropy", step, f"policy entropy collapsed to {-entropy_loss:.2g} nats at step {step:,}: the policy "
                                        f"stopped exploring; lower {self.section}.learning_rate or raise {self.section}.ent_coef")
        if _finite(std) and std < STD_FLOOR:
            self._warn("std", step, f"action noise (std) collapsed to {std:.2g} at step {step:,}: the policy stopped "
                                    f"exploring; lower {self.section}.learning_rate")
        if _finite(ent_coef) and ent_coef < ENT_COEF_FLOOR:
            self._warn("ent_coef", step, f"the entropy coefficient collapsed to {ent_coef:.2g} at step {step:,}: "
                                         "exploration is worth nothing to the agent any more; set sac.ent_coef to a number")

    def _warn(self, kind: str, step: int, message: str) -> None:
        if kind in self._warned:
            return
        self._warned.add(kind)
        self.notes.append(message)
        if self.out is not None:
            self.out.write([records.event(message, "warning", step)])

    def explain(self, step: int, exc: BaseException, pending: dict[str, Any]) -> str | None:
        """A failure message for an exception raised while training, when NaN caused it, else None.

        With NaN weights, torch's distributions refuse to sample before the NaN losses are ever
        dumped; the values SB3 recorded but did not dump yet name the loss that went first.
        """
        self.check(step, pending)
        if self.failure is None and "nan" in str(exc).lower():
            self.fail(step, f"training diverged at step {step:,}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        return self.failure


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
