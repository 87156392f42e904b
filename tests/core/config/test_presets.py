"""Presets: built-ins from the users' guides, resolution, user presets, broken files."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.config.errors import ConfigError
from core.config.presets import diff_against_base, list_presets, resolve, save_user_preset
from tests.conftest import REPO

BUILTIN = {"fast", "heavy", "beast", "laptop-8gb", "cpu-bound-env", "dqn-small"}


def test_builtins_listed_with_a_source():
    presets = {p.name: p for p in list_presets()}
    assert BUILTIN <= set(presets)
    for name in BUILTIN:
        assert presets[name].builtin and presets[name].error is None
        assert "guide" in presets[name].description


@pytest.mark.parametrize(("name", "n_envs", "n_steps", "batch", "epochs", "net"), [
    ("fast", 16, 256, 2048, 15, [512, 512]),
    ("heavy", 32, 256, 4096, 20, [1024, 512, 256]),
    ("beast", 64, 512, 8192, 30, [1024, 512, 512, 256]),
    ("cpu-bound-env", 32, 8192, 512, 30, [1024, 1024, 512, 256]),
])
def test_ppo_presets_resolve_through_their_bases(name, n_envs, n_steps, batch, epochs, net):
    cfg = resolve(name).config
    assert (cfg.runtime.n_envs, cfg.ppo.n_steps, cfg.ppo.batch_size, cfg.ppo.n_epochs) == (n_envs, n_steps, batch, epochs)
    assert cfg.policy.net_arch == net and cfg.runtime.vec_env == "subproc"


def test_laptop_preset_covers_three_algorithms():
    sac = resolve("laptop-8gb").config
    p = sac.sac
    assert sac.algo == "SAC" and (p.batch_size, p.buffer_size, p.train_freq, p.learning_starts) == (256, 1_000_000, 2, 500)
    ppo = resolve("laptop-8gb", {"algo": "PPO"}).config
    assert (ppo.ppo.n_steps, ppo.ppo.n_epochs, ppo.ppo.batch_size) == (8192, 40, 512)
    a2c = resolve("laptop-8gb", {"algo": "A2C"}).config
    assert (a2c.a2c.n_steps, a2c.a2c.learning_rate, a2c.a2c.use_rms_prop) == (128, 1e-3, True)


def test_overrides_win_over_preset():
    assert resolve("fast", {"ppo": {"n_epochs": 3}}).config.ppo.n_epochs == 3


def test_diff_against_base():
    diff = {path: (a, b) for path, a, b in diff_against_base("heavy")}
    assert diff["ppo.batch_size"] == (2048, 4096) and diff["runtime.n_envs"] == (16, 32)
    assert "ppo.n_steps" not in diff


def test_user_preset_saved_listed_and_not_overwritten(user_home):
    path = save_user_preset("my-sac", {"algo": "SAC", "sac": {"batch_size": 512}}, "mine", base="laptop-8gb")
    assert path.parent == user_home / "presets"
    preset = {p.name: p for p in list_presets()}["my-sac"]
    assert not preset.builtin and preset.base == "laptop-8gb"
    assert resolve("my-sac").config.sac.buffer_size == 1_000_000  # from the base
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="exists"):
        save_user_preset("my-sac", {"algo": "SAC"}, "other")
    assert path.read_bytes() == before
    with pytest.raises(ConfigError, match="built-in"):
        save_user_preset("fast", {"algo": "PPO"})
    with pytest.raises(ConfigError, match="may use only"):
        save_user_preset("../escape", {"algo": "PPO"})


@pytest.mark.parametrize(("text", "error"), [
    ("ppo: {n_steps: [unclosed\n", "cannot read YAML"),
    ("ppo: {n_steps: -5}\n", "ppo.n_steps"),
    ("- just\n- a list\n", "expected a mapping"),
])
def test_broken_user_preset_is_reported_and_left_untouched(user_home, text, error):
    folder = user_home / "presets"
    folder.mkdir(parents=True)
    path = folder / "broken.yaml"
    path.write_text(text)
    preset = {p.name: p for p in list_presets()}["broken"]
    assert preset.error and error in preset.error
    with pytest.raises(ConfigError, match="broken"):
        resolve("broken")
    out = subprocess.run([sys.executable, "-m", "core.cli", "presets"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0 and "BROKEN" in out.stdout and str(path) in out.stdout
    assert path.read_text() == text


def test_import_guide_yaml_warns_about_use_amp(tmp_path, user_home):
    guide = tmp_path / "rtx4060.yaml"
    guide.write_text("algo: SAC\nsac: {batch_size: 256, buffer_size: 1000000, use_amp: true}\ncuda_graph_optimization: true\n")
    out = subprocess.run([sys.executable, "-m", "core.cli", "presets", "import", str(guide), "--name", "rtx4060"],
                         capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "sac.use_amp" in out.stdout and "not applied" in out.stdout and "cuda_graph_optimization" in out.stdout
    saved = (user_home / "presets" / "rtx4060.yaml").read_text()
    assert "use_amp" not in saved and "batch_size: 256" in saved


def test_presets_show_prints_resolved_yaml():
    out = subprocess.run([sys.executable, "-m", "core.cli", "presets", "show", "heavy"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0
    assert "batch_size: 4096" in out.stdout and "n_envs: 32" in out.stdout and "- 1024" in out.stdout


def test_preset_valid_only_on_its_base_is_not_broken(user_home):
    # alone, batch 4096 does not divide the default 1 x 2048 rollout; over heavy (32 x 256) it does
    path = save_user_preset("heavy-longer", {"ppo": {"n_epochs": 40, "batch_size": 4096}}, "heavy, more epochs", base="heavy")
    preset = {p.name: p for p in list_presets()}["heavy-longer"]
    assert preset.error is None, preset.error
    assert resolve("heavy-longer").config.ppo.n_epochs == 40
    path.write_text("base: heavy\nppo: {n_epochs: 0}\n")  # edited by hand into a broken one
    assert "ppo.n_epochs" in {p.name: p for p in list_presets()}["heavy-longer"].error
