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


def test_garbage_is_collected_by_the_gui_thread_only(qapp):
    import gc
    import threading
    import weakref

    from app.threads.main_thread_gc import MainThreadGc

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    before = gc.isenabled()
    collector = MainThreadGc(None, interval_ms=10_000)
    try:
        assert not gc.isenabled()
        # a worker thread allocating a great deal never triggers a collection
        ref = cycle()
        worker = threading.Thread(target=lambda: [Node() for _ in range(200_000)] and [{} for _ in range(200_000)])
        worker.start()
        worker.join()
        assert ref() is not None
        # the GUI thread's check does, once past the threshold
        collector.threshold = (0, 0, 0)
        assert collector.check() > 0 and ref() is None
    finally:
        collector.stop()
        collector.deleteLater()
    assert gc.isenabled() == before  # as it was (the test session's own collector keeps it off)
