"""rlpanel sync --to mlflow: a real trained run into a real SQLite MLflow store, read back through MlflowClient."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.run.layout import RunDir
from core.sync.settings import default_mlflow_uri
from core.util.jsonl import read_jsonl
from tests.conftest import REPO
from tests.core.sync.helpers import reward_records
from tests.training_helpers import cli, copy_run

mlflow = pytest.importorskip("mlflow")


@pytest.fixture(scope="module")
def synced(trained_run, tmp_path_factory):
    """A copy of the session's trained run synced once with the command: (run folder, its first sync's JSON)."""
    runs = tmp_path_factory.mktemp("mlflow_sync") / "runs"
    run = copy_run(trained_run, runs)
    done = cli("sync", run.name, "--to", "mlflow", "--runs-dir", str(runs), "--json")
    assert done.returncode == 0, done.stderr
    return run, json.loads(done.stdout)


def client_of(run):
    return mlflow.MlflowClient(tracking_uri=default_mlflow_uri(run.parent))


def test_the_run_reads_back_with_every_reward_its_params_and_artifacts(synced):
    run, first = synced
    assert first["destination"].startswith("mlflow sqlite:///") and (run.parent.parent / "mlflow.db").is_file()
    client = client_of(run)
    tracked = client.get_run(first["runs"][0]["tracker_run_id"])
    history = client.get_metric_history(tracked.info.run_id, "reward")
    assert len(history) == reward_records(run) > 0
    assert sorted(m.step for m in history) == sorted(r["step"] for r in read_jsonl(RunDir(run).metrics)
                                                     if r.get("kind") in ("episode", "episodes"))
    assert tracked.data.params["ppo.n_steps"] == "128" and tracked.data.params["algo"] == "PPO"
    assert tracked.data.tags["algo"] == "PPO" and tracked.data.tags["env"] == "CartPole-v1"
    assert tracked.data.tags["rlpanel.run_id"] == run.name
    assert {"train/loss", "steps_per_s"} <= set(tracked.data.metrics)
    assert tracked.info.status == "FINISHED"
    top = {f.path for f in client.list_artifacts(tracked.info.run_id)}
    assert {"config.yaml", "summary.json", "checkpoints"} <= top
    kept = {f.path for f in client.list_artifacts(tracked.info.run_id, "checkpoints")}
    assert any(p.startswith("checkpoints/step_") and p.endswith(".zip") for p in kept)
    assert (run.parent.parent / "mlflow-artifacts").is_dir(), "the artifacts beside the store, not ./mlruns"


def test_a_second_sync_adds_nothing_twice_and_a_third_only_new_records(synced):
    run, first = synced
    run_id = first["runs"][0]["tracker_run_id"]
    again = cli("sync", run.name, "--to", "mlflow", "--runs-dir", str(run.parent), "--json")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)["runs"][0]
    assert second["tracker_run_id"] == run_id
    assert (second["records"], second["artifacts"]) == (0, [])
    client = client_of(run)
    assert len(client.get_metric_history(run_id, "reward")) == reward_records(run)
    with RunDir(run).metrics.open("a", encoding="utf-8") as fh:  # two more episodes, as a resumed worker appends them
        for step in (1100, 1200):
            fh.write(json.dumps({"kind": "episode", "step": step, "t": 4e9 + step, "reward": 500.0, "length": 500}) + "\n")
    third = cli("sync", run.name, "--to", "mlflow", "--runs-dir", str(run.parent))
    assert third.returncode == 0, third.stderr
    assert "2 new records" in third.stdout and "Open it: mlflow ui --backend-store-uri sqlite:///" in third.stdout
    history = client.get_metric_history(run_id, "reward")
    assert len(history) == reward_records(run) and {1100, 1200} <= {m.step for m in history}


def test_without_the_extra_one_line_says_how_to_install_it(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    code = ("import sys; sys.modules['mlflow'] = None; from core.cli.main import main; "
            f"sys.exit(main(['sync', {run.name!r}, '--to', 'mlflow', '--runs-dir', {str(runs_dir)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == 'rlpanel sync: MLflow sync needs the mlflow extra: pip install "rlpanel[mlflow]"'
    assert not RunDir(run).sync_state.exists()


def test_options_of_the_other_tracker_are_refused_naming_them(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    done = cli("sync", run.name, "--to", "mlflow", "--project", "x", "--runs-dir", str(runs_dir))
    assert done.returncode == 2
    assert "--project is not for --to mlflow: MLflow takes --uri and --experiment" in done.stderr
