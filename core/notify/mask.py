"""URLs of notification services hold secrets (tokens, passwords, webhook ids): ``mask_url`` is
the only form in which one is ever shown or logged."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
_HOSTNAME = re.compile(r"^(localhost|([a-z0-9-]+\.)+[a-z]{2,})$", re.IGNORECASE)


def _public_host(host: str) -> bool:
    """A host name or address (kept); anything else in the host place is a token (``tgram://BOT_TOKEN/``)."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return bool(_HOSTNAME.match(host))


def mask_url(url: str) -> str:
    """``json://127.0.0.1:8080`` stays; user names, passwords, path parts and query values become ``***``.

    ``mailto://me:pw@gmail.com`` -> ``mailto://***:***@gmail.com``; ``tgram://123:abc/456`` ->
    ``tgram://***/***``; ``ntfys://ntfy.sh/my-topic?priority=high`` -> ``ntfys://ntfy.sh/***?priority=***``.
    """
    text = str(url).strip()
    if "://" not in text:
        return MASK
    scheme, rest = text.split("://", 1)
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]{0,31}", scheme):
        return MASK
    try:
        parts = urlsplit(f"x://{rest}")
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return f"{scheme}://{MASK}"
    user = ""
    if "@" in parts.netloc:
        user = f"{MASK}:{MASK}@" if ":" in parts.netloc.rsplit("@", 1)[0] else f"{MASK}@"
    where = (host if _public_host(host) else MASK) if host else ""
    where += f":{port}" if port and where != MASK else ""
    path = "/".join(MASK for p in parts.path.split("/") if p)
    query = "&".join(f"{k}={MASK}" for k, _ in parse_qsl(parts.query, keep_blank_values=True)
                     if re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", k))
    return f"{scheme}://{user}{where}" + (f"/{path}" if path else "") + (f"?{query}" if query else "")


def scrub(text: str, urls: list[str]) -> str:
    """``text`` with every URL of ``urls`` (and its secret parts) replaced by its masked form."""
    for url in sorted(urls, key=len, reverse=True):
        text = text.replace(url, mask_url(url))
        for secret in _secrets(url):
            text = text.replace(secret, MASK)
    return text


def _secrets(url: str) -> list[str]:
    """The parts of ``url`` that ``mask_url`` hides, longest first (at least 4 characters: no false hits)."""
    rest = url.split("://", 1)[-1]
    pieces = re.split(r"[/@:?&=]", rest)
    return sorted({p for p in pieces if len(p) >= 4 and not _public_host(p)}, key=len, reverse=True)
