"""The sweep file: every problem refused naming its field; the shipped example passes the check."""

from __future__ import annotations

import json

import pytest

from core.config.errors import ConfigError
from core.results.stats import aggregate
from core.sweep.control import SweepError, start_sweep
from core.sweep.spec import load_sweep, parse_sweep, spec_data
from core.sweep.trial_group import members, separation, trial_stats
from core.util.paths import configs_dir
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file
from tests.training_helpers import cli

NO_ENV = {k: v for k, v in SMALL_SWEEP["base"].items() if k != "env"}


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
    ({**SMALL_SWEEP, "seeds": 0}, "seeds: 0 runs cannot be launched"),
    ({**SMALL_SWEEP, "seeds": [3, 3]}, "seeds: seed 3 is given twice"),
    ({**SMALL_SWEEP, "aggregate": "median"}, "aggregate: Input should be 'mean' or 'iqm'"),
    ({**SMALL_SWEEP, "envs": ["Acrobot-v1"]}, "envs: give the envs in envs or base.env, not both"),
    ({**SMALL_SWEEP, "base": NO_ENV, "envs": ["CartPole-v1", "CartPole-v1"]}, "envs: CartPole-v1 is listed twice"),
    ({**SMALL_SWEEP, "base": NO_ENV, "envs": [{"id": "CartPole-v1", "referense": 500}]}, "envs.0.referense"),
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


def test_seeds_and_envs_make_a_trial_of_one_run_per_env_and_seed():
    spec = parse_sweep({**SMALL_SWEEP, "base": NO_ENV, "seeds": [3, 7], "aggregate": "iqm",
                        "envs": ["CartPole-v1", {"id": "Acrobot-v1", "reference": -100}]})
    assert [m.key for m in members(spec)] == ["CartPole-v1#s3", "CartPole-v1#s7", "Acrobot-v1#s3", "Acrobot-v1#s7"]
    cfg = spec.trial_config({"ppo.learning_rate": 0.01, "ppo.n_epochs": 4}, 2, "Acrobot-v1", 7)
    assert cfg.env.label == "Acrobot-v1" and cfg.runtime.seed == 7 and cfg.name == "cartpole-lr-t2"
    assert parse_sweep(spec_data(spec)) == spec  # what the runner reads back
    assert [m.key for m in members(parse_sweep(SMALL_SWEEP))] == ["run"]  # no seeds: one run, as before


def test_a_sweep_over_envs_without_a_baseline_is_refused_at_start_naming_the_env(runs_dir):
    spec = parse_sweep({**SMALL_SWEEP, "base": NO_ENV, "envs": [{"id": "CartPole-v1", "baseline": 20},
                                                                {"id": "Acrobot-v1", "reference": -100}]})
    with pytest.raises(SweepError) as info:
        start_sweep(runs_dir, spec)
    assert "envs[1] Acrobot-v1: nothing to normalise its scores by" in str(info.value)
    assert "rlpanel train --algo random --env Acrobot-v1" in str(info.value)
    assert not (runs_dir / ".sweeps" / "cartpole-lr" / "state.json").exists()


def test_trial_statistics_are_the_results_tables_and_say_when_the_top_two_overlap():
    spec = parse_sweep({**SMALL_SWEEP, "seeds": 3})
    stats = trial_stats(spec, {"s0": 100.0, "s1": 120.0, "s2": 140.0}, {})
    assert stats.n == 3 and stats.value == pytest.approx(120.0) and stats.se == pytest.approx(aggregate([100, 120, 140]).se)
    assert stats.ci95 == pytest.approx(aggregate([100, 120, 140]).ci95)
    iqm = trial_stats(parse_sweep({**SMALL_SWEEP, "seeds": 3, "aggregate": "iqm"}), {"s0": 1.0, "s1": 2.0, "s2": 90.0}, {})
    assert iqm.value == pytest.approx(aggregate([1.0, 2.0, 90.0]).iqm) and iqm.se is None
    best, close, far = {"ci95": [100, 140]}, {"ci95": [90, 110]}, {"ci95": [10, 20]}
    assert separation(best, close, 3) == "the top 2 are not separated at 3 seeds: their 95 % intervals overlap"
    assert "do not overlap" in separation(best, far, 3)
    assert "no interval at 1 seed" in separation({"ci95": None}, far, 1)
