"""Real tiny runs driven from the window (PPO on CartPole): launch, follow, stop, re-attach."""

from __future__ import annotations

import json
import sys

import pytest

from core.config.validate import validate_config
from core.run.status import read_status
from core.util.jsonl import read_jsonl
from tests.training_helpers import lean

pytestmark = pytest.mark.training


def ppo_cartpole(total: int, checkpoint_every: int = 1000):
    return validate_config(lean({"env": {"id": "CartPole-v1"}, "algo": "PPO",
                                 "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1},
                                 "runtime": {"n_envs": 2, "device": "cpu", "telemetry_hz": 5},
                                 "budget": {"total_timesteps": total, "checkpoint_every": checkpoint_every}})).config


def test_a_run_launched_from_the_window_is_plotted_and_finishes(qtbot, make_window):
    window = make_window()
    run_dir = window.run_actions.launch(ppo_cartpole(3000))
    assert run_dir is not None and window.run_dir == run_dir
    plot = window.monitor.reward_plot
    qtbot.waitUntil(lambda: plot.buffer("episode").size > 5, timeout=120_000)
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=180_000)
    episodes = [r for r in read_jsonl(run_dir / "metrics.jsonl") if r.get("kind") == "episode"]
    qtbot.waitUntil(lambda: plot.buffer("episode").size == len(episodes), timeout=5000)
    assert window.monitor.speed_plot.buffer("fps").size > 0
    assert any("loss" in key for key in window.monitor.scalars.charts)  # a chart per logged loss
    assert "finished" in window.statusBar().currentMessage()
    # The GUI process followed a real run and still never imported torch.
    assert "torch" not in sys.modules and "stable_baselines3" not in sys.modules


def test_a_new_window_reattaches_to_a_running_run_and_stop_saves_a_checkpoint(qtbot, make_window):
    first = make_window()
    run_dir = first.run_actions.launch(ppo_cartpole(2_000_000, checkpoint_every=500))
    qtbot.waitUntil(lambda: first.monitor.reward_plot.buffer("episode").size > 20, timeout=120_000)
    first.close()  # the controller goes away; the run must not

    second = make_window()
    qtbot.waitUntil(lambda: second.run_dir == run_dir and second.run_state == "running", timeout=15_000)
    on_disk = sum(1 for r in read_jsonl(run_dir / "metrics.jsonl") if r.get("kind") == "episode")
    qtbot.waitUntil(lambda: second.monitor.reward_plot.buffer("episode").size >= on_disk, timeout=10_000)
    assert second.monitor.reward_plot.buffer("episode").steps[0] <= 500  # the full history, from the start

    with qtbot.waitSignal(second.follower.stop_finished, timeout=90_000) as blocker:
        second.run_actions.stop_action.trigger()
    assert blocker.args == ["graceful"]
    assert read_status(run_dir).state == "stopped"
    latest = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert latest
    qtbot.waitUntil(lambda: second.run_actions.resume_action.isEnabled(), timeout=5000)
    assert "torch" not in sys.modules
