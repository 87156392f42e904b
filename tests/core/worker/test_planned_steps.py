"""``core.config.steps`` says the steps real SB3 training takes: every algorithm with tiny budgets that do not
fill whole cycles, from step 0 and from a step inside a cycle (what a resume from a checkpoint does), and the
worker's progress records, status and exit reason count towards that number."""

from __future__ import annotations

import pytest

from core.config.dotted import merge
from core.config.steps import planned_steps
from core.config.validate import validate_config
from core.launch.control import resume_run
from core.run.status import read_status
from core.util.files import read_json
from tests.training_helpers import make_run, records, run_worker, wait_state

pytestmark = pytest.mark.training

MASKED = "tests.core.worker.masked_env:MaskedEnv"
OFF = {"learning_starts": 10, "batch_size": 16, "buffer_size": 500, "train_freq": 3}
# (config, a step inside a cycle to stop at before resuming); budgets fall between whole cycles
CASES = {
    "PPO": ({"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}, "runtime": {"n_envs": 2},
             "budget": {"total_timesteps": 200}}, 100),                                     # 256; 100 + 128
    "A2C": ({"a2c": {"n_steps": 5}, "runtime": {"n_envs": 3}, "budget": {"total_timesteps": 200}}, 99),
    "TRPO": ({"trpo": {"n_steps": 32, "batch_size": 32, "n_critic_updates": 1}, "runtime": {"n_envs": 2},
              "budget": {"total_timesteps": 100}}, 40),
    "RecurrentPPO": ({"recurrentppo": {"n_steps": 16, "batch_size": 32, "n_epochs": 1, "lstm_hidden_size": 8},
                      "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 70}}, 20),
    "MaskablePPO": ({"env": {"entry_point": MASKED}, "maskableppo": {"n_steps": 20, "batch_size": 20, "n_epochs": 1},
                     "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 70}}, 30),
    "SAC": ({"env": {"id": "Pendulum-v1"}, "sac": OFF, "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 100}}, 50),
    "TD3": ({"env": {"id": "Pendulum-v1"}, "td3": OFF, "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 100}}, 50),
    "DDPG": ({"env": {"id": "Pendulum-v1"}, "ddpg": OFF, "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 100}}, 50),
    "DQN": ({"dqn": {**OFF, "train_freq": 4}, "runtime": {"n_envs": 3}, "budget": {"total_timesteps": 100}}, 51),
    "TQC": ({"env": {"id": "Pendulum-v1"}, "tqc": OFF, "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 100}}, 50),
    "CrossQ": ({"env": {"id": "Pendulum-v1"}, "crossq": OFF, "runtime": {"n_envs": 2},
                "budget": {"total_timesteps": 100}}, 50),
    "QRDQN": ({"qrdqn": {**OFF, "n_quantiles": 5}, "runtime": {"n_envs": 3}, "budget": {"total_timesteps": 100}}, 51),
}


def built(raw: dict):
    """The config and the model as the worker builds them (CPU; envs in this process: only the counting matters)."""
    from core.worker.factory import build_model, build_vec_env, wrap_normalize

    cfg = validate_config(merge({"policy": {"net_arch": [8]}}, raw)).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    return cfg, build_model(cfg, wrap_normalize(cfg, env), device="cpu")


def stop_at(step: int):
    """A callback ending learn() at the first step at or past ``step``, as the worker's stop does: inside a cycle."""
    from stable_baselines3.common.callbacks import BaseCallback

    class StopAt(BaseCallback):
        def _on_step(self) -> bool:
            return self.num_timesteps < step

    return StopAt()


@pytest.mark.parametrize("algo", list(CASES))
def test_the_planned_steps_are_the_steps_sb3_trains(algo):
    raw, _ = CASES[algo]
    cfg, model = built({**raw, "algo": algo})
    plan = planned_steps(cfg)
    assert plan.exact and plan.steps > cfg.budget.total_timesteps  # the budget is not whole cycles
    model.learn(cfg.budget.total_timesteps)
    assert model.num_timesteps == plan.steps


@pytest.mark.parametrize("algo", list(CASES))
def test_a_resume_from_inside_a_cycle_counts_whole_cycles_from_there(algo):
    raw, step = CASES[algo]
    cfg, model = built({**raw, "algo": algo})
    model.learn(cfg.budget.total_timesteps, callback=stop_at(step))
    start = model.num_timesteps
    assert start < cfg.budget.total_timesteps and start % plan_cycle(cfg) != 0  # stopped inside a cycle
    # what the worker does on resume: learn what remains without resetting the count (SB3 adds it back)
    model.learn(cfg.budget.total_timesteps - start, reset_num_timesteps=False)
    assert model.num_timesteps == planned_steps(cfg, start=start).steps != planned_steps(cfg).steps


def plan_cycle(cfg) -> int:
    plan = planned_steps(cfg)
    assert plan.cycle.steps is not None
    return plan.cycle.steps


def test_ars_and_episode_train_freq_train_at_least_the_budget():
    cfg, model = built({"algo": "ARS", "ars": {"n_delta": 2}, "budget": {"total_timesteps": 30}})
    plan = planned_steps(cfg)
    assert not plan.exact and plan.steps == 30
    model.learn(30)
    assert model.num_timesteps >= plan.steps
    cfg, model = built({"algo": "SAC", "env": {"id": "Pendulum-v1"},
                        "sac": {**OFF, "train_freq": 1, "train_freq_unit": "episode"}, "budget": {"total_timesteps": 250}})
    plan = planned_steps(cfg)
    assert not plan.exact and plan.steps == 250
    model.learn(250)
    assert model.num_timesteps == 400  # Pendulum's episodes are 200 steps: SAC waits for the second to end


def test_the_worker_counts_progress_towards_the_planned_steps_and_says_why_it_passed_the_budget(runs_dir):
    run = make_run(runs_dir, {"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}, "runtime": {"n_envs": 2},
                              "policy": {"net_arch": [8]}, "budget": {"total_timesteps": 200, "checkpoint_every": 100}})
    assert read_status(run).planned_timesteps == 256  # from its creation: the Runs tab shows it while queued
    assert run_worker(run) == 0
    status = read_status(run)
    assert status.state == "finished" and status.planned_timesteps == 256
    assert status.exit_reason == "reached 256 steps, past the budget of 200 (whole rollouts of 2 x 64)"
    progress = records(run, "progress")
    assert {r["total"] for r in progress} == {256} and progress[-1]["step"] == 256
    assert read_json(run / "summary.json")["timesteps"] == 256
    # 100 more from the checkpoint at 256: a budget of 356 is one more rollout, 384
    step, total = resume_run(run, more_steps=100, reap=False)
    assert (step, total) == (256, 356)
    assert wait_state(run, ("finished", "failed", "crashed"), timeout=240) == "finished"
    resumed = [r for r in records(run, "progress") if r["step"] > 256]
    assert resumed and {r["total"] for r in resumed} == {384} and resumed[-1]["step"] == 384
    assert read_status(run).planned_timesteps == 384


def test_the_worker_trains_an_off_policy_run_to_its_planned_steps(runs_dir):
    run = make_run(runs_dir, {"algo": "DQN", "dqn": {**OFF, "train_freq": 4}, "runtime": {"n_envs": 3},
                              "policy": {"net_arch": [8]}, "budget": {"total_timesteps": 100}})
    assert run_worker(run) == 0
    progress = records(run, "progress")
    assert {r["total"] for r in progress} == {108} and progress[-1]["step"] == 108  # 9 cycles of 3 envs x 4
