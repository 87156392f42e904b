"""sync.yaml: a wrong value is one line naming the field and the file; an MLflow param past its limit is cut, saying so."""

from __future__ import annotations

from core.sync.mlflow_target import cut_param
from core.sync.settings import settings_path
from tests.training_helpers import cli, copy_run


def test_a_wrong_sync_yaml_is_one_line_naming_the_field(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    settings_path().write_text("mlflow: {uri: http://h:5000, experimnt: x}\n", encoding="utf-8")
    done = cli("sync", run.name, "--to", "mlflow", "--runs-dir", str(runs_dir))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert str(settings_path()) in line and "mlflow: unknown key experimnt; it holds uri, experiment" in line
    settings_path().write_text("wandb: {online: maybe}\n", encoding="utf-8")
    done = cli("sync", run.name, "--to", "wandb", "--runs-dir", str(runs_dir))
    assert done.returncode == 2 and "wandb.online: expected true or false, got 'maybe'" in done.stderr


def test_a_param_past_mlflow_s_limit_is_cut_with_a_note():
    value = "x" * 7000
    cut = cut_param(value, 6000)
    assert len(cut) == 6000 and cut.endswith("(cut from 7,000 characters: config.yaml holds it whole)")
    assert cut_param("128", 6000) == "128"
