"""Work off the GUI thread, in one way for the whole window.

Two shapes of work, both answering through Qt signals that arrive in the GUI thread:

- ``run_in_background(fn, on_done, on_error)``: a one-shot call (list the runs, probe an env's
  spaces, gather the doctor's report, stop a run and wait for it) on a shared thread pool.
- ``WorkerThread(worker)``: a long-lived ``QObject`` that owns timers or a cache (the run
  follower, the idle GPU monitor, the results reader) moved to a thread of its own; talk to it
  with signals, end it with ``close()``.

The GUI never waits on either. Python's garbage collector runs in the GUI thread only
(``app.threads.main_thread_gc``), so no Qt object is destroyed by these threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, Signal

POOL_THREADS = 4  # a stop may wait a minute for its run; probes and listings go on beside it


class _Answer(QObject):
    """Lives in the GUI thread; a pool thread emits on it, the connected callbacks run there."""

    done = Signal(object)
    failed = Signal(str)


class _Call(QRunnable):
    def __init__(self, fn: Callable[[], Any], answer: _Answer):
        super().__init__()
        self.fn = fn
        self.answer = answer

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as exc:  # noqa: BLE001 (the caller hears of every failure, in one line)
            self._emit(self.answer.failed, f"{type(exc).__name__}: {exc}")
        else:
            self._emit(self.answer.done, result)

    @staticmethod
    def _emit(signal: Any, value: Any) -> None:
        try:
            signal.emit(value)
        except RuntimeError:  # the application is shutting down and the answer is gone: nobody waits
            pass


_pool: QThreadPool | None = None
_pending: set[_Answer] = set()


def pool() -> QThreadPool:
    """The window's one pool for one-shot work."""
    global _pool
    if _pool is None:
        _pool = QThreadPool()
        _pool.setMaxThreadCount(POOL_THREADS)
    return _pool


def run_in_background(fn: Callable[[], Any], on_done: Callable[[Any], None],
                      on_error: Callable[[str], None] | None = None) -> None:
    """Call ``fn()`` on a pool thread; then ``on_done(result)`` or ``on_error(message)`` in the GUI thread.

    Without ``on_error`` a failure is printed to stderr (a listing that failed once is tried
    again by its timer; nothing else is lost).
    """
    answer = _Answer()
    _pending.add(answer)

    def finish() -> None:
        _pending.discard(answer)
        answer.deleteLater()

    answer.done.connect(on_done)
    answer.done.connect(finish)
    answer.failed.connect(on_error if on_error is not None else _report)
    answer.failed.connect(finish)
    pool().start(_Call(fn, answer))


def _report(message: str) -> None:
    import sys

    print(f"rlpanel: background work failed: {message}", file=sys.stderr)


def wait_for_background(msecs: int = 30_000) -> bool:
    """Wait for the pool's work to end (tests, and the window's last moments)."""
    return pool().waitForDone(msecs)


_open_threads: set[WorkerThread] = set()


class WorkerThread:
    """A long-lived worker ``QObject`` in a ``QThread`` of its own, named ``name``.

    Create the worker without a parent; connect to its signals and to its slots (through
    signals of yours) before or after. ``close()`` asks it to end and waits up to ``wait_ms``.

    Until then it is held here, whatever happens to its owner: Qt ends the process ("Aborted") when a ``QThread`` is
    destroyed while it runs, which is what collecting a forgotten owner's garbage did (seen once in the GUI tests).
    """

    def __init__(self, worker: QObject, name: str):
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName(name)
        worker.moveToThread(self.thread)
        self.thread.finished.connect(worker.deleteLater)
        self.thread.start()
        _open_threads.add(self)

    def close(self, wait_ms: int = 5000) -> None:
        if self.thread.isRunning():
            self.thread.quit()
            self.thread.wait(wait_ms)
        if not self.thread.isRunning():
            _open_threads.discard(self)


def close_worker_threads(wait_ms: int = 5000) -> list[str]:
    """Close every ``WorkerThread`` still open (the window's last moments; the tests, after each): their names."""
    names = sorted(t.thread.objectName() for t in _open_threads)
    for thread in list(_open_threads):
        thread.close(wait_ms)
    return names
