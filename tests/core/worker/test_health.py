"""Issue 11, point 12: NaN or inf in a logged loss ends the run ``failed`` naming the step and the
loss (nothing saved over the last good checkpoint); a collapsed entropy or std is a warning event."""

from __future__ import annotations

import math

import pytest

from core.config.validate import validate_config
from core.launch.control import launch_worker
from core.run.checkpoints import find_checkpoint
from core.run.status import read_status
from core.util.jsonl import JsonlWriter, read_jsonl
from core.worker.health import TrainingHealth
from tests.conftest import REPO
from tests.training_helpers import make_run, records


def events(path):
    return [r for r in read_jsonl(path) if r.get("kind") == "event"]


def test_nan_or_inf_in_a_loss_is_a_failure_naming_the_step_and_the_loss(tmp_path):
    health = TrainingHealth(JsonlWriter(tmp_path / "m.jsonl"), discrete_actions=True, algo="PPO")
    health.check(100, {"train/value_loss": 1.5, "train/approx_kl": math.nan})  # not a loss: ignored
    assert health.failure is None
    health.check(200, {"train/value_loss": math.inf, "train/loss": math.nan})
    assert health.failure and "step 200" in health.failure
    assert "train/value_loss = inf" in health.failure and "train/loss = nan" in health.failure
    assert "ppo.learning_rate" in health.failure
    [event] = events(tmp_path / "m.jsonl")
    assert event["level"] == "error" and event["step"] == 200


@pytest.mark.parametrize(("rewards", "bad"), [
    ([1.0, 2.0, -3.0], None),
    ([1e308, 1e308, 0.0], None),  # finite rewards whose sum overflows: no failure
    ([1.0, math.nan, 0.0], "nan"),
    ([math.inf, -math.inf], "inf"),  # a sum of nan: the first bad one is named
    ([0, 1, 2], None),  # an env's integer rewards
])
def test_a_non_finite_reward_is_a_failure_and_a_finite_one_never(tmp_path, rewards, bad):
    health = TrainingHealth(JsonlWriter(tmp_path / "m.jsonl"), discrete_actions=True, algo="PPO")
    health.check_rewards(7, rewards)
    if bad is None:
        assert health.failure is None
    else:
        assert health.failure and f"a non-finite reward ({bad}) at step 7" in health.failure

@pytest.mark.parametrize(("values", "discrete", "what"), [
    ({"train/entropy_loss": -0.001}, True, "entropy collapsed"),
    ({"train/std": 1e-5}, False, "std) collapsed"),
    ({"train/ent_coef": 1e-7}, False, "entropy coefficient collapsed"),
])
def test_a_collapsed_policy_is_one_warning(tmp_path, values, discrete, what):
    health = TrainingHealth(JsonlWriter(tmp_path / "m.jsonl"), discrete_actions=discrete, algo="SAC")
    health.check(10, {"train/entropy_loss": -0.6, "train/std": 0.5, "train/ent_coef": 0.1})
    assert not health.notes
    health.check(20, values)
    health.check(30, values)
    assert health.failure is None and len(health.notes) == 1 and what in health.notes[0]
    assert [e["level"] for e in events(tmp_path / "m.jsonl")] == ["warning"]


def test_an_exception_from_nan_weights_is_explained_by_the_pending_losses(tmp_path):
    health = TrainingHealth(None, discrete_actions=True, algo="A2C")
    exc = ValueError("Expected parameter logits ... found invalid values: tensor([[nan, nan]])")
    assert "train/policy_loss = nan" in health.explain(500, exc, {"train/policy_loss": math.nan})
    other = TrainingHealth(None, discrete_actions=True, algo="A2C")
    assert other.explain(500, ValueError("shape mismatch"), {}) is None


@pytest.mark.parametrize("text", ["sac.ent_coef=.nan", "sac.learning_rate=.inf", "ppo.gamma=.nan"])
def test_nan_and_inf_are_refused_by_validation(text):
    from core.config.errors import ConfigError
    from core.config.validate import parse_set

    path, value = parse_set(text)
    algo = path.split(".")[0].upper()
    with pytest.raises(ConfigError) as err:
        validate_config({"algo": algo, path.split(".")[0]: {path.split(".")[1]: value}})
    assert path in str(err.value)


def test_a_learning_rate_far_too_high_is_warned_about():
    warnings = validate_config({"algo": "PPO", "ppo": {"learning_rate": 1.0}}).warnings
    assert any("ppo.learning_rate 1" in w and "collapse" in w for w in warnings)
    assert not validate_config({"algo": "PPO", "ppo": {"learning_rate": 3e-4}}).warnings


@pytest.mark.training
def test_a_diverging_run_ends_failed_and_keeps_its_last_good_checkpoint(runs_dir):
    run = make_run(runs_dir, {"algo": "PPO", "env": {"entry_point": "tests.core.worker.nan_env:NanRewardEnv",
                                                     "kwargs": {"clean_steps": 300}},
                              "ppo": {"n_steps": 64, "batch_size": 32, "n_epochs": 1},
                              "runtime": {"n_envs": 1, "auto_resume": 2, "auto_resume_after_s": 0},
                              "budget": {"total_timesteps": 5000, "checkpoint_every": 128}})
    assert launch_worker(run, extra_env={"PYTHONPATH": str(REPO)}, reap=False).wait(240) == 0, (run / "worker.log").read_text()
    status = read_status(run)
    assert status.state == "failed", status
    # issue 28: a divergence would come again from the same checkpoint, so it is not resumed by itself
    assert status.failure_kind == "diverged" and status.attempt == 1
    assert "diverged" in status.auto_resume["gave_up"] and status.auto_resume["count"] == 0
    reason = status.exit_reason
    assert reason.startswith("the env returned a non-finite reward (nan) at step 301"), reason
    assert "nothing was saved over the last good checkpoint" in reason
    assert status.error["message"] == reason
    good = find_checkpoint(run).checkpoint
    assert good is not None and good.step <= 301
    assert any(e["level"] == "error" and e["message"] == reason for e in records(run, "event"))
