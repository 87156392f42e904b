"""Learn that a run folder's files changed from the file system, or say why it cannot be watched.

``RunWatch`` wraps a ``QFileSystemWatcher`` on the run folder (a file created or atomically
replaced: ``status.json``) and on the files the follower reads as they grow (``metrics.jsonl``,
``telemetry.jsonl``, ``worker.log``); a burst of change signals (a worker flushing line by line)
becomes one ``changed`` signal ``COALESCE_MS`` after the first. Linux: inotify; macOS: kqueue/FSEvents.

How the follower's fallback is chosen (``watch`` returns the reason, and the follower then polls every
``POLL_MS`` as before):

- the caller asked for polling (``watch=False``: tests inject it, and ``RLPANEL_POLL_ONLY=1`` forces it);
- the folder is on a network file system (NFS, SMB/CIFS, sshfs, 9p ...; a UNC path or a mapped
  network drive on Windows): change notifications from another machine's writes are not
  delivered there, or only some of them;
- the watcher refuses a path (``addPath`` is False: the folder is gone, or the OS' limit of watched
  files is reached, inotify's ``max_user_watches`` on Linux).

Even while watching, the follower still polls, slowly (``WATCHED_POLL_MS``): an event the OS dropped
(an inotify queue overflow) costs at most that long, never a run that stops updating.

Windows (checked only by reading Qt's ``qfilesystemwatcher_win``): Qt waits on a change notification of
the file's folder and emits ``fileChanged`` when the file's size or modification time differs from
what it saw. NTFS updates those of a file appended through a handle its writer keeps open lazily
(when the handle is flushed or closed), so on Windows an append may be noticed late: the slow poll is
what bounds it there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QStorageInfo, QTimer, Signal

COALESCE_MS = 5  # change signals this close together are one read
WATCHED_POLL_MS = 2000  # the poll kept while watching, for an event the OS dropped
POLL_ONLY_ENV = "RLPANEL_POLL_ONLY"
# file system types (as QStorageInfo names them, lower case) whose changes by another machine are not notified
NETWORK_FILE_SYSTEMS = {"nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "9p", "afs", "ncpfs", "davfs",
                        "fuse.sshfs", "sshfs", "fuse.davfs2", "fuse.rclone", "glusterfs", "fuse.glusterfs", "ceph",
                        "fuse.ceph", "lustre", "gpfs", "beegfs", "webdav"}


def network_drive(path: Path) -> str | None:
    """The file system's name if ``path`` is on a network drive, else None."""
    text = str(path)
    if sys.platform == "win32":
        if text.startswith(("\\\\", "//")):
            return "a network share"
        if _windows_remote_drive(text):
            return "a mapped network drive"
    kind = bytes(QStorageInfo(text).fileSystemType().data()).decode(errors="replace").lower()
    return kind if kind in NETWORK_FILE_SYSTEMS else None


def _windows_remote_drive(path: str) -> bool:
    import ctypes

    drive_remote = 4  # GetDriveTypeW's DRIVE_REMOTE
    root = os.path.splitdrive(os.path.abspath(path))[0] + "\\"
    return bool(ctypes.windll.kernel32.GetDriveTypeW(root) == drive_remote)  # type: ignore[attr-defined]


class RunWatch(QObject):
    """The change signals of one run folder at a time; lives in (and signals in) its creator's thread."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.files: tuple[Path, ...] = ()  # the files in the folder whose growth matters
        self.run_dir: Path | None = None
        self._identity: dict[str, int] = {}  # path -> the file (inode) watched under it
        self._watcher: QFileSystemWatcher | None = None
        self._coalesce = QTimer(self)
        self._coalesce.setSingleShot(True)
        self._coalesce.setInterval(COALESCE_MS)
        self._coalesce.timeout.connect(self.changed)

    def watch(self, run_dir: Path | None, files: tuple[Path, ...] = (), wanted: bool = True) -> str | None:
        """Watch ``run_dir`` and its ``files`` (None: nothing) instead of what was watched; returns why
        it is not watched (None: it is, or there is nothing to watch)."""
        self.stop()
        self.run_dir, self.files = run_dir, files
        if run_dir is None:
            return None
        if not wanted or os.environ.get(POLL_ONLY_ENV) == "1":
            return "polling was asked for"
        network = network_drive(run_dir)
        if network:
            return f"the run folder is on a network drive ({network})"
        self._watcher = QFileSystemWatcher(self)
        if not self._watcher.addPath(str(run_dir)):
            self.stop()
            return "the file system refused to watch the run folder"
        self._watcher.directoryChanged.connect(self._on_folder_changed)
        self._watcher.fileChanged.connect(self._on_change)
        return self._add_files()

    def stop(self) -> None:
        self._coalesce.stop()
        self._identity.clear()
        if self._watcher is not None:
            self._watcher.deleteLater()
            self._watcher = None

    @property
    def watching(self) -> bool:
        return self._watcher is not None

    def _add_files(self) -> str | None:
        """Watch each of ``files`` that exists and is not watched yet, or was replaced since (a file
        rewritten whole, as the recorder thins old telemetry, is another file: inotify watches the old one)."""
        assert self._watcher is not None
        watched = set(self._watcher.files())
        for file in self.files:
            path = str(file)
            try:
                identity = os.stat(path).st_ino
            except OSError:
                continue  # not there yet: the folder's change signal says when it comes
            if path in watched and self._identity.get(path) == identity:
                continue
            if path in watched:
                self._watcher.removePath(path)
            if not self._watcher.addPath(path):
                self.stop()  # e.g. the limit of watched files: poll instead, never half watched
                return f"the file system refused to watch {file.name} (too many watched files?)"
            self._identity[path] = identity
        return None

    def _on_folder_changed(self, _path: str) -> None:
        if self._watcher is None:
            return
        if self._add_files() is not None:
            self.changed.emit()  # the follower asks again and falls back to polling
            return
        self._on_change(_path)

    def _on_change(self, _path: str) -> None:
        if not self._coalesce.isActive():
            self._coalesce.start()
