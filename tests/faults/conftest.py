"""The fault suite's tallies (printed at the end of the test run, by ``tests/conftest.py``) and its small-disk fixture.

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

TALLY: Counter[str] = Counter()  # this process's counts; each test's share goes out with its report
LINES = [
    ("kill points", ("kill points tried", "kill points resumed", "kills during starting", "kills mid-checkpoint")),
    ("generated inputs", ("inputs tried", "clear errors", "valid configs", "tracebacks", "hangs", "over memory")),
    ("corrupted folders", ("corrupted folders tried", "corrupted folders listed", "corrupted folders broken")),
    ("night", ("night runs killed", "night resumes", "night stalls caught", "night runs finished")),
    # issue 44: the agent tools (evaluate, export-policy, record, watch), queues with automatic resume, evaluate and groups
    ("agent tools", ("agent tool inputs tried", "agent tool clear errors", "agent tool writes refused",
                     "agent tool tracebacks")),
    ("queues resuming", ("queue kills around a resume", "queue dependents held", "queue records matched")),
    ("evaluate and groups", ("evaluates during pruning", "evaluate hangs cut", "raw plays refused",
                             "groups with unfinished seeds", "damaged summaries read")),
]
TALLY_PROPERTY = "fault tally"


@pytest.fixture(autouse=True)
def report_tally(request):
    """A test's counts, in its report's user properties: the session sums them (``tests/conftest.py``), in
    this process or, under pytest-xdist, from every worker."""
    before = Counter(TALLY)
    yield
    counts = {k: v - before[k] for k, v in TALLY.items() if v != before[k]}
    if counts:
        request.node.user_properties.append((TALLY_PROPERTY, counts))


def summary_lines(counts: Counter[str]) -> list[str]:
    """The lines printed at the end of the run, from the summed counts (none when no fault test ran)."""
    if not counts:
        return []
    lines = [f"seed {SEED}"]
    for title, keys in LINES:
        shown = [f"{k} {counts[k]}" for k in keys if k in counts or k.endswith(("tracebacks", "hangs"))]  # a 0 said
        if any(k in counts for k in keys):
            lines.append(f"{title}: " + ", ".join(shown))
    return lines


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
