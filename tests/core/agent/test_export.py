"""The policy export (issue 26): each policy kind, written as ONNX and as TorchScript, gives the actions SB3's
``predict`` gives on 1,000 raw observations (``--check``, <= 1e-5); the sidecar names the spaces; what cannot be
exported says why in one line.

The runs are trained once per module, a few hundred steps each, in this process (real SB3 training, saved by the
worker's own ``Checkpointer`` into real run folders); PPO's runs are exported through the real tool as a child
process (``core.launch.agent_child``), the others through the same tool's ``main`` in this process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.launch.agent_child import run_policy_tool
from tests.training_helpers import make_run

pytestmark = pytest.mark.training

SMALL_OFF = {"learning_starts": 100, "batch_size": 32, "buffer_size": 1000}
IMAGE_ENV = "tests.core.estimate.image_envs:TinyImageEnv"
# case -> (config, steps trained); "norm" cases train with VecNormalize on the observations
CASES = {
    "ppo-discrete-norm": ({"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"normalize": {"obs": True}}}, 128),
    "ppo-box-norm": ({"algo": "PPO", "env": {"id": "Pendulum-v1"}, "runtime": {"normalize": {"obs": True}}}, 128),
    "a2c-discrete": ({"algo": "A2C", "env": {"id": "CartPole-v1"}, "a2c": {"n_steps": 8}}, 128),
    "a2c-box-norm": ({"algo": "A2C", "env": {"id": "Pendulum-v1"}, "a2c": {"n_steps": 8},
                      "runtime": {"normalize": {"obs": True}}}, 128),
    "sac-norm": ({"algo": "SAC", "env": {"id": "Pendulum-v1"}, "sac": SMALL_OFF, "runtime": {"normalize": {"obs": True}}}, 150),
    "td3": ({"algo": "TD3", "env": {"id": "Pendulum-v1"}, "td3": SMALL_OFF}, 150),
    "ddpg": ({"algo": "DDPG", "env": {"id": "Pendulum-v1"}, "ddpg": SMALL_OFF}, 150),
    "dqn-norm": ({"algo": "DQN", "env": {"id": "CartPole-v1"}, "dqn": SMALL_OFF, "runtime": {"normalize": {"obs": True}}}, 150),
    "ppo-cnn": ({"algo": "PPO", "env": {"entry_point": IMAGE_ENV}, "policy": {"kind": "CnnPolicy"}}, 64),
    "recurrent": ({"algo": "RecurrentPPO", "env": {"id": "CartPole-v1"},
                   "recurrentppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "lstm_hidden_size": 8}}, 32),
}
BASE = {"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}, "policy": {"net_arch": [32, 32]},
        "runtime": {"n_envs": 1, "seed": 3, "torch_threads": 1}, "budget": {"total_timesteps": 1000}}


def train_in_process(run_dir: Path, steps: int) -> None:
    """The run's model as the worker builds it, trained ``steps`` steps here, saved as the worker saves a checkpoint."""
    from core.run.store import load_run_config
    from core.worker.checkpoints import Checkpointer
    from core.worker.factory import build_model, build_vec_env, wrap_normalize

    cfg = load_run_config(run_dir)
    env, _ = build_vec_env(cfg, force_dummy=True)
    env = wrap_normalize(cfg, env)
    model = build_model(cfg, env, device="cpu")
    model.learn(steps)
    Checkpointer(run_dir, keep=1).save(model)
    env.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Iterator[dict[str, Path]]:
    import torch

    from core.config.dotted import merge

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the runs' torch_threads: 1 (the worker sets it); several times faster on two shared cores
    folder = tmp_path_factory.mktemp("export_runs")
    out = {}
    for case, (raw, steps) in CASES.items():
        image = "entry_point" in raw["env"]
        config = merge(BASE, raw)
        if image:  # NatureCNN on 40x44 images: no net_arch of ours
            config["policy"] = {"kind": "CnnPolicy"}
        out[case] = make_run(folder, config)
        train_in_process(out[case], steps)
    yield out
    torch.set_num_threads(threads)


def export_here(run_dir: Path, *args: str) -> tuple[int, dict | None, str]:
    """The tool's ``main`` in this process: its exit code, its JSON result and its stderr's last line."""
    import contextlib
    import io

    from core.agent.export import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(run_dir), *args])
    lines = out.getvalue().splitlines()
    return code, json.loads(lines[-1]) if code == 0 else None, (err.getvalue().strip().splitlines() or [""])[-1]


def run_exported(fmt: str, path: Path, observations):
    from core.agent.export_check import run_file

    return run_file(fmt, path, observations)


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
@pytest.mark.parametrize("case", [c for c in CASES if c != "recurrent"])
def test_the_exported_policy_acts_as_sb3s_predict_on_raw_observations(runs, case, fmt, tmp_path):
    output = tmp_path / f"policy.{'onnx' if fmt == 'onnx' else 'pt'}"
    args = ("--format", fmt, "-o", str(output), "--check")
    if case == "ppo-box-norm" and fmt == "onnx":  # through the real tool as the CLI and the window start it
        result = run_policy_tool("export", runs[case], *args, timeout=300)
    else:
        code, result, last = export_here(runs[case], *args)
        assert code == 0, last
    check = result["check"]
    assert check["observations"] == 1000
    assert check["max_abs_diff"] <= 1e-5, (case, fmt, check)
    assert check["mismatches"] == 0, (case, fmt, check)
    assert result["normalization_baked_in"] == case.endswith("-norm")
    assert Path(result["file"]) == output and output.stat().st_size > 1000

    side = json.loads(Path(result["sidecar"]).read_text(encoding="utf-8"))
    assert side["run"] == runs[case].name and side["checkpoint_step"] == result["checkpoint_step"] > 0
    assert side["normalization"]["baked_in"] == case.endswith("-norm")
    assert (side.get("opset") == 17) if fmt == "onnx" else side["torch_version"]
    discrete = CASES[case][0]["env"].get("id") == "CartPole-v1" or "cnn" in case
    assert side["output"]["dtype"] == ("int64" if discrete else "float32")
    if not discrete:
        assert side["action_space"] == {"type": "Box", "shape": [1], "dtype": "float32", "low": -2, "high": 2}
    if "cnn" in case:
        assert side["input"]["shape"] == ["batch", 40, 44, 3]  # the env's channels-last images, transposed inside
        assert side["observation_space"]["low"] == 0 and side["observation_space"]["high"] == 255


def test_an_exported_box_policy_keeps_its_actions_within_the_bounds_for_any_batch(runs, tmp_path):
    """Observations far outside anything seen in training still give actions within Pendulum's [-2, 2], and the
    batch axis takes any size (one, and 257)."""
    import numpy as np

    for case in ("ppo-box-norm", "sac-norm", "td3"):
        output = tmp_path / f"{case}.onnx"
        code, _result, last = export_here(runs[case], "--format", "onnx", "-o", str(output))
        assert code == 0, last
        for batch in (1, 257):
            wild = np.random.default_rng(batch).normal(0, 1000, (batch, 3)).astype(np.float32)
            actions = run_exported("onnx", output, wild)
            assert actions.shape == (batch, 1) and actions.dtype == np.float32
            assert np.all(actions >= -2) and np.all(actions <= 2), (case, actions.min(), actions.max())


def test_recurrent_ppo_is_refused_saying_why(runs, tmp_path):
    code, _, last = export_here(runs["recurrent"], "--format", "onnx", "-o", str(tmp_path / "r.onnx"))
    assert code == 1
    assert "LSTM state" in last and "RecurrentPPO is not exported" in last
    assert not list(tmp_path.iterdir())


def test_a_missing_onnx_is_one_line_naming_the_pip_command(runs, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed: its import raises ImportError
    code, _, last = export_here(runs["td3"], "--format", "onnx", "-o", str(tmp_path / "p.onnx"), "--check")
    assert code == 1
    assert last == "ONNX export needs onnx and onnxruntime, which are not installed in this Python: pip install onnx onnxruntime"
    code, result, last = export_here(runs["td3"], "--format", "torchscript", "-o", str(tmp_path / "p.pt"), "--check")
    assert code == 0 and result["check"]["max_abs_diff"] <= 1e-5, last  # TorchScript needs torch only


def test_bad_input_is_one_line_naming_the_field(runs, tmp_path):
    code, _, last = export_here(runs["td3"], "--checkpoint", "7", "--format", "onnx", "-o", str(tmp_path / "p.onnx"))
    assert code == 1 and "7" in last, last
    code, _, last = export_here(runs["td3"], "--format", "onnx", "-o", str(tmp_path / "missing" / "p.onnx"))
    assert code == 1 and last.startswith("-o ") and "does not exist" in last
    assert os.listdir(tmp_path) == []
