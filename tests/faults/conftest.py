"""The fault suite's tallies (printed at the end of the test run) and its small-disk fixture.

Seeds and sizes come from the environment so a longer night can be asked for:
``RLPANEL_FAULT_SEED`` (default 11), ``RLPANEL_FAULT_KILLS`` (kill points, default 12),
``RLPANEL_FAULT_EXAMPLES`` (hypothesis examples per input kind, default 40).
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

SEED = int(os.environ.get("RLPANEL_FAULT_SEED", "11"))
KILLS = int(os.environ.get("RLPANEL_FAULT_KILLS", "12"))
EXAMPLES = int(os.environ.get("RLPANEL_FAULT_EXAMPLES", "40"))

TALLY: Counter[str] = Counter()
LINES = [
    ("kill points", ("kill points tried", "kill points resumed", "kills during starting", "kills mid-checkpoint")),
    ("generated inputs", ("inputs tried", "clear errors", "valid configs", "tracebacks", "hangs", "over memory")),
    ("corrupted folders", ("corrupted folders tried", "corrupted folders listed", "corrupted folders broken")),
]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not TALLY:
        return
    terminalreporter.section("fault suite (issue 11)")
    terminalreporter.write_line(f"seed {SEED}")
    for title, keys in LINES:
        shown = [f"{k} {TALLY[k]}" for k in keys if k in TALLY or k in ("tracebacks", "hangs")]
        if any(k in TALLY for k in keys):
            terminalreporter.write_line(f"{title}: " + ", ".join(shown))


@pytest.fixture
def small_disk(tmp_path) -> Path:
    """A 20 MiB tmpfs mounted for the test (root only; skipped with the reason otherwise)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for the disk-full tests needs root; run the suite as root to include them")
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:200]})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
