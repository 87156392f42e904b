"""The queue: plan validation, scheduling with after and fit, a runner killed mid-plan."""

from __future__ import annotations

import json

import psutil
import pytest

from core.config.errors import ConfigError
from core.queue.plan import parse_plan
from core.queue.state import fits_next_to, read_queue
from core.run.status import read_status
from core.run.store import RunStore
from tests.training_helpers import cli, lean_plan, wait_for


def plan_file(tmp_path, text: str):
    """The plan's file; its jobs train through the tests' vec env (``lean_plan``)."""
    path = tmp_path / "plan.yaml"
    path.write_text(lean_plan(text))
    return path


@pytest.mark.parametrize(("raw", "message"), [
    ({"jobs": [{"name": "a"}, {"name": "a"}]}, "repeated: a"),
    ({"jobs": [{"name": "a", "after": ["b"]}]}, "unknown jobs ['b']"),
    ({"jobs": [{"name": "a", "after": ["b"]}, {"name": "b", "after": ["a"]}]}, "cycle"),
    ({"jobs": [{"name": "a", "algo": "SAC", "set": {"sac.batch_size": 0}}]}, "jobs.0(a).sac.batch_size"),
    ({"jobs": [{"name": "a", "preset": "nope"}]}, "no preset named 'nope'"),
    ({"parallel": 0, "jobs": [{"name": "a"}]}, "parallel"),
    ({"jobs": [{"name": "a", "colour": "red"}]}, "jobs.0.colour"),
])
def test_bad_plans_are_refused_naming_the_job_and_field(raw, message):
    with pytest.raises(ConfigError) as info:
        parse_plan(raw)
    assert message in str(info.value)


def test_fit_next_to_running_jobs():
    est = {"on_gpu": True, "gpu_name": "RTX 4060 Laptop", "capacity_bytes": 8 * 2**30, "gpu_bytes": 3 * 2**30,
           "host_bytes": 2**30, "host_capacity_bytes": 16 * 2**30}
    assert fits_next_to(est, []) == (True, "")
    assert fits_next_to(est, [est])[0]
    ok, why = fits_next_to(est, [est, est])
    assert not ok and "would not fit next to the running jobs on RTX 4060 Laptop" in why


def job_runs(runs_dir) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for info in RunStore(runs_dir).list():
        tag = info.status.queue or {}
        out.setdefault(tag.get("job"), []).append(info.id)
    return out


@pytest.mark.training
def test_plan_runs_to_the_end_with_after_respected(tmp_path, runs_dir):
    plan = plan_file(tmp_path, """
parallel: 2
jobs:
  - {name: base, algo: random, env: CartPole-v1, episodes: 30}
  - {name: a2c, algo: A2C, env: CartPole-v1, timesteps: 1500}
  - {name: late, algo: A2C, env: CartPole-v1, timesteps: 500, after: [base, a2c]}
""")
    started = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
    assert started.returncode == 0, started.stderr
    state = wait_for(lambda: plan_over(runs_dir), timeout=240, what="the plan to end")
    assert state.state == "finished", state
    jobs = {j.name: j for j in state.jobs}
    assert all(j.status == "finished" for j in jobs.values())
    runs = job_runs(runs_dir)
    assert sorted(runs) == ["a2c", "base", "late"] and all(len(v) == 1 for v in runs.values())
    late_started = read_status(runs_dir / jobs["late"].run_id).started_at
    for dep in ("base", "a2c"):
        assert late_started >= read_status(runs_dir / jobs[dep].run_id).ended_at
    out = cli("queue", "status", "--json", "--runs-dir", str(runs_dir))
    assert json.loads(out.stdout)["state"] == "finished"


@pytest.mark.training
def test_killed_runner_resumes_without_running_a_job_twice(tmp_path, runs_dir):
    plan = plan_file(tmp_path, """
parallel: 1
jobs:
  - {name: one, algo: A2C, env: CartPole-v1, timesteps: 3000}
  - {name: two, algo: random, env: CartPole-v1, episodes: 20}
  - {name: three, algo: random, env: CartPole-v1, episodes: 20}
""")
    assert cli("queue", "run", str(plan), "--runs-dir", str(runs_dir)).returncode == 0
    state = wait_for(lambda: (s := read_queue(runs_dir)) and s.jobs[0].status == "running" and s, what="job one running")
    psutil.Process(state.runner["pid"]).kill()  # SIGKILL on POSIX, TerminateProcess on Windows
    wait_for(lambda: read_queue(runs_dir).state == "crashed", timeout=30, what="the runner to read as crashed")
    again = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
    assert again.returncode == 0 and "continuing queue" in again.stdout
    state = wait_for(lambda: plan_over(runs_dir), timeout=240, what="the plan to end")
    assert state.state == "finished" and state.restarts == 1
    runs = job_runs(runs_dir)
    assert {k: len(v) for k, v in runs.items()} == {"one": 1, "two": 1, "three": 1}


@pytest.mark.training
@pytest.mark.parametrize(("on_failure", "last"), [("continue", "finished"), ("stop", "skipped")])
def test_a_failing_job_is_reported_and_the_plan_follows_on_failure(tmp_path, runs_dir, on_failure, last):
    plan = plan_file(tmp_path, f"""
parallel: 1
on_failure: {on_failure}
jobs:
  - {{name: broken, env: "no_such_pkg.envs:Missing", timesteps: 100}}
  - {{name: after, algo: random, env: CartPole-v1, episodes: 5}}
""")
    assert cli("queue", "run", str(plan), "--runs-dir", str(runs_dir)).returncode == 0
    state = wait_for(lambda: plan_over(runs_dir), timeout=180, what="the plan to end")
    jobs = {j.name: j for j in state.jobs}
    assert jobs["broken"].status == "failed" and "no_such_pkg" in jobs["broken"].reason
    assert jobs["after"].status == last
    assert state.state == "finished with failures"
    text = cli("queue", "status", "--runs-dir", str(runs_dir)).stdout
    assert "broken" in text and "failed" in text and "no_such_pkg" in text


def plan_over(runs_dir):
    """The queue's state once it is no longer running (else None)."""
    state = read_queue(runs_dir)
    return state if state and state.state != "running" else None


def test_a_queue_state_file_of_version_1_reads_and_keeps_what_a_newer_version_wrote(runs_dir):
    """The one reader: an old file (no queue_version, no node) reads with the missing fields as None; keys
    it does not know survive a read and a write; every write says version 2."""
    from core.queue.state import QueueFolder, load_queue, write_queue

    folder = QueueFolder(runs_dir)
    folder.path.mkdir(parents=True)
    old = {"id": "20261101-2300", "plan_path": "plan.yaml", "state": "finished", "created_at": 1.0, "runner": None,
           "plan": {"parallel": 2, "on_failure": "stop", "jobs": [{"name": "a"}, {"name": "b", "after": ["a"]}]},
           "jobs": [{"name": "a", "status": "finished", "run_id": "r-a", "reason": None, "started_at": 2.0, "ended_at": 3.0},
                    {"name": "b", "status": "failed", "run_id": None, "reason": "boom", "started_at": None,
                     "ended_at": None, "priority": 7}],
           "from_the_future": {"x": 1}}
    folder.state.write_text(json.dumps(old))
    state = load_queue(runs_dir)
    assert (state.parallel, state.on_failure, state.after("b"), state.restarts, state.ray) == (2, "stop", ["a"], None, None)
    assert state.job("a").run_id == "r-a" and state.job("b").reason == "boom" and state.job("a").node is None
    write_queue(runs_dir, state)
    again = json.loads(folder.state.read_text())
    assert again["queue_version"] == 2 and again["from_the_future"] == {"x": 1} and again["jobs"][1]["priority"] == 7
    assert {k: again[k] for k in old if k != "jobs"} == {k: old[k] for k in old if k != "jobs"}
    assert load_queue(runs_dir) == state
