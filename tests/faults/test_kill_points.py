"""kill -9 of a live worker at seeded points (during ``starting``, mid-checkpoint, mid-training):
every kill reads ``crashed``, leaves a complete checkpoint and no torn line but the last, and the
next resume continues from that checkpoint; no episode behind a checkpoint is ever lost."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import time
from pathlib import Path

import psutil
import pytest

from core.launch.control import launch_worker, resume_run
from core.run.checkpoints import find_checkpoint
from core.run.layout import CHECKPOINT_TEMP_PREFIX, RunDir
from core.run.status import read_status
from tests.faults.conftest import KILLS, SEED, TALLY
from tests.training_helpers import make_run, records, wait_for, wait_state

pytestmark = pytest.mark.training

POINTS = ("starting", "mid-checkpoint", "running")


def worker_procs(run: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "core.worker.main" in cmd and str(run) in cmd:
            found.append(proc)
    return found


def kill_9(run: Path) -> None:
    for proc in worker_procs(run):
        for p in [proc, *proc.children(recursive=True)]:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def wait_crashed(run: Path) -> None:
    def gone() -> bool:
        return not worker_procs(run) and read_status(run).state == "crashed"
    wait_for(gone, timeout=60, what="the killed worker to read as crashed", poll=0.1)


def torn_lines(path: Path) -> int:
    """Lines that are not JSON, except a last one cut short (which readers skip and repair)."""
    if not path.exists():
        return 0
    lines = path.read_bytes().split(b"\n")
    bad = 0
    for line in lines[:-1]:  # complete lines (newline-terminated)
        try:
            json.loads(line)
        except ValueError:
            bad += 1
    return bad


def kill_at(run: Path, point: str, rng: random.Random) -> str:
    """Wait for ``point`` in the attempt just launched and kill -9 there; returns where it really hit."""
    if point == "starting":
        # the worker is its supervisor's child: it exists a moment after the launch (then loads for seconds)
        wait_for(lambda: worker_procs(run), timeout=60, what="the worker process", poll=0.01)
        time.sleep(rng.uniform(0.0, 1.0))
        hit = "starting" if read_status(run).state == "starting" else "running"
        kill_9(run)
        return hit
    wait_state(run, ("running",), timeout=180)
    if point == "running":
        time.sleep(rng.uniform(0.1, 2.0))
        kill_9(run)
        return "running"
    folder = RunDir(run).checkpoints
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(p.name.startswith(CHECKPOINT_TEMP_PREFIX) for p in folder.iterdir()):
            kill_9(run)
            return "mid-checkpoint"
        time.sleep(0.002)
    kill_9(run)
    return "running"


def test_kill_9_at_seeded_points_then_resume(runs_dir):
    rng = random.Random(SEED)
    run = make_run(runs_dir, {"algo": "DQN", "dqn": {"learning_starts": 100, "buffer_size": 30_000},
                              "runtime": {"n_envs": 1},
                              "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 400, "keep_checkpoints": 2}})
    launch_worker(run)
    wait_for(lambda: find_checkpoint(run).checkpoint, timeout=240, what="a first checkpoint")
    kill_9(run)
    wait_crashed(run)
    resumed = 0
    for _ in range(KILLS):
        checkpoint = find_checkpoint(run).checkpoint
        assert checkpoint is not None, find_checkpoint(run).note
        assert torn_lines(RunDir(run).metrics) == 0
        step, _ = resume_run(run)
        assert step == checkpoint.step
        point = rng.choice(POINTS)
        hit = kill_at(run, point, rng)
        TALLY["kill points tried"] += 1
        TALLY[{"starting": "kills during starting", "mid-checkpoint": "kills mid-checkpoint"}.get(hit, "kills running")] += 1
        wait_crashed(run)
        if any(e.get("message", "").startswith(f"resumed from the checkpoint at step {checkpoint.step:,}")
               for e in records(run, "event")) or hit == "starting":
            resumed += 1  # a kill during starting comes before the resume message: that attempt resumes next
    TALLY["kill points resumed"] += resumed
    final = find_checkpoint(run).checkpoint
    step, total = resume_run(run, more_steps=300)
    assert step == final.step
    wait_state(run, ("finished",), timeout=240)
    progress = [r["step"] for r in records(run, "progress")]
    assert progress == sorted(progress) and progress[-1] >= total
    assert not [p for p in RunDir(run).checkpoints.iterdir() if p.name.startswith(CHECKPOINT_TEMP_PREFIX)]
    assert torn_lines(RunDir(run).metrics) == 0
    assert resumed == KILLS


def monitor_episode_ends(run: Path) -> list[int]:
    """The step at which each episode ended, from the Monitor CSV (one env; flushed per episode)."""
    ends, step = [], 0
    for path in sorted(RunDir(run).monitor.glob("*.monitor.csv")):
        with open(path, encoding="utf-8", newline="") as fh:
            rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))][1:]
        for row in rows:
            step += int(row[1])
            ends.append(step)
    return ends


@pytest.mark.parametrize("seed_offset", range(2))
def test_no_episode_behind_a_checkpoint_is_lost_to_a_kill(runs_dir, seed_offset):
    rng = random.Random(SEED + seed_offset)
    every = rng.choice((384, 512, 640))
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 1}, "budget": {"total_timesteps": 10_000_000, "checkpoint_every": every}})
    launch_worker(run)
    latest = RunDir(run).latest_checkpoint
    wait_for(lambda: latest.exists(), timeout=240, what="the first checkpoint", poll=0.005)
    kill_9(run)
    wait_crashed(run)
    step = find_checkpoint(run).checkpoint.step
    recorded = [r["step"] for r in records(run, "episode") if r["step"] <= step]
    played = [s for s in monitor_episode_ends(run) if s <= step]
    TALLY["kill points tried"] += 1
    assert recorded == played, f"episodes before the checkpoint at {step} missing from metrics.jsonl"
