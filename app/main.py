"""Start the window: ``run_app()`` is what ``rlpanel`` (no command) and ``python -m app`` call."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType, ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Qt loads in run_app, after lighten_pyside_import_hook
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QWidget

    from app.main_window import MainWindow


def run_app(runs_dir: str | Path | None = None, argv: list[str] | None = None) -> int:
    """Create the application, apply the theme, show the main window and run until it closes.

    ``RLPANEL_QUIT_AFTER_MS`` closes the window after that many milliseconds (smoke test, bench), counted from the
    end of the steps after the first frame (``MainWindow.settled``) when ``RLPANEL_QUIT_WHEN_STARTED`` is set too;
    ``RLPANEL_SHOWN_FILE`` names a file that gets the time the window's first frame was painted (a line), and the
    process's CPU seconds then (a second line); then, once those steps are done, their time and CPU seconds (a third
    and a fourth line).
    """
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    lighten_pyside_import_hook()  # before the window's modules: each of them passes through it
    from app.main_window import MainWindow
    from app.theme import apply_theme
    from app.threads.background import close_worker_threads, wait_for_background
    from app.threads.main_thread_gc import MainThreadGc
    from core.util.files import keep_retries_short
    from core.util.paths import absolute, default_runs_dir

    QCoreApplication.setOrganizationName("rlpanel")
    QCoreApplication.setApplicationName("rlpanel")
    set_app_user_model_id()
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv if argv is not None else sys.argv[:1])
    app.setWindowIcon(app_icon())
    keep_retries_short()  # this thread draws the window: a file Windows holds fails in 2 s, never freezes it 10 s
    collector = MainThreadGc(app)  # Qt objects are only ever destroyed in this thread
    apply_theme(app, plots=False)  # the plots, and pyqtgraph, come after the first frame (MainWindow)
    folder = absolute(runs_dir) if runs_dir else default_runs_dir()  # the worker starts in another folder
    folder.mkdir(parents=True, exist_ok=True)
    quit_ms = os.environ.get("RLPANEL_QUIT_AFTER_MS")
    window = MainWindow(folder, confirm_close=not quit_ms)
    time_and_quit(window, quit_ms)  # connected before the first frame can be painted
    window.show()
    wake = close_on_signals(window)
    code = app.exec()
    wake.stop()
    # Background work still running (the torch facts' child process, an estimate, the env probe) ends first: its
    # answer reaching a torn-down object can crash the exit (a SIGSEGV seen once, under load, in the startup test)
    wait_for_background(10_000)
    close_worker_threads()  # the window closed its own; one left running would abort the exit
    # Tear the widgets down while Qt is still alive: left to interpreter shutdown, PySide6 may
    # crash garbage-collecting them (exit 134 instead of 0).
    window.deleteLater()
    del window
    QCoreApplication.sendPostedEvents(None, 0)
    import gc

    collector.stop()
    gc.collect()
    gc.freeze()  # what is left belongs to modules: keep the exit-time collection away from it
    return code


def time_and_quit(window: MainWindow, quit_ms: str | None) -> None:
    """The smoke test's and the startup bench's hooks (``run_app``'s environment variables): the first frame's and
    the settled window's times written to ``RLPANEL_SHOWN_FILE``, the window closed after ``quit_ms``."""
    from app.main_window import quit_after

    shown_file = os.environ.get("RLPANEL_SHOWN_FILE")
    if shown_file:
        import time

        def written(mode: str) -> None:
            with open(shown_file, mode) as out:
                out.write(f"{time.time()!r}\n{time.process_time()!r}\n")

        # Written once the first frame has been painted, i.e. the user sees the window; then the CPU time it took.
        window.first_frame.connect(lambda: written("w"))
        window.settled.connect(lambda: written("a"))  # the Monitor, the forms below the fold, the follower: all there
    if quit_ms and os.environ.get("RLPANEL_QUIT_WHEN_STARTED"):
        window.settled.connect(lambda: quit_after(int(quit_ms)))
        quit_after(60_000)  # a step that never ends still ends the bench's start
    elif quit_ms:
        quit_after(int(quit_ms))


def lighten_pyside_import_hook() -> bool:
    """PySide6's import hook asks of every module imported after PySide6 whether its source names PySide6 (for its
    ``__feature__`` switches), with ``inspect.getsource``: linecache decodes and splits each file into lines, about
    0.2 ms a module, 30 ms over the window's ~160 modules before its first frame. The same question, answered from
    the file's bytes, costs a read. Modules without a .py file keep PySide6's own answer. False where PySide6 has no
    such hook (another version): nothing is changed then."""
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if original is None or getattr(original, "reads_bytes", False):
        return False

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return bool(original(module))
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:  # as inspect.getsource: no source, no PySide6
            return False

    uses_pyside.reads_bytes = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside  # type: ignore[union-attr]
    return True


APP_USER_MODEL_ID = "rlpanel.rlpanel"


def set_app_user_model_id(platform: str = sys.platform) -> bool:
    """On Windows, name this process rlpanel so the taskbar groups it under rlpanel's icon, not python's."""
    if not platform.startswith("win"):
        return False
    import ctypes

    try:
        ctypes.windll.shell32.SetCurrentProcessExplicitAppUserModelID(APP_USER_MODEL_ID)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return False
    return True


def app_icon() -> QIcon:
    """rlpanel's icon in every size it ships (resources/icons, drawn by draw_icons.py)."""
    from PySide6.QtGui import QIcon

    from core.util.paths import resources_dir

    icon = QIcon()
    for png in sorted((resources_dir() / "icons").glob("rlpanel-*.png")):
        icon.addFile(str(png))
    return icon


def close_on_signals(window: QWidget) -> QTimer:
    """Ctrl+C in the terminal or SIGTERM closes the window as its close button does (state saved,
    runs left going), without the "runs keep going" question: nobody is there to answer it.

    Python runs signal handlers only between bytecodes, never while Qt waits in C++; the returned
    timer wakes the interpreter four times a second so a signal is handled within 250 ms.
    """
    import signal

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    def handle(_signum: int, _frame: FrameType | None) -> None:
        if hasattr(window, "confirm_close"):  # the main window asks first on its close button (not the Watch window)
            window.confirm_close = False
        QTimer.singleShot(0, QApplication.closeAllWindows)

    for name in ("SIGINT", "SIGTERM"):
        signal.signal(getattr(signal, name), handle)
    wake = QTimer()
    wake.timeout.connect(lambda: None)
    wake.start(250)
    return wake
