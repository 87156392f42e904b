"""A plan job with seeds: validated, expanded into one queue job per seed, and run as one group."""

from __future__ import annotations

import pytest
import yaml

from core.config.errors import ConfigError
from core.queue.plan import parse_plan, save_plan
from core.queue.record import QueueState
from core.queue.state import new_state, pending_after, read_queue, ready_jobs
from core.run.status import read_status
from core.run.store import load_run_config
from tests.training_helpers import cli, lean_plan, wait_for


def plan_of(*jobs: dict, parallel: int = 1):
    return parse_plan({"parallel": parallel, "jobs": list(jobs)})


def job(name: str, **more) -> dict:
    return {"name": name, "algo": "random", "env": "CartPole-v1", "episodes": 2, **more}


def test_seeds_are_kept_as_written(tmp_path):
    plan = plan_of(job("a", seeds=3), job("b", seeds=[3, 7, 11]), job("c", seeds="5,6"), job("d", seeds=1), job("e"))
    assert [j.seeds for j in plan.jobs] == [3, [3, 7, 11], [5, 6], None, None]
    assert [j.seed_list() for j in plan.jobs] == [[0, 1, 2], [3, 7, 11], [5, 6], None, None]
    save_plan(plan, tmp_path / "plan.yaml")
    saved = yaml.safe_load((tmp_path / "plan.yaml").read_text())
    assert [j.get("seeds") for j in saved["jobs"]] == [3, [3, 7, 11], [5, 6], None, None]
    assert parse_plan(saved) == plan


@pytest.mark.parametrize(("seeds", "said"), [
    (0, "jobs.0.seeds: 0 runs cannot be launched"),
    ([2, 2], "jobs.0.seeds: seed 2 is given twice"),
    ("many", "jobs.0.seeds: 'many' is not a list of seeds"),
    (500, "jobs.0.seeds: 500 runs is more than 100"),
])
def test_bad_seeds_in_a_plan_name_the_job_field(seeds, said):
    with pytest.raises(ConfigError) as refused:
        plan_of(job("a", seeds=seeds))
    assert said in str(refused.value), str(refused.value)


def test_seeds_and_a_seed_setting_in_one_job_are_refused():
    with pytest.raises(ConfigError, match="give seeds or set runtime.seed, not both"):
        plan_of(job("a", seeds=2, set={"runtime.seed": 4}))


def test_a_job_with_seeds_is_one_queue_job_per_seed_and_a_job_after_it_waits_for_all():
    plan = plan_of(job("a", seeds=[3, 7]), job("b", after=["a"]), job("c"))
    state = new_state(plan, "plan.yaml")
    assert [j.name for j in state.jobs] == ["a#seed3", "a#seed7", "b", "c"]
    first, second = state.jobs[:2]
    assert (first.base, first.seed, second.seed) == ("a", 3, 7)
    assert first.group == {"id": f"{state.id}-a-x2", "seed": 3, "size": 2, "name": "a"}
    assert second.group["id"] == first.group["id"] and state.jobs[2].group is None
    assert state.plan_entry("a#seed7")["name"] == "a" and state.after("b") == ["a"]
    assert [j.name for j in ready_jobs(state)] == ["a#seed3", "a#seed7", "c"]
    first.status = "finished"
    assert pending_after(state, "b") == ["a"] and "b" not in [j.name for j in ready_jobs(state)]
    second.status = "failed"  # ended: "after" waits for an end, whatever it was (on_failure decides the rest)
    assert pending_after(state, "b") == [] and "b" in [j.name for j in ready_jobs(state)]
    again = QueueState.from_json(state.to_json())  # the state file keeps what each seed is
    assert [(j.base, j.seed, j.group) for j in again.jobs] == [(j.base, j.seed, j.group) for j in state.jobs]


@pytest.mark.training
def test_a_plan_with_seeds_runs_each_seed_as_one_group(tmp_path, runs_dir):
    path = tmp_path / "plan.yaml"
    path.write_text(lean_plan(yaml.safe_dump({"parallel": 2, "jobs": [job("base", seeds=2), job("late", after=["base"])]})))
    started = cli("queue", "run", str(path), "--runs-dir", str(runs_dir))
    assert started.returncode == 0, started.stderr
    assert "2 jobs (3 runs" in started.stdout + started.stderr
    state = wait_for(lambda: (s := read_queue(runs_dir)) and s.state not in ("running", "cancelling") and s,
                     timeout=240, what="the plan to end")
    assert state.state == "finished", state.to_json()
    jobs = {j.name: j for j in state.jobs}
    assert sorted(jobs) == ["base#seed0", "base#seed1", "late"] and all(j.status == "finished" for j in jobs.values())
    seeds = {name: read_status(runs_dir / jobs[name].run_id) for name in ("base#seed0", "base#seed1")}
    groups = [s.group for s in seeds.values()]
    assert groups[0]["id"] == groups[1]["id"] == f"{state.id}-base-x2"
    assert [g["seed"] for g in groups] == [0, 1] and {g["size"] for g in groups} == {2}
    assert [load_run_config(runs_dir / jobs[n].run_id).runtime.seed for n in seeds] == [0, 1]
    assert jobs["base#seed1"].run_id.endswith("-base-s1")
    late = read_status(runs_dir / jobs["late"].run_id)
    assert late.group is None and late.started_at >= max(s.ended_at for s in seeds.values())


@pytest.mark.training
def test_a_plan_job_on_the_sbx_engine_trains_with_jax_to_its_end(tmp_path, runs_dir):
    sbx = {"name": "jax", "algo": "PPO", "env": "CartPole-v1", "timesteps": 256,
           "set": {"runtime.engine": "sbx", "ppo.n_steps": 64, "ppo.batch_size": 64, "ppo.n_epochs": 1}}
    path = tmp_path / "plan.yaml"
    path.write_text(lean_plan(yaml.safe_dump({"jobs": [sbx]})))
    started = cli("queue", "run", str(path), "--runs-dir", str(runs_dir))
    assert started.returncode == 0, started.stderr
    state = wait_for(lambda: (s := read_queue(runs_dir)) and s.state not in ("running", "cancelling") and s,
                     timeout=240, what="the plan to end")
    assert state.state == "finished", state.to_json()
    [job_run] = [j.run_id for j in state.jobs]
    assert load_run_config(runs_dir / job_run).runtime.engine == "sbx"
    status = read_status(runs_dir / job_run)
    assert status.state == "finished" and status.device == "cpu"  # JAX's device, as the worker writes it
    events = (runs_dir / job_run / "metrics.jsonl").read_text()
    assert "engine sbx: jax " in events  # the run says what trained it
