"""A stream that is not a console writes UTF-8, a console replaces what its code page lacks, children write UTF-8."""

from __future__ import annotations

import io
import subprocess
import sys

from core.util.console import CHILD_TEXT, safe_streams, utf8_env
from core.util.procs import child_env


class Console(io.BytesIO):
    def isatty(self) -> bool:
        return True


def test_a_redirected_cp1252_stream_writes_utf8_and_a_console_replaces():
    redirected = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    console = io.TextIOWrapper(Console(), encoding="cp1252")
    safe_streams((redirected, console, None))
    for stream in (redirected, console):
        stream.write("Δ reward → 200 ≤ 500 ✓ Müller")
        stream.flush()
    assert redirected.buffer.getvalue().decode("utf-8") == "Δ reward → 200 ≤ 500 ✓ Müller"
    assert console.buffer.getvalue().decode("cp1252") == "? reward ? 200 ? 500 ? Müller"


def test_a_python_child_writes_utf8_under_a_cp1252_parent(monkeypatch):
    monkeypatch.setenv("PYTHONIOENCODING", "cp1252")  # what Windows gives a child whose output is a pipe
    for env in (child_env(), utf8_env({"PYTHONIOENCODING": "cp1252", "PATH": ""})):
        done = subprocess.run([sys.executable, "-c", "print('Δ → ✓ Müller')"], capture_output=True, env=env, **CHILD_TEXT)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Δ → ✓ Müller"
