"""Microsoft Defender and the runs folder: whether it is excluded from the scan, and Controlled Folder Access.

Defender scans each checkpoint a run writes and can hold the file while it does (a replace then meets a sharing
violation); Controlled Folder Access, when on (``EnableControlledFolderAccess`` 1; 2 and 4 only audit, 3 guards
disk sectors only: ``Set-MpPreference``'s documented values), refuses an app it does not know writing to a
protected folder (Documents, Pictures, Videos, Music, Desktop, Favorites, and any added). Both are read from
``Get-MpPreference`` in one PowerShell call, which also asks .NET where those folders are (Documents may live in
OneDrive) and prints its JSON as base64. Windows shows the exclusions to administrators only ("N/A: Must be an
administrator to view exclusions"): that reads as unknown. A PowerShell that hangs is cut at ``TIMEOUT_S``: unknown
too. Tests run the parsing and the verdicts on recorded output; ``core.machine.windows_traps`` turns them into the
doctor's lines."""

from __future__ import annotations

import base64
import html
import json
import ntpath
import re
import subprocess
import sys
from typing import Any

TIMEOUT_S = 8.0  # PowerShell's cold start and the Defender module's first load take 1-4 s on a laptop
SCRIPT = """$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$p = Get-MpPreference
$known = 'MyDocuments','MyPictures','MyVideos','MyMusic','Desktop','Favorites','CommonDocuments','CommonPictures',
  'CommonVideos','CommonMusic','CommonDesktopDirectory' | ForEach-Object { [Environment]::GetFolderPath($_) }
$json = [pscustomobject]@{
  ExclusionPath = $p.ExclusionPath
  EnableControlledFolderAccess = $p.EnableControlledFolderAccess
  ControlledFolderAccessProtectedFolders = $p.ControlledFolderAccessProtectedFolders
  ControlledFolderAccessAllowedApplications = $p.ControlledFolderAccessAllowedApplications
  DefaultProtectedFolders = $known
} | ConvertTo-Json -Compress
[Convert]::ToBase64String([Text.Encoding]::UTF8.GetBytes($json))
"""  # the JSON as base64 of its UTF-8: ASCII on any code page, with no console to set an encoding on
CFA_MODES = {0: "off", 1: "on", 2: "audit mode", 3: "guarding disk sectors only", 4: "auditing disk sectors only"}
HIDDEN = "N/A"  # what a list Windows will not show this user starts with


def powershell_command(script: str = SCRIPT) -> list[str]:
    """PowerShell running ``script`` passed encoded (UTF-16LE, base64): no quoting of its quotes on any command line."""
    encoded = base64.b64encode(script.encode("utf-16-le")).decode("ascii")
    return ["powershell", "-NoProfile", "-NonInteractive", "-EncodedCommand", encoded]


def _strings(value: Any) -> list[str] | None:
    """A Defender list as strings; None when Windows hides it from this user (an ``N/A: ...`` entry)."""
    items = value if isinstance(value, list) else [] if value is None else [value]
    items = [str(v) for v in items if v is not None and str(v).strip()]
    return None if any(v.startswith(HIDDEN) for v in items) else items


def parse_mp_preference(text: str) -> dict[str, Any]:
    """The facts the doctor needs from the script's JSON: ``exclusions`` and ``allowed_apps`` (None: hidden from a
    non-administrator), ``cfa_mode`` (int, None if absent), ``protected_folders`` (the known ones and any added)."""
    try:
        raw = json.loads(text.strip())
    except json.JSONDecodeError as exc:
        return {"error": f"Get-MpPreference's output is not JSON ({exc}): {text.strip()[:120]!r}"}
    if not isinstance(raw, dict):
        return {"error": f"Get-MpPreference's output is not an object: {text.strip()[:120]!r}"}
    mode = raw.get("EnableControlledFolderAccess")
    protected = (_strings(raw.get("DefaultProtectedFolders")) or []) + (
        _strings(raw.get("ControlledFolderAccessProtectedFolders")) or [])
    return {"exclusions": _strings(raw.get("ExclusionPath")), "cfa_mode": mode if isinstance(mode, int) else None,
            "protected_folders": protected, "allowed_apps": _strings(raw.get("ControlledFolderAccessAllowedApplications"))}


def read_defender(platform: str = sys.platform, run: Any = subprocess.run) -> dict[str, Any] | None:
    """``parse_mp_preference``'s facts, or ``{"error": why}``; None off Windows."""
    if not platform.startswith("win"):
        return None
    try:
        done = run(powershell_command(), capture_output=True, timeout=TIMEOUT_S,
                   creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))  # no console flashing over the window
    except subprocess.TimeoutExpired:
        return {"error": f"PowerShell's Get-MpPreference did not answer within {TIMEOUT_S:.0f} s"}
    except OSError as exc:
        return {"error": f"PowerShell could not be run: {exc}"}
    if done.returncode != 0:
        err = first_error(_text(done.stderr)) or f"exit {done.returncode}"
        return {"error": f"Get-MpPreference failed ({err[:200]}); another antivirus may have replaced Defender"}
    out = _text(done.stdout).strip()
    try:
        return parse_mp_preference(base64.b64decode(out, validate=True).decode("utf-8", errors="replace"))
    except ValueError:  # binascii.Error: not the script's base64
        return {"error": f"PowerShell's answer is not the script's: {out[:120]!r}"}


def first_error(stderr: str) -> str:
    """PowerShell's error message: the first ``<S S="Error">`` of a CLIXML stream (what a redirected PowerShell may
    write), else the first line."""
    if (m := re.search(r'<S S="Error">(.*?)</S>', stderr)):
        return html.unescape(m.group(1)).replace("_x000D__x000A_", " ").strip()
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith("#< CLIXML")]
    return lines[0] if lines else ""


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")  # the error text may be in the OEM code page: kept legible
    return data or ""


def _norm(path: str) -> str:
    return ntpath.normcase(ntpath.normpath(ntpath.expandvars(path.strip()))).rstrip("\\")


def is_under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it, as Windows compares paths (any case, either slash)."""
    p, f = _norm(path), _norm(folder)
    return bool(f) and (p == f or p.startswith(f + "\\"))


def excluded_by(runs: str, exclusions: list[str]) -> str | None:
    """The exclusion that covers the runs folder (None: none does; a wildcard exclusion is not matched here)."""
    return next((e for e in exclusions if "*" not in e and "?" not in e and is_under(runs, e)), None)


def protected_by(runs: str, folders: list[str]) -> str | None:
    """The protected folder the runs folder is in (None: none)."""
    return next((f for f in folders if is_under(runs, f)), None)
