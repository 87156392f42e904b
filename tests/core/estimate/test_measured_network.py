"""Issue 30: the network measured on torch's meta device agrees with the formulas of the built-in networks
(parameters exactly, activations within 10 %), equals the real SB3 model's count, says "measured from your
network" in the estimate, and an untrusted network is refused before anything imports it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.config.errors import ConfigError
from core.config.spaces import probe_spaces
from core.config.trust import trust
from core.config.validate import validate_config
from core.estimate.estimate import estimate_config
from core.estimate.families.registry import family_of
from core.estimate.measured import SOURCE, lookup, measure_network
from core.launch.start import start_problem

IMAGE_ENV = "tests.core.estimate.image_envs:TinyImageEnv"
BUILT_IN = {
    "mlp-ppo": {"algo": "PPO", "env": {"id": "CartPole-v1"}},
    "mlp-ppo-wide-relu": {"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"batch_size": 256},
                          "policy": {"net_arch": [256, 256], "activation": "relu"}},
    "cnn-ppo": {"algo": "PPO", "env": {"entry_point": IMAGE_ENV}, "ppo": {"batch_size": 128}},
}
SPY_MODULE = '''
"""Writes a marker when imported: proof of whether rlpanel imported it."""
import pathlib

pathlib.Path(__file__).with_name("spy_net.imported").write_text("imported")

from stable_baselines3.common.torch_layers import FlattenExtractor as Spy
'''


@pytest.mark.parametrize("case", list(BUILT_IN))
def test_meta_measurement_agrees_with_the_formulas_and_the_real_model(case):
    from core.worker.factory import build_model, build_vec_env
    from core.worker.measure import measure_config

    trust("tests.core.estimate.image_envs")
    cfg = validate_config(BUILT_IN[case]).config
    spaces = probe_spaces(cfg.env)
    family = family_of(cfg)
    shape = family.shape(cfg, spaces)
    formula, what = family.activation_bytes(cfg, spaces, shape)
    assert what.startswith("training pass")
    measured = measure_config(cfg)
    env, _ = build_vec_env(cfg, n_envs=1, force_dummy=True)
    try:
        real = sum(p.numel() for p in build_model(cfg, env, device="cpu").policy.parameters())
    finally:
        env.close()
    assert measured.params == shape.param_count == real
    assert measured.error == ""
    assert abs(measured.activation_bytes - formula) <= 0.10 * formula, (measured, formula)


def test_own_network_is_measured_in_the_estimate():
    trust("examples.graph_env.env")
    trust("examples.graph_env.network")
    raw = {"algo": "PPO", "env": {"entry_point": "examples.graph_env.env:GraphEnv"}, "ppo": {"batch_size": 32},
           "policy": {"features_extractor": "examples.graph_env.network:GraphAttention",
                      "features_extractor_kwargs": {"hidden": 16, "heads": 2, "layers": 1}}}
    cfg = validate_config(raw).config
    result = estimate_config(cfg)
    found = lookup(cfg)
    assert found is not None and result.network_source == SOURCE
    # Linear(4, 16) + attention (4 x 16 x 16 + 4 x 16) + LayerNorm (32); heads on 6 x 16 features: pi 2 x 64 + 64 x 64
    # + 64 x 6, vf 2 x 64 + 64 x 64 + 64 x 1 (SB3's default net_arch), with biases
    extractor = 4 * 16 + 16 + 3 * 16 * 16 + 3 * 16 + 16 * 16 + 16 + 2 * 16
    heads = 2 * (96 * 64 + 64 + 64 * 64 + 64) + 64 * 6 + 6 + 64 + 1
    assert result.parameter_count == found.params == extractor + heads
    acts = result.term("activations")
    assert acts is not None and SOURCE in acts.note and acts.bytes >= found.activation_bytes


def test_an_untrusted_network_is_refused_before_import(tmp_path, runs_dir):
    (tmp_path / "spy_net.py").write_text(SPY_MODULE)
    marker = tmp_path / "spy_net.imported"
    raw = {"algo": "PPO", "policy": {"features_extractor": "spy_net:Spy"}}
    cfg = validate_config(raw).config.with_import_folder(str(tmp_path))
    for refused in (lambda: measure_network(cfg), lambda: start_problem(runs_dir, cfg)):
        with pytest.raises(ConfigError) as exc:
            refused()
        assert "runs code from spy_net" in str(exc.value) and "--trust spy_net" in str(exc.value)
    train = ["train", "--algo", "PPO", "--set", "policy.features_extractor=spy_net:Spy", "--timesteps", "64",
             "--runs-dir", str(runs_dir)]
    done = subprocess.run([sys.executable, "-m", "core.cli", *train], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)  # from the module's own folder: importable, were it imported
    assert done.returncode != 0 and "--trust spy_net" in done.stderr
    assert not marker.exists(), "nothing of the module was imported"
    assert list(runs_dir.iterdir()) == []
    trust("spy_net")
    assert measure_network(cfg).params > 0  # trusted: now it is imported (from the import folder), and measured
    assert marker.exists()
