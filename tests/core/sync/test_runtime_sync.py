"""runtime.sync: a real run's supervisor syncs it by itself; a failed tracker is a warning event, never the run's end.
Beside it, rlpanel sync --follow follows the same live run into W&B."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.launch.control import launch_worker
from core.run.layout import RunDir
from core.run.status import read_status
from core.sync.settings import SyncSettings, WandbSettings, default_mlflow_uri, save_sync_settings
from core.util.jsonl import read_jsonl
from tests.conftest import REPO
from tests.core.sync.helpers import reward_records
from tests.core.sync.wandb_records import history_rows
from tests.training_helpers import TEMPLATE_CONFIG, make_run

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("wandb")


def test_the_supervisor_syncs_the_run_and_a_failing_tracker_is_one_warning(runs_dir, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    save_sync_settings(SyncSettings(wandb=WandbSettings(dir=str(blocker / "wandb"))))  # W&B cannot write there
    run = make_run(runs_dir, {**TEMPLATE_CONFIG, "runtime": {**TEMPLATE_CONFIG["runtime"], "sync": ["mlflow", "wandb"]}})
    followed = tmp_path / "followed"
    supervisor = launch_worker(run, reap=False)
    # another W&B project: a destination of its own in the run's sync.json, so the follower's passes never count as
    # the supervisor's (which must meet its broken folder whatever the order of their passes)
    follow = subprocess.Popen([sys.executable, "-m", "core.cli", "sync", run.name, "--to", "wandb", "--dir", str(followed),
                               "--project", "followed", "--follow", "--every", "0.5", "--runs-dir", str(runs_dir), "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert supervisor.wait(240) == 0, RunDir(run).worker_log.read_text(encoding="utf-8")[-3000:]
    out, err = follow.communicate(timeout=180)
    assert follow.returncode == 0, err
    assert read_status(run).state == "finished", "a tracker that fails never touches training"

    # runtime.sync: MLflow holds every reward, the run's params, and the run ended there
    client = mlflow.MlflowClient(tracking_uri=default_mlflow_uri(runs_dir))
    [tracked] = client.search_runs([client.get_experiment_by_name("rlpanel").experiment_id])
    assert len(client.get_metric_history(tracked.info.run_id, "reward")) == reward_records(run) > 0
    assert tracked.data.params["ppo.n_steps"] == "128" and tracked.info.status == "FINISHED"
    assert "summary.json" in {f.path for f in client.list_artifacts(tracked.info.run_id)}

    # the failing tracker: one warning event naming it and the fix; training's own records untouched
    warnings = [r for r in read_jsonl(RunDir(run).metrics) if r.get("code") == "sync_failed"]
    assert len(warnings) == 1 and warnings[0]["level"] == "warning", RunDir(run).worker_log.read_text(encoding="utf-8")[-3000:]
    assert "to W&B" in warnings[0]["message"] and f"rlpanel sync {run.name} --to wandb" in warnings[0]["message"]
    assert "sync: " in RunDir(run).worker_log.read_text(encoding="utf-8")

    # --follow started before the run had a record and sent every one, into one W&B run
    result = json.loads(out)["runs"][0]
    [offline] = list((followed / "wandb").glob(f"offline-run-*-{result['tracker_run_id']}/*.wandb"))
    rows = [row for row in history_rows(offline) if "reward" in row]
    assert len(rows) == reward_records(run) and result["state"] == "finished"
