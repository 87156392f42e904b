"""The steps a run trains (core.config.steps), as SB3's loops count them; tests/core/worker/test_planned_steps.py
checks the same numbers against real SB3 training."""

from __future__ import annotations

import pytest

from core.config.steps import planned_steps, whole_cycle_budgets
from core.config.validate import validate_config


def config(algo: str, total: int, n_envs: int = 1, **section: object) -> object:
    env = "Pendulum-v1" if algo in ("SAC", "TD3", "DDPG", "TQC", "CrossQ") else "CartPole-v1"
    extra = {"batch_size": 8} if algo in ("PPO", "RecurrentPPO", "MaskablePPO", "TRPO") else {}
    raw = {"algo": algo, "env": {"id": env}, algo.lower(): {**extra, **section},
           "runtime": {"n_envs": n_envs}, "budget": {"total_timesteps": total}}
    return validate_config(raw).config


@pytest.mark.parametrize("algo", ["PPO", "A2C", "TRPO", "RecurrentPPO", "MaskablePPO"])
def test_on_policy_runs_whole_rollouts_of_n_envs_x_n_steps(algo):
    plan = planned_steps(config(algo, 33_000, n_envs=16, n_steps=256))
    assert (plan.steps, plan.exact, plan.cycle.steps) == (36_864, True, 4096)  # 9 rollouts of 16 x 256
    assert plan.text() == "trains 36,864 steps (whole rollouts of 16 x 256)" and plan.differs


def test_the_issue_s_numbers():
    assert planned_steps(config("PPO", 33_000, n_envs=16, n_steps=256)).steps == 36_864
    assert planned_steps(config("PPO", 33_000, n_envs=4, n_steps=2048)).steps == 40_960
    assert planned_steps(config("PPO", 66_000, n_envs=16, n_steps=2048)).steps == 98_304
    assert planned_steps(config("PPO", 20_000, n_envs=8, n_steps=256)).steps == 20_480


def test_a_budget_of_whole_rollouts_is_trained_exactly_and_says_nothing_more():
    plan = planned_steps(config("PPO", 32_768, n_envs=16, n_steps=256))
    assert plan.steps == 32_768 and not plan.differs


@pytest.mark.parametrize("algo", ["SAC", "TD3", "DDPG", "DQN", "TQC", "CrossQ"])
def test_off_policy_runs_whole_train_freq_cycles_of_every_env(algo):
    plan = planned_steps(config(algo, 1_001, n_envs=4, train_freq=3, learning_starts=10))
    assert (plan.steps, plan.exact) == (1_008, True)  # 84 cycles of 4 x 3
    assert plan.text() == "trains 1,008 steps (whole train_freq cycles of 4 x 3)"


def test_train_freq_in_episodes_trains_at_least_the_budget():
    plan = planned_steps(config("SAC", 1_000, train_freq=2, train_freq_unit="episode", learning_starts=10))
    assert (plan.steps, plan.exact, plan.cycle.steps) == (1_000, False, None)
    assert plan.text().startswith("trains at least 1,000 steps (train_freq counts episodes") and plan.differs


def test_ars_updates_end_with_episodes_so_it_trains_at_least_the_budget():
    plan = planned_steps(config("ARS", 5_000, n_delta=4, n_eval_episodes=3))
    assert (plan.steps, plan.exact) == (5_000, False)
    assert "each update plays 24 whole episodes: 2 x 4 perturbations x 3" in plan.text()


@pytest.mark.parametrize("algo", ["random", "constant"])
def test_a_baseline_plays_episodes_and_plans_no_steps(algo):
    raw = {"algo": algo, "env": {"id": "Pendulum-v1"}}
    assert planned_steps(validate_config(raw).config) is None


def test_a_resumed_run_counts_whole_rollouts_from_its_checkpoint():
    cfg = config("PPO", 200, n_envs=2, n_steps=64)  # 128 a rollout: 256 from step 0
    assert planned_steps(cfg).steps == 256
    assert planned_steps(cfg, start=100).steps == 228  # 100 + one rollout of 128 (a checkpoint inside a rollout)
    assert planned_steps(cfg, start=128).steps == 256
    assert planned_steps(cfg, start=300).steps == 300  # past its budget: nothing more is trained


@pytest.mark.parametrize("start", [-1, 1.5, True, "10"])
def test_a_start_that_is_not_a_step_is_refused_naming_it(start):
    with pytest.raises(ValueError, match=r"start .* is not a step: give 0 for a new run"):
        planned_steps(config("PPO", 200, n_steps=64), start=start)


def test_how_a_finished_run_says_where_it_ended():
    plan = planned_steps(config("PPO", 200, n_envs=2, n_steps=64))
    assert plan.reached(200) == "reached 200 of 200 steps"
    assert plan.reached(256) == "reached 256 steps, past the budget of 200 (whole rollouts of 2 x 64)"
    # a stop seen once the budget was met ends the last rollout early
    assert plan.reached(230) == ("reached 230 steps, past the budget of 200 "
                                 "(whole rollouts of 2 x 64; a stop ended the last one early)")


def test_whole_cycle_budgets_round_down_and_up():
    assert whole_cycle_budgets(config("PPO", 33_000, n_envs=16, n_steps=256)) == [32_768, 36_864]
    assert whole_cycle_budgets(config("PPO", 100, n_envs=2, n_steps=64)) == [128]  # no rollout below
    assert whole_cycle_budgets(config("PPO", 32_768, n_envs=16, n_steps=256)) == []  # whole already
    assert whole_cycle_budgets(config("ARS", 5_000)) == []  # episodes: no whole number of steps


def test_whole_cycle_budgets_offer_none_that_breaks_a_rule():
    # learning_starts 1,000 must stay below the budget: 1,000 (the whole cycles below 1,003) is not offered
    cfg = config("SAC", 1_003, n_envs=2, train_freq=4, learning_starts=1_000)
    assert planned_steps(cfg).steps == 1_008
    assert whole_cycle_budgets(cfg) == [1_008]
