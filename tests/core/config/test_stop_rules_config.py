"""The budget's stopping rules in the config: typed fields, refused without periodic evaluation, reached by --set and sweeps."""

from __future__ import annotations

import pytest

from core.config.errors import ConfigError
from core.config.validate import validate_config
from core.sweep.spec import parse_sweep
from tests.core.sweep.helpers import SMALL_SWEEP
from tests.training_helpers import cli


@pytest.mark.parametrize(("budget", "path", "fix"), [
    ({"stop_at_reward": 475}, "budget.stop_at_reward", "or clear it"),
    ({"stop_after_evals_without_improvement": 5}, "budget.stop_after_evals_without_improvement", "or set it to 0"),
])
def test_a_rule_without_periodic_evaluation_is_refused_naming_the_field_and_the_fix(budget, path, fix):
    with pytest.raises(ConfigError) as info:
        validate_config({"budget": budget})
    assert [i.path for i in info.value.issues] == [path]
    message = info.value.issues[0].message
    assert "needs periodic evaluation: set budget.eval_every (Evaluate every) to a number of steps" in message
    assert message.endswith(fix)


def test_rules_with_periodic_evaluation_are_kept():
    budget = validate_config({"budget": {"eval_every": 1000, "stop_at_reward": "475", "stop_after_evals_without_improvement": 5,
                                         "stop_min_evals": 2}}).config.budget
    assert (budget.stop_at_reward, budget.stop_after_evals_without_improvement, budget.stop_min_evals) == (475.0, 5, 2)
    default = validate_config({}).config.budget  # off unless asked for; SB3's min_evals counted from the third
    assert (default.stop_at_reward, default.stop_after_evals_without_improvement, default.stop_min_evals) == (None, 0, 3)
    with pytest.raises(ConfigError, match="budget.stop_after_evals_without_improvement"):
        validate_config({"budget": {"eval_every": 1000, "stop_after_evals_without_improvement": -1}})


def test_set_on_the_command_line_is_refused_before_training(runs_dir):
    done = cli("train", "--algo", "PPO", "--env", "CartPole-v1", "--runs-dir", str(runs_dir),
               "--set", "budget.stop_at_reward=475")
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1
    assert "budget.stop_at_reward: stop_at_reward 475 needs periodic evaluation" in done.stderr
    assert not list(runs_dir.iterdir())  # no run was made


def test_a_sweep_searches_a_rule_like_any_field():
    spec = parse_sweep({**SMALL_SWEEP, "space": {"budget.stop_after_evals_without_improvement": {"int": [2, 6]}}})
    assert spec.trial_config({"budget.stop_after_evals_without_improvement": 4}).budget.stop_after_evals_without_improvement == 4
    no_eval = {**SMALL_SWEEP["base"], "set": {**SMALL_SWEEP["base"]["set"], "budget.eval_every": 0}}
    with pytest.raises(ConfigError, match="space.budget.stop_after_evals_without_improvement: 2: .*needs periodic evaluation"):
        parse_sweep({**SMALL_SWEEP, "base": no_eval, "objective": {"metric": "episode_mean_reward"},
                     "space": {"budget.stop_after_evals_without_improvement": {"int": [2, 6]}}})
