"""The sweep file: every problem refused naming its field; the shipped example passes the check."""

from __future__ import annotations

import json

import pytest

from core.config.errors import ConfigError
from core.sweep.spec import load_sweep, parse_sweep
from core.util.paths import configs_dir
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file
from tests.training_helpers import cli


def with_space(space: dict) -> dict:
    return {**SMALL_SWEEP, "space": space}


@pytest.mark.parametrize(("raw", "message"), [
    (with_space({"ppo.learnin_rate": {"uniform": [0.1, 0.2]}}), "space.ppo.learnin_rate: 0.1: unknown setting 'learnin_rate'; "
                                                                  "did you mean 'learning_rate'?"),
    (with_space({"ppo.n_epochs": {"int": [0, 3]}}), "space.ppo.n_epochs: 0"),
    (with_space({"sac.tau": {"uniform": [0.1, 0.2]}}), "space.sac.tau: sac settings are ignored by PPO"),
    (with_space({"ppo.gamma": {"uniform": [0.5]}}), "space.ppo.gamma: uniform takes [low, high] numbers"),
    (with_space({"ppo.gamma": {"uniform": [0.9, 0.5]}}), "space.ppo.gamma: low 0.9 must be below high 0.5"),
    (with_space({"ppo.learning_rate": {"log_uniform": [0, 0.1]}}), "space.ppo.learning_rate: log_uniform needs a low above 0"),
    (with_space({"ppo.n_epochs": {"int": [3.5, 9]}}), "space.ppo.n_epochs: int takes whole numbers"),
    (with_space({"ppo.gamma": {"normal": [0.9, 0.1]}}), "space.ppo.gamma: one of log_uniform, uniform, int, choice"),
    (with_space({"policy.net_arch": {"choice": [[64, 64], "wide"]}}), "space.policy.net_arch: 'wide'"),
    (with_space({"policy.net_arch": {"choice": []}}), "space.policy.net_arch: choice takes a non-empty list"),
    ({**SMALL_SWEEP, "objective": {"metric": "accuracy"}}, "objective.metric: metric 'accuracy' is not recorded"),
    ({**SMALL_SWEEP, "objective": {"direction": "up"}}, "objective.direction"),
    ({**SMALL_SWEEP, "pruner": "hyperband"}, "pruner"),
    ({**SMALL_SWEEP, "n_trials": 0}, "n_trials"),
    ({**SMALL_SWEEP, "name": "../up"}, "name"),
    ({**SMALL_SWEEP, "colour": "red"}, "colour"),
    ({**SMALL_SWEEP, "base": {"preset": "nope"}}, "no preset named 'nope'"),
    ({**SMALL_SWEEP, "base": {**SMALL_SWEEP["base"], "set": {"budget.eval_every": 0}}},
     "base.set: objective.metric: eval_mean_reward needs evaluations during the run: add budget.eval_every"),
])
def test_bad_sweeps_are_refused_naming_the_field(raw, message):
    with pytest.raises(ConfigError) as info:
        parse_sweep(raw)
    assert message in str(info.value)


def test_list_choices_go_to_optuna_as_text_and_come_back_as_lists():
    spec = parse_sweep(with_space({"policy.net_arch": {"choice": [[64, 64], [256, 256]]}}))
    dist = spec.space["policy.net_arch"]
    assert dist.encoded_choices() == ["[64, 64]", "[256, 256]"]
    assert spec.decode({"policy.net_arch": "[256, 256]"}) == {"policy.net_arch": [256, 256]}
    cfg = spec.trial_config(spec.decode({"policy.net_arch": "[256, 256]"}), number=3)
    assert cfg.policy.net_arch == [256, 256] and cfg.name == "cartpole-lr-t3"


def test_shipped_example_passes_the_check():
    spec = load_sweep(configs_dir() / "sweeps" / "ppo-cartpole-lr.yaml")
    assert set(spec.space) == {"ppo.learning_rate", "ppo.n_epochs", "policy.net_arch"}
    assert spec.pruner == "median" and spec.parallel == 2


def test_cli_check_names_the_field_and_fails(tmp_path):
    good = cli("sweep", "check", str(sweep_file(tmp_path)), "--json")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["name"] == "cartpole-lr"
    bad = cli("sweep", "check", str(sweep_file(tmp_path, space={"ppo.n_epoch": {"int": [3, 9]}})))
    assert bad.returncode == 2
    assert "space.ppo.n_epoch" in bad.stderr and "did you mean 'n_epochs'" in bad.stderr
