"""The run config: field ranges, cross-field rules with their messages, --set paths."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config.algorithms.ppo import largest_divisor
from core.config.dotted import set_path
from core.config.errors import ConfigError
from core.config.validate import parse_set, validate_config
from core.util.text import safe_name


def issues(raw: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate_config(raw)
    return [str(i) for i in info.value.issues]


def test_defaults_are_sb3_defaults():
    cfg = validate_config({}).config
    assert (cfg.ppo.n_steps, cfg.ppo.batch_size, cfg.ppo.n_epochs, cfg.ppo.learning_rate) == (2048, 64, 10, 3e-4)
    assert (cfg.a2c.n_steps, cfg.a2c.learning_rate, cfg.a2c.use_rms_prop) == (5, 7e-4, True)
    assert (cfg.sac.buffer_size, cfg.sac.batch_size, cfg.sac.ent_coef) == (1_000_000, 256, "auto")
    assert (cfg.dqn.batch_size, cfg.dqn.target_update_interval, cfg.dqn.exploration_final_eps) == (32, 10_000, 0.05)


def test_ppo_batch_that_does_not_divide_is_a_warning_with_the_divisor_as_SB3_does():
    validated = validate_config({"ppo": {"n_steps": 256, "batch_size": 1000}, "runtime": {"n_envs": 16}})
    assert validated.config.ppo.batch_size == 1000  # SB3 accepts it: trains with a truncated last minibatch
    [hint] = validated.hints
    assert (hint.path, hint.value) == ("ppo.batch_size", 512)
    assert "16 x 256 = 4096" in hint.message and "use 512" in hint.message and "96 samples" in hint.message
    assert [str(hint)] == validated.warnings and str(hint).endswith("(--set ppo.batch_size=512)")


def test_ppo_batch_larger_than_the_rollout_is_a_warning():
    validated = validate_config({"ppo": {"n_steps": 8, "batch_size": 64}})
    [hint] = validated.hints
    assert hint.value == 8 and "exceeds the rollout" in hint.message
    assert validate_config({"ppo": {"n_steps": 8, "batch_size": 8}}).hints == []


@pytest.mark.parametrize(("text", "value"), [("1e6", 1_000_000), ("2.5e5", 250_000), ("1_000_000", 1_000_000),
                                             ("1000000", 1_000_000), ("'1e6'", 1_000_000), ("3.0e3", 3000)])
def test_integers_take_integral_floats_however_written(text, value):
    path, parsed = parse_set(f"budget.total_timesteps={text}")
    assert validate_config(set_path({}, path, parsed)).config.budget.total_timesteps == value


@pytest.mark.parametrize(("text", "words"), [("true", "yes/no value is not a number"), ("0x10", "write 16"),
                                             ("2.5", "use 2 or 3"), ("1.5e0", "not a whole number"),
                                             (".nan", "not a finite number")])
def test_integers_refuse_booleans_other_bases_and_fractions(text, words):
    path, parsed = parse_set(f"budget.total_timesteps={text}")
    [msg] = issues(set_path({}, path, parsed))
    assert msg.startswith("budget.total_timesteps: ") and words in msg


def test_integer_rules_hold_for_optional_and_keyword_fields():
    assert validate_config({"runtime": {"seed": "1e3"}}).config.runtime.seed == 1000
    assert validate_config({"ppo": {"batch_size": "auto"}}).config.ppo.batch_size == 2048  # the keyword passes
    assert validate_config({"ppo": {"batch_size": 6.4e1}}).config.ppo.batch_size == 64
    [msg] = issues({"ppo": {"batch_size": True}})
    assert msg.startswith("ppo.batch_size: True:")
    assert validate_config({"ppo": {"learning_rate": 1}}).config.ppo.learning_rate == 1.0  # a float field takes ints


def test_ppo_rule_ignored_when_another_algorithm_runs():
    cfg = validate_config({"algo": "A2C", "ppo": {"n_steps": 256, "batch_size": 1000}}).config
    assert cfg.ppo.batch_size == 1000


@pytest.mark.parametrize(("n_envs", "n_steps", "cap", "expected"),
                         [(16, 256, 4096, 4096), (3, 100, 64, 60), (1, 8192, 512, 512), (7, 1, 4096, 7)])
def test_auto_batch_picks_largest_divisor_not_above_cap(n_envs, n_steps, cap, expected):
    cfg = validate_config({"ppo": {"n_steps": n_steps, "batch_size": "auto", "auto_batch_cap": cap},
                           "runtime": {"n_envs": n_envs}}).config
    assert cfg.ppo.batch_size == expected


@given(st.integers(2, 5000), st.integers(2, 5000))
def test_largest_divisor_property(n, cap):
    d = largest_divisor(n, cap)
    assert n % d == 0
    if d != n:
        assert d <= cap and all(n % k for k in range(d + 1, min(cap, n) + 1))


@pytest.mark.parametrize("algo", ["SAC", "DQN"])
def test_buffer_must_hold_a_batch(algo):
    section = algo.lower()
    [msg] = issues({"algo": algo, section: {"buffer_size": 100, "batch_size": 256}})
    assert msg.startswith(f"{section}.buffer_size:") and "at least 256" in msg


@pytest.mark.parametrize("algo", ["SAC", "DQN"])
def test_learning_starts_below_budget(algo):
    section = algo.lower()
    [msg] = issues({"algo": algo, section: {"learning_starts": 5000}, "budget": {"total_timesteps": 5000}})
    assert msg.startswith(f"{section}.learning_starts:") and "5,000" in msg and "never train" in msg


def test_field_range_message_names_field_and_value():
    [msg] = issues({"ppo": {"gamma": 1.5}})
    assert msg.startswith("ppo.gamma: 1.5:") and "less than or equal to 1" in msg


def test_unknown_key_suggests_the_close_one():
    [msg] = issues({"ppo": {"n_epoch": 3}})
    assert "ppo.n_epoch" in msg and "did you mean 'n_epochs'" in msg


def test_net_arch_shape_per_algorithm():
    assert "DQN takes a plain list" in issues({"algo": "DQN", "policy": {"net_arch": {"pi": [64], "vf": [64]}}})[0]
    assert "SAC takes pi and qf" in issues({"algo": "SAC", "policy": {"net_arch": {"pi": [64], "vf": [64]}}})[0]
    validate_config({"algo": "PPO", "policy": {"net_arch": {"pi": [64], "vf": [32, 32]}}})


def test_env_needs_exactly_one_of_id_or_entry_point():
    assert validate_config({"env": {"entry_point": "pkg.mod:Env"}}).config.env.id is None
    assert "exactly one" in issues({"env": {"entry_point": "pkg.mod:Env", "id": "CartPole-v1"}})[0]
    assert "not 'package.module:Class'" in issues({"env": {"entry_point": "../evil"}})[0]


def test_keys_sb3_cannot_honour_are_accepted_with_a_reason():
    validated = validate_config({"use_amp": True, "sac": {"use_amp": True, "cuda_graph_optimization": True}, "algo": "SAC"})
    text = "\n".join(validated.warnings)
    assert "use_amp" in text and "sac.use_amp" in text and "no mixed-precision" in text
    assert "cuda_graph_optimization" in text and "CUDA graphs" in text


def test_set_paths_parse_yaml_values():
    assert parse_set("ppo.n_epochs=20") == ("ppo.n_epochs", 20)
    assert parse_set("policy.net_arch=[1024,512]") == ("policy.net_arch", [1024, 512])
    assert parse_set("sac.ent_coef=auto_0.1") == ("sac.ent_coef", "auto_0.1")
    with pytest.raises(ConfigError, match="PATH=VALUE"):
        parse_set("ppo.n_epochs")
    raw = set_path({}, "runtime.normalize.obs", True)
    assert validate_config(raw).config.runtime.normalize.obs is True


@given(st.text())
def test_safe_name_never_leaves_its_folder(text):
    name = safe_name(text)
    assert "/" not in name and "\\" not in name and ".." not in name and not name.startswith(".")
