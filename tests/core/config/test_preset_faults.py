"""Issue 11, points 2, 4, 5 and 14: damaged, hostile or huge preset files, and names Windows keeps.

One broken user preset is listed as broken with the reason and never breaks ``rlpanel presets``
or any other preset (``--preset fast`` included); an import over a limit is refused at once.
"""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.config.errors import ConfigError
from core.config.presets import list_presets, resolve, save_user_preset
from core.util.paths import user_presets_dir
from core.util.text import is_device_name, safe_name

BOMB = "lol: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))

DAMAGED = {
    "base-list": "base: [1, 2]\nppo: {n_epochs: 3}\n",
    "base-dict": "base: {a: 1}\n",
    "deep": "ppo: " + "{a: " * 200 + "1" + "}" * 200 + "\n",
    "bomb": BOMB + "env: {id: CartPole-v1, kwargs: {x: *i}}\n",
    "list": "- a\n- b\n",
    "huge-string": "description: " + "x" * 200_000 + "\n",
    "description-list": "description: [1, 2]\n",
}


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_user_preset_is_listed_as_broken_and_hides_nothing(capsys, case):
    folder = user_presets_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"bad-{case}.yaml").write_text(DAMAGED[case])
    (folder / "mine.yaml").write_text("description: mine\nbase: fast\nppo: {n_epochs: 3}\n")

    presets = {p.name: p for p in list_presets()}
    assert presets[f"bad-{case}"].error, "listed as broken, with the reason"
    assert presets["mine"].error is None and presets["fast"].error is None
    assert resolve("mine").config.ppo.n_epochs == 3

    code, out, _ = run_cli(capsys, "presets", "--json")
    listed = {p["name"]: p for p in json.loads(out)}
    assert code == 0 and listed[f"bad-{case}"]["error"] and listed["fast"]["error"] is None
    code, out, _ = run_cli(capsys, "presets")
    assert code == 0 and "BROKEN" in out and len(out) < 20_000
    code, out, _ = run_cli(capsys, "presets", "show", "fast")
    assert code == 0 and "n_epochs: 15" in out
    code, _, err = run_cli(capsys, "presets", "show", f"bad-{case}")
    assert code == 2 and "is broken" in err and len(err) < 2000
    code, _, err = run_cli(capsys, "estimate", "--preset", "fast", "--algo", "PPO", "--env", "CartPole-v1")
    assert code == 0, err


@pytest.mark.parametrize("case", ["base-list", "base-dict", "deep", "bomb", "huge-string", "description-list"])
def test_import_refuses_a_damaged_file_in_one_clear_message(tmp_path, capsys, case):
    path = tmp_path / f"{case}.yaml"
    path.write_text(DAMAGED[case])
    code, out, err = run_cli(capsys, "presets", "import", str(path))
    assert code in (1, 2)
    assert not user_presets_dir().exists() or not list(user_presets_dir().glob("*.yaml")), "nothing was saved"
    assert len(err.strip().splitlines()) <= 6 and len(err) < 2000, err


def test_import_of_a_50_mb_file_is_refused_before_it_is_read(tmp_path, capsys):  # point 5
    path = tmp_path / "big.yaml"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("description: big\nenv:\n  kwargs:\n")
        line = "".join(f"    k{i}: {i}\n" for i in range(1000))
        while fh.tell() < 50 * 2**20:
            fh.write(line)
    code, _, err = run_cli(capsys, "presets", "import", str(path))
    assert code == 1
    assert "limit" in err and str(path) in err and len(err.splitlines()) == 1


def test_a_many_keys_file_under_the_size_limit_is_refused_with_the_key_limit(tmp_path, capsys):  # point 5
    path = tmp_path / "keys.yaml"
    path.write_text("env:\n  kwargs:\n" + "".join(f"    k{i}: {i}\n" for i in range(30_000)))
    code, _, err = run_cli(capsys, "presets", "import", str(path))
    assert code == 1 and "keys" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("name", ["con", "NUL", "aux", "com1", "lpt9", "con.backup", "Prn"])
def test_windows_device_names_are_refused_as_preset_names(name):  # point 14
    assert is_device_name(name)
    with pytest.raises(ConfigError, match="device name on Windows"):
        save_user_preset(name, {"ppo": {"n_epochs": 3}})
    assert not user_presets_dir().exists() or not list(user_presets_dir().iterdir())


def test_import_under_a_device_name_is_refused(tmp_path, capsys):  # point 14, the CLI path
    path = tmp_path / "nul.yaml"
    path.write_text("ppo: {n_epochs: 3}\n")
    code, _, err = run_cli(capsys, "presets", "import", str(path))
    assert code == 2 and "device name" in err


@pytest.mark.parametrize(("text", "safe"), [("con", "con_"), ("AUX", "aux_"), ("com1.x", "com1_.x"), ("console", "console"),
                                            ("nul night", "nul-night")])
def test_safe_names_are_never_device_names(text, safe):
    assert safe_name(text) == safe and not is_device_name(safe_name(text))
