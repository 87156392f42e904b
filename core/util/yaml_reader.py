"""The one way YAML from the user is read: safe loaders only, a mapping where one is expected.

Presets, ``--config`` files, plans and ``--set`` values all come through here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"


class SafeNumberLoader(yaml.SafeLoader):
    """The safe loader with numbers read as people write them in configs.

    YAML 1.1 reads ``1e6`` as a string (it wants ``1.0e6``) and ``0x10``, ``010`` and ``1:30``
    as integers in other bases; here ``1e6`` is the float 1000000.0 and anything but a plain
    decimal stays a string, so the schema can refuse it by name instead of taking 16 for ``0x10``.
    """


SafeNumberLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SafeNumberLoader.add_implicit_resolver(_INT, re.compile(r"^[-+]?(0|[1-9][0-9_]*)$"), list("-+0123456789"))
_FLOAT_TEXT = r"^[-+]?([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
SafeNumberLoader.add_implicit_resolver(_FLOAT, re.compile(_FLOAT_TEXT), list("-+0123456789."))


def load_yaml(text: str) -> Any:
    """Parse YAML text with the safe loader (numbers as ``SafeNumberLoader`` reads them); ``yaml.YAMLError`` on bad input."""
    return yaml.load(text, Loader=SafeNumberLoader)  # noqa: S506 - a SafeLoader subclass


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
