"""The Qt binding itself: PySide6 6.12.0 dropped a reference to None on every processEvents,
and a window open for a while then aborted with "none_dealloc". pyproject pins it out; this
test catches a binding that brings the bug back."""

from __future__ import annotations

import sys


def test_process_events_keeps_none_alive(qapp):
    before = sys.getrefcount(None)
    for _ in range(2000):
        qapp.processEvents()
    assert sys.getrefcount(None) - before > -100
