"""A plan whose queue failed or was cancelled continues: finished jobs never run again."""

from __future__ import annotations

import pytest

from core.queue.state import is_active, read_queue
from core.run.status import read_status
from tests.core.queue.test_queue import plan_file, plan_over
from tests.training_helpers import cli, last_step, wait_for

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


@pytest.mark.training
@pytest.mark.timeout(600)
def test_a_queue_cancelled_with_stop_running_and_run_again_resumes_its_stopped_job_to_finished(tmp_path, runs_dir):
    """Issue 42: the rerun ran nothing ("running nothing again ... (1 stopped)"), though the README says a rerun after a
    cancel runs the unfinished jobs. The stopped job's own run resumes from its checkpoint: one run, one curve."""
    # 10 ms steps while the gate file exists: 2,048 steps take 20 s at least, so the job is still training when the
    # cancel comes after its first checkpoint; the gate goes before the rerun, which then trains at full speed
    gate = tmp_path / "slow"
    gate.touch()
    plan = plan_file(tmp_path, f"""
parallel: 1
jobs:
  - name: train
    algo: PPO
    env: "tests.core.run.fast_env:FastEpisodesEnv"
    timesteps: 2048
    set: {{ppo.n_steps: 64, ppo.batch_size: 64, ppo.n_epochs: 1, runtime.n_envs: 1, budget.checkpoint_every: 256,
           env.kwargs: {{steps: 20, delay_s: 0.01, slow_while: "{gate}"}}}}
""")
    assert cli("queue", "run", str(plan), "--runs-dir", str(runs_dir)).returncode == 0

    def checkpointed():
        state = read_queue(runs_dir)
        run_id = state.job("train").run_id if state else None
        return run_id and (runs_dir / run_id / "checkpoints" / "latest.json").is_file() and run_id
    run_id = wait_for(checkpointed, timeout=180, what="the job's first checkpoint")
    cancelled = cli("queue", "cancel", "--stop-running", "--runs-dir", str(runs_dir))
    assert cancelled.returncode == 0, cancelled.stderr
    first = wait_for(lambda: (s := read_queue(runs_dir)) and not is_active(s) and s, timeout=180,
                     what="the queue to end cancelled (its running job stopped)")
    assert first.state == "cancelled" and first.job("train").status == "stopped", first
    assert read_status(runs_dir / run_id).state == "stopped"
    assert "runs train;" in cli("queue", "status", "--runs-dir", str(runs_dir)).stdout

    gate.unlink()
    again = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
    assert again.returncode == 0, again.stderr
    assert "running train (resumes its run from the checkpoint at step" in again.stdout, again.stdout
    second = wait_for(lambda: (s := plan_over(runs_dir)) and s.launched_at != first.launched_at and s, timeout=300,
                      what="the continued queue to end")
    assert second.state == "finished" and second.job("train").status == "finished", second
    assert second.job("train").run_id == run_id, "the same run, resumed"
    status = read_status(runs_dir / run_id)
    assert status.state == "finished" and status.resumed_from == "stopped" and status.attempt == 2, status
    # the stop cut a rollout short, so the resumed run's whole rollouts may pass 2,048 a little
    assert status.exit_reason.startswith("reached ") and last_step(runs_dir / run_id) >= 2048, status.exit_reason
    assert [p.name for p in runs_dir.iterdir() if p.name.endswith("-train")] == [run_id], "no second run"
