"""The Configure panel's spaces line offers the env's numeric info keys for env.info_keys."""

from __future__ import annotations

from app.configure.model import spaces_text
from core.config.spaces import EnvSpaces


def test_the_spaces_line_names_the_info_keys_to_record():
    spaces = EnvSpaces((2,), "float32", "discrete", (), "int64", n_actions=2, info_keys=("co2_kg", "comfort_pct"))
    assert spaces_text(spaces).endswith("info at episode end: co2_kg, comfort_pct (record them with env.info_keys)")
    assert "info" not in spaces_text(EnvSpaces((2,), "float32", "discrete", (), "int64", n_actions=2))
