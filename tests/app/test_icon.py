"""The application icon: every shipped size reaches the window; the Windows taskbar id is Windows-only."""

from __future__ import annotations

from PySide6.QtCore import QSize

from app.main import app_icon, set_app_user_model_id


def test_the_icon_has_every_size(qapp):
    sizes = app_icon().availableSizes()
    assert {QSize(n, n) for n in (16, 24, 32, 48, 64, 128, 256)} <= set(sizes)


def test_app_user_model_id_only_on_windows():
    assert set_app_user_model_id("linux") is False
