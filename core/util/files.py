"""Files a reader may see while they are written: atomic replace, JSON documents, text tails.

Every writer of a file that another process reads (status.json, latest.json, queue state, run
configs) goes through ``write_atomic``: readers see the old or the new file, never half of one.

On Windows a rename onto a file that another process has open fails with ``PermissionError``
(a sharing violation: the window reads status.json several times a second, a virus scanner or a
sync client opens new files), and opening a file that is being replaced can fail the same way.
``replace_retrying`` and ``read_retrying`` retry with a doubling backoff (capped). A replace on
Windows refused with a sharing violation, a lock violation or access denied (what Defender scanning
a fresh checkpoint, or a sync client uploading it, gives) is retried up to ``WINDOWS_RETRY_BOUND_S``:
such a scan of a large file can last past the 2 s that were enough for the window's reads. Reads,
other systems, and a thread marked ``keep_retries_short`` (the window's: it must not freeze for
10 s) keep ``RETRY_BOUND_S``. Past the bound the writer gets an ``AtomicWriteError`` that names
the file, the programs that may hold it and the fix.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
RETRY_BOUND_S = 2.0       # how long a sharing violation may last before a reader (or any writer off Windows) gives up
WINDOWS_RETRY_BOUND_S = 10.0  # a writer on Windows: an antivirus scan or a sync client's upload of a fresh file
RETRY_FIRST_DELAY_S = 0.005
RETRY_MAX_DELAY_S = 0.2
# Windows' errors for "another process has it": each reaches Python as a PermissionError (errno EACCES). 5 is
# also a file pending deletion after a replace; a truly read-only folder gives it too (then it fails 10 s later).
SHARING_WINERRORS = {5: "ERROR_ACCESS_DENIED", 32: "ERROR_SHARING_VIOLATION", 33: "ERROR_LOCK_VIOLATION"}
# a run folder holds these (core.run.layout's names; a test checks they agree): the give-up message names the
# folder above it, the runs folder, as the one to exclude from scanning
RUN_FOLDER_FILES = ("config.yaml", "status.json")

_thread = threading.local()


class AtomicWriteError(OSError):
    """A file could not be replaced: another program kept it open past the retry bound."""


def keep_retries_short() -> None:
    """Mark the calling thread as one that must stay responsive (the window's UI thread): its writes give up
    after ``RETRY_BOUND_S`` on Windows too, and the user sees why, instead of a window frozen for 10 s."""
    _thread.short = True


def retry_bound_s(exc: PermissionError, platform: str = sys.platform) -> float:
    """How long to keep retrying after ``exc``: ``WINDOWS_RETRY_BOUND_S`` for Windows' sharing errors on a thread
    that may wait, else ``RETRY_BOUND_S``."""
    windows_sharing = platform.startswith("win") and getattr(exc, "winerror", None) in SHARING_WINERRORS
    return WINDOWS_RETRY_BOUND_S if windows_sharing and not getattr(_thread, "short", False) else RETRY_BOUND_S


def scan_exclusion_folder(path: str | Path) -> Path:
    """The folder to exclude from antivirus scans for ``path``: the runs folder when ``path`` is in a run folder
    (its checkpoints/ too), else the file's own folder."""
    folder = Path(path).absolute().parent
    for candidate in (folder, folder.parent):
        if all((candidate / name).is_file() for name in RUN_FOLDER_FILES):
            return candidate.parent
    return folder


def give_up_message(what: str, exc: PermissionError, waited_s: float, path: str | Path | None = None,
                    platform: str = sys.platform) -> str:
    """Why a file could not be replaced or read: which file, who may hold it, and (on Windows) the fix."""
    reason = exc.strerror or str(exc)
    if not platform.startswith("win"):
        return (f"cannot {what}: another program keeps it open ({reason}); close it (an editor, a virus scanner, "
                "a sync client) and try again")
    fix = "exclude its folder from Defender's scans"
    if path is not None:
        folder = scan_exclusion_folder(path)
        fix = (f"exclude the folder from Defender's scans (in an administrator PowerShell: Add-MpPreference "
               f'-ExclusionPath "{folder}")')
    return (f"cannot {what}: another program keeps it open ({reason}; tried for {waited_s:.1f} s): an antivirus "
            f"scanning it (Windows Defender scans every new checkpoint) or a sync client (OneDrive, Dropbox) "
            f"uploading it; {fix}, or move the runs folder out of a synced folder, then try again")


def retry_on_permission_error(action: Callable[[], T], what: str, bound_s: float | None = None,
                              sleep: Callable[[float], None] | None = None, *, path: str | Path | None = None,
                              clock: Callable[[], float] | None = None, platform: str | None = None) -> T:
    """``action()``, retried with a doubling backoff (capped at ``RETRY_MAX_DELAY_S``) while it raises
    ``PermissionError``, up to ``bound_s`` (None: ``retry_bound_s`` of the error); then ``AtomicWriteError``
    naming ``what`` (and, on Windows, the folder of ``path`` to exclude from scans). ``sleep``, ``clock`` and
    ``platform`` default to this module's ``time`` and ``sys``, read at the call (tests give their own)."""
    sleep, clock, platform = sleep or time.sleep, clock or time.monotonic, platform or sys.platform
    start = clock()
    delay = RETRY_FIRST_DELAY_S
    while True:
        try:
            return action()
        except PermissionError as exc:
            bound = retry_bound_s(exc, platform) if bound_s is None else bound_s
            now = clock()
            if now + delay > start + bound:
                raise AtomicWriteError(give_up_message(what, exc, now - start, path, platform)) from exc
            sleep(delay)
            delay = min(delay * 2, RETRY_MAX_DELAY_S)


def replace_retrying(src: str | Path, dst: str | Path) -> None:
    """``os.replace`` that rides out Windows sharing violations (see the module docstring)."""
    retry_on_permission_error(lambda: os.replace(src, dst), f"replace {dst}", path=dst)


def read_retrying(path: str | Path, mode: str = "r") -> Any:
    """A file's whole content (text, or bytes with ``mode="rb"``), retrying an open that a replace blocked."""
    def read() -> Any:
        if mode == "rb":
            return Path(path).read_bytes()
        return Path(path).read_text(encoding="utf-8")

    # short on every system: a reader (the window, several times a second) reads again at its next look
    return retry_on_permission_error(read, f"read {path}", RETRY_BOUND_S, path=path)


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` so a reader sees the old or the new file, never half of one.

    ``mode`` 0o600 keeps a file of secrets (notify.yaml) to its owner: the temp file has that mode
    before it gets its name, so the secret is never readable by others, not even for a moment.
    """
    write_bytes_atomic(path, text.encode("utf-8"), mode)


def write_bytes_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """``write_atomic`` for bytes: a temp file in the same folder, fsync, rename over ``path``."""
    tmp = stage_bytes(path, data, mode)
    try:
        replace_retrying(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def stage_bytes(path: Path, data: bytes, mode: int = 0o644) -> Path:
    """``data`` written whole (fsync) to a temp file beside ``path``, returned for the caller to rename: two files
    that belong together (a policy and its sidecar) are both written before either gets its name."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600; most files are for every reader
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


class WriteFailed(OSError):
    """A file the user named that could not be written whole; the message names it (not the temporary file it was
    written under) and why, so no success is said for it and nothing under its name is left."""


def write_failed(path: Path, cause: OSError) -> WriteFailed:
    """``WriteFailed`` for ``path`` from the error that stopped it (which may name the temporary file)."""
    if cause.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteFailed(describe_os_error(OSError(cause.errno, cause.strerror, str(path))))
    if cause.strerror:  # a read-only or missing folder, no permission: another folder is the fix
        return WriteFailed(f"cannot write {path}: {cause.strerror}; choose a folder you can write to")
    return WriteFailed(f"cannot write {path}: {cause}")  # it says what to do itself (AtomicWriteError)


def probe_write(folder: Path, size_bytes: int = 64 * 1024) -> OSError | None:
    """What writing ``size_bytes`` in ``folder`` meets now (a full disk, a read-only one), or None: the reason a
    child program that stopped writing there (ffmpeg, whose messages are not kept) did not give."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probe.", suffix=".tmp")
    except OSError as exc:
        return exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(b"\0" * size_bytes)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        return exc
    finally:
        Path(tmp).unlink(missing_ok=True)
    return None


def write_json_atomic(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


MAX_JSON_BYTES = 16 << 20  # a status, summary or queue state is a few KiB; a bigger file is not one of ours


def read_json(path: Path, default: Any = None, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A JSON file's content, or ``default`` if it is missing, unreadable or over ``max_bytes``."""
    try:
        if Path(path).stat().st_size > max_bytes:
            return default
        return json.loads(read_retrying(path))
    except (OSError, ValueError, RecursionError):
        return default


def describe_os_error(exc: OSError, doing: str = "") -> str:
    """One line a user can act on: what failed, on which file, and (for a full disk) what to do."""
    where = f" {exc.filename}" if exc.filename else ""
    doing = f" while {doing}" if doing else ""
    if exc.errno == errno.ENOSPC:
        free = ""
        folder = Path(str(exc.filename)).parent if exc.filename else None
        if folder is not None and folder.exists():
            free = f" ({shutil.disk_usage(folder).free / 2**20:,.1f} MiB free there)"
        return f"no space left on device{doing}{(' writing' + where) if where else ''}{free}: free some space on that disk"
    if exc.errno == errno.EDQUOT:
        return f"disk quota exceeded{doing}{(' writing' + where) if where else ''}: free some space or raise the quota"
    return f"{exc.strerror or exc}{doing}:{where}".rstrip(":")


def read_tail(path: Path, max_bytes: int) -> tuple[bytes, int]:
    """The last ``max_bytes`` of a file from its first full line, and the offset they start at.

    ``(b"", 0)`` when the file is missing. The one way the log views and the JSONL tail reader
    start near the end of a big file.
    """
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            start = max(0, size - max_bytes)
            fh.seek(start)
            data = fh.read()
    except FileNotFoundError:
        return b"", 0
    if start > 0:  # drop the partial first line
        cut = data.find(b"\n") + 1
        data, start = data[cut:], start + cut
    return data, start


def tail_lines(path: Path, n: int, max_bytes: int = 16384) -> list[str]:
    """The last ``n`` lines of a text file (for showing the end of a log)."""
    try:
        data, _ = read_tail(path, max_bytes)
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()[-n:]


class TextTail:
    """New complete lines of a growing text file, starting ``tail_bytes`` before its end."""

    def __init__(self, path: Path, tail_bytes: int = 64 * 1024, chunk_bytes: int = 4 * 1024 * 1024):
        self.path = Path(path)
        self.offset: int | None = None
        self.tail_bytes = tail_bytes
        self.chunk_bytes = chunk_bytes

    def read_new(self) -> list[str]:
        try:
            if self.offset is None or self.path.stat().st_size < self.offset:  # first read, or replaced
                _, self.offset = read_tail(self.path, self.tail_bytes)
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(self.chunk_bytes)
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        return data[:end].decode("utf-8", errors="replace").splitlines()
