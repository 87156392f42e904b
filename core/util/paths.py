"""Where rlpanel keeps things: the user folder (``RLPANEL_HOME``) and the shipped configs."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS_DIR = REPO_ROOT / "configs"
RESOURCES_DIR = REPO_ROOT / "resources"


def absolute(path: Path | str) -> Path:
    """``path`` with ``~`` expanded, made absolute against this process's working folder.

    Every folder the user names (``--runs-dir``, ``RLPANEL_HOME``) goes through this before it is
    handed to another process: a worker or a queue runner starts in another working folder, where
    a relative path would name a different place (ARCHITECTURE.md, "Processes").
    """
    return Path(os.path.abspath(Path(path).expanduser()))


def user_home() -> Path:
    """The user folder (absolute): ``$RLPANEL_HOME``, else the platform's user data folder."""
    env = os.environ.get("RLPANEL_HOME")
    if env:
        return absolute(env)
    import platformdirs

    return absolute(platformdirs.user_data_path("rlpanel", appauthor=False))


def user_presets_dir() -> Path:
    return user_home() / "presets"


def default_runs_dir() -> Path:
    return user_home() / "runs"


def builtin_presets_dir() -> Path:
    return CONFIGS_DIR / "presets"
