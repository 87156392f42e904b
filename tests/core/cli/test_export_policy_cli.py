"""``rlpanel export-policy``: a real PPO run (the session's ``trained_run``) exported through the CLI and its child
tool, checked against SB3; the user's mistakes are one line each, said before any torch is loaded."""

from __future__ import annotations

import json

import pytest

from core.launch.agent_results import default_name, summary
from tests.training_helpers import cli, copy_run

pytestmark = pytest.mark.training


def test_export_policy_writes_the_file_and_its_sidecar_and_checks_it(trained_run, runs_dir, tmp_path):
    run = copy_run(trained_run, runs_dir)
    output = tmp_path / "cartpole.onnx"
    done = cli("export-policy", run.name, "--checkpoint", "last", "--format", "onnx", "-o", str(output),
               "--check", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["run"] == run.name and result["checkpoint"] == "last" and result["checkpoint_step"] == 1024
    assert result["check"]["observations"] == 1000 and result["check"]["mismatches"] == 0
    assert result["check"]["max_abs_diff"] == 0.0  # Discrete: the same index for every observation
    side = json.loads((tmp_path / "cartpole.onnx.json").read_text())
    assert side["input"] == {"name": "observation", "dtype": "float32", "shape": ["batch", 4],
                             "note": "raw observations, as the env gives them (before any normalisation)"}
    assert side["action_space"] == {"type": "Discrete", "n": 2, "start": 0} and side["opset"] == 17
    assert output.stat().st_size > 1000

    again = cli("export-policy", run.name, "--format", "onnx", "-o", str(output))
    assert again.returncode == 2 and again.stderr.strip() == (
        f"rlpanel export-policy: {output} exists; pass --overwrite to replace it or choose another -o FILE")


def test_export_policy_refuses_a_checkpoint_the_run_does_not_keep_in_one_line(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    done = cli("export-policy", run.name, "--checkpoint", "300", "--format", "torchscript")
    assert done.returncode == 1
    assert done.stderr.strip() == (f"rlpanel export-policy: run {run.name} keeps no checkpoint at step 300 "
                                   "(it keeps: 512, 768, 1,024)")
    missing = cli("export-policy", "no-such-run", "--format", "onnx")
    assert missing.returncode == 1 and "list them with: rlpanel runs" in missing.stderr


def test_the_summary_names_the_file_and_the_difference():
    result = {"run": "r1", "checkpoint_step": 1024, "format": "torchscript", "file": "/x/r1-step1024.pt",
              "sidecar": "/x/r1-step1024.pt.json", "normalization_baked_in": True,
              "check": {"observations": 1000, "max_abs_diff": 2.5e-7, "mismatches": 0}}
    assert summary(result).splitlines() == [
        "r1 step 1,024 exported as torchscript: /x/r1-step1024.pt",
        "sidecar: /x/r1-step1024.pt.json  (observation normalisation baked in)",
        "check: 1,000 observations, largest difference from SB3's predict 2.5e-07, 0 differing action(s)"]
    assert default_name("r1", 1024, "onnx") == "r1-step1024.onnx"
