"""Two commands racing on one run: two ``rlpanel resume`` at once launch one attempt and refuse the
other in one line (two ``queue run`` at once: test_queue_race.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from core.run.status import read_status
from tests.faults.conftest import SEED
from tests.training_helpers import cli, copy_run, wait_state

pytestmark = pytest.mark.training


@pytest.mark.parametrize("round_", range(2))
def test_two_resumes_at_once_launch_one_attempt(trained_run, runs_dir, round_):
    run = copy_run(trained_run, runs_dir / f"r{SEED}-{round_}", state="stopped")
    before = read_status(run).attempt or 1
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda _: cli("resume", run.name, "--timesteps", "128", "--detach", "--runs-dir",
                                           str(run.parent)), range(2)))
    codes = sorted(d.returncode for d in done)
    assert codes[0] == 0 and codes[1] != 0, [(d.returncode, d.stdout, d.stderr) for d in done]
    refused = next(d for d in done if d.returncode != 0).stderr.strip().splitlines()
    assert len(refused) == 1 and ("starting" in refused[0] or "running" in refused[0]) and "Traceback" not in refused[0]
    wait_state(run, ("finished",), timeout=240)
    assert read_status(run).attempt == before + 1
