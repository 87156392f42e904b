"""Load an object named ``package.module:Name`` (a custom env, later wrappers and policies).

User code: only the worker and the spaces probe subprocess call this (ARCHITECTURE.md, "Safety").
"""

from __future__ import annotations

import importlib
from typing import Any


def load_object(spec: str) -> Any:
    """``"pkg.mod:Cls"`` -> the object ``Cls`` of module ``pkg.mod`` (imported here)."""
    module_name, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module_name), attr)
