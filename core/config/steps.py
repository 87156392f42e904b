"""The steps a run really trains: SB3 ends ``learn()`` only between whole cycles (docs/config.md).

SB3's loop is ``while num_timesteps < total: <one cycle>``: PPO asked for 33,000 steps with 16 envs of
256 steps trains 9 whole rollouts of 4,096: 36,864; SAC with 4 envs and train_freq 2 trains a
multiple of 8. Each algorithm's spec says what its cycle is (``AlgoSpec.cycle``); a cycle that ends
with episodes (ARS, train_freq in episodes) is not known ahead, and the run trains at least the budget.

A resumed run (``learn(remaining, reset_num_timesteps=False)``: SB3 adds the steps already made back
to the total) counts its cycles from the checkpoint's step, which may sit inside a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the schema (pydantic) loads with the first config, not with the window's first frame
    from core.config.algorithms.spec import LearnCycle
    from core.config.schema import RunConfig


@cache
def max_timesteps() -> int:
    """The largest budget the schema takes (``budget.total_timesteps``' upper bound)."""
    from core.config.schema import BudgetParams

    return int(BudgetParams.model_fields["total_timesteps"].metadata[-1].le)


@dataclass(frozen=True)
class PlannedSteps:
    """Where a run's training ends: ``steps`` exactly, or at least (``exact`` False: episodes end its cycles)."""

    budget: int        # budget.total_timesteps, what the user asked for
    start: int         # the step it trains from: 0, or a resumed run's checkpoint
    steps: int         # the step its training ends at
    exact: bool
    cycle: LearnCycle  # what it trains whole numbers of

    @property
    def differs(self) -> bool:
        """The steps are not just the budget: worth saying."""
        return self.steps != self.budget or not self.exact

    def text(self) -> str:
        """``trains 36,864 steps (whole rollouts of 16 x 256)``."""
        return f"trains {'' if self.exact else 'at least '}{self.steps:,} steps ({self.cycle.text})"

    def reached(self, steps: int) -> str:
        """How a finished run ended: ``reached 256 steps, past the budget of 200 (whole rollouts of 2 x 64)``."""
        if steps <= self.budget:
            return f"reached {steps:,} of {self.budget:,} steps"
        cut = "; a stop ended the last one early" if self.exact and steps < self.steps else ""
        return f"reached {steps:,} steps, past the budget of {self.budget:,} ({self.cycle.text}{cut})"


def planned_steps(cfg: RunConfig, start: int = 0) -> PlannedSteps | None:
    """The steps SB3 will run for ``cfg`` from step ``start``; None for a baseline, which plays
    ``budget.episodes`` episodes whatever their steps."""
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start {start!r} is not a step: give 0 for a new run, or the step of the checkpoint "
                         "a resumed run trains from")
    spec = cfg.spec
    if spec is None:
        return None
    budget = cfg.budget.total_timesteps
    cycle = spec.cycle(cfg.params, cfg.runtime.n_envs)
    if start >= budget:  # the worker calls learn() only for what remains
        return PlannedSteps(budget, start, start, True, cycle)
    if cycle.steps is None:
        return PlannedSteps(budget, start, budget, False, cycle)
    cycles = -(-(budget - start) // cycle.steps)  # ceil
    return PlannedSteps(budget, start, start + cycles * cycle.steps, True, cycle)


def whole_cycle_budgets(cfg: RunConfig) -> list[int]:
    """Budgets near ``cfg``'s that a new run trains exactly (whole cycles): the one below and the one above,
    each only where the config stays valid with it (off-policy learning_starts stays below the budget)."""
    plan = planned_steps(cfg)
    if plan is None or not plan.exact or not plan.differs or plan.cycle.steps is None:
        return []
    from core.config.schema import cross_field_issues

    size = plan.cycle.steps
    out = []
    for budget in (plan.budget // size * size, plan.steps):
        if 0 < budget <= max_timesteps() and budget not in out:
            changed = cfg.model_copy(update={"budget": cfg.budget.model_copy(update={"total_timesteps": budget})})
            if not cross_field_issues(changed):
                out.append(budget)
    return out
