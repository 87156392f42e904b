"""Issue 43: a run whose env raises the CUDA error of a GPU driver reset (Windows' TDR) once resumes by itself to
``finished``, in a queue (auto_resume's default there) and on its own with ``runtime.auto_resume`` set, and its
record, its notification, ``rlpanel runs ID`` and the morning report name the reset."""

from __future__ import annotations

import pytest
import yaml

from core.notify.settings import NotifySettings, Target, save_settings
from core.queue.state import read_queue
from core.results.report import morning_report
from core.run.status import read_status
from core.run.store import RunStore
from tests.core.queue.test_queue import plan_over
from tests.notify_sink import NotifySink
from tests.training_helpers import cli, make_run, run_worker, wait_for, wait_state

ENV = "tests.core.night.night_env:NightEnv"
# torch's message for cudaErrorLaunchFailure: the error on the first line, its advice after
RESET = ("CUDA error: unspecified launch failure\nCUDA kernel errors might be asynchronously reported at some other API "
         "call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
         "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")


def env_kwargs(tmp_path) -> dict:
    """Raise the reset at step 200 (after the checkpoint at 128) of the first attempt only."""
    return {"raise_at": 200, "marker": str(tmp_path / "reset-once"), "error": RESET}


def check_record(run, limit: int) -> None:
    status = read_status(run)
    assert status.state == "finished" and status.attempt == 2 and status.resumed_from == "failed", status
    auto = status.auto_resume
    assert (auto["count"], auto["limit"], auto["gave_up"]) == (1, limit, None), auto
    assert [h["kind"] for h in auto["history"]] == ["gpu_reset"] and auto["history"][0]["from_step"] == 128
    assert auto["history"][0]["reason"].startswith("GPU driver reset"), auto["history"][0]
    shown = cli("runs", run.name, "--runs-dir", str(run.parent)).stdout
    assert f"automatic resume: 1 of {limit} used, after a GPU driver reset" in shown, shown
    row = next(r for r in morning_report(RunStore(run.parent), since=0).rows if r.run_id == run.name)
    assert "1 automatic resume, after a GPU driver reset" in row.resumed, row.resumed


@pytest.mark.training
def test_a_run_with_auto_resume_survives_a_driver_reset_in_its_env_process(runs_dir, tmp_path):
    """The env runs in its own process (vec_env subproc): the reset arrives wrapped in the env process's error."""
    with NotifySink() as sink:
        save_settings(NotifySettings((Target(sink.url, ("failed", "finished")),)))
        run = make_run(runs_dir, {
            "algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "env": {"entry_point": ENV, "kwargs": env_kwargs(tmp_path)},
            "runtime": {"n_envs": 1, "vec_env": "subproc", "telemetry_hz": 0, "auto_resume": 1,
                        "auto_resume_after_s": 0.2},
            "budget": {"total_timesteps": 512, "checkpoint_every": 128}})
        run_worker(run, timeout=120)  # its supervisor plans the resume, waits 0.2 s and launches it
        assert wait_state(run, ("finished",), timeout=120) == "finished"
        failed = sink.wait(lambda m: "failed" in m["title"])
        sink.wait(lambda m: "finished" in m["title"])
    message = failed["message"]
    assert "GPU driver reset in env 0 (" in message and "CUDA error: unspecified launch failure" in message, message
    assert "raise TdrDelay" in message and "a smaller batch_size or network" in message, message
    assert "it resumes by itself at" in message and "(automatic resume 1 of 1)" in message, message
    check_record(run, limit=1)


@pytest.mark.training
def test_a_queued_run_survives_a_driver_reset_and_the_queue_finishes(runs_dir, tmp_path):
    """In a queue, auto_resume's default (2) resumes it; the env runs in the worker (vec_env dummy): the reset is
    torch's own RuntimeError."""
    job = {"name": "reset", "algo": "PPO", "timesteps": 512,
           "set": {"ppo.n_steps": 64, "ppo.batch_size": 64, "ppo.n_epochs": 1, "runtime.n_envs": 1,
                   "runtime.vec_env": "dummy", "runtime.telemetry_hz": 0, "runtime.auto_resume_after_s": 0.2,
                   "budget.checkpoint_every": 128, "env.entry_point": ENV, "env.kwargs": env_kwargs(tmp_path)}}
    plan = tmp_path / "night.yaml"
    plan.write_text(yaml.safe_dump({"parallel": 1, "jobs": [job]}, sort_keys=False))
    started = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
    assert started.returncode == 0, started.stderr
    ended = wait_for(lambda: plan_over(runs_dir), timeout=180, what="the queue to end")
    assert ended.state == "finished", [(j.name, j.status, j.reason) for j in ended.jobs]
    (only,) = read_queue(runs_dir).jobs
    assert only.status == "finished"
    check_record(runs_dir / only.run_id, limit=2)
