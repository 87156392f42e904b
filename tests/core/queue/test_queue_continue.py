"""A plan whose queue failed or was cancelled continues: finished jobs never run again."""

from __future__ import annotations

import pytest

from core.queue.state import read_queue
from tests.core.queue.test_queue import plan_file, plan_over
from tests.training_helpers import cli, wait_for

PLAN = """
parallel: 1
on_failure: continue
jobs:
  - {name: broken, env: "no_such_pkg.envs:Missing", timesteps: 100}
  - {name: base, algo: random, env: CartPole-v1, episodes: 5}
"""


@pytest.mark.training
def test_running_a_failed_plan_again_keeps_its_finished_jobs(tmp_path, runs_dir):
    plan = plan_file(tmp_path, PLAN)
    assert cli("queue", "run", str(plan), "--runs-dir", str(runs_dir)).returncode == 0
    first = wait_for(lambda: plan_over(runs_dir), timeout=180, what="the plan to end")
    assert first.state == "finished with failures"
    base_run = first.job("base").run_id
    text = cli("queue", "status", "--runs-dir", str(runs_dir)).stdout
    assert "rlpanel queue run with the same plan continues it: runs broken; finished jobs are kept" in text

    again = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
    assert again.returncode == 0 and "running broken again; finished jobs are kept" in again.stdout
    second = wait_for(lambda: (s := plan_over(runs_dir)) and s.restarts is not None and s.id == first.id
                      and s.launched_at != first.launched_at and s, timeout=180, what="the plan to end again")
    jobs = {j.name: j for j in second.jobs}
    assert jobs["base"].status == "finished" and jobs["base"].run_id == base_run  # not run again
    assert jobs["broken"].status == "failed"  # ran again, failed again
    assert [p.name for p in runs_dir.iterdir() if p.name.endswith("-base")] == [base_run]
    assert len([p for p in runs_dir.iterdir() if p.name.endswith("-broken")]) == 2  # one per attempt
    assert read_queue(runs_dir).state == "finished with failures"
