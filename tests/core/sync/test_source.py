"""The neutral form of a run (core.sync.source) and the ledger (core.sync.ledger), over a real trained run."""

from __future__ import annotations

import json

from core.run.layout import RunDir
from core.sync.ledger import Sent, read_sent, write_sent
from core.sync.source import StepClock, read_run, record_points, telemetry_points
from tests.core.sync.helpers import reward_records
from tests.training_helpers import copy_run


def test_a_trained_run_reads_as_params_tags_points_and_artifacts(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    snap = read_run(run)
    assert snap.params["ppo.n_steps"] == "128" and snap.params["algo"] == "PPO"
    assert snap.params["budget.total_timesteps"] == "1024"
    assert snap.tags["algo"] == "PPO" and snap.tags["env"] == "CartPole-v1" and snap.tags["state"] == "finished"
    rewards = [p for rec in snap.records for p in record_points(rec) if p.key == "reward"]
    assert len(rewards) == reward_records(run) > 0
    assert all(0 < p.step <= 1024 for p in rewards)
    keys = {p.key for rec in snap.records for p in record_points(rec)}
    assert {"reward", "episode_length", "steps_per_s", "train/loss"} <= keys
    assert "config.yaml" in snap.artifacts and "summary.json" in snap.artifacts
    assert any(name.startswith("checkpoints/step_") and name.endswith(".zip") for name in snap.artifacts)
    assert not any("replay" in name for name in snap.artifacts)


def test_telemetry_is_sent_one_tick_per_interval_at_the_step_reached(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    snap = read_run(run)
    points, last_t = telemetry_points(run, 0.0, StepClock(snap.records))
    assert points, "the run recorded telemetry at 5 Hz: its host figures are sent"
    assert {p.key for p in points} & {"host/cpu_pct", "host/process_cpu_pct", "host/rss_bytes"}
    times = sorted({p.t for p in points})
    assert all(b - a >= 10.0 for a, b in zip(times, times[1:], strict=False))
    again, _ = telemetry_points(run, last_t, StepClock(snap.records))
    assert again == [], "nothing after the last tick sent"


def test_the_ledger_counts_records_across_a_resume_that_rewrote_the_file(runs_dir):
    records = [{"kind": "progress", "step": s, "t": 100.0 + s, "fps": 1.0, "total": 10} for s in range(6)]
    sent = Sent()
    sent.mark_records(records)
    write_sent(runs_dir, "mlflow x", sent)
    again = read_sent(runs_dir, "mlflow x")
    assert again.first_unsent(records) == 6
    assert again.first_unsent(records + [{"kind": "progress", "step": 6, "t": 200.0}]) == 6
    # a resume from the checkpoint at step 3: records past it moved aside, the attempt's own follow
    rewritten = records[:4] + [{"kind": "attempt", "step": 3, "t": 300.0, "attempt": 2}]
    assert again.first_unsent(rewritten) == 4
    assert json.loads(RunDir(runs_dir).sync_state.read_text(encoding="utf-8"))["mlflow x"]["records"] == 6


def test_a_gpu_s_figures_and_a_thinned_hour_are_sent_at_the_step_reached(runs_dir):
    run = runs_dir / "r"
    run.mkdir()
    lines = [{"t": 99.0, "kind": "status", "nvml": True, "gpus": ["A"]},
             {"t": 100.0, "kind": "agg", "gpu": 0, "n": 5, "dt": 1, "utilization_pct": 40.0, "utilization_pct_max": 90.0,
              "memory_used_bytes": 2e9, "cpu_pct": 30.0},
             {"t": 105.0, "gpu": 0, "utilization_pct": 50.0, "memory_used_bytes": 2e9},  # within 10 s of the last tick
             {"t": 111.0, "gpu": 0, "utilization_pct": 60.0, "temperature_c": 70, "power_w": None},
             {"t": 111.0, "gpu": 1, "utilization_pct": 5.0, "cpu_pct": 31.0}]
    RunDir(run).telemetry.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    clock = StepClock([{"kind": "progress", "step": 256, "t": 101.0}, {"kind": "progress", "step": 512, "t": 110.0}])
    points, last_t = telemetry_points(run, 0.0, clock)
    got = {(p.key, p.step): p.value for p in points}
    assert got == {("gpu0/utilization_pct", 0): 40.0, ("gpu0/memory_used_bytes", 0): 2e9, ("host/cpu_pct", 0): 30.0,
                   ("gpu0/utilization_pct", 512): 60.0, ("gpu0/temperature_c", 512): 70.0,
                   ("gpu1/utilization_pct", 512): 5.0, ("host/cpu_pct", 512): 31.0}
    assert last_t == 111.0
