"""``rlpanel notify``: show, add and remove the notification URLs of ``RLPANEL_HOME/notify.yaml``,
and send a test to each. URLs are secrets: they are only ever printed masked."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import Any

from core.cli.common import CliError, emit
from core.notify.events import EVENTS
from core.notify.mask import mask_url
from core.notify.run_events import send_test
from core.notify.send import apprise_accepts
from core.notify.settings import (
    NotifySettingsError,
    add_target,
    load_settings,
    parse_events,
    remove_target,
    save_settings,
    settings_path,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("notify", parents=[common], help="push notifications (apprise URLs): show, add, remove, test")
    p.set_defaults(func=run_show)
    inner = p.add_subparsers(dest="notify_command", metavar="ACTION")
    inner.add_parser("show", parents=[common], help="the URLs (masked) and the events each receives").set_defaults(func=run_show)
    add = inner.add_parser("add", parents=[common], help="add an apprise URL (ntfys://ntfy.sh/TOPIC, tgram://TOKEN/CHAT, ...)")
    add.add_argument("url")
    add.add_argument("--events", help=f"comma-separated events it receives (default: the file's events): {','.join(EVENTS)}")
    add.set_defaults(func=run_add)
    remove = inner.add_parser("remove", parents=[common], help="remove a URL: its number in `notify show`, or the URL")
    remove.add_argument("which")
    remove.set_defaults(func=run_remove)
    inner.add_parser("test", parents=[common], help="send a test notification to every URL; fails naming each URL that failed"
                     ).set_defaults(func=run_test)


def _load() -> Any:
    try:
        return load_settings()
    except NotifySettingsError as exc:
        raise CliError(f"{exc} (the file was left as it is: fix it, or move it away and add the URLs again)", 2) from None


def _mode_warning() -> str | None:
    path = settings_path()
    if sys.platform.startswith("win") or not path.exists():
        return None
    mode = stat.S_IMODE(os.stat(path).st_mode)
    return f"{path} is readable by others (mode {mode:o}): chmod 600 {path}" if mode & 0o077 else None


def run_show(args: argparse.Namespace) -> int:
    settings = _load()
    warning = _mode_warning()
    data = {"path": str(settings_path()), "events": list(settings.events), "warning": warning,
            "urls": [{"url": t.masked, "events": list(settings.events_of(t)), "own_events": t.events is not None}
                     for t in settings.targets]}

    def text() -> str:
        lines = [f"{settings_path()}", f"events: {', '.join(settings.events)}"]
        for i, t in enumerate(settings.targets, 1):
            own = ", ".join(t.events) if t.events is not None else "the events above"
            lines.append(f"  {i}. {t.masked}  ({own})")
        if not settings.targets:
            lines.append("  no URLs: add one with rlpanel notify add URL [--events failed,crashed,queue_end]")
        return "\n".join(lines + ([f"warning: {warning}"] if warning else []))

    emit(args, data, text)
    return 0


def run_add(args: argparse.Namespace) -> int:
    settings = _load()
    try:
        events = parse_events(args.events, "--events") if args.events is not None else None
        new = add_target(settings, args.url, events)
    except NotifySettingsError as exc:
        raise CliError(str(exc), 2) from None
    if not apprise_accepts(args.url.strip()):
        raise CliError(f"apprise does not know {mask_url(args.url)}: check its scheme and shape "
                       "(https://github.com/caronc/apprise/wiki); nothing was saved", 2)
    path = save_settings(new)
    emit(args, {"added": mask_url(args.url), "events": list(events or settings.events), "path": str(path)},
         f"added {mask_url(args.url)} ({', '.join(events or settings.events)}) to {path}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    try:
        new, removed = remove_target(_load(), args.which)
    except NotifySettingsError as exc:
        raise CliError(str(exc), 2) from None
    path = save_settings(new)
    emit(args, {"removed": removed.masked, "path": str(path)}, f"removed {removed.masked} from {path}")
    return 0


def run_test(args: argparse.Namespace) -> int:
    settings = _load()
    if not settings.targets:
        raise CliError(f"no URLs in {settings_path()}: add one with rlpanel notify add URL", 2)
    results = send_test([t.url for t in settings.targets], log=lambda line: None)
    failed = [r for r in results if not r.ok]
    data = [{"url": r.url, "ok": r.ok, "tries": r.tries, "error": r.error} for r in results]
    emit(args, data, lambda: "\n".join(f"{'sent' if r.ok else 'FAILED'}: {r.url}" + (f" ({r.error})" if r.error else "")
                                       for r in results))
    if failed:
        raise CliError(f"{len(failed)} of {len(results)} failed: " + "; ".join(f"{r.url} ({r.error})" for r in failed))
    return 0
