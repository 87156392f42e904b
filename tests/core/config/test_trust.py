"""Issue 11, point 14: code named by an imported preset or a config file never runs before the
user trusts its module (once, remembered); presets that name code are marked as such."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.config.errors import ConfigError
from core.config.schema import EnvSpec
from core.config.spaces import probe_spaces
from core.config.trust import is_trusted, trust


@pytest.fixture
def hostile_preset(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "gift.yaml"
    path.write_text(f'description: a present\nenv: {{entry_point: "os:system", kwargs: {{command: "touch {marker}"}}}}\n')
    return path, marker


def test_estimate_with_an_imported_preset_runs_no_code(hostile_preset, capsys):
    path, marker = hostile_preset
    assert main(["presets", "import", str(path), "--name", "gift"]) == 0
    out = capsys.readouterr().out
    assert "this preset runs code from os" in out
    assert main(["estimate", "--preset", "gift"]) != 0
    err = capsys.readouterr().err
    assert "runs code from os (os:system)" in err and "--trust os" in err and "Traceback" not in err
    assert main(["train", "--preset", "gift", "--detach"]) != 0
    assert "--trust os" in capsys.readouterr().err
    assert not marker.exists(), "the preset's command ran"
    assert not is_trusted("os")


def test_presets_list_marks_code(hostile_preset, capsys):
    path, _ = hostile_preset
    main(["presets", "import", str(path), "--name", "gift"])
    capsys.readouterr()
    assert main(["presets"]) == 0
    assert "[runs code from os]" in capsys.readouterr().out
    assert main(["presets", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert listed["gift"]["code"] == ["os"] and listed["fast"]["code"] == []


def test_trust_is_given_once_per_module_and_remembered(tmp_path, monkeypatch, capsys):
    (tmp_path / "grid_envs.py").write_text(
        "import gymnasium as gym\nimport numpy as np\n"
        "class Grid(gym.Env):\n"
        "    def __init__(self):\n"
        "        self.observation_space = gym.spaces.Box(0, 1, (3,), dtype=np.float32)\n"
        "        self.action_space = gym.spaces.Discrete(2)\n")
    monkeypatch.chdir(tmp_path)
    env = EnvSpec(entry_point="grid_envs:Grid")
    with pytest.raises(ConfigError, match="runs code from grid_envs"):
        probe_spaces(env)
    assert main(["estimate", "--env", "grid_envs:Grid", "--algo", "PPO", "--trust", "grid_envs"]) == 0
    assert is_trusted("grid_envs")
    capsys.readouterr()
    assert main(["estimate", "--env", "grid_envs:Grid", "--algo", "PPO"]) == 0  # remembered
    assert probe_spaces(env).obs_shape == (3,)


@pytest.mark.parametrize("name", ["../x", "a b", "", "os;rm"])
def test_trust_refuses_what_is_not_a_module_name(name, capsys):
    assert main(["estimate", "--trust", name]) == 2
    assert "is not a module name" in capsys.readouterr().err


def test_a_damaged_trust_file_trusts_nothing(user_home):
    (user_home / "trusted-modules.json").write_text("[not json")
    assert not is_trusted("os")
    trust("pkg.envs")
    assert is_trusted("pkg.envs") and not is_trusted("os")
