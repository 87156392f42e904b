"""The question asked when the window closes while runs train: they keep going (a run is a process of its own),
and the window says so before it goes, with a "Don't ask again" that is remembered."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QMessageBox, QWidget

from app.settings import get_setting, set_setting

ASK_SETTING = "window/ask_before_close"


def close_anyway(parent: QWidget, running: list[str]) -> bool:
    """Whether the window may close while ``running`` (run ids) train: yes without asking once the user said
    "Don't ask again"; else Close (yes) or Cancel (no)."""
    if not running or not get_setting(ASK_SETTING, True):
        return True
    box = QMessageBox(QMessageBox.Icon.Information, "Runs keep going",
                      f"{len(running)} run(s) keep training after this window closes:\n" + "\n".join(running)
                      + "\n\nOpen rlpanel again to follow them, or stop them from the command line.",
                      QMessageBox.StandardButton.Close | QMessageBox.StandardButton.Cancel, parent)
    again = QCheckBox("Don't ask again")
    box.setCheckBox(again)
    if box.exec() == QMessageBox.StandardButton.Cancel:
        return False
    if again.isChecked():
        set_setting(ASK_SETTING, False)
    return True
