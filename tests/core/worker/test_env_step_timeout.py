"""A time limit per env step, and env processes replaced mid-run (issue 28): real env processes that hang.

An env whose step sleeps past ``env.step_timeout_s`` or deadlocks is replaced by a fresh process and its episode
ends as SB3's truncation with the reason; another thread can restart envs (the worker's watchdog) or abort them
while a step is blocked; a real PPO run through the CLI and the worker finishes past one hang and says so.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import yaml

from core.config.errors import ConfigError
from core.config.validate import validate_config
from core.run.status import read_status
from tests.training_helpers import cli, records

PROBE = "tests.core.worker.lean_probe_env:ProbeCartPole"
HANGING = "tests.core.worker.lean_probe_env:HangingEnv"
TRUNCATED = "rlpanel.truncated"


def two_envs(mode: str, folder, **kwargs):
    """A CartPole (env 0) beside an env that hangs on its third step (env 1), once, in lean env processes."""
    from core.envproc.recipe import EnvRecipe
    from core.worker.lean_vec_env import LeanSubprocVecEnv

    replaced: list[tuple[int, str]] = []
    recipes = [EnvRecipe(entry_point=PROBE), EnvRecipe(entry_point=HANGING, kwargs={"mode": mode, "at": 3,
                                                                               "once": str(folder / "hung")})]
    env = LeanSubprocVecEnv(recipes, on_replaced=lambda i, why: replaced.append((i, why)), **kwargs)
    return env, replaced


def push(k: int) -> np.ndarray:
    """Both carts pushed left, then right, ...: CartPole's pole stays up for dozens of steps."""
    return np.array([k % 2, k % 2])


def two_steps(env):
    """Reset and two good steps: the observations of the last one, and each env's pid."""
    env.reset()
    obs = None
    for k in range(2):
        obs, _, dones, _ = env.step(push(k))
        assert not dones.any()
    return obs, [p.pid for p in env.processes]


def assert_cut_short(env, before_obs, pids, obs, rewards, dones, infos, reason: str) -> None:
    """Env 1's slot is the truncated end of its two-step episode, from a fresh process; env 0 stepped as usual."""
    assert dones.tolist() == [False, True] and rewards[1] == 0.0
    info = infos[1]
    assert info["TimeLimit.truncated"] is True and info[TRUNCATED] == reason
    np.testing.assert_array_equal(info["terminal_observation"], before_obs[1])
    assert info["episode"]["l"] == 2 and info["episode"]["r"] == 2.0  # CartPole: 1 a step
    assert env.processes[0].pid == pids[0] and env.processes[1].pid != pids[1]
    assert TRUNCATED not in infos[0] and "terminal_observation" not in infos[0]
    assert obs.shape == (2, 4) and abs(obs[1]).max() <= 0.05  # the fresh env's reset observation
    for k in range(4):  # later steps work (the fresh process's third step hangs no more: HangingEnv's once)
        _, _, dones, infos = env.step(push(k + 1))
        assert not dones[0] and not any(TRUNCATED in i for i in infos)


@pytest.mark.training
@pytest.mark.parametrize("mode", ["sleep", "deadlock"])
def test_a_step_past_the_limit_replaces_that_env_process(mode, tmp_path):
    env, replaced = two_envs(mode, tmp_path, step_timeout_s=0.5)
    try:
        before, pids = two_steps(env)
        started = time.monotonic()
        obs, rewards, dones, infos = env.step(push(0))
        took = time.monotonic() - started
        reason = "env step took longer than 0.5 s (env.step_timeout_s); its process was replaced"
        assert 0.5 <= took < 4.0, took  # the limit, a kill and a fresh process's reset: not the 5 s sleep
        assert replaced == [(1, reason)]
        assert_cut_short(env, before, pids, obs, rewards, dones, infos, reason)
        assert not env.processes[1].is_alive() or env.processes[1].pid != pids[1]
    finally:
        env.close()
    assert not any(p.is_alive() for p in env.processes)


@pytest.mark.training
def test_restart_envs_from_another_thread_replaces_a_blocked_step_and_marks_the_next_one(tmp_path):
    """No limit: the watchdog's thread restarts the env whose answer is outstanding; with no step in flight, the
    env it names is replaced at the next step."""
    env, replaced = two_envs("deadlock", tmp_path)
    try:
        before, pids = two_steps(env)
        asked: list[list[int]] = []
        timer = threading.Timer(0.3, lambda: asked.append(env.restart_envs("no step for 5 min (watchdog)")))
        timer.start()
        obs, rewards, dones, infos = env.step(push(0))
        timer.join()
        assert asked == [[1]]  # env 0 had answered
        assert_cut_short(env, before, pids, obs, rewards, dones, infos, "no step for 5 min (watchdog)")

        pid0 = env.processes[0].pid
        last = env.step(push(1))[0]
        assert env.restart_envs("asked between steps", indices=[0]) == [0]
        _, _, dones, infos = env.step(push(0))
        assert dones[0] and infos[0][TRUNCATED] == "asked between steps" and env.processes[0].pid != pid0
        np.testing.assert_array_equal(infos[0]["terminal_observation"], last[0])
        assert infos[0]["episode"]["l"] == 8  # env 0's steps: 2, the blocked one, 4 after it, and one more
        assert [i for i, _ in replaced] == [1, 0]
    finally:
        env.close()


@pytest.mark.training
def test_abort_raises_envs_aborted_promptly(tmp_path):
    from core.worker.lean_vec_env import EnvProcessError, EnvsAborted

    env, replaced = two_envs("deadlock", tmp_path)
    try:
        two_steps(env)
        threading.Timer(0.3, lambda: env.abort("the run is stalled; stopping")).start()
        started = time.monotonic()
        with pytest.raises(EnvsAborted, match="the env processes were ended: the run is stalled; stopping"):
            env.step(push(0))
        assert time.monotonic() - started < 3.0
        assert issubclass(EnvsAborted, EnvProcessError) and replaced == []
    finally:
        started = time.monotonic()
        env.close()
    assert time.monotonic() - started < 5.0
    assert not any(p.is_alive() for p in env.processes)


@pytest.mark.parametrize("vec_env", ["dummy", "subproc-sb3"])
def test_a_step_limit_without_lean_env_processes_is_a_config_error(vec_env):
    raw = {"env": {"id": "CartPole-v1", "step_timeout_s": 30}, "runtime": {"vec_env": vec_env}}
    with pytest.raises(ConfigError) as caught:
        validate_config(raw)
    [issue] = [i for i in caught.value.issues if i.path == "env.step_timeout_s"]
    assert issue.message == (f"a step time limit (30 s) needs the lean env processes, not vec_env {vec_env}: set "
                             "runtime.vec_env: subproc, or clear env.step_timeout_s")
    assert validate_config({**raw, "runtime": {"vec_env": "subproc"}}).config.env.step_timeout_s == 30.0
    with pytest.raises(ConfigError, match="env.step_timeout_s"):
        validate_config({"env": {"id": "CartPole-v1", "step_timeout_s": 0}, "runtime": {"vec_env": "subproc"}})


@pytest.mark.training
def test_a_run_whose_env_hangs_once_finishes_and_says_so(runs_dir, tmp_path):
    """Through ``rlpanel train --set env.step_timeout_s=...``: the worker replaces the hung env, records the
    episode as cut short, writes the event and counts the restart; ``rlpanel runs ID`` says so."""
    config = tmp_path / "hang.yaml"
    config.write_text(yaml.safe_dump({
        "algo": "PPO", "env": {"entry_point": HANGING, "kwargs": {"mode": "deadlock", "at": 5,
                                                                  "once": str(tmp_path / "hung-once")}},
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "runtime": {"n_envs": 2, "vec_env": "subproc", "seed": 3, "telemetry_hz": 0},
        "budget": {"total_timesteps": 256, "checkpoint_every": 0, "checkpoint_minutes": 0}}))
    out = cli("train", "--config", str(config), "--set", "env.step_timeout_s=1", "--trust",
              "tests.core.worker.lean_probe_env", "--runs-dir", str(runs_dir))
    [run] = list(runs_dir.iterdir())
    status = read_status(run)
    assert out.returncode == 0 and status.state == "finished", (out.stdout, out.stderr, (run / "worker.log").read_text())
    assert status.env_restarts == 1
    [cut] = [r for r in records(run, "episode") if "truncated" in r]
    assert cut["truncated"] == "env step took longer than 1 s (env.step_timeout_s); its process was replaced"
    assert cut["length"] == 4 and cut["reward"] == 4.0  # the hung env's first episode: 4 steps, then the hung one
    [event] = [r for r in records(run, "event") if r.get("code") == "env_restart"]
    assert event["level"] == "warning" and event["message"].startswith("env ") and "replaced at step" in event["message"]
    for csv in (run / "monitor").glob("*.monitor.csv"):  # the fresh process continued its env's Monitor file
        assert csv.read_text().count("#{") == 1
    shown = cli("runs", run.name, "--runs-dir", str(runs_dir))
    assert "env restarts: 1 (env processes replaced mid-run" in shown.stdout, shown.stdout


def test_a_cut_short_episode_keeps_its_own_record_past_the_episode_rate():
    from core.run import records as rec
    from core.run.episodes import EpisodeLimiter

    limiter = EpisodeLimiter(rate=1.0, window_s=2.0)  # room for 2 single records
    eps = [rec.episode(10 * i, 1.0, 10, t=0.0) for i in range(1, 6)]
    eps.insert(2, rec.episode(25, 3.0, 3, t=0.0, truncated="env step took longer than 30 s"))
    out = limiter.take(eps, now=0.0)
    assert [r["kind"] for r in out] == ["episode", "episode", "episode", "episodes"]
    assert out[2]["truncated"] == "env step took longer than 30 s" and out[3]["n"] == 3  # in step order


def test_replacements_are_counted_and_too_many_alert_once(runs_dir):
    """Five replacements in ten minutes: five warning events, env_restarts 5 in the status, one notification."""
    from core.run.status import write_status
    from core.util.jsonl import JsonlWriter
    from core.worker.restart_log import EnvRestartLog

    run = runs_dir / "run"
    run.mkdir()
    write_status(run, state="running", env_restarts=2)  # an earlier attempt's
    sent, now = [], [0.0]
    out = JsonlWriter(run / "metrics.jsonl")
    log = EnvRestartLog(run, out, count=2, notify=lambda *a, **k: sent.append((a, k)), clock=lambda: now[0])
    log.step = lambda: 1234
    for minute in (0, 1, 2, 20, 21, 22, 23):  # 3 in the first ten minutes, then 4 within four
        now[0] = minute * 60.0
        log(1, "env step took longer than 30 s (env.step_timeout_s); its process was replaced")
    out.close()
    assert read_status(run).env_restarts == 9
    events = records(run, "event")
    assert len(events) == 7 and events[0]["message"] == ("env 1 replaced at step 1,234: env step took longer than 30 s "
                                                         "(env.step_timeout_s); its process was replaced")
    assert {(e["level"], e["code"], e["step"]) for e in events} == {("warning", "env_restart", 1234)}
    [(args, kwargs)] = sent
    assert args[:2] == (run, "warning") and args[2].startswith("4 env processes replaced within 10 minutes")
    assert kwargs == {"in_background": True}
