"""Draw the Notifications… dialog's screenshot.

``python resources/screenshots/make_notify_screenshots.py [OUT_DIR]`` (QT_QPA_PLATFORM=offscreen
works). The tray icon's menu and notification come from ``make_tray_screenshot.py``, on an X server
with a real tray host.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        from app.notify.settings_dialog import NotifySettingsDialog
        from app.theme import apply_theme
        from core.notify.settings import NotifySettings, Target, save_settings

        app = QApplication([])
        apply_theme(app)
        save_settings(NotifySettings((
            Target("ntfys://ntfy.sh/rlpanel-night-7f3a9"),
            Target("tgram://123456789:AAE-secret-token/987654321", ("failed", "crashed", "queue_end")),
            Target("mailto://me:app-password@gmail.com", ("queue_end",)))))
        dialog = NotifySettingsDialog()
        dialog.resize(940, 480)
        dialog.show()
        dialog.say("sent: ntfys://ntfy.sh/***\nsent: tgram://***\nsent: mailto://***:***@gmail.com")
        app.processEvents()
        dialog.grab().save(str(out_dir / "notify-settings.png"))

        dialog.close()
    print("wrote notify-settings.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
