"""Runs on a real local Ray head: a plan and a sweep through it, stop (through STOP and through Ray),
a job killed on the Ray side, and doctor against the head and against a dead address.

The head (``conftest.ray_head``) is this machine, so the runs folder is shared by being the same
folder; the nodes' python is this venv's (on the head's PATH, or named).
"""

from __future__ import annotations

import json
import sys

import psutil
import pytest

from core.cluster.jobs import job_view, settle_cluster_run
from core.cluster.target import ClusterTarget
from core.launch.control import launch_worker, resume_run, stop_run
from core.queue.state import read_queue
from core.run.status import read_status, write_status
from core.sweep.control import sweep_status
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file
from tests.training_helpers import cli, make_run, wait_for, wait_state

pytestmark = pytest.mark.training

TINY = {"runtime": {"n_envs": 1, "vec_env": "dummy", "telemetry_hz": 1, "seed": 1},
        "ppo": {"n_steps": 256, "batch_size": 64}}


def cluster_run(runs_dir, head, timesteps: int, **runtime):
    target = ClusterTarget.make(head.address, python=sys.executable)
    run = make_run(runs_dir, {"algo": "PPO", "env": {"id": "CartPole-v1"}, **TINY,
                              "runtime": {**TINY["runtime"], **runtime},
                              "budget": {"total_timesteps": timesteps, "checkpoint_every": 256}})
    write_status(run, ray=target.to_json())
    return run


def test_a_plan_runs_through_the_ray_head(tmp_path, runs_dir, ray_head, qtbot):
    plan = tmp_path / "plan.yaml"
    plan.write_text("""
parallel: 2
jobs:
  - {name: one, algo: PPO, env: CartPole-v1, timesteps: 600,
     set: {runtime.n_envs: 1, runtime.vec_env: dummy, ppo.n_steps: 256, ppo.batch_size: 64, runtime.telemetry_hz: 1}}
  - {name: two, algo: A2C, env: CartPole-v1, timesteps: 600,
     set: {runtime.n_envs: 1, runtime.vec_env: dummy, runtime.telemetry_hz: 1}}
""")
    # the nodes' python is the default "python": the head's PATH finds this venv's first
    started = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir), "--ray", ray_head.address)
    assert started.returncode == 0, started.stderr
    assert "Ray cluster" in started.stdout
    state = wait_for(lambda: (s := read_queue(runs_dir)) and s.state not in ("running", "cancelling") and s,
                     timeout=300, what="the plan to end on the cluster", poll=1.0)
    assert state.state == "finished", state
    assert state.ray["address"] == ray_head.address
    for job in state.jobs:
        run_dir = runs_dir / job.run_id
        status = read_status(run_dir)
        assert status.state == "finished" and (run_dir / "summary.json").is_file()
        assert status.ray["job_id"].startswith("rlpanel-") and status.ray["address"] == ray_head.address
        job_id = status.ray["job_id"]
        wait_for(lambda job_id=job_id: job_view(ray_head.address, job_id).status == "SUCCEEDED", timeout=60,
                 what="Ray to report the job succeeded")  # Ray ran it, not this machine
        assert job.node, job  # the node the queue saw it on
        assert "supervisor: " in (run_dir / "worker.log").read_text() or (run_dir / "worker.log").stat().st_size > 0
    table = cli("queue", "status", "--runs-dir", str(runs_dir))
    assert f"on {state.jobs[0].node}" in table.stdout and "Ray cluster" in table.stdout
    from app.queue.status_view import COLUMNS, QueueStatusView  # the Queue tab's view of the same queue

    view = QueueStatusView(runs_dir)
    qtbot.addWidget(view)
    shown = {view.tree.topLevelItem(i).text(0): view.tree.topLevelItem(i).text(COLUMNS.index("Node"))
             for i in range(view.tree.topLevelItemCount())}
    assert shown == {job.name: job.node for job in state.jobs}


def test_a_sweep_of_two_trials_of_two_seeds_runs_its_seeds_as_ray_jobs(tmp_path, runs_dir, ray_head):
    data = {**SMALL_SWEEP, "name": "ray-lr", "n_trials": 2, "parallel": 1, "seeds": 2, "pruner": "none",
            "pruner_options": {}}
    data["base"] = {**data["base"], "timesteps": 600}
    path = sweep_file(tmp_path, data)
    started = cli("sweep", "run", str(path), "--detach", "--runs-dir", str(runs_dir), "--ray", ray_head.address,
                  "--ray-python", sys.executable)
    assert started.returncode == 0, started.stderr
    report = wait_for(lambda: (r := sweep_status(runs_dir, "ray-lr")) and r["state"] not in ("running", "stopping") and r,
                      timeout=300, what="the sweep to end on the cluster", poll=1.0)
    assert report["state"] == "finished", report
    assert report["ray"]["address"] == ray_head.address
    assert [t["state"] for t in report["trials"]] == ["complete", "complete"], report["trials"]
    for trial in report["trials"]:
        assert trial["n"] == 2 and set(trial["runs"]) == {"s0", "s1"}
        for member, run_id in trial["runs"].items():
            status = read_status(runs_dir / run_id)
            assert status.state == "finished" and status.ray["python"] == sys.executable and status.ray["job_id"]
            assert status.sweep["name"] == "ray-lr" and status.sweep["member"] == member


def test_stop_through_STOP_then_resume_on_the_cluster(runs_dir, ray_head):
    # two lean env processes: Ray's stop sends SIGTERM to every process of the job, and the envs must
    # leave it to the worker, which steps them to its checkpoint (they died with it: the run ended failed)
    run = cluster_run(runs_dir, ray_head, 1_000_000, n_envs=2, vec_env="subproc")
    launch_worker(run)
    # 1 + 2 env processes ask for 3 CPUs; the head has 2: the job asks for 2 (else it would wait forever)
    assert read_status(run).ray["resources"]["num_cpus"] == 2.0
    assert any("largest node has 2" in w for w in read_status(run).warnings)
    wait_for(lambda: (run / "checkpoints" / "latest.json").is_file(), timeout=180, what="a first checkpoint")
    assert stop_run(run, timeout=120) == "graceful"
    status = read_status(run)
    assert status.state == "stopped"
    first_job = status.ray["job_id"]
    wait_for(lambda: job_view(ray_head.address, first_job).ended, timeout=60, what="the job to end")
    assert job_view(ray_head.address, first_job).status == "SUCCEEDED"  # the worker stopped itself: no Ray stop

    step, _ = resume_run(run)  # submits again, to the same cluster
    assert step > 0
    wait_state(run, ("running",), timeout=180)
    again = read_status(run).ray
    assert again["job_id"] != first_job and again["address"] == ray_head.address
    # a STOP the worker does not get to within the wait: Ray's stop (SIGTERM: the worker's graceful stop too)
    assert stop_run(run, timeout=0.01, term_grace_s=120) in ("graceful", "terminated")
    assert read_status(run).state == "stopped"
    wait_for(lambda: job_view(ray_head.address, again["job_id"]).ended, timeout=60, what="the job to end")
    # Ray's stop, or (a race on a loaded machine: the worker read STOP before Ray's SIGTERM came) its own; never a
    # failed job: either way the run stopped gracefully and resumes
    assert job_view(ray_head.address, again["job_id"]).status in ("STOPPED", "SUCCEEDED")


def _run_processes(run):
    marker = str(run)
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if marker in cmd and ("core.launch.supervisor" in cmd or "core.worker.main" in cmd):
            found.append(proc)
    return found


def test_a_job_killed_on_the_cluster_reads_as_crashed_with_rays_reason(runs_dir, ray_head):
    run = cluster_run(runs_dir, ray_head, 1_000_000)
    launch_worker(run)
    wait_state(run, ("running",), timeout=180)
    job_id = read_status(run).ray["job_id"]
    procs = _run_processes(run)
    assert len(procs) >= 2
    for proc in sorted(procs, key=lambda p: "supervisor" not in " ".join(p.cmdline())):
        proc.kill()  # the supervisor first: nobody on the node is left to record the end
    psutil.wait_procs(procs, timeout=30)
    wait_for(lambda: job_view(ray_head.address, job_id).ended, timeout=60, what="Ray to see the job end")
    # as seen from a laptop: the worker ran on another node, so no pid here to check
    write_status(run, host="another-node")
    assert read_status(run).state == "running"
    view = settle_cluster_run(run, grace_s=0)
    assert view is not None and view.status == "FAILED" and view.crashed
    status = read_status(run)
    assert status.state == "crashed"
    assert f"its Ray job {job_id} ended FAILED" in status.exit_reason and "resume" in status.exit_reason


def test_doctor_against_the_head_and_a_dead_address(runs_dir, ray_head):
    good = cli("doctor", "--ray", ray_head.address, "--ray-python", sys.executable, "--runs-dir", str(runs_dir), "--json")
    assert good.returncode == 0, good.stdout + good.stderr
    report = json.loads(good.stdout)
    assert report["ok"] and report["problems"] == []
    assert report["resources"]["CPU"] == 2
    node = report["nodes"][0]
    assert node["token"] and node["packages"]["rlpanel"] == report["local"]["packages"]["rlpanel"]
    assert not (runs_dir / ".cluster-probe").exists()  # its token files are cleaned up

    missing = cli("doctor", "--ray", ray_head.address, "--ray-python", "/nonexistent/python", "--runs-dir", str(runs_dir))
    assert missing.returncode == 1
    assert "PROBLEM" in missing.stdout and "--ray-python" in missing.stdout

    dead = cli("doctor", "--ray", "127.0.0.1:1", "--runs-dir", str(runs_dir))
    assert dead.returncode == 1
    assert "cannot reach the Ray cluster's job API at http://127.0.0.1:1" in dead.stdout
    assert "ray start --head" in dead.stdout


def test_a_queue_for_an_unreachable_cluster_is_refused_before_it_starts(tmp_path, runs_dir, ray_head):
    plan = tmp_path / "plan.yaml"
    plan.write_text("jobs:\n  - {name: one, algo: PPO, env: CartPole-v1, timesteps: 600}\n")
    out = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir), "--ray", "127.0.0.1:1")
    assert out.returncode != 0
    assert "cannot reach the Ray cluster" in out.stderr
    assert read_queue(runs_dir) is None
