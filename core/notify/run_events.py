"""The entry points the run's side calls: ``notify_run_event`` (the supervisor at a worker's end,
the guards for ``paused`` and ``warning``) and ``notify_queue_end`` (the queue runner).

Neither ever raises: a missing or wrong notify.yaml, a service that is down, or apprise not
installed is one masked line in ``log`` (the worker's or the runner's log) and an empty or
failed result.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.notify.events import EVENTS
from core.notify.messages import queue_message, run_message
from core.notify.send import SendResult, send
from core.notify.settings import NotifySettings, NotifySettingsError, load_settings


def _print(line: str) -> None:
    print(f"rlpanel notify: {line}", file=sys.stderr, flush=True)


def _urls(event: str, settings: NotifySettings | None, log: Callable[[str], None]) -> list[str]:
    if event not in EVENTS:
        raise ValueError(f"{event!r} is not a notification event; use one of {', '.join(EVENTS)}")
    try:
        settings = settings or load_settings()
    except NotifySettingsError as exc:  # its message names the field and masks any URL
        log(f"notifications are off until notify.yaml is fixed: {exc}")
        return []
    return settings.urls_for(event)


def _send(urls: list[str], message: tuple[str, str], log: Callable[[str], None], **kwargs: Any) -> list[SendResult]:
    try:
        return send(urls, *message, log=log, **kwargs)
    except Exception as exc:  # noqa: BLE001 - e.g. apprise missing: never the end of a run
        log(f"notifications could not be sent: {type(exc).__name__}")
        return []


def notify_run_event(run_dir: Path, event: str, reason: str | None = None, settings: NotifySettings | None = None,
                     log: Callable[[str], None] = _print, in_background: bool = False, **kwargs: Any) -> list[SendResult]:
    """Tell every URL that takes ``event`` about the run in ``run_dir`` (``reason``: why; default the
    exit reason in status.json). Returns one result per URL (masked); [] when none takes it.

    ``in_background`` sends from a daemon thread and returns [] at once: what a guard in the
    training loop uses (a service that is down costs seconds of retries, not of training).
    """
    urls = _urls(event, settings, log)
    if not urls:
        return []
    if in_background:
        threading.Thread(target=notify_run_event, args=(run_dir, event, reason, settings, log), kwargs=kwargs,
                         name=f"notify-{event}", daemon=True).start()
        return []
    try:
        message = run_message(Path(run_dir), event, reason)
    except Exception as exc:  # noqa: BLE001 - a damaged run folder still gets its notification
        message = (f"rlpanel: run {Path(run_dir).name} {event}", f"Run {Path(run_dir).name} {event}: {reason or exc}")
    return _send(urls, message, log, **kwargs)


def notify_queue_end(state: dict[str, Any], settings: NotifySettings | None = None,
                     log: Callable[[str], None] = _print, **kwargs: Any) -> list[SendResult]:
    """Tell every URL that takes ``queue_end`` how the queue ended (a line over its jobs)."""
    urls = _urls("queue_end", settings, log)
    return _send(urls, queue_message(state), log, **kwargs) if urls else []


def send_test(urls: list[str], log: Callable[[str], None] = _print, **kwargs: Any) -> list[SendResult]:
    """A test notification to each of ``urls`` (whatever events they take): ``rlpanel notify test``, "Send test"."""
    title = "rlpanel: test notification"
    body = (f"A test from rlpanel on {socket.gethostname()}: notifications reach you here. Runs that finish, stop, "
            "fail or crash, pauses, warnings and queue ends are sent as notify.yaml says.")
    return _send(urls, (title, body), log, **kwargs)
