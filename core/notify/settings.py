"""``RLPANEL_HOME/notify.yaml``: the apprise URLs and which events go to each.

```yaml
urls:
  - ntfys://ntfy.sh/my-topic                                 # every event of `events`
  - {url: "tgram://BOT_TOKEN/CHAT_ID", events: [failed, crashed, queue_end]}
events: [finished, stopped, failed, crashed, stalled, paused, warning, queue_end]   # default: all
```

The file holds secrets: it is written with mode 0600 (POSIX; Windows keeps it in the user's own
profile folder), read with the project's safe YAML reader, and a file that is not right is
reported naming the field and never overwritten. URLs leave this module only to be sent or,
masked (``core.notify.mask``), to be shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.notify.events import EVENTS
from core.notify.mask import mask_url
from core.util.files import write_atomic
from core.util.paths import user_home
from core.util.yaml_reader import Limits, read_yaml_mapping

FILE_NAME = "notify.yaml"
LIMITS = Limits(max_bytes=256 * 1024, what="notify.yaml", fix="it holds a list of URLs and a list of events")
MAX_URL_CHARS = 2000


class NotifySettingsError(ValueError):
    """notify.yaml (or a value for it) is not right: the message names the field and the fix."""


@dataclass(frozen=True)
class Target:
    """One apprise URL and the events it receives (``None``: the file's ``events``)."""

    url: str
    events: tuple[str, ...] | None = None

    @property
    def masked(self) -> str:
        return mask_url(self.url)


@dataclass(frozen=True)
class NotifySettings:
    targets: tuple[Target, ...] = ()
    events: tuple[str, ...] = EVENTS
    path: Path | None = field(default=None, compare=False)

    def events_of(self, target: Target) -> tuple[str, ...]:
        return self.events if target.events is None else target.events

    def urls_for(self, event: str) -> list[str]:
        """The URLs that receive ``event``."""
        return [t.url for t in self.targets if event in self.events_of(t)]

    def to_data(self) -> dict[str, Any]:
        urls: list[Any] = [t.url if t.events is None else {"url": t.url, "events": list(t.events)} for t in self.targets]
        return {"urls": urls, "events": list(self.events)}


def settings_path() -> Path:
    return user_home() / FILE_NAME


def parse_events(value: Any, where: str) -> tuple[str, ...]:
    """A list of event names (or one comma-separated string), checked."""
    items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise NotifySettingsError(f"{where}: expected a list of events (any of {', '.join(EVENTS)}), "
                                  f"got a {type(value).__name__}")
    bad = [str(v) for v in items if v not in EVENTS]
    if bad:
        raise NotifySettingsError(f"{where}: {', '.join(repr(b[:40]) for b in bad)} is not an event; "
                                  f"use any of {', '.join(EVENTS)}")
    return tuple(e for e in EVENTS if e in items)


def check_url(value: Any, where: str) -> str:
    """An apprise URL's shape (``scheme://...``); the URL itself is never repeated in the message."""
    if not isinstance(value, str):
        raise NotifySettingsError(f"{where}: expected an apprise URL (text such as ntfys://ntfy.sh/TOPIC), "
                                  f"got a {type(value).__name__}")
    url = value.strip()
    if len(url) > MAX_URL_CHARS or "://" not in url or any(c.isspace() for c in url):
        raise NotifySettingsError(f"{where}: {mask_url(url)} is not an apprise URL: it looks like SCHEME://..., "
                                  "e.g. ntfys://ntfy.sh/TOPIC or json://HOST:PORT (see the apprise wiki)")
    return url


def _target(item: Any, where: str) -> Target:
    if isinstance(item, dict):
        unknown = sorted(str(k) for k in item if k not in ("url", "events"))
        if unknown:
            raise NotifySettingsError(f"{where}: unknown key {', '.join(unknown)}; an entry holds url and events")
        if "url" not in item:
            raise NotifySettingsError(f"{where}: names no url; write {{url: SCHEME://..., events: [failed]}}")
        events = parse_events(item["events"], f"{where}.events") if item.get("events") is not None else None
        return Target(check_url(item["url"], f"{where}.url"), events)
    return Target(check_url(item, where))


def settings_from_data(data: dict[str, Any], path: Path | None = None) -> NotifySettings:
    unknown = sorted(str(k) for k in data if k not in ("urls", "events"))
    if unknown:
        raise NotifySettingsError(f"{path or FILE_NAME}: unknown key {', '.join(unknown)}; the file holds urls and events")
    urls = data.get("urls") or []
    if not isinstance(urls, list):
        raise NotifySettingsError(f"{path or FILE_NAME}: urls: expected a list of apprise URLs, got a {type(urls).__name__}")
    targets = tuple(_target(item, f"urls[{i}]") for i, item in enumerate(urls))
    events = parse_events(data["events"], "events") if data.get("events") is not None else EVENTS
    return NotifySettings(targets, events, path)


def load_settings(path: Path | None = None) -> NotifySettings:
    """The settings in ``path`` (default ``RLPANEL_HOME/notify.yaml``); none when the file does not exist."""
    path = path or settings_path()
    if not path.exists():
        return NotifySettings(path=path)
    try:
        data = read_yaml_mapping(path, LIMITS)
    except ValueError as exc:
        raise NotifySettingsError(str(exc)) from None
    try:
        return settings_from_data(data, path)
    except NotifySettingsError as exc:
        raise NotifySettingsError(f"{path}: {exc}" if not str(exc).startswith(str(path)) else str(exc)) from None


def save_settings(settings: NotifySettings, path: Path | None = None) -> Path:
    """Write the settings (mode 0600: the URLs are secrets)."""
    path = path or settings.path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# rlpanel notifications: apprise URLs (secrets: keep this file private) and the events sent\n"
    write_atomic(path, text + yaml.safe_dump(settings.to_data(), sort_keys=False, allow_unicode=True), mode=0o600)
    return path


def add_target(settings: NotifySettings, url: str, events: tuple[str, ...] | None = None) -> NotifySettings:
    """The settings with ``url`` added (or its events replaced when it is there already)."""
    url = check_url(url, "url")
    kept = tuple(t for t in settings.targets if t.url != url)
    return NotifySettings((*kept, Target(url, events)), settings.events, settings.path)


def remove_target(settings: NotifySettings, which: str) -> tuple[NotifySettings, Target]:
    """The settings without the URL ``which`` names: the URL itself, its masked form, or its number from 1."""
    targets = list(settings.targets)
    found = [t for t in targets if which in (t.url, t.masked)]
    if not found and which.isdigit() and 1 <= int(which) <= len(targets):
        found = [targets[int(which) - 1]]
    if len(found) != 1:
        shown = "\n".join(f"  {i}. {t.masked}" for i, t in enumerate(targets, 1)) or "  (none)"
        why = "matches several URLs" if found else "names no configured URL"
        raise NotifySettingsError(f"{mask_url(which) if '://' in which else repr(which[:40])} {why}; give its number:\n{shown}")
    targets.remove(found[0])
    return NotifySettings(tuple(targets), settings.events, settings.path), found[0]
