"""Watch: a run's agent plays a checkpoint in a window of its own, at the env's own frame rate.

The window starts ``python -m core.agent.play RUN --stream --episodes 0`` (``core.launch.agent_child``: the
window loads no torch) and a ``FrameReader`` in a thread of its own reads the frames, paced at the env's
fps; the window draws each as a QImage scaled to fit (aspect kept) with the episode, step and reward.
Pause stops reading (the child then waits on its pipe), Restart and another checkpoint start a new child,
Close ends the child (terminate, wait) and the reader's thread. The run folder is only read: a run that
is still training is watched without being disturbed.

``python -m app.watch_main RUN`` opens this window alone (``rlpanel watch``).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

from PySide6.QtCore import QMetaObject, QSize, Qt, Signal
from PySide6.QtGui import QCloseEvent, QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import QApplication, QCheckBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from app.agent.checkpoint_picker import CheckpointPicker
from app.agent.frame_reader import FrameReader
from app.theme import FRAME_BACKGROUND, FRAME_TEXT
from app.threads.background import WorkerThread
from core.launch.agent_child import start_policy_tool
from core.run.frame_stream import CANNOT_RENDER, StreamFrame
from core.run.names import read_run_label

CHILD_END_S = 2.0  # a terminated player ends at once (SIGTERM's default; frames.py keeps SDL off it); else it is killed


class FrameView(QLabel):
    """The latest frame, scaled to the label with its aspect kept; a message in its place when there is none."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # the pixmap never grows the window
        self.setMinimumSize(240, 160)
        self.setWordWrap(True)
        self.setStyleSheet(f"background: {FRAME_BACKGROUND}; color: {FRAME_TEXT}; padding: 12px;")
        self.image: QImage | None = None

    def show_image(self, image: QImage) -> None:
        self.image = image
        self._draw()

    def show_message(self, text: str) -> None:
        self.image = None
        self.clear()
        self.setText(text)

    def _draw(self) -> None:
        if self.image is not None:
            pixmap = QPixmap.fromImage(self.image)
            self.setPixmap(pixmap.scaled(self.contentsRect().size(), Qt.AspectRatioMode.KeepAspectRatio,
                                         Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._draw()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(600, 400)


class WatchWindow(QWidget):
    """A top-level window where ``run_dir``'s agent plays; ``closed`` is emitted once the child has ended."""

    closed = Signal()

    def __init__(self, run_dir: Path, checkpoint: str = "last", stochastic: bool = False, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.run_dir = Path(run_dir)
        self.setWindowTitle(f"Watch {read_run_label(self.run_dir)} - rlpanel")
        self.proc: subprocess.Popen[bytes] | None = None
        self.reader: FrameReader | None = None
        self.reader_thread: WorkerThread | None = None
        self._stderr: IO[bytes] | None = None
        self.generation = 0
        self.frames_shown = 0
        self.last_frame: StreamFrame | None = None
        self._last_reward: float | None = None
        self._build(checkpoint, stochastic)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.stop)  # the main window closing ends the child too
        self.start()

    def _build(self, checkpoint: str, stochastic: bool) -> None:
        self.picker = CheckpointPicker(self.run_dir, checkpoint)
        self.picker.currentIndexChanged.connect(lambda _i: self.start())
        self.stochastic_box = QCheckBox("Stochastic")
        self.stochastic_box.setToolTip("Sample the policy's actions, as in training (off: its most likely action)")
        self.stochastic_box.setChecked(stochastic)
        self.stochastic_box.toggled.connect(lambda _on: self.start())
        self.pause_button = QPushButton("Pause")
        self.pause_button.setToolTip("Hold the agent (the player waits) or let it play on")
        self.pause_button.clicked.connect(self.toggle_pause)
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Load the checkpoint again and play from a fresh episode")
        self.restart_button.clicked.connect(self.start)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.close)
        self.view = FrameView()
        self.status = QLabel()
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Checkpoint"))
        controls.addWidget(self.picker)
        controls.addWidget(self.stochastic_box)
        controls.addStretch(1)
        for button in (self.pause_button, self.restart_button, self.close_button):
            controls.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.status)

    def start(self) -> None:
        """(Re)start the player on the picked checkpoint; a running one is ended first."""
        self.stop()
        self.generation += 1
        self.frames_shown = 0
        self.last_frame = None
        self._last_reward = None
        args = ["--stream", "--episodes", "0", "--checkpoint", self.picker.value()]
        args += ["--stochastic"] if self.stochastic_box.isChecked() else []
        self._stderr = tempfile.TemporaryFile()
        try:
            self.proc = start_policy_tool("play", self.run_dir, *args, stdout=subprocess.PIPE, stderr=self._stderr)
        except OSError as exc:
            self._stderr.close()
            self._stderr = None
            self.view.show_message(f"The player could not start: {exc}")
            return
        self.reader = FrameReader(self.proc, self._stderr, self.generation)
        self.reader.frame.connect(self._show_frame)
        self.reader.ended.connect(self._ended)
        self.reader_thread = WorkerThread(self.reader, "watch frames")
        QMetaObject.invokeMethod(self.reader, "read", Qt.ConnectionType.QueuedConnection)
        self.pause_button.setText("Pause")
        self.pause_button.setEnabled(True)
        self.view.show_message(f"Loading {self.picker.currentText()}…")
        self.status.setText("")

    def stop(self) -> None:
        """End the child (terminate, wait; kill if it lingers) and the reader's thread."""
        if self.reader is not None:
            self.reader.stop()
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(CHILD_END_S)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(CHILD_END_S)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        if self.reader_thread is not None:
            self.reader_thread.close()
        if self._stderr is not None:
            self._stderr.close()
        self.proc, self.reader, self.reader_thread, self._stderr = None, None, None, None

    def toggle_pause(self) -> None:
        if self.reader is None:
            return
        if self.pause_button.text() == "Pause":
            self.reader.pause()
            self.pause_button.setText("Play")
            self.status.setText(self.status.text() + "   (paused)")
        else:
            self.reader.resume()
            self.pause_button.setText("Pause")

    def _show_frame(self, generation: int, image: QImage, frame: StreamFrame) -> None:
        if generation != self.generation or self.reader is None:
            return  # a frame of a player already ended (a restart)
        self.reader.shown()
        self.frames_shown += 1
        self.last_frame = frame
        self.view.show_image(image)
        if frame.done:
            self._last_reward = frame.reward
        self.status.setText(self.status_text(frame))

    def status_text(self, frame: StreamFrame) -> str:
        last = f"   last episode {self._last_reward:g}" if self._last_reward is not None else ""
        ended = "   (episode over)" if frame.done else ""
        return (f"Episode {frame.episode}   step {frame.step:,}   reward {frame.reward:g}{ended}{last}   "
                f"{frame.fps:g} fps")

    def _ended(self, generation: int, code: Any, result: Any, message: str) -> None:
        if generation != self.generation:
            return
        self.pause_button.setEnabled(False)
        if code == 0:
            played = len(result.get("rewards", [])) if isinstance(result, dict) else 0
            self.status.setText(f"Played {played} episodes.")
        else:
            self.view.show_message(message or f"The player ended with exit code {code}.")
            self.status.setText("This env draws no frames here: no checkpoint can be watched." if CANNOT_RENDER in message
                                else "Restart to try again, or pick another checkpoint.")

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        self.stop()
        super().closeEvent(event)
        self.closed.emit()


def open_watch(run_dir: Path, parent: QWidget | None = None) -> WatchWindow:
    """The Agent menu's Watch: a window of its own beside the main one, deleted once closed."""
    window = WatchWindow(run_dir, parent=parent)
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.resize(760, 560)
    window.show()
    return window
