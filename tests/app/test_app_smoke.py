"""The real app in a subprocess: it starts, shows its window and quits cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO


def app_env(home, **extra: str) -> dict[str, str]:
    """The app's environment: offscreen and its own user folder, which holds its QSettings too
    (``RLPANEL_HOME/rlpanel.ini``); XDG_CONFIG_HOME elsewhere all the same, so a settings write that
    missed RLPANEL_HOME shows there instead of reading or overwriting the user's saved window state."""
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RLPANEL_HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"), **extra}


def test_python_m_app_starts_and_quits(tmp_path):
    env = app_env(tmp_path, RLPANEL_QUIT_AFTER_MS="1000", RLPANEL_SHOWN_FILE=str(tmp_path / "shown"))
    out = subprocess.run([sys.executable, "-m", "app"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "shown").is_file()  # the window was shown
    assert (tmp_path / "runs").is_dir()
    assert "geometry" in (tmp_path / "rlpanel.ini").read_text()  # window state saved on quit, in RLPANEL_HOME
    assert not (tmp_path / "config" / "rlpanel").exists()


@pytest.mark.skipif(sys.platform.startswith("win"), reason="SIGTERM is not a signal a Windows process can catch")
def test_sigterm_closes_the_window_as_its_close_button_does(tmp_path):
    env = app_env(tmp_path, RLPANEL_SHOWN_FILE=str(tmp_path / "shown"))
    proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "shown").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "shown").exists(), proc.stderr.read() if proc.poll() is not None else "not shown in 60 s"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "geometry" in (tmp_path / "rlpanel.ini").read_text()  # its state was saved


def test_runs_dir_option_opens_the_window_on_that_folder(tmp_path):
    other = tmp_path / "elsewhere"
    env = app_env(tmp_path / "home", RLPANEL_QUIT_AFTER_MS="500")
    out = subprocess.run([sys.executable, "-m", "app", "--runs-dir", str(other)], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert other.is_dir()


def test_no_display_gives_a_clear_message_not_a_qt_abort(tmp_path):
    env = {k: v for k, v in app_env(tmp_path).items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run([sys.executable, "-m", "app"], capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    if not sys.platform.startswith("linux"):
        return
    assert out.returncode == 2 and "no display to open the window on" in out.stderr
