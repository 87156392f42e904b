"""rlpanel sync --to wandb: a real trained run written offline by wandb itself, read back from its run file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.run.layout import RunDir
from core.sync.settings import WANDB_DIR
from tests.core.sync.helpers import reward_records
from tests.core.sync.wandb_records import history_rows, wandb_records
from tests.training_helpers import cli, copy_run

pytest.importorskip("wandb")


def run_files(runs, run_id):
    return sorted((runs / WANDB_DIR / "wandb").glob(f"offline-run-*-{run_id}/run-{run_id}.wandb"))


def test_an_offline_run_holds_every_reward_the_config_and_the_files_and_syncs_on(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    done = cli("sync", run.name, "--to", "wandb", "--runs-dir", str(runs_dir), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["runs"][0]
    assert result["where"] == f"wandb sync {runs_dir / WANDB_DIR / 'wandb'}"
    [first] = run_files(runs_dir, result["tracker_run_id"])
    records = list(wandb_records(first))
    [started] = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    config = {item.key: json.loads(item.value_json) for item in started.config.update}
    assert config["ppo.n_steps"] == 128 and config["algo"] == "PPO"
    assert {"PPO", "CartPole-v1"} <= set(started.tags)
    rows = history_rows(first)
    rewards = [row for row in rows if "reward" in row]
    assert len(rewards) == reward_records(run) > 0
    assert all(int(row["timestep"]) > 0 for row in rewards), "plotted against the run's timestep"
    assert [int(row["_step"]) for row in rows] == list(range(len(rows)))
    [artifact] = [r.artifact for r in records if r.WhichOneof("record_type") == "artifact"]
    assert {"config.yaml", "summary.json"} <= {entry.path for entry in artifact.manifest.contents}
    # wandb's own uploader sees the folder
    dry = subprocess.run([sys.executable, "-m", "wandb", "sync", "--dry-run", str(first.parent)], capture_output=True,
                         text=True, timeout=120)
    assert f"run-{result['tracker_run_id']}.wandb" in dry.stdout + dry.stderr

    # a second sync with nothing new writes nothing; one with new records only those, its steps going on
    assert cli("sync", run.name, "--to", "wandb", "--runs-dir", str(runs_dir)).returncode == 0
    assert len(run_files(runs_dir, result["tracker_run_id"])) == 1
    with RunDir(run).metrics.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"kind": "episode", "step": 1100, "t": 4e9, "reward": 321.0, "length": 321}) + "\n")
    assert cli("sync", run.name, "--to", "wandb", "--runs-dir", str(runs_dir)).returncode == 0
    files = run_files(runs_dir, result["tracker_run_id"])
    assert len(files) == 2
    [new] = history_rows(files[1])
    assert (new["reward"], new["timestep"], int(new["_step"])) == ("321", "1100", len(rows))


def test_online_without_a_login_says_how_in_one_line(trained_run, runs_dir, monkeypatch):
    run = copy_run(trained_run, runs_dir)
    monkeypatch.setenv("WANDB_API_KEY", "")
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(runs_dir / "wandb-config"))
    monkeypatch.setenv("NETRC", str(runs_dir / "no-netrc"))
    done = cli("sync", run.name, "--to", "wandb", "--online", "--runs-dir", str(runs_dir), timeout=180)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("rlpanel sync: W&B online needs your login: run wandb login")
