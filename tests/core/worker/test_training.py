"""Real training through the worker on tiny budgets: the run folder, stop/resume, crashes."""

from __future__ import annotations

import csv

import pytest

from core.launch.control import launch_worker, stop_run
from core.run.status import read_status
from core.util.files import read_json
from core.util.procs import process_tree
from tests.results_helpers import rolling_means
from tests.training_helpers import cli, last_step, make_run, records, run_worker, wait_for, wait_state

pytestmark = pytest.mark.training

CONFIGS = {
    "PPO": {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 2}, "runtime": {"n_envs": 2},
            "budget": {"total_timesteps": 2000, "eval_every": 1000, "eval_episodes": 2}},
    "A2C": {"algo": "A2C", "runtime": {"n_envs": 4}, "budget": {"total_timesteps": 2000}},
    "DQN": {"algo": "DQN", "dqn": {"learning_starts": 200, "buffer_size": 5000}, "budget": {"total_timesteps": 2000}},
    "SAC": {"algo": "SAC", "env": {"id": "Pendulum-v1"}, "sac": {"learning_starts": 100, "batch_size": 64},
            "budget": {"total_timesteps": 400, "checkpoint_every": 200}},
}


def monitor_episodes(run_dir) -> list[tuple[float, int]]:
    rows = []
    for path in sorted((run_dir / "monitor").glob("*.monitor.csv")):
        with open(path, encoding="utf-8") as fh:
            next(fh)  # the JSON header line
            rows += [(round(float(r["r"]), 4), int(r["l"])) for r in csv.DictReader(fh)]
    return sorted(rows)


@pytest.mark.parametrize("algo", list(CONFIGS))
def test_worker_trains_and_writes_the_run_folder(runs_dir, algo):
    run = make_run(runs_dir, CONFIGS[algo])
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    status = read_status(run)
    assert status.state == "finished" and status.ended_at >= status.started_at
    assert status.device == "cpu"  # the device the worker really trained on (the Monitor title shows it)
    awake = [r["message"] for r in records(run, "event") if "awake" in r["message"]]
    assert len(awake) == 1 and (awake[0].startswith("keeping the machine awake") or
                                awake[0].startswith("could not keep the machine awake ("))
    for name in ("config.yaml", "status.json", "metrics.jsonl", "telemetry.jsonl", "summary.json", "worker.log"):
        assert (run / name).is_file(), name
    latest = read_json(run / "checkpoints" / "latest.json")
    assert (run / "checkpoints" / latest["model"]).is_file()
    if algo in ("SAC", "DQN"):
        assert (run / "checkpoints" / latest["replay_buffer"]).is_file()
    assert list((run / "tb").glob("events.out.tfevents.*")), "TensorBoard can open the run"
    assert (run / "sb3" / "progress.csv").is_file()

    episodes = records(run, "episode")
    assert episodes, "episodes recorded"
    assert sorted((round(e["reward"], 4), e["length"]) for e in episodes) == monitor_episodes(run)
    steps = [e["step"] for e in episodes]
    assert steps == sorted(steps)
    train = records(run, "train")
    assert train and any(k.startswith("train/") for r in train for k in r)

    summary = read_json(run / "summary.json")
    total = CONFIGS[algo]["budget"]["total_timesteps"]
    assert summary["timesteps"] >= total and summary["timesteps"] == last_step(run)
    assert summary["episodes"] == len(episodes)
    rewards = [e["reward"] for e in episodes]
    assert summary["final_mean_reward"] == pytest.approx(sum(rewards[-100:]) / len(rewards[-100:]))
    assert summary["best_mean_reward"] == pytest.approx(max(rolling_means(rewards)[min(99, len(rewards) - 1):]))
    assert summary["state"] == "finished" and summary["wall_time_s"] > 0
    if algo == "PPO":
        evals = records(run, "eval")
        assert evals and summary["last_eval_mean_reward"] == pytest.approx(evals[-1]["mean_reward"])


def test_stop_then_resume_continues_one_curve(runs_dir):
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 256, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 2}, "budget": {"total_timesteps": 1_000_000}})
    launch_worker(run)
    wait_for(lambda: last_step(run) >= 1500, what="training progress")
    assert stop_run(run, timeout=60) == "graceful"
    status = read_status(run)
    assert status.state == "stopped" and "STOP file" in status.exit_reason
    stopped_at = read_json(run / "checkpoints" / "latest.json")["step"]
    assert stopped_at == last_step(run) > 0

    done = cli("resume", run.name, "--timesteps", "1500", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"
    progress = [r["step"] for r in records(run, "progress")]
    assert progress == sorted(progress) and progress[-1] >= stopped_at + 1500
    episodes = [r["step"] for r in records(run, "episode")]
    assert episodes == sorted(episodes)
    train = [r["step"] for r in records(run, "train")]
    assert train == sorted(train)
    assert len(list((run / "tb").rglob("events.out.tfevents.*"))) == 2  # one per attempt, same curve
    summary = read_json(run / "summary.json")
    assert summary["attempts"] == 2 and summary["timesteps"] == progress[-1]


def test_off_policy_resume_restores_the_replay_buffer(runs_dir):
    run = make_run(runs_dir, {"algo": "DQN", "dqn": {"learning_starts": 100, "buffer_size": 50_000},
                              "budget": {"total_timesteps": 1_000_000}})
    launch_worker(run)
    wait_for(lambda: last_step(run) >= 800, what="training progress")
    assert stop_run(run) == "graceful"
    step = read_json(run / "checkpoints" / "latest.json")["step"]
    done = cli("resume", run.name, "--timesteps", "300", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    [resumed] = [e["message"] for e in records(run, "event") if e["message"].startswith("resumed")]
    # SB3 counts the step on which a callback asks to stop but does not store its transition
    assert resumed in [f"resumed from the checkpoint at step {step:,} with {n:,} transitions in the replay buffer"
                       for n in (step - 1, step)]


def test_killed_worker_reads_crashed_and_resumes_from_its_checkpoint(runs_dir):
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1},
                              "budget": {"total_timesteps": 1_000_000, "checkpoint_every": 500}})
    launch_worker(run)
    wait_for(lambda: (read_json(run / "checkpoints" / "latest.json") or {}).get("step", 0) >= 1000, what="a checkpoint")
    pid = read_status(run).pid
    for proc in process_tree(pid):
        proc.kill()  # psutil: SIGKILL on POSIX, TerminateProcess on Windows
    wait_state(run, ("crashed",), timeout=30)
    # the run's supervisor records the crash with its reason (a reader alone says "ended without a word"), then adds
    # what follows ("; ...") once the resume is decided: two writes, and a loaded machine shows the first a while
    status = wait_for(lambda: (lambda s: s if s.recorded_state is None and "; " in (s.exit_reason or "") else None)(
        read_status(run)), timeout=60, what="the supervisor to record the crash and what follows it")
    assert status.state == "crashed" and "SIGKILL" in status.error["message"]
    assert f"resume it with `rlpanel resume {run.name}` (from its checkpoint at step" in status.exit_reason
    checkpoint = read_json(run / "checkpoints" / "latest.json")["step"]

    out = cli("runs", "--json", "--runs-dir", str(runs_dir))
    assert '"state": "crashed"' in out.stdout
    done = cli("resume", run.name, "--timesteps", "500", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"
    steps = [r["step"] for r in records(run, "progress")]
    assert steps == sorted(steps), "records past the checkpoint from the killed attempt were set aside"
    assert steps[-1] >= checkpoint + 500


def test_a_failing_env_becomes_state_failed_with_the_reason(runs_dir):
    run = make_run(runs_dir, {"env": {"entry_point": "no_such_pkg.envs:Missing"}, "budget": {"total_timesteps": 100}})
    assert run_worker(run) == 1
    status = read_status(run)
    assert status.state == "failed"
    assert "No module named 'no_such_pkg'" in status.error["message"] and "Traceback" not in status.error["message"]
    assert "import_module" in status.error["traceback"]


def test_cli_train_follows_and_reports(runs_dir):
    done = cli("train", "--algo", "A2C", "--env", "CartPole-v1", "--timesteps", "800", "--name", "night run!",
               "--json", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    import json

    out = json.loads(done.stdout)
    assert out["state"] == "finished" and "night-run" in out["id"]
    assert "steps/s" in done.stderr  # the progress line
    listed = json.loads(cli("runs", "--json", "--runs-dir", str(runs_dir)).stdout)
    assert [(r["id"], r["state"], r["algo"], r["env"]) for r in listed] == [(out["id"], "finished", "A2C", "CartPole-v1")]
    assert listed[0]["steps"] >= 800 and listed[0]["path"] == out["path"]


def test_cli_refuses_sac_on_a_discrete_env_before_training(runs_dir):
    done = cli("train", "--algo", "SAC", "--env", "CartPole-v1", "--timesteps", "500", "--runs-dir", str(runs_dir))
    assert done.returncode != 0
    assert "SAC needs a continuous (Box) action space" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["train", "estimate"])
def test_cli_names_the_preset_and_algo_when_the_preset_s_algorithm_cannot_train_the_env(runs_dir, command):
    """laptop-8gb sets SAC; CartPole-v1 has discrete actions. The window keeps the algorithm it showed; the command
    line, where nobody chose one, refuses in one line naming the preset, the field and the flag (and --algo trains)."""
    from core.config.spaces import either, trainers

    done = cli(command, "--preset", "laptop-8gb", "--env", "CartPole-v1", "--runs-dir", str(runs_dir))
    assert done.returncode == 2 and list(runs_dir.iterdir()) == []
    able = either(trainers("discrete"))  # PPO, A2C or DQN; sb3-contrib's too where it is installed
    assert able.startswith("PPO, A2C") and "SAC" not in able
    assert done.stderr.strip().splitlines() == [
        f"rlpanel {command}: config error: algo: laptop-8gb sets SAC, which needs a continuous (Box) action space; "
        f"CartPole-v1 has a discrete one: choose one that trains it with --algo ({able})"]


@pytest.mark.parametrize(("algo", "env"), [("random", "CartPole-v1"), ("constant", "Pendulum-v1")])
def test_baselines_play_their_episodes_like_any_run(runs_dir, algo, env):
    run = make_run(runs_dir, {"algo": algo, "env": {"id": env}, "budget": {"episodes": 7}})
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    assert read_status(run).state == "finished"
    episodes = records(run, "episode")
    assert len(episodes) == 7
    summary = read_json(run / "summary.json")
    assert summary["episodes"] == 7 and summary["final_mean_reward"] == pytest.approx(sum(e["reward"] for e in episodes) / 7)
    if algo == "constant":  # Pendulum with zero torque: every episode is 200 steps
        assert {e["length"] for e in episodes} == {200}


def test_constant_baseline_refuses_a_discrete_env(runs_dir):
    done = cli("train", "--algo", "constant", "--env", "CartPole-v1", "--runs-dir", str(runs_dir))
    assert done.returncode == 2 and "use the random baseline" in done.stderr


def test_vecnormalize_stats_are_checkpointed_and_restored(runs_dir):
    run = make_run(runs_dir, {"algo": "A2C", "runtime": {"n_envs": 2, "normalize": {"obs": True, "reward": True}},
                              "budget": {"total_timesteps": 1000, "checkpoint_every": 500}})
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    latest = read_json(run / "checkpoints" / "latest.json")
    assert (run / "checkpoints" / latest["vecnormalize"]).is_file()
    done = cli("resume", run.name, "--timesteps", "500", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    stats = VecNormalize.load(str(run / "checkpoints" / read_json(run / "checkpoints" / "latest.json")["vecnormalize"]),
                              DummyVecEnv([lambda: gym.make("CartPole-v1")]))
    assert stats.obs_rms.count > 1500  # statistics kept growing across both attempts
