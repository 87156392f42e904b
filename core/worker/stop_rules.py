"""The budget's stopping rules, as SB3's own callbacks after each periodic evaluation.

``budget.stop_at_reward`` is SB3's ``StopTrainingOnRewardThreshold`` and
``budget.stop_after_evals_without_improvement`` its ``StopTrainingOnNoModelImprovement``
(``stop_min_evals`` its ``min_evals``). Both run in EvalCallback's ``callback_after_eval``, after the
evaluation's record and the best checkpoint: as ``callback_on_new_best`` (SB3's example) a threshold's
False would skip ``callback_after_eval``, and the evaluation that ended the run would leave no record.

A rule that ends the run says which and why (``RuleStop.reason``); the session ends it ``finished``, not
``stopped``, and the steps trained become the run's planned total (its progress reads full, not "stopped at
12 %"). An algorithm that ignores a callback's False (ARS) is halted the way the recorder halts it.
"""

from __future__ import annotations

from dataclasses import dataclass

from stable_baselines3.common.callbacks import (
    BaseCallback,
    CallbackList,
    EvalCallback,
    StopTrainingOnNoModelImprovement,
    StopTrainingOnRewardThreshold,
)

from core.config.schema import BudgetParams
from core.util.jsonl import JsonlWriter
from core.util.text import format_number
from core.worker.best import KeepBest
from core.worker.callbacks import EvalRecorder, RunRecorder


@dataclass
class RuleStop:
    """Which rule ended the run before ``budget`` steps (``reason``, empty while none has); ``fire`` ends training."""

    recorder: RunRecorder
    budget: int
    reason: str = ""

    def fire(self, reason: str, step: int) -> bool:
        if step < self.budget and not self.reason:  # a rule met as the budget ends ended nothing: the budget did
            self.reason = reason
            self.recorder.total = step  # what the run trained is its plan now: the last progress record reads full
        return self.recorder.halt()


class StopAtReward(StopTrainingOnRewardThreshold):
    """``stop_at_reward``: ends the run once the best evaluation mean reaches the threshold."""

    def __init__(self, threshold: float, keeper: KeepBest, stop: RuleStop):
        super().__init__(reward_threshold=threshold)
        self.keeper = keeper
        self.stop = stop

    def _on_step(self) -> bool:
        if super()._on_step():
            return True
        best, step = self.parent.best_mean_reward, self.num_timesteps
        at = self.keeper.step if self.keeper.step is not None and self.keeper.mean_reward == best else step
        threshold = format_number(self.reward_threshold)
        return self.stop.fire(f"evaluation mean {format_number(best)} reached stop_at_reward {threshold} at step {at:,}", step)


class StopWithoutImprovement(StopTrainingOnNoModelImprovement):
    """``stop_after_evals_without_improvement``: ends the run after that many evaluations in a row without a new
    best, counted once ``stop_min_evals`` evaluations are done (a resume counts again from its first)."""

    def __init__(self, evals: int, min_evals: int, keeper: KeepBest, stop: RuleStop):
        # SB3 stops when more than max_no_improvement_evals evaluations in a row brought none: K in a row is K - 1
        super().__init__(max_no_improvement_evals=evals - 1, min_evals=min_evals)
        self.evals = evals
        self.keeper = keeper
        self.stop = stop

    def _on_step(self) -> bool:
        if super()._on_step():
            return True
        best = self.parent.best_mean_reward
        where = f" at step {self.keeper.step:,}" if self.keeper.step is not None and self.keeper.mean_reward == best else ""
        evals = f"{self.no_improvement_evals} evaluation{'s' if self.no_improvement_evals != 1 else ''}"
        return self.stop.fire(f"no new best in {evals} (best {format_number(best)}{where})", self.num_timesteps)


def after_evaluation(budget: BudgetParams, out: JsonlWriter, keeper: KeepBest, stop: RuleStop) -> BaseCallback:
    """EvalCallback's ``callback_after_eval``: the record (and the eval env's seed again), the best checkpoint, the
    rules the budget sets. CallbackList hands its children EvalCallback as their parent (SB3 #1791)."""
    chain: list[BaseCallback] = [EvalRecorder(out, seed=keeper.eval_seed), keeper]
    if budget.stop_at_reward is not None:
        chain.append(StopAtReward(budget.stop_at_reward, keeper, stop))
    if budget.stop_after_evals_without_improvement:
        chain.append(StopWithoutImprovement(budget.stop_after_evals_without_improvement, budget.stop_min_evals, keeper, stop))
    return CallbackList(chain)


def start_from_best(evaluation: EvalCallback, keeper: KeepBest) -> None:
    """A resumed run's EvalCallback knows the best kept so far: a new best must beat it (SB3 starts from -inf)."""
    evaluation.best_mean_reward = keeper.mean_reward
