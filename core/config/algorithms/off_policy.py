"""What the replay-buffer algorithms (SAC, DQN) share: buffer fields and their rules."""

from __future__ import annotations

from typing import Any

from core.config.errors import FieldIssue
from core.config.fields import hp


def buffer_size() -> Any:
    return hp(1_000_000, "Replay buffer size", "Transitions kept for replay (host RAM, not GPU).", "transitions",
              ge=1, le=1_000_000_000)


def learning_starts() -> Any:
    return hp(100, "Learning starts", "Steps of random play before the first update.", "steps", ge=0)


def gradient_steps() -> Any:
    return hp(1, "Gradient steps", "Gradient steps per update (-1: as many as env steps collected).", "steps",
              ge=-1, le=100_000)


def optimize_memory_usage() -> Any:
    return hp(False, "Optimize memory usage", "Store observations once (halves the replay buffer; disables timeout handling).")


def check_gradient_steps(v: int) -> int:
    if v == 0:
        raise ValueError("gradient_steps 0 would never train: use 1 or more, or -1 for one per env step collected")
    return v


def replay_rules(section: str) -> Any:
    """The buffer must hold a batch, and learning must start within the budget."""

    def rules(p: Any, runtime: Any, budget: Any) -> list[FieldIssue]:
        issues: list[FieldIssue] = []
        if p.buffer_size < p.batch_size:
            issues.append(FieldIssue(f"{section}.buffer_size",
                                     f"buffer_size {p.buffer_size:,} is smaller than batch_size {p.batch_size:,}: "
                                     f"raise it to at least {p.batch_size:,}"))
        if p.learning_starts >= budget.total_timesteps:
            issues.append(FieldIssue(f"{section}.learning_starts",
                                     f"learning_starts {p.learning_starts:,} is not below total_timesteps "
                                     f"{budget.total_timesteps:,}: the model would never train; lower it or raise the budget"))
        return issues

    return rules


def batch_of(p: Any, n_envs: int) -> int:
    """Off-policy algorithms sample ``batch_size`` transitions per gradient step."""
    return int(p.batch_size)
