"""TensorBoard from the window: one real TensorBoard per run, opened in the browser, stopped at close.

``open(run_dir)`` starts ``core.run.tensorboard.TensorBoard`` on the run's ``tb/`` folder in the
background (it takes seconds to answer), then hands its local address to the desktop's browser
(``QDesktopServices``). A second ``open`` of the same run reuses the running one. ``message``
says what happened, or why not (TensorBoard missing, no logs); ``close()`` stops them all when
the window closes.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices

from app.threads.background import run_in_background
from core.run.tensorboard import TensorBoard, TensorBoardError, missing_reason


class TensorBoardLauncher(QObject):
    message = Signal(str)
    opened = Signal(str)  # the URL handed to the browser

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.boards: dict[Path, TensorBoard] = {}
        self._closed = False

    def open(self, run_dir: Path | None) -> None:
        if run_dir is None:
            self.message.emit("Open a run first: TensorBoard shows one run's logs")
            return
        run_dir = Path(run_dir)
        reason = missing_reason()
        if reason:
            self.message.emit(reason)
            return
        board = self.boards.get(run_dir)
        if board is not None and board.running():
            self._show(board.url)
            return
        board = TensorBoard(run_dir)
        self.boards[run_dir] = board
        self.message.emit(f"Starting TensorBoard for {run_dir.name}…")

        def start() -> str:
            if self._closed:
                raise TensorBoardError("the window closed")
            board.start()
            url = board.wait_ready()
            if self._closed:  # the window closed while it started: it must not outlive it
                board.stop()
            return url

        run_in_background(start, lambda url: self._started(board, url), lambda error: self._failed(run_dir, error))

    def _started(self, board: TensorBoard, url: str) -> None:
        if self._closed:
            board.stop()
            return
        self._show(url)

    def _show(self, url: str) -> None:
        self.message.emit(f"TensorBoard: {url}")
        QDesktopServices.openUrl(QUrl(url))
        self.opened.emit(url)

    def _failed(self, run_dir: Path, error: str) -> None:
        board = self.boards.pop(run_dir, None)
        if board is not None:
            board.stop()
        self.message.emit(f"TensorBoard could not open {run_dir.name}: {error.removeprefix(TensorBoardError.__name__ + ': ')}")

    def running(self) -> list[TensorBoard]:
        return [b for b in self.boards.values() if b.running()]

    def close(self) -> None:
        """Stop every TensorBoard this window started."""
        self._closed = True
        for board in self.boards.values():
            board.stop()
