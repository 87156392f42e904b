"""Windows' answers as recorded for the doctor's tests: Get-MpPreference through the doctor's PowerShell script."""

from __future__ import annotations

import base64
from pathlib import Path
from types import SimpleNamespace

SAMPLES = Path(__file__).parent / "core" / "util" / "defender_samples"


def printed(name: str) -> bytes:
    """What the script prints for a sample: its JSON's UTF-8 as base64, and Windows' line end."""
    return base64.b64encode((SAMPLES / name).read_bytes().strip()) + b"\r\n"


def powershell(name: str):
    """A ``subprocess.run`` whose PowerShell answers with the sample ``name``."""
    return lambda cmd, **kw: SimpleNamespace(returncode=0, stdout=printed(name), stderr=b"")
