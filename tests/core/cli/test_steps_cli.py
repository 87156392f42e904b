"""The command line says the steps a run really trains: ``estimate`` (text and --json), ``train``'s first line
and progress line, ``runs``, and ``resume`` from a checkpoint."""

from __future__ import annotations

import json
import re

import pytest

from tests.training_helpers import cli

TINY = ["--algo", "PPO", "--env", "CartPole-v1", "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=64",
        "--set", "ppo.n_epochs=1", "--set", "runtime.n_envs=2", "--set", "policy.net_arch=[8]"]


def test_estimate_says_the_steps_it_trains_when_they_are_not_the_budget():
    done = cli("estimate", *TINY, "--timesteps", "200", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["planned_timesteps"] == 256
    text = cli("estimate", *TINY, "--timesteps", "200").stdout
    assert text.splitlines()[1] == "trains 256 steps (whole rollouts of 2 x 64), for a budget of 200"
    whole = cli("estimate", *TINY, "--timesteps", "256")
    assert json.loads(cli("estimate", *TINY, "--timesteps", "256", "--json").stdout)["planned_timesteps"] == 256
    assert "trains" not in whole.stdout.splitlines()[1]  # a budget of whole rollouts: nothing more to say


def test_estimate_of_a_baseline_plans_no_steps():
    done = cli("estimate", "--algo", "random", "--env", "CartPole-v1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["planned_timesteps"] is None


def progress_counts(stderr: str) -> list[tuple[int, int]]:
    return [(int(a.replace(",", "")), int(b.replace(",", ""))) for a, b in re.findall(r"\] ([\d,]+)/([\d,]+) steps", stderr)]


@pytest.mark.training
def test_train_says_the_planned_steps_first_and_counts_towards_them(runs_dir):
    done = cli("train", *TINY, "--timesteps", "200", "--set", "budget.checkpoint_every=100", "--json",
               "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("run ") and first.endswith(": trains 256 steps (whole rollouts of 2 x 64)"), first
    counts = progress_counts(done.stderr)
    assert counts and all(total == 256 and step <= total for step, total in counts), done.stderr
    out = json.loads(done.stdout)
    assert out["state"] == "finished"
    [listed] = json.loads(cli("runs", "--json", "--runs-dir", str(runs_dir)).stdout)
    assert (listed["steps"], listed["total"]) == (256, 256)
    assert "256/256" in cli("runs", "--runs-dir", str(runs_dir)).stdout
    # 100 more from the checkpoint at 256: one more rollout
    resumed = cli("resume", out["id"], "--timesteps", "100", "--runs-dir", str(runs_dir))
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stderr.splitlines()
    assert lines[0] == f"resuming {out['id']} from step 256 to 384 (a budget of 356)"
    assert lines[1].endswith(": trains 384 steps (whole rollouts of 2 x 64)"), lines[1]
    assert progress_counts(resumed.stderr)[-1][1] == 384


@pytest.mark.training
def test_train_detach_json_names_the_planned_steps(runs_dir):
    done = cli("train", *TINY, "--timesteps", "200", "--detach", "--json", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["planned_timesteps"] == 256
    cli("stop", out["id"], "--runs-dir", str(runs_dir))
