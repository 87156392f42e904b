"""``rlpanel train``'s progress line: the newest record's step, the speed from the first progress record on (over the
last minute once measured), the time left once measured, and neither once the run is not running."""

from __future__ import annotations

import json
import re

import pytest

from core.cli.follow import follow
from core.run.layout import RunDir
from core.run.status import write_status
from tests.training_helpers import cli, make_run


def append(run_dir, records: list[dict]) -> None:
    with open(RunDir(run_dir).metrics, "a", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def test_the_last_line_shows_the_newest_record_and_the_mean_speed_once_the_run_ended(runs_dir, capsys):
    run_dir = make_run(runs_dir, {"algo": "PPO", "env": {"id": "CartPole-v1"}, "budget": {"total_timesteps": 20_480}})
    progress = [{"kind": "progress", "step": 1024 * i, "t": 1e9 + i, "fps": 8.0 if i % 2 else 1960.0, "total": 20_480}
                for i in range(15)]
    # episodes and training come between progress records (at most one a second): the newest says 16,384
    later = [{"kind": "episode", "step": 15_000, "t": 1e9 + 15, "reward": 20.0, "length": 20},
             {"kind": "train", "step": 16_384, "t": 1e9 + 15.5, "train/value_loss": 1.0}]
    append(run_dir, progress + later)
    write_status(run_dir, state="finished", exit_reason="reached its budget")
    assert follow(run_dir, poll_s=0.01)[:2] == ("finished", "reached its budget")
    [line] = capsys.readouterr().err.splitlines()
    # no speed of the moment and no time left: the attempt's mean speed (14,336 steps in 14 s), then its end
    assert "] 16,384/20,480 steps  1,024 steps/s on average  finished  reward 20.00 (1 ep)" in line, line
    assert "left" not in line


def test_an_ended_run_says_its_steps_over_its_training_time_as_its_summary_does():
    """An SBX run's progress records start after its first rollout, where it compiles: their span said 8,497 steps/s
    where summary.json said 2,358. The ended line says the run's figure."""
    from core.cli.follow import RunProgress

    progress = RunProgress(total=20_480)
    for i in range(1, 4):  # 3,072 steps in 2 s after a first rollout that took 10 s
        progress.add({"kind": "progress", "step": 1024 * i, "t": 1e9 + 10 + i, "fps": 1024.0, "total": 20_480})
    assert "3,072/20,480 steps  256 steps/s on average  finished" in progress.line("finished", 1e9 + 20, 12.0)
    assert "1,024 steps/s on average" in progress.line("finished", 1e9 + 20)  # no training time known: the span's


def test_a_running_run_shows_its_speed_at_once_and_its_time_left_once_measured(runs_dir):
    from core.cli.follow import RunProgress

    progress = RunProgress(total=100_000)
    progress.add({"kind": "progress", "step": 0, "t": 1e9, "fps": 0.0, "total": 100_000})
    assert "measuring speed..." in progress.line("running", 1e9) and "steps/s" not in progress.line("running", 1e9)
    progress.add({"kind": "progress", "step": 8, "t": 1e9 + 1, "fps": 8.0, "total": 100_000})
    assert "  8 steps/s  estimating time left...  " in progress.line("running", 1e9 + 1)
    for s in range(2, 62):
        progress.add({"kind": "progress", "step": 8 + 1000 * (s - 1), "t": 1e9 + s, "fps": 1960.0, "total": 100_000})
    line = progress.line("running", 1e9 + 61)
    assert re.search(r"  1,000 steps/s  0:39 left, done at ", line), line  # the minute's rate, not the last record's fps
    assert "steps/s" not in progress.line("stopping", 1e9 + 61) and "stopping" in progress.line("stopping", 1e9 + 61)


@pytest.mark.training
def test_train_ends_on_a_line_with_the_steps_it_trained(runs_dir):
    tiny = ["--algo", "PPO", "--env", "CartPole-v1", "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=64",
            "--set", "ppo.n_epochs=1", "--set", "runtime.n_envs=2", "--set", "policy.net_arch=[8]"]
    done = cli("train", *tiny, "--timesteps", "1024", "--json", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["id"]
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    # a run this short ends before it measured its speed of the last minute: its mean speed, if it had two progress
    # records, then where it ended
    assert re.search(r"\] 1,024/1,024 steps  ([\d,]+ steps/s on average  )?finished  reward", lines[-1]), done.stderr
    steps = [r["step"] for r in map(json.loads, RunDir(runs_dir / run_id).metrics.read_text().splitlines()) if "step" in r]
    assert max(steps) == 1024


@pytest.mark.training
def test_a_run_shorter_than_the_speed_measure_shows_its_speed_while_it_runs(runs_dir):
    """Issue 42: the line said 'measuring speed...' for its first 15 s while the Speed chart drew the speeds its
    progress records carry (the env here makes ~80 steps/s: 1,024 steps take ~13 s)."""
    done = cli("train", "--algo", "PPO", "--env", "tests.core.run.fast_env:FastEpisodesEnv", "--trust",
               "tests.core.run.fast_env", "--set", "env.kwargs.steps=20", "--set", "env.kwargs.delay_s=0.01",
               "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=1",
               "--set", "policy.net_arch=[8]", "--timesteps", "1024", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    running = [line for line in done.stderr.splitlines() if line.startswith("[") and "finished" not in line]
    assert len(running) >= 2, done.stderr  # a line every 5 s on a pipe
    # an episode record may come before the first progress record; from the second line on, the speed is known
    assert all("measuring speed" not in line for line in running[1:]), done.stderr
    shown = [float(m.group(1).replace(",", "")) for line in running
             if (m := re.search(r" ([\d,]+) steps/s  estimating time left\.\.\.  ", line))]
    assert shown, done.stderr
    [run] = [d for d in runs_dir.iterdir() if RunDir(d).metrics.is_file()]
    fps = sorted(r["fps"] for r in map(json.loads, RunDir(run).metrics.read_text().splitlines())
                 if r.get("kind") == "progress" and r["fps"])
    assert fps[0] * 0.8 <= shown[-1] <= fps[-1] * 1.2, (shown, fps)  # the figures the Speed chart draws


def test_a_run_ended_within_its_first_second_says_its_mean_speed_from_its_training_time():
    """Fewer than two progress records (800 steps in well under a second on a fast machine): the run's steps over
    the training time its status holds."""
    from core.cli.follow import RunProgress

    progress = RunProgress(total=800)
    progress.add({"kind": "progress", "step": 800, "t": 1e9, "fps": 0.0, "total": 800})
    assert "steps/s" not in progress.line("finished", 1e9 + 1)  # nothing to say it from
    line = progress.line("finished", 1e9 + 1, train_time_s=0.5)
    assert "] 800/800 steps  1,600 steps/s on average  finished" in line, line
    assert "steps/s" not in progress.line("running", 1e9 + 1, train_time_s=0.5)  # a running run measures its own


@pytest.mark.training
def test_a_resume_after_a_crash_prints_each_warning_once_and_counts_each_episode_once(runs_dir):
    """Issue 42: the resume rewrites metrics.jsonl without the crashed attempt's records past its checkpoint; the
    follower read the new file from its start again and printed the keep-awake warning a second time (and counted
    every episode twice)."""
    from core.launch.control import launch_worker
    from core.run.episodes import episode_count, episode_groups
    from core.run.status import read_status
    from core.util.files import read_json
    from core.util.jsonl import read_jsonl
    from core.util.procs import process_tree
    from tests.training_helpers import last_step, wait_for

    # 100 steps a second: a timed flush (each second) writes records past a checkpoint (every 2.5 s) before the next
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                              "env": {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv",
                                      "kwargs": {"steps": 20, "delay_s": 0.01}},
                              "runtime": {"n_envs": 1, "keep_awake": False},  # its warning, on any machine
                              "budget": {"total_timesteps": 100_000, "checkpoint_every": 256}})
    launch_worker(run)

    def checkpoint() -> int:
        return (read_json(run / "checkpoints" / "latest.json") or {}).get("step", 0)

    wait_for(lambda: checkpoint() >= 256 and last_step(run) > checkpoint(), timeout=120,
             what="records past a checkpoint")
    for proc in process_tree(read_status(run).pid):
        proc.kill()
    wait_for(lambda: read_status(run).state == "crashed" and read_status(run).recorded_state is None, timeout=60,
             what="the supervisor to record the crash")

    done = cli("resume", run.name, "--timesteps", "64", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert (run / "metrics.superseded.jsonl").is_file(), "the resume moved records aside (the case of the issue)"
    lines = done.stderr.splitlines()
    # the first attempt's warning, and the resume's own (read from the new file, wherever its offset falls)
    assert len([line for line in lines if "keep awake is off" in line]) == 1, done.stderr
    assert len([line for line in lines if "moved to metrics.superseded.jsonl" in line]) == 1, done.stderr
    episodes = episode_count(episode_groups(read_jsonl(run / "metrics.jsonl")))
    last = [line for line in done.stderr.splitlines() if line.startswith("[")][-1]
    assert last.endswith(f"({episodes:,} ep)"), (last, episodes)
