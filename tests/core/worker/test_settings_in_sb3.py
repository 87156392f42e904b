"""The settings rl_zoo3 and SB3 users tune reach the SB3 objects the worker builds, and TD3 / DDPG
train, stop, resume and appear in the Results table like any run."""

from __future__ import annotations

import pytest

from core.config.validate import validate_config
from core.launch.control import launch_worker, stop_run
from core.results.table import results
from core.run.status import read_status
from core.util.files import read_json
from tests.training_helpers import cli, last_step, make_run, records, run_worker, wait_for

pytestmark = pytest.mark.training


def built(raw: dict):
    """The model and env as the worker builds them (CPU, envs in-process)."""
    from core.worker.factory import build_model, build_vec_env, wrap_normalize

    cfg = validate_config(raw).config
    # dummy on purpose: the test reads the model's own objects here, in the test process, and trains nothing in
    # a worker (this module's worker runs train through the lean env processes: tests.training_helpers)
    env, _ = build_vec_env(cfg, force_dummy=True)
    env = wrap_normalize(cfg, env)
    return build_model(cfg, env, device="cpu"), env


def test_schedules_gsde_and_policy_settings_reach_ppo():
    model, env = built({"algo": "PPO", "env": {"id": "Pendulum-v1"},
                        "ppo": {"learning_rate": "lin_1e-3", "clip_range": {"start": 0.3, "end": 0.1}, "n_steps": 64,
                                "batch_size": 64, "use_sde": True, "sde_sample_freq": 4},
                        "policy": {"log_std_init": -2, "ortho_init": False, "optimizer": "adamw", "optimizer_eps": 1e-5,
                                   "weight_decay": 0.01}})
    try:
        assert model.lr_schedule(1.0) == pytest.approx(1e-3) and model.lr_schedule(0.5) == pytest.approx(5e-4)
        assert model.clip_range(1.0) == pytest.approx(0.3) and model.clip_range(0.0) == pytest.approx(0.1)
        assert model.use_sde and model.sde_sample_freq == 4
        assert float(model.policy.log_std.detach().mean()) == pytest.approx(-2.0) and not model.policy.ortho_init
        opt = model.policy.optimizer
        assert type(opt).__name__ == "AdamW" and opt.defaults["eps"] == 1e-5 and opt.defaults["weight_decay"] == 0.01
    finally:
        env.close()


def test_wrappers_frame_stack_and_normalize_settings_reach_the_env():
    model, env = built({"algo": "A2C", "env": {"id": "CartPole-v1", "frame_stack": 3,
                                               "wrappers": [{"TimeLimit": {"max_episode_steps": 7}}]},
                        "runtime": {"normalize": {"obs": True, "reward": True, "gamma": 0.9, "clip_obs": 5.0}}})
    try:
        assert env.observation_space.shape == (12,)  # 4 observations x 3 frames
        assert env.gamma == 0.9 and env.clip_obs == 5.0
        env.reset()
        lengths = [0]
        for _ in range(20):
            _, _, dones, _ = env.step([env.action_space.sample()])
            lengths[-1] += 1
            if dones[0]:
                lengths.append(0)
        assert max(lengths[:-1]) <= 7  # the TimeLimit wrapper cut the episodes
    finally:
        env.close()


def test_off_policy_settings_reach_sb3():
    model, env = built({"algo": "TD3", "env": {"id": "Pendulum-v1"},
                        "td3": {"train_freq": 2, "train_freq_unit": "episode", "action_noise": "ornstein-uhlenbeck",
                                "action_noise_std": 0.3, "policy_delay": 3, "buffer_size": 2000},
                        "policy": {"n_critics": 1, "net_arch": [32]}})
    try:
        assert (model.train_freq.frequency, model.train_freq.unit.value) == (2, "episode")
        assert type(model.action_noise).__name__ == "OrnsteinUhlenbeckActionNoise"
        assert float(model.action_noise._sigma[0]) == pytest.approx(0.3)
        assert model.policy_delay == 3 and len(model.critic.q_networks) == 1
    finally:
        env.close()


def test_her_on_a_goal_env_trains_with_multi_input_policy(runs_dir):
    run = make_run(runs_dir, {"algo": "DQN", "env": {"entry_point": "stable_baselines3.common.envs:BitFlippingEnv",
                                                      "kwargs": {"n_bits": 4}},
                              "dqn": {"replay_buffer": "her", "her_n_sampled_goal": 2, "learning_starts": 100,
                                      "buffer_size": 2000},
                              "budget": {"total_timesteps": 600}})
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    assert read_status(run).state == "finished", (run / "worker.log").read_text()
    from stable_baselines3 import DQN
    from stable_baselines3.common.envs import BitFlippingEnv

    model = DQN.load(str(run / "checkpoints" / read_json(run / "checkpoints" / "latest.json")["model"]),
                     env=BitFlippingEnv(n_bits=4))  # SB3 needs the env to restore a HER buffer
    assert type(model.policy).__name__ == "MultiInputPolicy"


@pytest.mark.timeout(600)  # a worker start, 400 steps, a stop and a resume, on a machine shared under load
@pytest.mark.parametrize("algo", ["TD3", "DDPG"])
def test_td3_and_ddpg_train_stop_resume_and_appear_in_results(runs_dir, algo):
    section = algo.lower()
    run = make_run(runs_dir, {"algo": algo, "env": {"id": "Pendulum-v1"},
                              section: {"learning_starts": 100, "batch_size": 64, "buffer_size": 20_000,
                                        "action_noise": "normal"},
                              "policy": {"net_arch": [64, 64]}, "budget": {"total_timesteps": 1_000_000}})
    launch_worker(run)
    wait_for(lambda: last_step(run) >= 400, timeout=300, what="training progress")  # how long to wait, not a check
    assert stop_run(run, timeout=60) == "graceful"
    assert read_status(run).state == "stopped"
    step = read_json(run / "checkpoints" / "latest.json")["step"]
    done = cli("resume", run.name, "--timesteps", "300", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"
    assert any(e["message"].startswith(f"resumed from the checkpoint at step {step:,}") for e in records(run, "event"))
    assert any(k.startswith("train/actor_loss") for r in records(run, "train") for k in r)
    [row] = results([run])
    assert (row.algo, row.env, row.state) == (algo, "Pendulum-v1", "finished")
    assert row.timesteps >= step + 300 and row.episodes >= 2
