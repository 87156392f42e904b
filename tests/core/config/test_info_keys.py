"""env.info_keys: validated names; the spaces probe offers the numeric keys of a probe episode's last info."""

from __future__ import annotations

import pytest

from core.config.errors import ConfigError
from core.config.validate import validate_config

ENTRY = "tests.core.worker.info_env:InfoKeysEnv"


def test_info_keys_are_names_of_numbers_each_once():
    cfg = validate_config({"env": {"entry_point": ENTRY, "info_keys": ["co2_kg", "comfort_pct"]}}).config
    assert cfg.env.info_keys == ["co2_kg", "comfort_pct"]
    for bad, words in ((["co2 kg"], "co2 kg"), (["r"], "Monitor"), (["a", "a"], "twice")):
        with pytest.raises(ConfigError) as err:
            validate_config({"env": {"entry_point": ENTRY, "info_keys": bad}})
        assert "env.info_keys" in str(err.value) and words in str(err.value)


def test_the_probe_offers_the_numeric_info_keys_at_an_episodes_end():
    from core.config.schema import EnvSpec
    from core.config.spaces import probe_spaces
    from core.config.trust import trust

    trust("tests.core.worker.info_env")
    spaces = probe_spaces(EnvSpec(entry_point=ENTRY), use_cache=False)
    assert spaces.info_keys == ("co2_kg", "comfort_pct")  # "label" is text: not offered
