"""Issue 43: the window's Launch on Windows without long paths, in a runs folder too deep for a run's files, shows
why and the fix, and creates no run (the same check as rlpanel train: tests/core/run/test_path_length.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from core.run import path_length
from core.util.long_paths import FILESYSTEM_KEY, FIX
from tests.app.configure.helpers import wait_settled


def test_launch_in_a_folder_too_deep_for_windows_says_why_and_creates_no_run(qtbot, tmp_path, monkeypatch):
    from app.main_window import MainWindow

    monkeypatch.setattr(path_length, "platform", "win32")  # Windows, LongPathsEnabled 0 (recorded values)
    values = {(FILESYSTEM_KEY, None): True, (FILESYSTEM_KEY, "LongPathsEnabled"): 0}
    monkeypatch.setattr(path_length, "registry", lambda key, name: values.get((key, name)))
    folder = tmp_path / ("d" * (200 - len(str(tmp_path)) - 1))
    folder.mkdir()
    window = MainWindow(folder, confirm_close=False)
    qtbot.addWidget(window)
    window.show()
    configure = window.configure
    configure.set_field("algo", "random")
    configure.set_field("budget.episodes", 2)
    wait_settled(qtbot, configure)
    seen = {}

    def read_and_close() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen["title"], seen["text"] = box.windowTitle(), box.text()
        box.accept()

    QTimer.singleShot(0, read_and_close)  # runs inside the box's own event loop
    qtbot.mouseClick(configure.launch_button, Qt.MouseButton.LeftButton)
    assert seen["title"] == "Launch failed"
    # random CartPole-v1: the id 20261122-043012-random-cartpole-v1 (34), -1000 when taken: 200 + 1 + 39 + 80
    assert seen["text"] == (f"The run could not be started:\nthe runs folder {folder} (200 characters) is too deep "
                            "for Windows without long paths (LongPathsEnabled is off): a run's deepest file there "
                            f"would be 320 characters, past Windows' limit of 259; {FIX} (at most 139 characters "
                            "for this run)")
    assert list(folder.iterdir()) == [] and window.run_dir is None
    window.close()
