"""``rlpanel shortcut``: a Start-menu and desktop shortcut on Windows, a ``.desktop`` entry on Linux.

Both start ``rlpanel-gui`` (the window with no console) from this Python's scripts folder, with
rlpanel's icon; ``--remove`` takes them away. No admin rights: everything goes into the user's
own folders. On Windows the ``.lnk`` files are written by PowerShell's ``WScript.Shell`` COM
object (present on every Windows since 7); the paths reach it as environment variables, never
spliced into the script.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.cli.common import CliError, emit
from core.util.paths import resources_dir

APP_NAME = "rlpanel"
POWERSHELL_LNK = (
    "$s = (New-Object -ComObject WScript.Shell).CreateShortcut($env:RLPANEL_LNK); "
    "$s.TargetPath = $env:RLPANEL_TARGET; $s.IconLocation = $env:RLPANEL_ICON; "
    "$s.WorkingDirectory = $env:RLPANEL_WORKDIR; $s.Description = 'rlpanel: a control panel for SB3 training'; $s.Save()"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("shortcut", parents=[common],
                       help="add rlpanel to the Start menu and desktop (Windows) or the applications menu (Linux)")
    p.add_argument("--remove", action="store_true", help="remove the shortcuts this command made")
    p.set_defaults(func=run)


def gui_script(platform: str = sys.platform, scripts: Path | None = None) -> Path:
    """``rlpanel-gui`` next to this Python (a venv's Scripts or bin folder)."""
    folder = scripts or Path(sys.executable).parent
    return folder / ("rlpanel-gui.exe" if platform.startswith("win") else "rlpanel-gui")


def shortcut_paths(platform: str = sys.platform, env: dict[str, str] | None = None) -> list[Path]:
    """Where the shortcuts go: Start menu and desktop on Windows, the applications folder on Linux."""
    env = dict(os.environ if env is None else env)
    if platform.startswith("win"):
        appdata = Path(env.get("APPDATA") or Path.home() / "AppData" / "Roaming")
        desktop = Path(env.get("USERPROFILE") or Path.home()) / "Desktop"
        return [appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / f"{APP_NAME}.lnk", desktop / f"{APP_NAME}.lnk"]
    if platform == "darwin":
        raise CliError("rlpanel shortcut supports Windows and Linux; on macOS start it with: rlpanel-gui")
    data = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return [data / "applications" / f"{APP_NAME}.desktop"]


def desktop_entry(target: Path, icon: Path) -> str:
    return ("[Desktop Entry]\nType=Application\nName=rlpanel\nComment=A control panel for stable-baselines3 training\n"
            f"Exec=\"{target}\"\nIcon={icon}\nTerminal=false\nCategories=Development;Science;\nStartupWMClass=rlpanel\n")


def create(platform: str = sys.platform, env: dict[str, str] | None = None, run: Any = subprocess.run,
           scripts: Path | None = None) -> list[Path]:
    """Create the shortcuts; returns their paths."""
    target = gui_script(platform, scripts)
    if not target.exists():
        raise CliError(f"{target} is missing; reinstall rlpanel with pip (it makes the rlpanel-gui launcher)")
    icons = resources_dir() / "icons"
    paths = shortcut_paths(platform, env)
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        if platform.startswith("win"):
            child_env = {**(os.environ if env is None else env), "RLPANEL_LNK": str(path), "RLPANEL_TARGET": str(target),
                         "RLPANEL_ICON": str(icons / "rlpanel.ico"), "RLPANEL_WORKDIR": str(Path.home())}
            done = run(["powershell", "-NoProfile", "-NonInteractive", "-Command", POWERSHELL_LNK],
                       env=child_env, capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                raise CliError(f"could not create {path}: {(done.stderr or '').strip()[:300]}")
        else:
            path.write_text(desktop_entry(target, icons / "rlpanel-256.png"), encoding="utf-8")
            path.chmod(0o755)
    return paths


def remove(platform: str = sys.platform, env: dict[str, str] | None = None) -> list[Path]:
    """Remove the shortcuts that exist; returns the removed paths."""
    removed = []
    for path in shortcut_paths(platform, env):
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed


def run(args: argparse.Namespace) -> int:
    if args.remove:
        paths = remove()
        emit(args, {"removed": [str(p) for p in paths]},
             "\n".join(f"removed {p}" for p in paths) or "no rlpanel shortcut to remove")
        return 0
    paths = create()
    emit(args, {"created": [str(p) for p in paths]}, "\n".join(f"created {p}" for p in paths))
    return 0
