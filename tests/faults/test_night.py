"""The fault suite's night (issue 28): a queue of three runs where one env stalls, one run is killed outright
(its worker and its supervisor: a power blip for that run) and one trains undisturbed. Nobody presses a
button; by the end all three are ``finished`` and no record is lost: every record of every run is whole,
the stalled run's cut-short episode is recorded as such, and the killed run's records past its checkpoint
are kept aside, not dropped."""

from __future__ import annotations

import os
import signal

import psutil
import pytest

from core.queue.state import read_queue
from core.run.layout import RunDir
from core.run.status import SUPERVISOR_MODULE, read_status
from core.util.jsonl import read_jsonl
from tests.core.queue.test_queue import plan_over
from tests.faults.conftest import TALLY
from tests.training_helpers import cli, last_step, wait_for

ENV = "tests.core.night.night_env:NightEnv"
TRAIN = {"algo": "PPO", "ppo.n_steps": 64, "ppo.batch_size": 64, "ppo.n_epochs": 1, "runtime.n_envs": 1,
         "runtime.telemetry_hz": 0, "budget.checkpoint_every": 128, "env.entry_point": ENV}


def plan_text(tmp_path) -> str:
    import yaml

    def job(name, total, **extra):
        return {"name": name, "algo": "PPO", "timesteps": total, "set": {**TRAIN, **extra}}

    marker = str(tmp_path / "stall-once")
    jobs = [job("stalls", 768, **{"env.kwargs": {"hang_at": 200, "marker": marker}, "runtime.vec_env": "subproc",
                                  "runtime.stall_after_s": 2, "runtime.on_stall": "restart-envs"}),
            # long enough to be killed mid-training: 1,536 steps took ~1 s on an idle machine, and the run had finished
            # by the time the test saw it past step 400 (it then found nothing resumed)
            job("killed", 12_288, **{"runtime.vec_env": "dummy", "runtime.auto_resume_after_s": 0.5}),
            job("fine", 512, **{"runtime.vec_env": "subproc"})]
    for j in jobs:
        del j["set"]["algo"]
    return yaml.safe_dump({"parallel": 3, "jobs": jobs}, sort_keys=False)


@pytest.mark.training
def test_a_night_with_a_stalled_env_and_a_killed_run_ends_with_all_three_finished(tmp_path, runs_dir):
    plan = tmp_path / "night.yaml"
    plan.write_text(plan_text(tmp_path))
    started = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
    assert started.returncode == 0, started.stderr

    def killed_run():
        state = read_queue(runs_dir)
        job = next(j for j in state.jobs if j.name == "killed")
        run = runs_dir / job.run_id if job.run_id else None
        return run if run is not None and last_step(run) >= 400 else None

    run = wait_for(killed_run, timeout=240, what="the killed job's run to pass step 400")
    worker = psutil.Process(read_status(run).pid)
    supervisor = worker.parent()
    assert supervisor is not None and SUPERVISOR_MODULE in supervisor.cmdline()
    for proc in (supervisor, worker):  # the run's whole process tree: nothing of it is left to report its end
        os.kill(proc.pid, signal.SIGKILL)
    TALLY["night runs killed"] += 1

    ended = wait_for(lambda: plan_over(runs_dir), timeout=400, what="the night's queue to end")
    assert ended.state == "finished", [(j.name, j.status, j.reason) for j in ended.jobs]
    for job in ended.jobs:
        status = read_status(runs_dir / job.run_id)
        assert status.state == "finished", (job.name, status.exit_reason)
        check_records(runs_dir / job.run_id)
        TALLY["night runs finished"] += 1

    stalled = runs_dir / next(j.run_id for j in ended.jobs if j.name == "stalls")
    events = [r for r in read_jsonl(RunDir(stalled).metrics) if r.get("kind") == "event"]
    assert [e["code"] for e in events if e.get("code") in ("stalled", "stall_over")] == ["stalled", "stall_over"]
    cut = [r for r in read_jsonl(RunDir(stalled).metrics) if r.get("kind") == "episode" and r.get("truncated")]
    assert len(cut) == 1 and "stalled" in cut[0]["truncated"]
    TALLY["night stalls caught"] += 1

    resumed = read_status(run)
    assert resumed.attempt == 2 and resumed.auto_resume["count"] == 1, resumed.auto_resume
    assert resumed.auto_resume["history"][0]["kind"] == "crashed", "no supervisor lived to say more"
    attempts = [r["step"] for r in read_jsonl(RunDir(run).metrics) if r.get("kind") == "attempt"]
    assert attempts[0] == 0 and attempts[1] >= 384, attempts
    moved = list(read_jsonl(RunDir(run).superseded)) if RunDir(run).superseded.exists() else []
    assert all(r["step"] > attempts[1] for r in moved if "step" in r), "only records past the checkpoint moved aside"
    TALLY["night resumes"] += 1


def check_records(run) -> None:
    """Every line of metrics.jsonl is a whole record, the progress reaches the plan, and steps never go back."""
    text = RunDir(run).metrics.read_text()
    assert text.endswith("\n")
    records = list(read_jsonl(RunDir(run).metrics))
    assert len(records) == text.count("\n"), "a torn or unreadable line"
    steps = [r["step"] for r in records if r.get("kind") == "progress"]
    assert steps == sorted(steps) and steps[-1] >= read_status(run).planned_timesteps
    assert any(r.get("kind") == "episode" for r in records)
