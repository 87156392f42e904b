"""Evaluate a checkpoint (issue 26): SB3's evaluate_policy on the same seed gives the same episodes; a run with
VecNormalize is played with each checkpoint's own statistics and raw rewards; the env's measures are averaged;
the result is kept in evaluations.jsonl; ``rlpanel evaluate`` prints it (--json) or one line naming the fix."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from core.run.evaluations import append_evaluation, ci95, read_evaluations
from core.run.layout import RunDir
from tests.training_helpers import cli, copy_run, make_run, run_worker

pytestmark = pytest.mark.training
STEPS = 5  # FastEpisodesEnv's episode length: reward = moves - 0.5 * STEPS
FAST_ENV = {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv", "kwargs": {"steps": STEPS}, "info_keys": ["moves"]}


@pytest.fixture(scope="module")
def normalized_run(tmp_path_factory) -> Path:
    """A real PPO run with VecNormalize (observations and rewards) and two checkpoints: 128 and 256 steps."""
    folder = tmp_path_factory.mktemp("normalized")
    old = os.environ.get("RLPANEL_HOME")
    os.environ["RLPANEL_HOME"] = str(folder)
    try:
        run = make_run(folder / "runs", {
            "algo": "PPO", "env": FAST_ENV, "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "runtime": {"n_envs": 1, "seed": 4, "vec_env": "dummy", "telemetry_hz": 0, "torch_threads": 1,
                        "normalize": {"obs": True, "reward": True}},
            "budget": {"total_timesteps": 256, "checkpoint_every": 128, "keep_checkpoints": 3}})
        assert run_worker(run) == 0, (run / "worker.log").read_text()
    finally:
        if old is None:
            os.environ.pop("RLPANEL_HOME", None)
        else:
            os.environ["RLPANEL_HOME"] = old
    return run


def _sb3_evaluation(run: Path, step: int, seed: int, episodes: int, deterministic: bool, env_id=None, normalize=False):
    """SB3's own evaluate_policy on the checkpoint, with the env and model loaded here (not through rlpanel)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecNormalize

    from tests.core.run.fast_env import FastEpisodesEnv

    checkpoints = RunDir(run).checkpoints
    env = make_vec_env(env_id or (lambda: FastEpisodesEnv(steps=STEPS)), n_envs=1, seed=seed)
    if normalize:
        env = VecNormalize.load(str(checkpoints / f"step_{step:012d}_vecnormalize.pkl"), env)
        env.training, env.norm_reward = False, False
    model = PPO.load(str(checkpoints / f"step_{step:012d}.zip"), env=env, device="cpu")
    set_random_seed(seed)
    try:
        return evaluate_policy(model, env, n_eval_episodes=episodes, deterministic=deterministic, return_episode_rewards=True)
    finally:
        env.close()


@pytest.mark.parametrize("deterministic", [True, False])
def test_evaluation_reproduces_sb3s_evaluate_policy_on_the_same_seed(trained_run, deterministic):
    from core.agent.evaluate import evaluate

    result = evaluate(trained_run, "768", episodes=6, deterministic=deterministic, seed=11)
    rewards, lengths = _sb3_evaluation(trained_run, 768, 11, 6, deterministic, env_id="CartPole-v1")
    assert result.rewards == [float(r) for r in rewards] and result.lengths == list(lengths)
    assert result.mean_reward == float(np.mean(rewards)) and result.std_reward == float(np.std(rewards))
    assert len(set(result.rewards)) > 1  # episodes differ: the comparison is not of six equal numbers
    half = 2.5705818 * np.std(rewards, ddof=1) / math.sqrt(6)  # t(0.975, 5 degrees of freedom)
    assert result.ci95 == pytest.approx((np.mean(rewards) - half, np.mean(rewards) + half))
    assert (result.checkpoint, result.checkpoint_step, result.episodes, result.seed) == ("768", 768, 6, 11)
    assert result.deterministic is deterministic and result.mean_length == float(np.mean(lengths))


def test_a_normalized_run_is_played_with_each_checkpoints_own_statistics_and_raw_rewards(normalized_run, tmp_path):
    from core.agent.evaluate import evaluate

    run = copy_run(normalized_run, tmp_path / "runs")
    older = evaluate(run, "128", episodes=8, deterministic=False, seed=5)
    rewards, lengths = _sb3_evaluation(run, 128, 5, 8, False, normalize=True)
    assert older.rewards == [float(r) for r in rewards] and older.lengths == list(lengths) == [STEPS] * 8
    # raw rewards, not VecNormalize's: an episode's reward is its moves - 0.5 per step, the env's own measure
    assert older.measures["moves"] == pytest.approx(older.mean_reward + 0.5 * STEPS)
    assert len(set(older.rewards)) > 1
    # the newer checkpoint's statistics are not the older one's: spoil them (same size, so the checkpoint still looks
    # complete) and the older checkpoint's evaluation is unchanged, while the newer one cannot be loaded
    newer = RunDir(run).checkpoint_file(256, "vecnormalize")
    newer.write_bytes(b"\0" * newer.stat().st_size)
    assert evaluate(run, "128", episodes=8, deterministic=False, seed=5).rewards == older.rewards
    with pytest.raises(Exception, match="pickle|load|invalid"):
        evaluate(run, "last", episodes=1, seed=5)


def test_the_tool_keeps_each_result_and_the_cli_prints_it_as_json(normalized_run, tmp_path):
    run = copy_run(normalized_run, tmp_path / "runs")
    done = cli("evaluate", "--runs-dir", str(run.parent), run.name[:12], "--checkpoint", "last", "--episodes", "3",
               "--stochastic", "--seed", "9", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) >= {"run", "checkpoint", "checkpoint_step", "episodes", "deterministic", "seed", "mean_reward",
                         "std_reward", "ci95", "mean_length", "measures", "rewards"}
    assert (data["run"], data["checkpoint"], data["checkpoint_step"], data["episodes"]) == (run.name, "last", 256, 3)
    assert (data["deterministic"], data["seed"], len(data["rewards"]), len(data["ci95"])) == (False, 9, 3, 2)
    assert data["measures"]["moves"] == pytest.approx(data["mean_reward"] + 0.5 * STEPS)
    stored = read_evaluations(run)
    assert [e.to_json() for e in stored] == [data]  # kept in evaluations.jsonl, the record the command printed
    text = cli("evaluate", "--runs-dir", str(run.parent), run.name, "--episodes", "2")
    assert text.returncode == 0 and "mean reward" in text.stdout and "checkpoint: step 256" in text.stdout
    assert [e.episodes for e in read_evaluations(run)] == [3, 2]


def test_a_checkpoint_the_run_does_not_keep_is_one_line_naming_the_ones_it_does(trained_run, tmp_path):
    run = copy_run(trained_run, tmp_path / "runs")
    done = cli("evaluate", "--runs-dir", str(run.parent), run.name, "--checkpoint", "300")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"rlpanel evaluate: run {run.name} keeps no checkpoint at step 300 (it keeps: 512, 768, 1,024)"]
    assert not RunDir(run).evaluations_file.exists()
    few = cli("evaluate", "--runs-dir", str(run.parent), run.name, "--episodes", "0")
    assert few.returncode == 2 and "--episodes 0: give at least 1 episode" in few.stderr


def test_the_t_interval_uses_students_t_and_the_store_skips_what_it_cannot_read(tmp_path):
    assert ci95([3.0]) is None
    low, high = ci95([1.0, 2.0, 3.0])
    assert (low, high) == pytest.approx((2 - 4.303 / math.sqrt(3), 2 + 4.303 / math.sqrt(3)), abs=1e-3)  # t(0.975, 2)
    from core.run.evaluations import Evaluation

    ev = Evaluation("r", "best", 100, 3, True, 1, 2.0, 0.8, (low, high), 10.0, {"moves": 1.5}, [1.0, 2.0, 3.0], [10] * 3)
    append_evaluation(tmp_path, ev)
    with RunDir(tmp_path).evaluations_file.open("a", encoding="utf-8") as fh:
        fh.write('{"run": "r", "mean_reward": "high"}\n{"torn": ')
    assert read_evaluations(tmp_path) == [ev] and ev.label == "best (step 100)"
