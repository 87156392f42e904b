"""``rlpanel shortcut``: a real .desktop entry here; the Windows .lnk path through a recorded PowerShell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.common import CliError
from core.cli.shortcut import create, remove, shortcut_paths
from tests.conftest import REPO


def rlpanel(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env=env)


def test_linux_desktop_entry_is_made_and_removed(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "share")}
    done = rlpanel("shortcut", "--json", env=env)
    assert done.returncode == 0, done.stderr
    entry = tmp_path / "share" / "applications" / "rlpanel.desktop"
    assert json.loads(done.stdout) == {"created": [str(entry)]}
    text = entry.read_text()
    assert f'Exec="{Path(sys.executable).parent / "rlpanel-gui"}"' in text and "Terminal=false" in text
    icon = Path(next(line for line in text.splitlines() if line.startswith("Icon="))[5:])
    assert icon.name == "rlpanel-256.png" and icon.is_file()
    done = rlpanel("shortcut", "--remove", env=env)
    assert done.returncode == 0 and not entry.exists() and f"removed {entry}" in done.stdout
    assert "no rlpanel shortcut to remove" in rlpanel("shortcut", "--remove", env=env).stdout


class PowerShell:
    """Records each call and does what WScript.Shell's CreateShortcut().Save() does: writes the .lnk."""

    def __init__(self, returncode: int = 0):
        self.calls: list[dict] = []
        self.returncode = returncode

    def __call__(self, cmd, env, **kwargs):
        self.calls.append({"cmd": cmd, **{k: env[k] for k in ("RLPANEL_LNK", "RLPANEL_TARGET", "RLPANEL_ICON")}})
        if self.returncode == 0:
            Path(env["RLPANEL_LNK"]).write_bytes(b"L\x00\x00\x00")
        return subprocess.CompletedProcess(cmd, self.returncode, "", "" if self.returncode == 0 else "Access is denied.")


def test_windows_start_menu_and_desktop_shortcuts(tmp_path):
    scripts = tmp_path / "venv" / "Scripts"
    scripts.mkdir(parents=True)
    (scripts / "rlpanel-gui.exe").write_bytes(b"MZ")
    env = {"APPDATA": str(tmp_path / "Roaming"), "USERPROFILE": str(tmp_path / "me")}
    shell = PowerShell()
    paths = create("win32", env, shell, scripts)
    start_menu = tmp_path / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "rlpanel.lnk"
    assert paths == [start_menu, tmp_path / "me" / "Desktop" / "rlpanel.lnk"] == shortcut_paths("win32", env)
    assert [c["RLPANEL_LNK"] for c in shell.calls] == [str(p) for p in paths]
    for call in shell.calls:
        assert call["cmd"][:4] == ["powershell", "-NoProfile", "-NonInteractive", "-Command"]
        assert "$env:RLPANEL_LNK" in call["cmd"][4] and str(tmp_path) not in call["cmd"][4]  # paths only via env
        assert call["RLPANEL_TARGET"] == str(scripts / "rlpanel-gui.exe") and Path(call["RLPANEL_ICON"]).is_file()
    assert remove("win32", env) == paths and not any(p.exists() for p in paths)


def test_windows_failure_and_a_missing_launcher_are_clear(tmp_path):
    scripts = tmp_path / "Scripts"
    scripts.mkdir()
    env = {"APPDATA": str(tmp_path / "Roaming"), "USERPROFILE": str(tmp_path / "me")}
    with pytest.raises(CliError, match="rlpanel-gui.exe is missing; reinstall rlpanel"):
        create("win32", env, PowerShell(), scripts)
    (scripts / "rlpanel-gui.exe").write_bytes(b"MZ")
    with pytest.raises(CliError, match="could not create .*rlpanel.lnk: Access is denied."):
        create("win32", env, PowerShell(returncode=1), scripts)


def test_the_gui_script_without_a_display_says_so():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([str(Path(sys.executable).parent / "rlpanel-gui")], capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO)
    assert done.returncode == 2 and "rlpanel-gui: no display" in done.stderr
