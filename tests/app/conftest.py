"""GUI test fixtures: QSettings redirected to a temp folder for every test (pytest-qt gives ``qapp``)."""

from __future__ import annotations

import gc
import warnings

import pytest
from PySide6.QtCore import QSettings

# The offscreen platform warns on every top-level show(), and on every popup menu that raises itself and grabs the
# keyboard; it says nothing about our code.
OFFSCREEN_NOISE = r"This plugin does not support (propagateSizeHints|raise\(\)|grabbing the keyboard)"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/app/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True, scope="session")
def collect_while_qt_lives(qapp):
    """Garbage is collected in the GUI thread only, as in the app (``MainThreadGc``), and while Qt
    still runs: PySide6 can crash collecting widgets at exit."""
    from app.threads.main_thread_gc import MainThreadGc

    collector = MainThreadGc(qapp)
    yield
    collector.stop()
    import shiboken6
    from PySide6.QtCore import QEvent

    for widget in qapp.topLevelWidgets():
        if not shiboken6.isValid(widget):  # closing an earlier one deleted it (a window's own dialog)
            continue
        widget.close()
        widget.deleteLater()
    qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    qapp.processEvents()
    # No last collection here: collecting the wrappers of widgets Qt just deleted crashed PySide
    # (exit 139 after every test passed). Freezing what is left keeps the collections at
    # interpreter exit away from PySide objects too (it crashed there: exit 134).
    gc.freeze()


@pytest.fixture(autouse=True)
def collect_after_each_test():
    """A test that never spins the event loop gives the collector's timer no chance: collect here.

    First the worker threads still running are closed, and named in a warning: one collected while it ran aborted a
    test process (Qt's "Destroyed while thread is still running"). The test named may be the one after the culprit:
    an answer arriving late (a runs listing) started one after its window closed."""
    yield
    from app.threads.background import close_worker_threads

    leaked = close_worker_threads()
    if leaked:
        warnings.warn(f"worker threads left running, now closed: {', '.join(leaked)}", stacklevel=1)
    gc.collect()


@pytest.fixture(autouse=True)
def qsettings_dir(tmp_path_factory, qapp):
    """Window state written by one test never leaks into another (or into the user's settings)."""
    path = tmp_path_factory.mktemp("qsettings")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path))
    return path


@pytest.fixture
def make_window(qtbot, runs_dir):
    """Build main windows on the test's runs folder; closed (never stopping runs) at the end."""
    from app.main_window import MainWindow

    windows = []

    def make():
        window = MainWindow(runs_dir, confirm_close=False)
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        if window.isVisible():
            window.close()
