"""Where rlpanel keeps things: the user folder (``RLPANEL_HOME``) and the shipped configs."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS_DIR = REPO_ROOT / "configs"
RESOURCES_DIR = REPO_ROOT / "resources"


def user_home() -> Path:
    """The user folder: ``$RLPANEL_HOME``, else the platform's user data folder."""
    env = os.environ.get("RLPANEL_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return platformdirs.user_data_path("rlpanel", appauthor=False)


def user_presets_dir() -> Path:
    return user_home() / "presets"


def default_runs_dir() -> Path:
    return user_home() / "runs"


def builtin_presets_dir() -> Path:
    return CONFIGS_DIR / "presets"
