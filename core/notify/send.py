"""Sending through apprise: each URL on its own, tried up to three times with a growing pause.

A failure is logged with the URL masked and returned, never raised: a notification that does not
go out must not fail a run or a queue. apprise's own log is silenced (its messages may name a
host, a user or a token); ``log`` receives our masked lines instead.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.notify.mask import mask_url, scrub

TRIES = 3
BACKOFF_S = (1.0, 4.0)  # the pauses between tries


@dataclass(frozen=True)
class SendResult:
    """How sending to one URL went; ``url`` is masked."""

    url: str
    ok: bool
    tries: int
    error: str | None = None


def _quiet_apprise() -> Any:
    import apprise

    log = logging.getLogger("apprise")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())
    log.propagate = False
    return apprise


def apprise_accepts(url: str) -> bool:
    """Whether apprise knows this URL's scheme and can read its shape (nothing is sent)."""
    apprise = _quiet_apprise()
    try:
        return bool(apprise.Apprise().add(url))
    except Exception:  # noqa: BLE001 - a URL apprise cannot parse
        return False


def send_one(url: str, title: str, body: str, tries: int = TRIES, backoff_s: tuple[float, ...] = BACKOFF_S,
             sleep: Callable[[float], None] = time.sleep) -> SendResult:
    """Send to one URL, retrying; the result names the URL masked."""
    apprise = _quiet_apprise()
    masked = mask_url(url)
    box = apprise.Apprise()
    try:
        accepted = box.add(url)
    except Exception:  # noqa: BLE001 - a URL apprise cannot parse must not end the caller
        accepted = False
    if not accepted:
        return SendResult(masked, False, 0, "apprise does not know this URL (its scheme or shape is wrong)")
    error = "the service did not accept the notification"
    for attempt in range(1, tries + 1):
        try:
            if box.notify(title=title, body=body):
                return SendResult(masked, True, attempt)
        except Exception as exc:  # noqa: BLE001 - a plugin's error is reported, never raised
            error = scrub(f"{type(exc).__name__}: {exc}", [url])[:200]
        if attempt < tries:
            sleep(backoff_s[min(attempt - 1, len(backoff_s) - 1)])
    return SendResult(masked, False, tries, error)


def send(urls: list[str], title: str, body: str, log: Callable[[str], None] | None = None,
         **kwargs: Any) -> list[SendResult]:
    """Send to every URL; ``log`` gets one masked line per URL that failed."""
    results = []
    for url in urls:
        result = send_one(url, title, body, **kwargs)
        if not result.ok and log is not None:
            log(f"notification {title!r} not sent to {result.url} after {result.tries} tries: {result.error}")
        results.append(result)
    return results
