"""``rlpanel runs RUN`` says why a run is paused and how long it was paused."""

from __future__ import annotations

from core.config.validate import validate_config
from core.run.status import write_status
from core.run.store import RunStore
from core.util.procs import process_identity
from tests.training_helpers import cli


def test_runs_details_name_the_pause(runs_dir):
    run = RunStore(runs_dir).create(validate_config({"env": {"id": "CartPole-v1"}}).config)
    write_status(run, state="paused", pause_reason="GPU 0 at 90 C, at or above 85 C for 10 s", paused_s=125.0,
                 **process_identity())  # this test is its worker: alive, so it reads as paused
    out = cli("runs", run.name, "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    assert "state: paused" in out.stdout and "paused: GPU 0 at 90 C" in out.stdout and "paused for 2:05 in all" in out.stdout
