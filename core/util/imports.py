"""Load an object named ``package.module:Name`` (a custom env, later wrappers and policies).

User code: only the worker and the spaces probe subprocess call this (docs/safety.md).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, asked without importing it (sb3-contrib and torch, Ray take seconds): what
    the window and the commands say is installed, before anything is tried."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked install
        return False


def load_object(spec: str) -> Any:
    """``"pkg.mod:Cls"`` -> the object ``Cls`` of module ``pkg.mod`` (imported here)."""
    module_name, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module_name), attr)
