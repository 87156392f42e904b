"""The best checkpoint (checkpoints/best.*, kept at each new best evaluation) and the budget's stopping rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.launch.control import resume_run
from core.run.checkpoints import best_checkpoint, find_checkpoint, select_checkpoint
from core.run.status import read_status
from core.util.files import read_json, write_json_atomic
from core.util.text import format_number
from tests.training_helpers import cli, copy_run, make_run, records, run_worker, wait_state

pytestmark = pytest.mark.training

# in-process envs (one worker process per run) and tiny rollouts: each run is a few seconds
SMALL = {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 32, "n_epochs": 2},
         "runtime": {"n_envs": 1, "seed": 3, "vec_env": "dummy", "telemetry_hz": 0}}


@pytest.fixture(scope="module")
def best_run(tmp_path_factory) -> Path:
    """A finished PPO run with VecNormalize on observations, evaluated every 128 steps (2 episodes)."""
    folder = tmp_path_factory.mktemp("best_runs")
    old = os.environ.get("RLPANEL_HOME")
    os.environ["RLPANEL_HOME"] = str(folder)
    try:
        run = make_run(folder / "runs", {**SMALL, "runtime": {**SMALL["runtime"], "normalize": {"obs": True}},
                                         "budget": {"total_timesteps": 640, "checkpoint_every": 0, "eval_every": 128,
                                                    "eval_episodes": 2}})
        assert run_worker(run) == 0, (run / "worker.log").read_text()
        return run
    finally:
        if old is None:
            os.environ.pop("RLPANEL_HOME", None)
        else:
            os.environ["RLPANEL_HOME"] = old


def test_best_json_names_the_highest_evaluation(best_run):
    evals = records(best_run, "eval")
    assert [e["step"] for e in evals] == [128, 256, 384, 512, 640]
    highest = max(evals, key=lambda e: e["mean_reward"])  # max keeps the first of equal means: a tie is no new best
    best = best_checkpoint(best_run)
    assert best is not None and (best.step, best.mean_reward) == (highest["step"], highest["mean_reward"])
    entry = read_json(best_run / "checkpoints" / "best.json")
    assert entry["model"] == "best.zip" and entry["vecnormalize"] == "best_vecnormalize.pkl"
    assert entry["sizes"] == {name: (best_run / "checkpoints" / name).stat().st_size
                              for name in ("best.zip", "best_vecnormalize.pkl")}
    assert select_checkpoint(best_run, "best") == best
    # one event per new best, each naming its evaluation's mean and step; the last is the kept one
    news = [r for r in records(best_run, "event") if r["message"].startswith("new best evaluation")]
    rising = [e for i, e in enumerate(evals) if all(e["mean_reward"] > p["mean_reward"] for p in evals[:i])]
    assert [r["step"] for r in news] == [e["step"] for e in rising]
    assert news[-1]["message"].endswith(f"at step {best.step:,} (kept as checkpoints/best.zip)")
    summary = read_json(best_run / "summary.json")
    assert summary["best_eval"] == {"step": best.step, "mean_reward": best.mean_reward}
    assert read_status(best_run).state == "finished"


def test_the_best_checkpoint_replays_its_training_time_evaluation(best_run):
    """The best model with its own VecNormalize statistics, on the evaluation's seed, plays the same episodes."""
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    from core.agent.load import load_policy

    entry = read_json(best_run / "checkpoints" / "best.json")
    loaded = load_policy(best_run, "best", seed=entry["eval_seed"])
    try:
        assert isinstance(loaded.env, VecNormalize) and not loaded.env.training
        rewards, _ = evaluate_policy(loaded.model, loaded.env, n_eval_episodes=entry["eval_episodes"], deterministic=True,
                                     return_episode_rewards=True)
        best_stats = loaded.env.obs_rms
    finally:
        loaded.close()
    assert sum(rewards) / len(rewards) == entry["mean_reward"]  # CartPole's rewards are whole: exact, not close
    # the statistics of that evaluation, not the run's latest ones (rl_zoo3 #282)
    last = VecNormalize.load(str(best_run / "checkpoints" / find_checkpoint(best_run).checkpoint.files["vecnormalize"]),
                             loaded.env.venv)
    last_step = find_checkpoint(best_run).checkpoint.step
    assert entry["step"] <= best_stats.count <= last.obs_rms.count  # one update per step, and one per reset
    if entry["step"] < last_step:
        assert best_stats.count < last.obs_rms.count and (best_stats.mean != last.obs_rms.mean).any()


def test_a_resumed_run_keeps_a_better_best(best_run, tmp_path):
    run = copy_run(best_run, tmp_path / "runs")
    manifest = run / "checkpoints" / "best.json"
    entry = read_json(manifest)
    write_json_atomic(manifest, {**entry, "mean_reward": 1e6})  # an evaluation no later one can beat
    model_bytes = (run / "checkpoints" / "best.zip").read_bytes()
    resume_run(run, more_steps=128, reap=False)
    assert wait_state(run, ("finished", "failed", "crashed")) == "finished", (run / "worker.log").read_text()
    assert records(run, "eval")[-1]["step"] == 768  # it evaluated again...
    assert read_json(manifest)["mean_reward"] == 1e6 and read_json(manifest)["step"] == entry["step"]  # ...kept no worse
    assert (run / "checkpoints" / "best.zip").read_bytes() == model_bytes
    said = [r["message"] for r in records(run, "event")]
    assert f"the best evaluation so far: mean 1,000,000 at step {entry['step']:,} (checkpoints/best.json); " \
           "a new best must beat it" in said


def test_stop_at_reward_ends_the_run_finished_saying_so(runs_dir):
    """Through the command line: --set gives the rule; CartPole's shortest episodes score 8, so 5 is reached at once."""
    done = cli("train", "--algo", "PPO", "--env", "CartPole-v1", "--timesteps", "2048", "--json", "--runs-dir",
               str(runs_dir), "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=32", "--set", "runtime.vec_env=dummy",
               "--set", "budget.eval_every=64", "--set", "budget.eval_episodes=2", "--set", "budget.stop_at_reward=5")
    assert done.returncode == 0, done.stderr
    run = Path(json.loads(done.stdout)["path"])
    status = read_status(run)
    first = records(run, "eval")[0]
    assert len(records(run, "eval")) == 1 and first["step"] == 64 and first["mean_reward"] >= 5
    assert status.state == "finished"
    mean = format_number(first["mean_reward"])
    assert status.exit_reason == f"stopped by rule: evaluation mean {mean} reached stop_at_reward 5 at step 64"
    assert records(run, "event")[-1]["message"] == status.exit_reason
    summary = read_json(run / "summary.json")
    assert (summary["state"], summary["exit_reason"], summary["timesteps"]) == ("finished", status.exit_reason, 64)
    # what it trained is its plan now: the Runs tab reads 64 / 64, the Monitor's last progress is full
    assert status.planned_timesteps == 64 and records(run, "progress")[-1]["total"] == 64
    assert find_checkpoint(run).checkpoint.step == 64  # the last checkpoint is where it stopped


def test_no_new_best_in_k_evaluations_ends_the_run(runs_dir):
    run = make_run(runs_dir, {**SMALL, "budget": {"total_timesteps": 4096, "checkpoint_every": 0, "eval_every": 64,
                                                  "eval_episodes": 2, "stop_after_evals_without_improvement": 1,
                                                  "stop_min_evals": 1}})
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    status = read_status(run)
    evals = records(run, "eval")
    means = [e["mean_reward"] for e in evals]
    # stopped at the first evaluation after the first that was no new best, and not before
    assert len(evals) >= 2 and means[-1] <= max(means[:-1])
    assert all(means[i] > max(means[:i]) for i in range(1, len(means) - 1))
    best = best_checkpoint(run)
    assert best is not None and best.mean_reward == max(means)
    assert status.state == "finished" and status.exit_reason == (
        f"stopped by rule: no new best in 1 evaluation (best {format_number(max(means))} at step {best.step:,})")
    assert evals[-1]["step"] == read_json(run / "summary.json")["timesteps"] < 4096


def test_a_diverged_model_or_a_failed_write_never_replaces_the_last_good_best(best_run, tmp_path, monkeypatch):
    """KeepBest as the worker runs it (under a real EvalCallback, a loaded model), fed evaluations it would keep."""
    import errno

    from stable_baselines3.common.callbacks import CallbackList, EvalCallback

    from core.agent.load import load_policy
    from core.util.jsonl import JsonlWriter
    from core.worker.best import KeepBest
    from core.worker.checkpoints import Checkpointer

    run = copy_run(best_run, tmp_path / "runs")
    manifest = run / "checkpoints" / "best.json"
    kept = manifest.read_text()
    loaded = load_policy(run, "last")
    out = JsonlWriter(tmp_path / "events.jsonl")
    refusal: list[str | None] = ["losses went NaN at step 640"]
    keeper = KeepBest(run, Checkpointer(run, 3, allowed=lambda: refusal[0]), out, eval_seed=1, eval_episodes=2)
    evaluation = EvalCallback(loaded.env, callback_after_eval=CallbackList([keeper]), verbose=0, warn=False)
    evaluation.init_callback(loaded.model)
    evaluation.evaluations_results, evaluation.last_mean_reward = [[1e6, 1e6]], 1e6  # an evaluation no best beats
    try:
        keeper.on_step()  # diverged: refused
        assert manifest.read_text() == kept
        refusal[0] = None

        def disk_full(path):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(loaded.model, "save", disk_full)
        keeper.on_step()  # the write fails: the last good best stays whole, and the run is told
        assert manifest.read_text() == kept and best_checkpoint(run) is not None
        assert not list((run / "checkpoints").glob(".tmp-*"))
        monkeypatch.undo()
        keeper.on_step()  # now it is kept
    finally:
        loaded.close()
        out.close()
    best = best_checkpoint(run)
    assert best is not None and (best.step, best.mean_reward) == (640, 1e6)
    said = [json.loads(line)["message"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert said[0].startswith("the best checkpoint at step 640 could not be saved (") and said[0].endswith(
        "; the last best is kept")
    assert said[1] == "new best evaluation: mean 1,000,000 at step 640 (kept as checkpoints/best.zip)"
