"""Text on the standard streams that no code page can break.

Windows gives a redirected stream (``rlpanel report > morning.md``, a pipe, the worker's ``worker.log``) the ANSI
code page, cp1252 on a Western machine, not UTF-8: the first Δ, →, ≤ or ✓ printed then ends the command in
``UnicodeEncodeError``, after its work is done and half its output written. A console keeps Windows' own Unicode
output. So, as git and pip do, what is not a console is written as UTF-8 (``safe_streams``, at the start of every
command and of the window), and every Python child rlpanel starts writes UTF-8 (``utf8_env``) and is read as UTF-8
(``CHILD_TEXT``). Files rlpanel writes name their encoding (ruff's PLW1514 checks it): UTF-8, CSV with a BOM for Excel.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Mapping
from typing import Any, TextIO

# Python children write their streams as UTF-8; a character Python cannot encode (a lone surrogate of a file name
# read with surrogateescape) is replaced rather than raised
CHILD_ENCODING = "utf-8:replace"
# the keyword arguments that read a Python child's text output (subprocess.run/Popen): what CHILD_ENCODING writes
CHILD_TEXT: dict[str, Any] = {"encoding": "utf-8", "errors": "replace"}


def utf8_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a Python child rlpanel starts: its standard streams in UTF-8, whatever the code page."""
    return {**env, "PYTHONIOENCODING": CHILD_ENCODING}


def safe_streams(streams: tuple[TextIO | None, ...] | None = None) -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` (or ``streams``) unable to raise on a character: one that is not a
    console is written as UTF-8; a console keeps its encoding (on Windows, Unicode) and replaces what it lacks.
    A stream that is not Python's own text wrapper (pythonw's None, a test's capture) is left as it is."""
    for stream in (sys.stdout, sys.stderr) if streams is None else streams:
        if not isinstance(stream, io.TextIOWrapper):
            continue
        try:
            console = stream.isatty()
        except (ValueError, OSError):  # closed, or a handle Windows cannot ask: nothing to write to
            continue
        try:
            if console:
                stream.reconfigure(errors="replace")
            else:
                stream.reconfigure(encoding="utf-8", errors="replace")
        except (ValueError, OSError):  # a stream already read from, or closed under us: keep what it has
            continue
