"""Issue 30: rl_zoo3's ``policy_kwargs: "dict(features_extractor_class=module.Class, ...)"`` is imported as the own
network and exported back the same way."""

from __future__ import annotations

import yaml

from core.config.validate import validate_config
from core.zoo.export import export_yaml
from core.zoo.pyexpr import parse_python_value
from core.zoo.translate import translate_entry, validated_translation

ENTRY = {"n_timesteps": 100000, "policy": "MultiInputPolicy", "n_steps": 256,
         "policy_kwargs": "dict(features_extractor_class=my_nets.graph.GraphAttention, "
                          "features_extractor_kwargs=dict(heads=16, hidden=64, dropout=0.2), net_arch=[64, 64])"}


def test_zoo_round_trip_keeps_the_extractor():
    translated, problem = validated_translation(translate_entry("ppo", "CartPole-v1", dict(ENTRY)))
    assert problem is None and translated.dropped == [], (problem, translated.dropped)
    cfg = validate_config(translated.raw).config
    assert cfg.policy.features_extractor == "my_nets.graph:GraphAttention"
    assert cfg.policy.features_extractor_kwargs == {"heads": 16, "hidden": 64, "dropout": 0.2}

    text, _ = export_yaml(cfg)
    [(env, entry)] = yaml.safe_load(text).items()
    kwargs = parse_python_value(entry["policy_kwargs"])
    assert str(kwargs["features_extractor_class"]) == "my_nets.graph.GraphAttention"  # the name rl_zoo3 evaluates
    assert kwargs["features_extractor_kwargs"] == {"heads": 16, "hidden": 64, "dropout": 0.2}
    again, problem = validated_translation(translate_entry("ppo", env, entry))
    assert problem is None
    assert validate_config(again.raw).config.policy == cfg.policy


def test_kwargs_holding_code_are_dropped_with_the_reason():
    entry = {**ENTRY, "policy_kwargs": "dict(features_extractor_class=my_nets.GraphAttention, "
                                       "features_extractor_kwargs=dict(activation=nn.ReLU))"}
    translated, problem = validated_translation(translate_entry("ppo", "CartPole-v1", entry))
    assert problem is None
    assert translated.raw["policy"]["features_extractor"] == "my_nets:GraphAttention"
    [drop] = [d for d in translated.dropped if "features_extractor_kwargs" in str(d)]
    assert "nn.ReLU" in str(drop)
