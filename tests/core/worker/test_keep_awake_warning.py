"""A machine that cannot be kept awake is warned about once per run, in words that say what it means, not on
every attempt: a real worker, started, then resumed, with a systemd-inhibit that cannot reach the system bus."""

from __future__ import annotations

import os
import sys

import pytest

from tests.training_helpers import make_run, records, run_worker


@pytest.mark.training
@pytest.mark.skipif(sys.platform != "linux", reason="systemd-inhibit is Linux's")
def test_the_keep_awake_warning_is_said_once_per_run(runs_dir, tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "systemd-inhibit"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Failed to connect to bus: No such file or directory' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")  # the worker inherits it
    tiny = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "runtime": {"n_envs": 2}, "policy": {"net_arch": [8]}}
    run = make_run(runs_dir, {**tiny, "budget": {"total_timesteps": 128, "checkpoint_every": 128}})
    assert run_worker(run) == 0, (run / "worker.log").read_text()[-2000:]
    from core.launch.control import resume_run

    resume_run(run, 128, reap=False)  # a second attempt of the same run: it fails the same way
    from tests.training_helpers import wait_state

    assert wait_state(run, ("finished",)) == "finished", (run / "worker.log").read_text()[-2000:]
    warned = [e["message"] for e in records(run, "event") if "keep the machine awake" in e["message"]]
    assert warned == ["could not keep the machine awake (systemd-inhibit: Failed to connect to bus: No such file or "
                      "directory): the machine may go to sleep during the run, which pauses the training until it "
                      "wakes; to prevent it, turn off automatic sleep in the system's power settings while it trains"]
    assert len([r for r in records(run, "attempt")]) == 2
    from core.run.status import read_status

    assert read_status(run).resumed_from == "finished"  # the state it continued from, not the launch's "starting"
    assert (run / "worker.log").read_text().count("keep the machine awake") == 1
