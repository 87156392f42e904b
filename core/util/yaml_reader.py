"""The one way YAML from the user is read: safe loaders only, a mapping where one is expected.

Presets, ``--config`` files, plans and ``--set`` values all come through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def load_yaml(text: str) -> Any:
    """Parse YAML text with the safe loader; ``yaml.YAMLError`` on bad input."""
    return yaml.safe_load(text)


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file that must hold a mapping (safe loader); ``ValueError`` says what is wrong."""
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read YAML from {path}: {exc}".replace("\n", " ")) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data
