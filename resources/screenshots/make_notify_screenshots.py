"""Draw the notification screenshots: the Notifications… dialog and the tray icon's menu.

``python resources/screenshots/make_notify_screenshots.py [OUT_DIR]`` (QT_QPA_PLATFORM=offscreen
works). The tray menu is drawn as a widget beside its "Stop a run" submenu: a real system tray
needs a desktop with a tray host, which the offscreen platform and a bare Xvfb lack.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    from PySide6.QtCore import QPoint, QSettings
    from PySide6.QtGui import QColor, QPainter, QPixmap
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        from app.notify.settings_dialog import NotifySettingsDialog
        from app.notify.tray import TrayIcon
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

        tray = TrayIcon(available=False)
        tray.set_status(["20261125-221500-sac-pendulum-v1-night", "20261125-221501-ppo-lunarlander-v3"],
                        "20261125-221500-sac-pendulum-v1-night: running, 412,000 of 1,000,000 steps (41 %)")
        menu, sub = tray.menu.grab(), tray.stop_menu.grab()
        shot = QPixmap(menu.width() + sub.width() + 24, max(menu.height(), sub.height() + 24) + 16)
        shot.fill(QColor(app.palette().window().color()))
        painter = QPainter(shot)
        painter.drawPixmap(QPoint(8, 8), menu)
        painter.drawPixmap(QPoint(menu.width() + 16, 8 + tray.menu.actionGeometry(tray.stop_menu.menuAction()).top()), sub)
        painter.end()
        shot.save(str(out_dir / "tray-menu.png"))
        dialog.close()
    print("wrote notify-settings.png, tray-menu.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
