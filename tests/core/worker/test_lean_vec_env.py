"""The lean subprocess vec env against SB3's SubprocVecEnv: same answers, no torch in its env processes.

torch and stable-baselines3 are imported inside the tests (the window's tests check torch stays out).
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import os
import re
import signal

import numpy as np
import pytest

from core.config.validate import validate_config
from core.run.status import read_status
from tests.conftest import REPO
from tests.training_helpers import make_run, records

PROBE = "tests.core.worker.lean_probe_env:ProbeCartPole"
FAILING = "tests.core.worker.lean_probe_env:FailingEnv"


def config(vec_env: str, n_envs: int = 3, seed: int | None = 7, **env):
    env = env or {"id": "CartPole-v1", "kwargs": {"max_episode_steps": 15}}  # short episodes: truncations and resets
    return validate_config({"algo": "PPO", "env": env, "runtime": {"n_envs": n_envs, "vec_env": vec_env, "seed": seed,
                                                                   "start_method": "forkserver"}}).config


def without_time(info: dict) -> dict:
    """An info dict with the Monitor's episode wall time left out (the one thing that differs run to run)."""
    out = dict(info)
    if "episode" in out:
        out["episode"] = {k: v for k, v in out["episode"].items() if k != "t"}
    return out


def rollout(env, steps: int = 60, seed: int = 3) -> list:
    """Everything a VecEnv says over ``steps`` random steps, a seeded reset with options, and more steps."""
    rng = np.random.default_rng(seed)
    seen: list = [("reset", env.reset(), [dict(i) for i in env.reset_infos])]
    for step in range(2 * steps):
        if step == steps:
            env.seed(123)
            env.set_options({"low": -0.02, "high": 0.02})
            seen.append(("reset", env.reset(), [dict(i) for i in env.reset_infos]))
        obs, rewards, dones, infos = env.step(rng.integers(0, 2, size=env.num_envs))
        seen.append(("step", obs, rewards, dones, [without_time(i) for i in infos], [dict(i) for i in env.reset_infos]))
    return seen


def assert_same(a, b) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        assert type(a) is type(b) and a == b, (a, b)


def monitor_rows(folder) -> list[tuple[str, str]]:
    rows = []
    for path in sorted(folder.glob("*.monitor.csv")):
        with open(path, encoding="utf-8") as fh:
            assert json.loads(next(fh)[1:])["env_id"] == "CartPole-v1"
            rows += [(path.name, r["r"], r["l"]) for r in csv.DictReader(fh)]
    return rows


@pytest.mark.training
def test_lean_env_answers_as_sb3s_subprocvecenv_does(tmp_path):
    from gymnasium.wrappers import TimeLimit
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from core.worker.factory import build_vec_env
    from core.worker.lean_vec_env import LeanSubprocVecEnv

    ours, _ = build_vec_env(config("subproc"), monitor_dir=tmp_path / "ours")
    theirs, _ = build_vec_env(config("subproc-sb3"), monitor_dir=tmp_path / "sb3")
    try:
        assert isinstance(ours, LeanSubprocVecEnv) and isinstance(theirs, SubprocVecEnv)
        assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
        assert ours.render_mode == theirs.render_mode and ours.metadata == theirs.metadata
        a, b = rollout(ours), rollout(theirs)
        assert_same(a, b)
        infos = [info for entry in a if entry[0] == "step" for info in entry[4]]
        assert any(i.get("TimeLimit.truncated") for i in infos), "no truncation: the test would not cover it"
        assert any("terminal_observation" in i and not i["TimeLimit.truncated"] for i in infos), "no termination seen"
        for method in ("get_episode_rewards", "get_episode_lengths", "get_total_steps"):
            assert_same(ours.env_method(method), theirs.env_method(method))
        assert_same(ours.env_method("get_total_steps", indices=[2]), theirs.env_method("get_total_steps", indices=[2]))
        assert [s.id for s in ours.get_attr("spec")] == [s.id for s in theirs.get_attr("spec")] == ["CartPole-v1"] * 3
        ours.set_attr("probe_value", 5, indices=1)
        theirs.set_attr("probe_value", 5, indices=1)
        assert ours.get_attr("probe_value", indices=[1]) == theirs.get_attr("probe_value", indices=[1]) == [5]
        assert ours.has_attr("gravity") and theirs.has_attr("gravity")
        assert not ours.has_attr("no_such_thing") and not theirs.has_attr("no_such_thing")
        assert ours.env_is_wrapped(Monitor) == theirs.env_is_wrapped(Monitor) == [True] * 3
        assert ours.env_is_wrapped(TimeLimit) == theirs.env_is_wrapped(TimeLimit) == [True] * 3
        missing = r"(?s)env 0 \(CartPole-v1, pid \d+\) failed during get_attr.*EpisodeMonitor has no attribute 'no_such_thing'"
        with pytest.raises(AttributeError, match=missing):
            ours.get_attr("no_such_thing", indices=0)
    finally:
        ours.close()
        theirs.close()
    assert ours.closed and all(not p.is_alive() for p in ours.processes)
    assert monitor_rows(tmp_path / "ours") == monitor_rows(tmp_path / "sb3") != []


@pytest.mark.training
def test_frame_stack_and_wrappers_are_the_same_in_both(tmp_path):
    from core.worker.factory import build_vec_env

    env = {"id": "CartPole-v1", "frame_stack": 2,
           "wrappers": [{"name": "gymnasium.wrappers.TimeLimit", "kwargs": {"max_episode_steps": 9}}]}
    ours, _ = build_vec_env(config("subproc", n_envs=2, **env))
    theirs, _ = build_vec_env(config("subproc-sb3", n_envs=2, **env))
    try:
        assert_same(rollout(ours, steps=25), rollout(theirs, steps=25))
    finally:
        ours.close()
        theirs.close()


@pytest.mark.training
def test_render_gives_the_same_pictures():
    from core.worker.factory import build_vec_env

    env = {"entry_point": PROBE, "kwargs": {"render_mode": "rgb_array"}}
    ours, _ = build_vec_env(config("subproc", n_envs=2, **env))
    theirs, _ = build_vec_env(config("subproc-sb3", n_envs=2, **env))
    try:
        ours.reset()
        theirs.reset()
        assert ours.render_mode == theirs.render_mode == "rgb_array"
        assert_same(ours.get_images(), theirs.get_images())
        assert_same(ours.render(), theirs.render())  # SB3 tiles the envs' pictures
        assert ours.get_images()[0].shape == (4, 6, 3)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.training
@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_env_processes_hold_neither_torch_nor_sb3(method):
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from core.envproc.recipe import EnvRecipe
    from core.worker.lean_vec_env import LeanSubprocVecEnv

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} here")
    env = LeanSubprocVecEnv([EnvRecipe(entry_point=PROBE, rank=i) for i in range(2)], start_method=method)
    try:
        assert env.env_method("loaded_modules") == [[], []]
        assert all(p.pid != os.getpid() for p in env.processes)
    finally:
        env.close()
    if method == "spawn":  # the same probe sees SB3's own env processes load both: it can fail
        sb3 = SubprocVecEnv([EnvRecipe(entry_point=PROBE)], start_method=method)
        try:
            assert {"torch", "stable_baselines3"} <= set(sb3.env_method("loaded_modules")[0])
        finally:
            sb3.close()


@pytest.mark.training
def test_env_processes_leave_a_sigterm_to_the_worker():
    """A SIGTERM to the whole tree (Ray stopping a job) is the worker's graceful stop: its envs must still
    step to the checkpoint, so they ignore it; they end on close."""
    from core.envproc.recipe import EnvRecipe
    from core.worker.lean_vec_env import LeanSubprocVecEnv

    env = LeanSubprocVecEnv([EnvRecipe(env_id="CartPole-v1", rank=i) for i in range(2)])
    try:
        env.reset()
        for process in env.processes:
            os.kill(process.pid, signal.SIGTERM)
        for _ in range(20):
            env.step(np.array([0, 1]))
        assert all(process.is_alive() for process in env.processes)
    finally:
        env.close()
    assert not any(process.is_alive() for process in env.processes)


@pytest.mark.training
@pytest.mark.parametrize(("mode", "words"), [
    ("raise", r"env 1 \(tests\.core\.worker\.lean_probe_env:FailingEnv, pid \d+\) failed during step: "
              r"RuntimeError: FailingEnv broke at step 3\nthe env process's traceback:\nTraceback"),
    ("die", r"env 1 \(tests\.core\.worker\.lean_probe_env:FailingEnv, pid \d+\) ended during step \(exit code 7\)"),
    ("kill", r"env 1 \(.*FailingEnv, pid \d+\) ended during step \(killed by SIGKILL, perhaps out of memory\)"),
])
def test_an_env_that_fails_is_an_error_naming_it_not_a_hang(mode, words):
    if mode == "kill" and not hasattr(signal, "SIGKILL"):
        pytest.skip("no SIGKILL on Windows")
    from core.envproc.recipe import EnvRecipe
    from core.worker.lean_vec_env import EnvProcessError, LeanSubprocVecEnv

    recipes = [EnvRecipe(entry_point=PROBE), EnvRecipe(entry_point=FAILING, kwargs={"mode": mode, "at": 3})]
    env = LeanSubprocVecEnv(recipes)  # SB3's choice: forkserver, spawn on Windows
    try:
        env.reset()
        env.step(np.zeros(2, dtype=np.int64))
        env.step(np.zeros(2, dtype=np.int64))
        with pytest.raises(EnvProcessError, match=f"(?s){words}"):
            env.step(np.zeros(2, dtype=np.int64))
        if mode == "raise":  # the other env and the pipes are still in step: the next call answers
            assert env.get_attr("count", indices=[1]) == [3]
    finally:
        env.close()
    assert all(not p.is_alive() for p in env.processes)


@pytest.mark.training
def test_an_env_that_cannot_be_made_says_so_when_the_vec_env_starts():
    from core.envproc.recipe import EnvRecipe
    from core.worker.lean_vec_env import EnvProcessError, LeanSubprocVecEnv

    recipes = [EnvRecipe(entry_point=PROBE), EnvRecipe(entry_point=FAILING, kwargs={"mode": "init"})]
    with pytest.raises(EnvProcessError, match=r"(?s)env 1 \(.*FailingEnv.*could not be made: ValueError: FailingEnv refuses "
                                              r"to be made\n"):
        LeanSubprocVecEnv(recipes, start_method="spawn")


@pytest.mark.training
def test_ppo_trains_through_the_worker_with_lean_env_processes(runs_dir, tmp_path):
    from core.launch.control import launch_worker

    report = tmp_path / "env-processes"
    report.mkdir()
    run = make_run(runs_dir, {"algo": "PPO", "env": {"entry_point": PROBE, "kwargs": {"report_dir": str(report)}},
                              "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 2},
                              "runtime": {"n_envs": 2, "vec_env": "subproc", "seed": 1},
                              "budget": {"total_timesteps": 3000}})
    assert launch_worker(run, extra_env={"PYTHONPATH": str(REPO)}, reap=False).wait(300) == 0, (run / "worker.log").read_text()
    status = read_status(run)
    log = (run / "worker.log").read_text()
    assert status.state == "finished", (status, log)
    assert "Warning" not in log, log  # the env processes re-import the worker's module quietly
    worker_pid = status.pid
    reports = {int(p.stem): json.loads(p.read_text()) for p in report.glob("*.json")}
    assert len(reports) >= 2 and worker_pid not in reports  # the two env processes (the spaces probe may add one)
    assert all(r["heavy"] == [] for r in reports.values()), reports
    assert records(run, "progress")[-1]["step"] >= 3000
    assert len(records(run, "episode")) >= 20
    assert len(list((run / "monitor").glob("*.monitor.csv"))) == 2


def test_vec_env_values_through_set_and_the_estimate():
    """``--set runtime.vec_env=...`` takes the three values; the estimate counts the chosen one's processes."""
    from tests.training_helpers import cli

    notes = {}
    for value in ("subproc", "subproc-sb3"):
        out = cli("estimate", "--algo", "PPO", "--env", "CartPole-v1", "--set", f"runtime.vec_env={value}",
                  "--set", "runtime.n_envs=8", "--set", "runtime.start_method=spawn", "--json")
        assert out.returncode == 0, out.stderr
        term = next(t for t in json.loads(out.stdout)["terms"] if t["name"] == "env_processes")
        notes[value] = (term["bytes"], term["note"])
    assert notes["subproc"][1].startswith("8 subproc env processes (spawn)")
    assert notes["subproc"][0] * 4 <= notes["subproc-sb3"][0]
    bad = cli("estimate", "--algo", "PPO", "--env", "CartPole-v1", "--set", "runtime.vec_env=subprocess")
    assert bad.returncode != 0
    assert "runtime.vec_env: 'subprocess': Input should be 'dummy', 'subproc' or 'subproc-sb3'" in bad.stderr


@pytest.mark.training
def test_an_env_error_in_a_real_run_ends_it_failed_naming_the_env(runs_dir):
    from core.launch.control import launch_worker

    run = make_run(runs_dir, {"algo": "PPO", "env": {"entry_point": FAILING, "kwargs": {"mode": "raise", "at": 50}},
                              "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 2, "vec_env": "subproc"}, "budget": {"total_timesteps": 5000}})
    launch_worker(run, extra_env={"PYTHONPATH": str(REPO)}, reap=False).wait(300)  # a failed run's worker exits 1
    status = read_status(run)
    assert status.state == "failed", status
    first_line = status.exit_reason.splitlines()[0]
    assert re.fullmatch(r"EnvProcessError: env 0 \(tests\.core\.worker\.lean_probe_env:FailingEnv, pid \d+\) failed "
                        r"during step: RuntimeError: FailingEnv broke at step 50", first_line), first_line


def test_the_forkserver_preloads_what_a_dash_m_main_imported_but_not_the_main_itself(monkeypatch):
    """multiprocessing runs a ``-m`` main again in each env process; preloading the module itself made runpy warn."""
    import importlib.machinery
    import types

    from core.worker.lean_vec_env import FORKSERVER_PRELOAD, forkserver_preload

    main = types.ModuleType("__main__")
    main.__spec__ = importlib.machinery.ModuleSpec("core.worker.main", None)
    from core.run.layout import RunDir
    from core.util import files

    main.RunDir, main.files, main.os = RunDir, files, os
    monkeypatch.setitem(__import__("sys").modules, "__main__", main)
    preload = forkserver_preload()
    assert preload[:len(FORKSERVER_PRELOAD)] == FORKSERVER_PRELOAD
    assert {"core.run.layout", "core.util.files", "os"} <= set(preload)
    assert "core.worker.main" not in preload and "__main__" not in preload


def test_the_tests_that_train_choose_the_lean_env_processes(runs_dir):
    """The done-when of issue 16: training tests run through ``LeanSubprocVecEnv``. Their configs come from
    ``tests.training_helpers``; a config that names its own vec env keeps it."""
    import yaml

    from core.config.validate import parse_set
    from core.queue.plan import parse_plan
    from core.run.store import load_run_config
    from tests.core.sweep.helpers import SMALL_SWEEP
    from tests.training_helpers import TEST_VEC_ENV, lean_args, lean_plan

    assert TEST_VEC_ENV == "subproc"
    assert load_run_config(make_run(runs_dir, {"algo": "A2C"})).runtime.vec_env == "subproc"
    assert load_run_config(make_run(runs_dir, {"runtime": {"vec_env": "dummy"}})).runtime.vec_env == "dummy"
    args = lean_args(["train", "--algo", "PPO", "--set", "ppo.n_steps=64"])
    assert parse_set(args[args.index("--set", 4) + 1]) == ("runtime.vec_env", "subproc")
    assert lean_args(["train", "--set", "runtime.vec_env=subproc-sb3"]).count("--set") == 1
    assert lean_args(["resume", "x"]) == ["resume", "x"]
    text = "jobs:\n  - {name: a, algo: A2C}\n  - {name: b, set: {runtime.vec_env: dummy}}\n"
    plan = parse_plan(yaml.safe_load(lean_plan(text)))
    assert [job.config().runtime.vec_env for job in plan.jobs] == ["subproc", "dummy"]
    assert SMALL_SWEEP["base"]["set"]["runtime.vec_env"] == "subproc"


def test_the_tunes_memory_counts_lean_env_processes_by_their_own_share():
    """The Tune table's host MiB: env processes add their own memory (shared pages once), not each one's RSS, which
    counts python, numpy and gymnasium again in every process (two lean envs read +150 MiB)."""
    import psutil

    from core.telemetry.host import own_memory
    from core.util.procs import process_tree
    from core.worker.factory import build_vec_env

    def tree_memory_bytes(pid: int) -> int:
        memory = own_memory(process_tree(pid))
        assert memory is not None and memory.measure == "pss"
        return memory.memory_bytes

    before = tree_memory_bytes(os.getpid())
    env, _ = build_vec_env(config("subproc", n_envs=3))
    try:
        env.reset()
        for _ in range(20):
            env.step(np.array([env.action_space.sample() for _ in range(3)]))
        added = tree_memory_bytes(os.getpid()) - before
        rss = sum(psutil.Process(p.pid).memory_info().rss for p in env.processes)
        assert 0 < added < rss, (added, rss)
        assert added < 3 * (40 << 20), added
    finally:
        env.close()
