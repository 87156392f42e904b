"""Python's cyclic garbage collector, run from the GUI thread only.

The window runs Python in worker threads (run follower, GPU poller, results reader). Left on, the
collector runs in whichever thread happens to allocate; when that is a worker thread and the
garbage holds Qt widgets (pyqtgraph makes reference cycles), PySide destroys them there, and a
widget destroyed off the GUI thread deadlocks against the GUI thread (seen: the results reader
collecting a closed window's QMenu froze the test run). ``MainThreadGc`` turns automatic
collection off and runs it from a timer in the GUI thread, generation by generation, with the
thresholds Python would have used.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500


class MainThreadGc(QObject):
    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> int:
        """Collect the generations past their thresholds; returns the objects collected."""
        c0, c1, c2 = gc.get_count()
        t0, t1, t2 = self.threshold
        collected = 0
        if c0 > t0:
            collected = gc.collect(0)
            if c1 > t1:
                collected += gc.collect(1)
                if c2 > t2:
                    collected += gc.collect(2)
        return collected

    def stop(self) -> None:
        """Hand collection back to Python (if it had it before)."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()
