"""Where rlpanel keeps things: the user folder (``RLPANEL_HOME``) and what it ships.

The shipped ``configs/`` (GPU profiles, built-in presets) and ``resources/`` (icons, screenshots)
are packages of their own, carried by the wheel as package data and found through
``importlib.resources``: an installed wheel works from any folder, an editable install or a
checkout reads the repository's folders.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

# The folder holding the ``core`` package: the repository, or site-packages for an installed wheel.
# A child started with ``python -m core...`` gets it on its path so it imports this same copy.
CODE_ROOT = Path(__file__).resolve().parents[2]


def shipped_dir(package: str) -> Path:
    """The folder of a shipped data package (``configs`` or ``resources``) as a real path."""
    root = files(package)
    if not isinstance(root, Path):  # a zip import: rlpanel is never installed zipped
        raise RuntimeError(f"rlpanel's {package}/ is not a folder on disk ({root!r}); reinstall rlpanel with pip")
    return root


def configs_dir() -> Path:
    return shipped_dir("configs")


def resources_dir() -> Path:
    return shipped_dir("resources")


def absolute(path: Path | str) -> Path:
    """``path`` with ``~`` expanded, made absolute against this process's working folder.

    Every folder the user names (``--runs-dir``, ``RLPANEL_HOME``) goes through this before it is
    handed to another process: a worker or a queue runner starts in another working folder, where
    a relative path would name a different place (docs/processes.md).
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
    return configs_dir() / "presets"
