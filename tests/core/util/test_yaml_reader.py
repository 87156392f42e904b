"""Issue 11, points 2 and 5: the one YAML reader and its limits, at every door YAML comes through.

Hostile inputs run in a child process under a memory limit and a timeout, so a regression fails
here instead of eating the machine.
"""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest
import yaml

from core.util.yaml_reader import DEFAULT_LIMITS, Limits, YamlLimitError, load_yaml, read_yaml_mapping
from tests.conftest import REPO

LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
BOMB_VALUE = "&a [x,x,x,x,x,x,x,x,x]"  # grown below into a flow value for --set
FLOW_BOMB = "[" + ",".join(["&a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"] + [
    f"&{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]) + "]"
MEMORY_LIMIT = 1 << 30


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT * 2, MEMORY_LIMIT * 2))


def rlpanel(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The CLI in a child process held to 2 GiB of address space and ``timeout`` seconds."""
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limited)


def test_a_billion_laughs_is_refused_by_its_expanded_size():
    assert len(LAUGHS) < 600
    with pytest.raises(YamlLimitError, match="aliases"):
        load_yaml(LAUGHS, "laughs.yaml", DEFAULT_LIMITS)


def test_aliases_within_the_limits_are_accepted():
    data = load_yaml("base: &b {n_steps: 128, n_epochs: 3}\nppo: {<<: *b, n_epochs: 5}\na2c: *b\n", "x", DEFAULT_LIMITS)
    assert data["ppo"] == {"n_steps": 128, "n_epochs": 5} and data["a2c"] == {"n_steps": 128, "n_epochs": 3}


@pytest.mark.parametrize(("text", "limit", "words"), [
    ("[" * 40 + "]" * 40, Limits(), "deeper than 32"),
    ("{a: " * 5000 + "1" + "}" * 5000, Limits(), "deeper than 32"),
    ("x: " + "y" * 70_000, Limits(), "70,000 characters"),
    ("".join(f"k{i}: 1\n" for i in range(21_000)), Limits(), "20,000 keys"),
    ("[" + ",".join("1" for _ in range(100_001)) + "]", Limits(), "100,000 values"),
    ("a: &x [1, *x]", Limits(), "recursive"),
    ("x: 1\n" * 10, Limits(max_bytes=20), "over the 20 bytes limit"),
])
def test_each_limit_names_itself_and_the_fix(text, limit, words):
    with pytest.raises(YamlLimitError) as err:
        load_yaml(text, "plan.yaml", limit)
    message = str(err.value)
    assert message.startswith("plan.yaml: ") and words in message and "; " in message


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("x: " + "y" * (DEFAULT_LIMITS.max_bytes + 10))
    with pytest.raises(YamlLimitError, match="over the 1.0 MiB limit") as err:
        read_yaml_mapping(path)
    assert str(path) in str(err.value)


def test_bad_syntax_is_a_yaml_error_naming_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: [1, 2\n")
    with pytest.raises(ValueError, match=f"cannot read YAML from {path}"):
        read_yaml_mapping(path)
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [1, 2")


@pytest.mark.parametrize("path", ["policy.net_arch", "env.kwargs"])
def test_set_with_an_alias_bomb_is_refused_at_once(path):  # point 2: --set
    done = rlpanel("estimate", "--algo", "PPO", "--env", "CartPole-v1", "--set", f"{path}={FLOW_BOMB}")
    assert done.returncode == 2, done.stderr
    assert f"--set {path}" in done.stderr or path in done.stderr
    assert "aliases" in done.stderr and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_config_file_with_an_alias_bomb_is_refused_at_once(tmp_path):  # point 2: --config
    path = tmp_path / "bomb.yaml"
    path.write_text(LAUGHS + "env: {id: CartPole-v1, kwargs: {x: *i}}\n")
    done = rlpanel("estimate", "--config", str(path))
    assert done.returncode == 1 and "aliases" in done.stderr and str(path) in done.stderr


def test_plan_with_an_alias_bomb_is_refused_at_once(tmp_path):  # point 2: a plan
    path = tmp_path / "plan.yaml"
    path.write_text(LAUGHS + "jobs:\n  - {name: a, algo: random, env: CartPole-v1, set: {env.kwargs: {x: *i}}}\n")
    done = rlpanel("queue", "run", str(path), "--runs-dir", str(tmp_path / "runs"))
    assert done.returncode == 2 and "aliases" in done.stderr
    assert not (tmp_path / "runs" / ".queue" / "state.json").exists(), "no queue was started"


def test_preset_import_with_an_alias_bomb_is_refused_and_presets_stay_fast(tmp_path):  # point 2: presets import
    path = tmp_path / "bomb.yaml"
    path.write_text(LAUGHS + "env: {id: CartPole-v1, kwargs: {x: *i}}\n")
    done = rlpanel("presets", "import", str(path))
    assert done.returncode == 1 and "aliases" in done.stderr
    listed = rlpanel("presets")
    assert listed.returncode == 0 and "bomb" not in listed.stdout


def test_set_with_a_huge_string_is_refused(tmp_path):  # point 5 through --set
    done = rlpanel("estimate", "--algo", "PPO", "--env", "CartPole-v1", "--set", "name=" + "x" * 70_000)
    assert done.returncode == 2 and "limit for one value" in done.stderr and len(done.stderr) < 1000


@pytest.mark.parametrize("text", ["env: {id: CartPole-v1, kwargs: {x: !!binary gIGC}}\n",  # bytes no JSON can hold
                                  "name: !!binary aGVsbG8=\n",  # bytes pydantic would have taken as the text 'hello'
                                  "? !!binary gIGC\n: 1\n"])
def test_a_binary_value_is_refused_by_name(text):  # issue 28: it ended `train --config` in a UnicodeDecodeError
    with pytest.raises(YamlLimitError, match=r"!!binary value \(line 1\).*write the value as text"):
        load_yaml(text, "config.yaml", DEFAULT_LIMITS)


def test_a_binary_value_in_a_config_file_is_one_line_of_error(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_text("algo: PPO\nenv:\n  id: CartPole-v1\n  kwargs: {seed_bytes: !!binary gIGC}\n")
    done = rlpanel("train", "--config", str(path), "--runs-dir", str(tmp_path / "runs"))
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "!!binary value (line 4)" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()), "nothing was launched"
