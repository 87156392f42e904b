"""Issue 30: the own-network fields (policy.features_extractor, its kwargs, policy.class) in every place a config
comes from: the schema's errors, --set, a preset, a queue plan, a sweep's space, the trust rule and the import folder."""

from __future__ import annotations

import pytest

from core.config.dotted import set_path
from core.config.errors import ConfigError
from core.config.presets import resolve, save_user_preset
from core.config.trust import code_modules, config_modules, require_trusted_policy, trust
from core.config.validate import parse_set, validate_config
from core.queue.plan import parse_plan
from core.sweep.spec import parse_sweep

OWN = {"features_extractor": "my_nets:GraphAttention", "features_extractor_kwargs": {"heads": 4, "hidden": 64},
       "class": "my_policies:GraphPolicy"}


def issues(raw):
    with pytest.raises(ConfigError) as exc:
        validate_config(raw)
    return {i.path: i.message for i in exc.value.issues}


def test_fields_are_typed_and_kept_under_their_names():
    cfg = validate_config({"policy": OWN}).config
    assert cfg.policy.features_extractor == "my_nets:GraphAttention" and cfg.policy.policy_class == "my_policies:GraphPolicy"
    assert cfg.policy.features_extractor_kwargs == {"heads": 4, "hidden": 64}
    assert cfg.model_dump(mode="json")["policy"]["class"] == "my_policies:GraphPolicy"  # written as the user wrote it
    again = validate_config(cfg.model_dump(mode="json")).config  # a run's config.yaml reads back the same
    assert again.policy == cfg.policy


def test_bad_values_name_the_field_and_the_fix():
    found = issues({"policy": {"features_extractor": "my_nets.GraphAttention"}})
    message = found["policy.features_extractor"]
    assert "not 'module:Class'" in message and "e.g. my_nets:GraphAttention" in message
    found = issues({"policy": {"class": "a:b:c"}})
    assert "not 'module:Class'" in found["policy.class"]
    found = issues({"policy": {"features_extractor_kwargs": [4, 64]}})
    assert "must be a mapping" in found["policy.features_extractor_kwargs"]


def test_set_preset_plan_and_sweep_take_the_paths():
    raw = {}
    for item in ("policy.features_extractor=my_nets:GraphAttention", "policy.features_extractor_kwargs.heads=8",
                 "policy.class=my_policies:GraphPolicy"):
        raw = set_path(raw, *parse_set(item))
    cfg = validate_config(raw).config
    assert cfg.policy.features_extractor_kwargs == {"heads": 8} and cfg.policy.policy_class == "my_policies:GraphPolicy"

    save_user_preset("my-gat", {"policy": OWN})
    mine = resolve("my-gat", {"policy": {"features_extractor_kwargs": {"heads": 2}}}).config  # --set on a preset
    assert mine.policy.features_extractor_kwargs == {"heads": 2, "hidden": 64}

    plan = parse_plan({"jobs": [{"name": "gat", "algo": "PPO", "set": {"policy.features_extractor": "my_nets:GraphAttention",
                                                                       "policy.features_extractor_kwargs.heads": 4}}]})
    assert plan.jobs[0].config().policy.features_extractor_kwargs == {"heads": 4}
    with pytest.raises(ConfigError) as exc:
        parse_plan({"jobs": [{"name": "bad", "set": {"policy.features_extractor_kwargs": "heads=4"}}]})
    assert "policy.features_extractor_kwargs" in str(exc.value)

    base = {"algo": "PPO", "set": {"policy.features_extractor": "my_nets:GraphAttention", "budget.eval_every": 1000}}
    sweep = parse_sweep({"name": "gat-heads", "base": base,
                         "space": {"policy.features_extractor_kwargs.heads": {"choice": [2, 4, 8]}}, "n_trials": 3})
    trial = validate_config(sweep.raw_config({"policy.features_extractor_kwargs.heads": 4})).config
    assert trial.policy.features_extractor_kwargs == {"heads": 4} and trial.policy.features_extractor == "my_nets:GraphAttention"


def test_the_trust_rule_and_the_import_folder_cover_the_network():
    cfg = validate_config({"policy": OWN}).config
    assert config_modules(cfg) == ["my_nets", "my_policies"]
    assert code_modules({"policy": OWN, "env": {"entry_point": "my_envs:Graph"}}) == ["my_envs", "my_nets", "my_policies"]
    with pytest.raises(ConfigError) as exc:
        require_trusted_policy(cfg.policy)
    [issue] = exc.value.issues
    assert issue.path == "policy.features_extractor" and "--trust my_nets" in issue.message
    trust("my_nets")
    with pytest.raises(ConfigError) as exc:
        require_trusted_policy(cfg.policy)
    assert exc.value.issues[0].path == "policy.class" and "--trust my_policies" in exc.value.issues[0].message
    trust("my_policies")
    require_trusted_policy(cfg.policy)
    # a gymnasium env with an own network: the launch folder is recorded for the worker and a resume
    assert cfg.with_import_folder("/home/me/project").env.path == "/home/me/project"
    assert validate_config({}).config.with_import_folder("/home/me/project").env.path is None
