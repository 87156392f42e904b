"""UI state that survives a restart (geometry, splitters, last choices), behind one accessor.

QSettings only stores UI state; run configs live in YAML. Values come back converted to the type
of their default, because QSettings' INI backend returns strings ("true", "3") for everything.
With ``RLPANEL_HOME`` set (a second rlpanel beside the usual one, the tests) the settings are
``RLPANEL_HOME/rlpanel.ini``, never the system's config folder, so that folder holds all of it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QByteArray, QSettings

from core.util.paths import user_home

T = TypeVar("T")

GRID_SETTING = "results/grid_g_per_kwh"  # the grid's CO2 intensity the user set (g/kWh; 0: not set): Runs and Results
ORGANIZATION = "rlpanel"
APPLICATION = "rlpanel"
SETTINGS_FILE = "rlpanel.ini"  # under RLPANEL_HOME when it is set


def settings_file() -> Path | None:
    """``RLPANEL_HOME/rlpanel.ini`` when ``RLPANEL_HOME`` is set; None: the system's config folder."""
    return user_home() / SETTINGS_FILE if os.environ.get("RLPANEL_HOME") else None


def qsettings() -> QSettings:
    """The one QSettings object of the app (INI format): in ``RLPANEL_HOME`` when it is set, else the user's
    config folder (which ``QSettings.setPath`` may redirect)."""
    path = settings_file()
    if path is not None:
        return QSettings(str(path), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def _convert(value: Any, default: T) -> T:
    if value is None:
        return default
    if isinstance(default, bool):
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")  # type: ignore[return-value]
        return bool(value)  # type: ignore[return-value]
    if isinstance(default, QByteArray):
        return value if isinstance(value, QByteArray) else QByteArray(value)  # type: ignore[return-value]
    if isinstance(default, (int, float, str)):
        try:
            return type(default)(value)
        except (TypeError, ValueError):
            return default
    if isinstance(default, list):
        if isinstance(value, str):
            return [value]  # type: ignore[return-value]
        return list(value)  # type: ignore[return-value]
    return value if isinstance(value, type(default)) else default


def get_setting(key: str, default: T) -> T:
    """The stored value of ``key`` as ``default``'s type, or ``default`` if missing or unreadable."""
    return _convert(qsettings().value(key), default)


def set_setting(key: str, value: Any) -> None:
    settings = qsettings()
    settings.setValue(key, value)
    settings.sync()
